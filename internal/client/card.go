package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
)

// Well-known locations of an agent card: the v1.0/0.3 path and the older
// one some agents still serve.
const (
	WellKnownCardPath       = "/.well-known/agent-card.json"
	LegacyWellKnownCardPath = "/.well-known/agent.json"
)

// maxCardTTL caps how long a card is trusted without revalidation, whatever
// max-age the peer sends.
const maxCardTTL = 24 * time.Hour

// maxCardBytes bounds an agent card body.
const maxCardBytes = 1 << 20

// CardInfo is an agent card as fetched (or taken from the cache) with what
// the client decided from it.
type CardInfo struct {
	// Card is the parsed card (0.3 cards are converted to the v1.0 shape).
	Card *a2a.AgentCard
	// CardURL is where the card was found.
	CardURL string
	// Interface is the interface this client will use (see
	// pickInterface). The URL of a GRPC interface is kept as
	// "http(s)://host:port" (see resolveGRPCURL).
	Interface a2a.AgentInterface
	// FetchedAt is when the card body was last downloaded or revalidated.
	FetchedAt time.Time
	// Expires is when the cached card must be revalidated.
	Expires time.Time
	// FromCache says the card came from the cache without a request;
	// Revalidated says a conditional request answered 304 Not Modified.
	FromCache, Revalidated bool
	// Verified is set for a peer that requires a signed card (Endpoint
	// CardKeys): the signature that verified. Card is then made of the
	// signed content only.
	Verified *Verification
}

// Verification describes the signature that verified a card.
type Verification struct {
	// KeyID and Algorithm are the signature's kid and alg.
	KeyID, Algorithm string
	// Form is the payload reading that verified (see package cardsign).
	Form string
}

// V03 reports whether the chosen interface speaks protocol 0.3.
func (ci *CardInfo) V03() bool { return ci.Interface.ProtocolVersion == a2a.ProtocolVersionV03 }

// cardEntry is one cached card with its HTTP validators.
type cardEntry struct {
	mu           sync.Mutex // serialises fetches of this entry
	info         *CardInfo
	etag         string
	lastModified string
	// body is the card as last downloaded, for signature checks; verified
	// memoises them per key set until the body changes (a 304 keeps them).
	body     []byte
	verified map[*cardsign.KeySet]*verifiedCard
}

// verifiedCard is the outcome of checking one card body with one key set.
type verifiedCard struct {
	card  *a2a.AgentCard
	iface a2a.AgentInterface
	ver   Verification
	err   error
}

// cardCache caches cards by the URL they were asked for.
type cardCache struct {
	mu      sync.Mutex
	entries map[string]*cardEntry
}

func (cc *cardCache) entry(key string) *cardEntry {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.entries == nil {
		cc.entries = make(map[string]*cardEntry)
	}
	e := cc.entries[key]
	if e == nil {
		e = &cardEntry{}
		cc.entries[key] = e
	}
	return e
}

// peek returns the cached card of p without fetching, or nil; for a
// signed peer only a card that verified.
func (cc *cardCache) peek(p *Peer) *CardInfo {
	cc.mu.Lock()
	e := cc.entries[p.cardKey()]
	cc.mu.Unlock()
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.info == nil {
		return nil
	}
	c := *e.info
	if p.ep.CardKeys == nil {
		return &c
	}
	if v := e.verified[p.ep.CardKeys]; v != nil && v.err == nil {
		c.Card, c.Interface = v.card, v.iface
		ver := v.ver
		c.Verified = &ver
		return &c
	}
	return nil
}

// CardCandidates returns the URLs at which the card of the agent at raw is
// looked for, in order. A URL ending in ".json" is taken as the card URL
// itself. Otherwise the well-known path is tried under the URL's own path
// (agents mounted under a prefix) and at the origin, then the legacy path.
func CardCandidates(raw string) ([]string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("agent URL %q is not a valid URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("agent URL %q must start with http:// or https://", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("agent URL %q has no host", raw)
	}
	u.Fragment = ""
	if strings.HasSuffix(u.Path, ".json") {
		return []string{u.String()}, nil
	}
	origin := u.Scheme + "://" + u.Host
	base := strings.TrimSuffix(u.Path, "/")
	var out []string
	if base != "" {
		out = append(out, origin+base+WellKnownCardPath)
	}
	out = append(out, origin+WellKnownCardPath)
	if base != "" {
		out = append(out, origin+base+LegacyWellKnownCardPath)
	}
	out = append(out, origin+LegacyWellKnownCardPath)
	return out, nil
}

