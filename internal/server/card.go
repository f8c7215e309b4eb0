package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
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

// serveCard serves the public agent card. The canonical path answers the
// v1.0 card, strictly as the v1.0 schema has it (no 0.3 key); 0.3 clients
// get the 0.3 card (a2a.ToV03Card) at the legacy path
// /.well-known/agent.json, or at the canonical path when they ask for it
// with A2A-Version: 0.3 (or ?A2A-Version=0.3). Both carry caching headers
// and answer conditional GETs. The card is public, but every request
// counts against the caller's rate limit like any other request, and the
// host's tool registry behind its skills is read at most once per
// skillsTTL (see skillCache), so hammering the card does not turn into
// calls into the host.
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	ex := &exchange{start: s.now(), status: http.StatusOK, method: "card", ident: cardCaller(s.opts.Auth, r)}
	defer s.finishCard(ex)
	if ok, wait := s.allowRate(ex.ident); !ok {
		e := errRateLimited(wait)
		ex.fail(http.StatusTooManyRequests, e)
		w.Header().Set("Retry-After", retryAfter(wait))
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, e.Message, http.StatusTooManyRequests)
		return
	}
	v03 := r.URL.Path == legacyCardPath || wantsV03Card(requestedVersion(r))
	card := s.buildCard(s.endpointURL(r), s.skills(r.Context(), s.log), false)
	body, err := s.encodeServedCard(card, v03)
	if err != nil {
		s.log.Error("encoding the agent card failed", "error", err)
		ex.status = http.StatusInternalServerError
		http.Error(w, "the agent card could not be encoded; see the agent's log", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	modified := s.card.modifiedAt(etag, s.now())
	h := w.Header()
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(s.opts.Card.CacheMaxAge/time.Second)))
	h.Set("ETag", etag)
	h.Set("Last-Modified", modified.Format(http.TimeFormat))
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Vary", "Host, A2A-Version")
	if notModified(r, etag, modified) {
		ex.status = http.StatusNotModified
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	n, _ := w.Write(body)
	ex.bytesOut = int64(n)
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

// finishCard audits a card request.
func (s *Server) finishCard(ex *exchange) {
	if ex.status == http.StatusNotModified {
		ex.status = http.StatusOK // a successful exchange for the record
	}
	s.audit(ex, s.now().Sub(ex.start))
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

// endpointURL is the JSON-RPC endpoint URL the card advertises:
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
func (s *Server) endpointURL(r *http.Request) string {
	if p := s.opts.Card.PublicURL; p != "" {
		return strings.TrimRight(p, "/") + "/"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if validHost(r.Host) && (loopbackName(r.Host) || s.certCovers(r)) {
		return scheme + "://" + r.Host + "/"
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		// Served outside an http.Server (a direct ServeHTTP call).
		s.mu.Lock()
		base := s.baseURL
		s.mu.Unlock()
		if base != "" {
			return base + "/"
		}
		return scheme + "://127.0.0.1/"
	}
	if r.Host != "" {
		s.hostHint.Do(func() {
			s.log.Info("the agent card names the address the request came in on, not the Host it sent; set public_url (A2A_PUBLIC_URL) to advertise a host name",
				"host", r.Host, "advertised", baseURL(scheme, local))
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

// certCovers reports whether r came over TLS that this server terminates
// and the host of its Host header is a name (or IP) of the served
// certificate: a name the operator owns, which a client cannot redirect.
func (s *Server) certCovers(r *http.Request) bool {
	if r.TLS == nil {
		return false
	}
	s.mu.Lock()
	leaf := s.tlsLeaf
	s.mu.Unlock()
	if leaf == nil {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
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
func (s *Server) buildCard(endpoint string, skills []a2a.AgentSkill, extended bool) *a2a.AgentCard {
	c := &s.opts.Card
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
			PushNotifications: a2a.Bool(s.opts.Push.Enabled),
			ExtendedAgentCard: a2a.Bool(len(c.ExtendedSkills) > 0),
			Extensions:        c.Extensions,
		},
		DefaultInputModes:  c.InputModes,
		DefaultOutputModes: c.OutputModes,
		Skills:             skills,
	}
	if c.ProviderOrganization != "" {
		card.Provider = &a2a.AgentProvider{Organization: c.ProviderOrganization, URL: c.ProviderURL}
	}
	card.SecuritySchemes, card.SecurityRequirements = s.cardSecurity()
	if extended {
		card.Skills = append(card.Skills, c.ExtendedSkills...)
		// The extended card is served as v1.0 JSON (or converted to 0.3)
		// by every binding, so it is signed here.
		s.signCard(card)
	}
	return card
}

// chatSkill is the skill advertised when the host lists no tools.
func (s *Server) chatSkill() a2a.AgentSkill {
	return a2a.AgentSkill{
		ID:          "chat",
		Name:        "Chat",
		Description: "Talk to " + s.opts.Card.Name + " in natural language: ask questions or delegate tasks.",
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
func (s *Server) skills(ctx context.Context, log hclog.Logger) []a2a.AgentSkill {
	if s.opts.Skills == nil {
		return []a2a.AgentSkill{s.chatSkill()}
	}
	c := &s.skillCache
	c.mu.Lock()
	if c.skills != nil && s.now().Before(c.expires) {
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
		return []a2a.AgentSkill{s.chatSkill()}
	}
	f := &skillFetch{done: make(chan struct{})}
	c.flight = f
	c.mu.Unlock()
	defer func() {
		// Also when the host's call panicked: the waiters must not hang.
		c.mu.Lock()
		c.flight = nil
		if f.skills != nil {
			c.skills, c.expires = f.skills, s.now().Add(skillsTTL)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	// Detached from this request's cancellation: the requests waiting for
	// this fetch must not lose it because this request's client left.
	f.skills = s.fetchSkills(context.WithoutCancel(ctx), log)
	return slices.Clone(f.skills)
}

// fetchSkills reads the host's skills (Options.Skills) once, sorted by id;
// none, or a failing call, gives the generic chat skill.
func (s *Server) fetchSkills(ctx context.Context, log hclog.Logger) []a2a.AgentSkill {
	ctx, cancel := context.WithTimeout(ctx, toolsTimeout)
	defer cancel()
	skills, err := s.opts.Skills(ctx)
	if err != nil {
		if log != nil {
			log.Warn("could not list the host's tools; the agent card advertises a generic chat skill", "error", err)
		}
		return []a2a.AgentSkill{s.chatSkill()}
	}
	if len(skills) == 0 {
		return []a2a.AgentSkill{s.chatSkill()}
	}
	out := slices.Clone(skills)
	slices.SortFunc(out, func(a, b a2a.AgentSkill) int { return strings.Compare(a.ID, b.ID) })
	return out
}
