package server

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// toolsTimeout bounds the host's tool-registry call for one card.
const toolsTimeout = 3 * time.Second

// bearerScheme is the name of the security scheme the card declares when
// a token is required.
const bearerScheme = "bearer"

// cardState remembers when each distinct card body was first served, for
// Last-Modified.
type cardState struct {
	mu   sync.Mutex
	seen map[string]time.Time // ETag → first served
	sigs cardSignatures
}

// modifiedAt returns when the card with this ETag was first served.
func (c *cardState) modifiedAt(etag string, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.seen[etag]; ok {
		return t
	}
	if c.seen == nil || len(c.seen) >= 256 {
		c.seen = make(map[string]time.Time)
	}
	now = now.UTC().Truncate(time.Second)
	c.seen[etag] = now
	return now
}

// cardHandler serves the public agent card and builds the cards (public
// and extended) every binding answers with: the interfaces of the
// endpoint a request came in on, the skills from the host's live tool
// registry, the security schemes, the signatures.
type cardHandler struct {
	opts *Options
	log  hclog.Logger
	now  func() time.Time
	// pipe rate-limits and audits card requests like any other.
	pipe *pipeline
	// prefix is the path of the agent's endpoints ("" for the default
	// agent, "/agents/{id}" for the others) and tenant the tenant its gRPC
	// interface declares ("" for the default agent).
	prefix, tenant string

	state cardState
	// skillCache holds the card's skills built from the host's tools.
	skillCache skillCache

	mu      sync.Mutex
	baseURL string
	// tlsLeaf is the certificate Start serves (nil without TLS): a Host
	// it covers may be named in the card.
	tlsLeaf *x509.Certificate
	// hostHint logs once that a Host was not reflected into the card.
	hostHint sync.Once
}

// ServeHTTP serves the public agent card. The canonical path answers the
// v1.0 card, strictly as the v1.0 schema has it (no 0.3 key); 0.3 clients
// get the 0.3 card (a2av03.FromCard) at the legacy path
// /.well-known/agent.json, or at the canonical path when they ask for it
// with A2A-Version: 0.3 (or ?A2A-Version=0.3). Both carry caching headers
// and answer conditional GETs. The card is public, but every request
// counts against the caller's rate limit like any other request, and the
// host's tool registry behind its skills is read at most once per
// skillsTTL (see skillCache), so hammering the card does not turn into
// calls into the host.
func (h *cardHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &Call{start: h.now(), status: http.StatusOK, Method: "card", Caller: cardCaller(h.opts.Auth, r)}
	defer h.finish(c)
	if ok, wait := h.pipe.allowRate(c.Caller); !ok {
		e := errRateLimited(wait)
		c.Refused(refusedWith(http.StatusTooManyRequests, e))
		w.Header().Set("Retry-After", retryAfter(wait))
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, e.Message, http.StatusTooManyRequests)
		return
	}
	v03 := r.URL.Path == legacyCardPath || wantsV03Card(requestedVersion(r))
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	card := h.buildCard(h.endpointURL(r.Host, r.TLS != nil, local), h.skills(r.Context(), h.log), false)
	body, err := h.encodeServedCard(card, v03)
	if err != nil {
		h.log.Error("encoding the agent card failed", "error", err)
		c.status = http.StatusInternalServerError
		http.Error(w, "the agent card could not be encoded; see the agent's log", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	modified := h.state.modifiedAt(etag, h.now())
	hd := w.Header()
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(h.opts.Card.CacheMaxAge/time.Second)))
	hd.Set("ETag", etag)
	hd.Set("Last-Modified", modified.Format(http.TimeFormat))
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Vary", "Host, A2A-Version")
	if notModified(r, etag, modified) {
		c.status = http.StatusNotModified
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	n, _ := w.Write(body)
	c.BytesOut = int64(n)
}

// legacyCardPath is where 0.3 clients configured for the older location
// find the 0.3 card.
const legacyCardPath = "/.well-known/agent.json"

// wantsV03Card reports whether a card request's A2A-Version asks for 0.3
// (patch ignored).
func wantsV03Card(version string) bool {
	v := strings.TrimSpace(version)
	return v == a2a.ProtocolVersionV03 || strings.HasPrefix(v, a2a.ProtocolVersionV03+".")
}

// cardCaller identifies the caller of a card request, for its rate limit
// and the record. The card is public, so a bad token is not refused: the
// caller counts as its address, like a failed authentication anywhere.
func cardCaller(auth *security.Authenticator, r *http.Request) security.Identity {
	ident, err := auth.Authenticate(r)
	if err != nil {
		remote := remoteAddr(r)
		ident = security.Identity{ID: "unauthenticated:" + remote, Remote: remote}
	}
	return ident
}