// fetchCard returns the card of p, from the cache when fresh (and refresh
// is false), else by a (conditional) GET.
func (c *Client) fetchCard(ctx context.Context, p *Peer, refresh bool) (*CardInfo, error) {
	e := c.cards.entry(p.cardKey())
	e.mu.Lock()
	defer e.mu.Unlock()
	now := c.now()
	if !refresh && e.info != nil && now.Before(e.info.Expires) {
		out := *e.info
		out.FromCache, out.Revalidated = true, false
		return c.checkSigned(p, e, &out)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout(c.opts.Timeout))
	defer cancel()

	var candidates []string
	if e.info != nil {
		// Revalidate where the card was found last time.
		candidates = []string{e.info.CardURL}
	} else {
		var err error
		if candidates, err = CardCandidates(p.ep.URL); err != nil {
			return nil, &Error{Kind: ErrBadCard, Peer: p.name(), URL: p.ep.URL, Op: "fetch agent card", Err: err}
		}
	}
	var lastErr error
	for i, cardURL := range candidates {
		info, notFound, err := c.getCard(ctx, p, e, cardURL)
		if err == nil {
			e.info = info
			out := *info
			return c.checkSigned(p, e, &out)
		}
		lastErr = err
		if !notFound || i == len(candidates)-1 {
			break
		}
	}
	return nil, lastErr
}