// finish audits a card request.
func (h *cardHandler) finish(c *Call) {
	if c.status == http.StatusNotModified {
		c.status = http.StatusOK // a successful exchange for the record
	}
	h.pipe.audit(c, h.now().Sub(c.start))
}

// notModified evaluates If-None-Match (weak comparison) and, without it,
// If-Modified-Since.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, tag := range strings.Split(inm, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !modified.After(t) {
			return true
		}
	}
	return false
}

// endpointURL is the JSON-RPC endpoint URL the card advertises for a
// request to host (the Host header, or gRPC's :authority), over TLS or
// not, that came in on local:
//
//   - CardConfig.PublicURL when it is set;
//   - else the request's Host when it names the agent for sure: a loopback
//     name (a loopback IP literal, localhost), as the client (or a proxy
//     on this machine) used it, or, over the TLS this server terminates, a
//     name its certificate covers;
//   - else the address the connection came in on (the listener's address
//     as the client reached it).
//
// Any other Host is never reflected: it is whatever the client chose to
// send, and a card naming an attacker's host (kept by a shared cache, or
// handed on by a proxy) would send peers and their tokens there.
func (h *cardHandler) endpointURL(host string, tls bool, local net.Addr) string {
	return h.prefixed(h.rootURL(host, tls, local))
}

// prefixed is the agent's endpoint URL under the root URL root (which
// ends in "/").
func (h *cardHandler) prefixed(root string) string {
	if h.prefix == "" {
		return root
	}
	return strings.TrimSuffix(root, "/") + h.prefix + "/"
}

// rootURL is the server's root URL as endpointURL describes it.
func (h *cardHandler) rootURL(host string, tls bool, local net.Addr) string {
	if p := h.opts.Card.PublicURL; p != "" {
		return strings.TrimRight(p, "/") + "/"
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	if validHost(host) && (loopbackName(host) || h.certCovers(host, tls)) {
		return scheme + "://" + host + "/"
	}
	if local == nil {
		// Served outside an http.Server (a direct ServeHTTP call).
		h.mu.Lock()
		base := h.baseURL
		h.mu.Unlock()
		if base != "" {
			return base + "/"
		}
		return scheme + "://127.0.0.1/"
	}
	if host != "" {
		h.hostHint.Do(func() {
			h.log.Info("the agent card names the address the request came in on, not the Host it sent; set public_url (A2A_PUBLIC_URL) to advertise a host name",
				"host", host, "advertised", baseURL(scheme, local))
		})
	}
	return baseURL(scheme, local) + "/"
}

// loopbackName reports whether the host of a Host header (host or
// host:port) is a loopback IP literal or a localhost name.
func loopbackName(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// certCovers reports whether a request came over TLS that this server
// terminates and host (its Host header) is a name (or IP) of the served
// certificate: a name the operator owns, which a client cannot redirect.
func (h *cardHandler) certCovers(host string, tls bool) bool {
	if !tls {
		return false
	}
	h.mu.Lock()
	leaf := h.tlsLeaf
	h.mu.Unlock()
	if leaf == nil {
		return false
	}
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	return leaf.VerifyHostname(strings.Trim(host, "[]")) == nil
}

// validHost accepts a Host header made of host-name, IPv6-literal and
// port characters only, so a hostile header cannot inject into the card.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '-', c == ':', c == '[', c == ']', c == '_':
		default:
			return false
		}
	}
	return true
}

// buildCard builds the v1.0 card for the given endpoint URL with skills
// (see Server.skills); extended adds the extended skills.
func (h *cardHandler) buildCard(endpoint string, skills []a2a.AgentSkill, extended bool) *a2a.AgentCard {
	c := &h.opts.Card
	card := &a2a.AgentCard{
		Name:        c.Name,
		Description: c.Description,
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: endpoint, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{URL: endpoint, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersionV03},
			// HTTP+JSON routes are path-distinct from POST /: same base URL.
			{URL: strings.TrimSuffix(endpoint, "/"), ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		},
		Version:          c.Version,
		DocumentationURL: c.DocumentationURL,
		IconURL:          c.IconURL,
		Capabilities: a2a.AgentCapabilities{
			Streaming:         a2a.Bool(true),
			PushNotifications: a2a.Bool(h.opts.Push.Enabled),
			ExtendedAgentCard: a2a.Bool(extendedCardOffered(h.opts)),
			Extensions:        c.Extensions,
		},
		DefaultInputModes:  c.InputModes,
		DefaultOutputModes: c.OutputModes,
		Skills:             skills,
	}
	if !h.opts.DisableGRPC {
		// The gRPC binding shares the port (see listen.go); a gRPC client
		// dials host:port.
		card.SupportedInterfaces = append(card.SupportedInterfaces,
			a2a.AgentInterface{URL: grpcTarget(endpoint), ProtocolBinding: a2a.BindingGRPC, Tenant: h.tenant, ProtocolVersion: a2a.ProtocolVersion})
	}
	if c.ProviderOrganization != "" {
		card.Provider = &a2a.AgentProvider{Organization: c.ProviderOrganization, URL: c.ProviderURL}
	}
	card.SecuritySchemes, card.SecurityRequirements = h.cardSecurity()
	if extended {
		card.Skills = append(card.Skills, c.ExtendedSkills...)
		// The extended card is served as v1.0 JSON (or converted to 0.3)
		// by every binding, so it is signed here.
		h.signCard(card)
	}
	return card
}

// grpcTarget is the gRPC address of an endpoint URL: "host:port", the
// form the official SDKs publish and dial (grpc.NewClient, grpc-js take
// it as it is); the port is the URL's, else 80 or 443 by its scheme.
func grpcTarget(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return endpoint
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// extendedCardOffered reports whether the extended card is offered:
// wherever authenticated peers exist (a token or an OAuth issuer is
// configured), and whenever extended skills are configured (local callers
// may read it then).
func extendedCardOffered(o *Options) bool {
	return len(o.Card.ExtendedSkills) > 0 || o.Auth.RequiresAuth()
}

// chatSkill is the skill advertised when the host lists no tools.
func (h *cardHandler) chatSkill() a2a.AgentSkill {
	return a2a.AgentSkill{
		ID:          "chat",
		Name:        "Chat",
		Description: "Talk to " + h.opts.Card.Name + " in natural language: ask questions or delegate tasks.",
		Tags:        []string{"chat", "general"},
	}
}

// skillsTTL is how long the skills built from the host's tool registry
// are reused. The card is public and each build is a call into the host,
// so a client hammering the card must not turn into as many host calls; a
// change of the host's tools shows on the card within this time.
const skillsTTL = 2 * time.Second

// skillCache keeps the skills built from the host's tool registry for
// skillsTTL after they were fetched (a failed fetch too: its generic chat
// skill), and makes the requests that arrive while a fetch runs wait for
// it instead of starting their own. So at most one tool-registry call
// into the host runs at a time, and at most one per skillsTTL.
type skillCache struct {
	mu      sync.Mutex
	skills  []a2a.AgentSkill // nil: nothing fetched yet
	expires time.Time
	flight  *skillFetch // the fetch running now, or nil
}

// skillFetch is one running fetch of the host's tools.
type skillFetch struct {
	done    chan struct{} // closed when skills is set
	skills  []a2a.AgentSkill
	waiters int // requests waiting for it besides the fetching one
}

// skills returns the card's skills: the cached ones while they are fresh,
// else the result of one fetch shared by every request that needs it.
// Each caller gets its own slice (the extended card appends to it).
func (h *cardHandler) skills(ctx context.Context, log hclog.Logger) []a2a.AgentSkill {
	if h.opts.Skills == nil {
		return []a2a.AgentSkill{h.chatSkill()}
	}
	c := &h.skillCache
	c.mu.Lock()
	if c.skills != nil && h.now().Before(c.expires) {
		out := slices.Clone(c.skills)
		c.mu.Unlock()
		return out
	}
	if f := c.flight; f != nil {
		f.waiters++
		c.mu.Unlock()
		select {
		case <-f.done:
			if f.skills != nil {
				return slices.Clone(f.skills)
			}
		case <-ctx.Done():
		}
		return []a2a.AgentSkill{h.chatSkill()}
	}
	f := &skillFetch{done: make(chan struct{})}
	c.flight = f
	c.mu.Unlock()
	defer func() {
		// Also when the host's call panicked: the waiters must not hang.
		c.mu.Lock()
		c.flight = nil
		if f.skills != nil {
			c.skills, c.expires = f.skills, h.now().Add(skillsTTL)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	// Detached from this request's cancellation: the requests waiting for
	// this fetch must not lose it because this request's client left.
	f.skills = h.fetchSkills(context.WithoutCancel(ctx), log)
	return slices.Clone(f.skills)
}

// fetchSkills reads the host's skills (Options.Skills) once, sorted by id;
// none, or a failing call, gives the generic chat skill.
func (h *cardHandler) fetchSkills(ctx context.Context, log hclog.Logger) []a2a.AgentSkill {
	ctx, cancel := context.WithTimeout(ctx, toolsTimeout)
	defer cancel()
	skills, err := h.opts.Skills(ctx)
	if err != nil {
		if log != nil {
			log.Warn("could not list the host's tools; the agent card advertises a generic chat skill", "error", err)
		}
		return []a2a.AgentSkill{h.chatSkill()}
	}
	if len(skills) == 0 {
		return []a2a.AgentSkill{h.chatSkill()}
	}
	out := slices.Clone(skills)
	slices.SortFunc(out, func(a, b a2a.AgentSkill) int { return strings.Compare(a.ID, b.ID) })
	return out
}