// getCard performs one card request. notFound reports a 404/410, after
// which the next candidate URL is tried.
func (c *Client) getCard(ctx context.Context, p *Peer, e *cardEntry, cardURL string) (info *CardInfo, notFound bool, err error) {
	fail := func(kind Kind, status int, err error) (*CardInfo, bool, error) {
		return nil, false, &Error{Kind: kind, Peer: p.name(), URL: cardURL, Op: "fetch agent card", HTTPStatus: status, Err: err}
	}
	ctx = c.scoped(ctx, p)
	if err := c.checkURL(ctx, cardURL); err != nil {
		return fail(ErrBlocked, 0, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return fail(ErrBadCard, 0, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(a2a.HeaderVersion, a2a.ProtocolVersion)
	c.decorate(req, p, false)
	revalidating := e.info != nil && e.info.CardURL == cardURL
	if revalidating {
		if e.etag != "" {
			req.Header.Set("If-None-Match", e.etag)
		}
		if e.lastModified != "" {
			req.Header.Set("If-Modified-Since", e.lastModified)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fail(classifyTransport(err, ctx), 0, err)
	}
	defer drainClose(resp.Body)
	now := c.now()
	switch {
	case resp.StatusCode == http.StatusNotModified && revalidating:
		out := *e.info
		out.FetchedAt = now
		out.Expires = expiry(resp.Header, now, c.opts.CardTTL)
		out.FromCache, out.Revalidated = true, true
		if v := resp.Header.Get("ETag"); v != "" {
			e.etag = v
		}
		return &out, false, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		_, _, err := fail(ErrBadCard, resp.StatusCode, fmt.Errorf("no agent card at %s", cardURL))
		return nil, true, err
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		kind := statusKind(resp.StatusCode)
		if kind == ErrInvalidResponse {
			kind = ErrBadCard
		}
		e := &Error{Kind: kind, Peer: p.name(), URL: cardURL, Op: "fetch agent card", HTTPStatus: resp.StatusCode,
			Err: fmt.Errorf("unexpected HTTP status %s", resp.Status)}
		if kind == ErrRateLimited {
			e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
		}
		return nil, false, e
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCardBytes+1))
	if err != nil {
		return fail(classifyTransport(err, ctx), 0, fmt.Errorf("reading the card: %w", err))
	}
	if len(body) > maxCardBytes {
		return fail(ErrBadCard, 0, fmt.Errorf("card is larger than %d bytes", maxCardBytes))
	}
	card, err := a2a.ParseAgentCard(body)
	if err != nil {
		return fail(ErrBadCard, 0, err)
	}
	in, err := usableInterface(card, cardURL)
	if err != nil {
		return fail(ErrBadCard, 0, err)
	}
	info = &CardInfo{Card: card, CardURL: cardURL, Interface: in, FetchedAt: now, Expires: expiry(resp.Header, now, c.opts.CardTTL)}
	if noStore(resp.Header) {
		info.Expires = now
	}
	e.etag = resp.Header.Get("ETag")
	e.lastModified = resp.Header.Get("Last-Modified")
	e.body, e.verified = body, nil
	return info, false, nil
}

// usableInterface checks a card and picks the interface this client
// uses, its URL resolved against the card URL.
func usableInterface(card *a2a.AgentCard, cardURL string) (a2a.AgentInterface, error) {
	if err := checkCard(card); err != nil {
		return a2a.AgentInterface{}, err
	}
	in, err := pickInterface(card)
	if err != nil {
		return a2a.AgentInterface{}, err
	}
	resolve := resolveInterfaceURL
	if strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPC) {
		resolve = resolveGRPCURL
	}
	resolved, err := resolve(cardURL, in.URL)
	if err != nil {
		return a2a.AgentInterface{}, fmt.Errorf("interface URL %q: %w", in.URL, err)
	}
	in.URL = resolved
	return in, nil
}

// checkCard rejects a card missing what a client needs to talk to it and to
// tell the model what it is.
func checkCard(card *a2a.AgentCard) error {
	var missing []string
	if strings.TrimSpace(card.Name) == "" {
		missing = append(missing, "name")
	}
	if len(card.SupportedInterfaces) == 0 {
		missing = append(missing, "supportedInterfaces")
	}
	for i, in := range card.SupportedInterfaces {
		if strings.TrimSpace(in.URL) == "" {
			missing = append(missing, fmt.Sprintf("supportedInterfaces[%d].url", i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("card lacks required field(s): %s", strings.Join(missing, ", "))
	}
	return nil
}

// describeInterfaces lists a card's interfaces as "BINDING vX at URL".
func describeInterfaces(card *a2a.AgentCard) string {
	if len(card.SupportedInterfaces) == 0 {
		return "nothing"
	}
	var parts []string
	for _, in := range card.SupportedInterfaces {
		parts = append(parts, fmt.Sprintf("%s %s at %s", in.ProtocolBinding, in.ProtocolVersion, in.URL))
	}
	return strings.Join(parts, "; ")
}

// resolveInterfaceURL resolves a (possibly relative) interface URL against
// the card URL and checks that it is http(s).
func resolveInterfaceURL(cardURL, ifURL string) (string, error) {
	base, err := url.Parse(cardURL)
	if err != nil {
		return "", err
	}
	u, err := base.Parse(strings.TrimSpace(ifURL))
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("must be an http:// or https:// URL")
	}
	return u.String(), nil
}

// expiry computes when a response stops being fresh: Cache-Control
// max-age (less Age), else Expires, else the default TTL; no-cache and
// no-store mean "revalidate every time".
func expiry(h http.Header, now time.Time, def time.Duration) time.Time {
	if def <= 0 {
		def = 5 * time.Minute
	}
	cc := strings.ToLower(h.Get("Cache-Control"))
	ttl, known := time.Duration(0), false
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(d)
		switch {
		case d == "no-cache" || d == "no-store":
			return now
		case strings.HasPrefix(d, "max-age="):
			if n, err := strconv.Atoi(strings.Trim(strings.TrimPrefix(d, "max-age="), `"`)); err == nil && n >= 0 {
				ttl, known = time.Duration(n)*time.Second, true
			}
		}
	}
	if known {
		if age, err := strconv.Atoi(strings.TrimSpace(h.Get("Age"))); err == nil && age > 0 {
			ttl -= time.Duration(age) * time.Second
		}
	} else if exp := h.Get("Expires"); exp != "" {
		known = true
		if t, err := http.ParseTime(exp); err == nil {
			ttl = t.Sub(now)
		} // an invalid Expires means already expired
	}
	if !known {
		ttl = def
	}
	if ttl < 0 {
		ttl = 0
	}
	if ttl > maxCardTTL {
		ttl = maxCardTTL
	}
	return now.Add(ttl)
}

// noStore reports Cache-Control: no-store.
func noStore(h http.Header) bool {
	for _, d := range strings.Split(strings.ToLower(h.Get("Cache-Control")), ",") {
		if strings.TrimSpace(d) == "no-store" {
			return true
		}
	}
	return false
}

// drainClose reads a little of a body (so the connection can be reused)
// and closes it.
func drainClose(rc io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(rc, 64<<10))
	_ = rc.Close()
}
