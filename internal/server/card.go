package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// ownToolset is the toolset of this plugin's own tools, which the card
// does not advertise as skills by default (they are how the agent calls
// others, not what it offers).
const ownToolset = "a2a"

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

// serveCard serves the public agent card: v1.0 with the 0.3 keys merged
// in, caching headers and conditional GET.
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	ex := &exchange{start: s.now(), status: http.StatusOK, method: "card"}
	defer s.finishCard(ex, r)
	card := s.buildCard(r.Context(), s.endpointURL(r), false, s.log)
	body, err := s.encodeServedCard(card)
	if err != nil {
		s.log.Error("encoding the agent card failed", "error", err)
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
	h.Set("Vary", "Host")
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

// finishCard audits a card request. The card is public, so the caller is
// identified only for the record: a bad token is noted, not refused.
func (s *Server) finishCard(ex *exchange, r *http.Request) {
	if s.opts.Audit == nil && s.auditHook == nil {
		return
	}
	ident, err := s.opts.Auth.Authenticate(r)
	if err != nil {
		remote := remoteAddr(r)
		ident = security.Identity{ID: "unauthenticated:" + remote, Remote: remote}
	}
	ex.ident = ident
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
// PublicURL, or the scheme and host the request came in on.
func (s *Server) endpointURL(r *http.Request) string {
	if p := s.opts.Card.PublicURL; p != "" {
		return strings.TrimRight(p, "/") + "/"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if !validHost(host) {
		s.mu.Lock()
		base := s.baseURL
		s.mu.Unlock()
		if base != "" {
			return base + "/"
		}
		host = "127.0.0.1"
	}
	return scheme + "://" + host + "/"
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

// buildCard builds the v1.0 card for the given endpoint URL; extended adds
// the extended skills.
func (s *Server) buildCard(ctx context.Context, endpoint string, extended bool, log hclog.Logger) *a2a.AgentCard {
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
		Skills:             s.skills(ctx, log),
	}
	if c.ProviderOrganization != "" {
		card.Provider = &a2a.AgentProvider{Organization: c.ProviderOrganization, URL: c.ProviderURL}
	}
	if s.opts.Auth.RequiresAuth() {
		card.SecuritySchemes = map[string]a2a.SecurityScheme{bearerScheme: {HTTPAuth: &a2a.HTTPAuthSecurityScheme{
			Scheme:      "Bearer",
			Description: "A token issued by the agent's operator, sent as \"Authorization: Bearer <token>\"",
		}}}
		card.SecurityRequirements = []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{bearerScheme: {}}}}
	}
	if extended {
		card.Skills = append(card.Skills, c.ExtendedSkills...)
		// The extended card is served as v1.0 JSON (or converted to 0.3)
		// by every binding, so it is signed here.
		s.signCard(card, nil)
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

// skills builds one skill per tool of the host's live registry, filtered
// by the advertised toolsets, sorted by id.
func (s *Server) skills(ctx context.Context, log hclog.Logger) []a2a.AgentSkill {
	if s.opts.Tools == nil {
		return []a2a.AgentSkill{s.chatSkill()}
	}
	ctx, cancel := context.WithTimeout(ctx, toolsTimeout)
	defer cancel()
	defs, err := s.opts.Tools(ctx)
	if err != nil {
		if log != nil {
			log.Warn("could not list the host's tools; the agent card advertises a generic chat skill", "error", err)
		}
		return []a2a.AgentSkill{s.chatSkill()}
	}
	allowed := s.opts.Card.AdvertisedToolsets
	out := make([]a2a.AgentSkill, 0, len(defs))
	seen := make(map[string]bool, len(defs))
	for _, d := range defs {
		if d == nil || d.Name == "" || seen[d.Name] {
			continue
		}
		if len(allowed) > 0 {
			if !slices.Contains(allowed, d.Toolset) {
				continue
			}
		} else if d.Toolset == ownToolset {
			continue
		}
		seen[d.Name] = true
		desc := strings.TrimSpace(d.Description)
		if desc == "" {
			desc = "Uses the " + d.Name + " tool."
		}
		tags := make([]string, 0, 1+len(d.Tags))
		for _, t := range append([]string{d.Toolset}, d.Tags...) {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		if len(tags) == 0 {
			tags = append(tags, "tool")
		}
		out = append(out, a2a.AgentSkill{ID: d.Name, Name: d.Name, Description: desc, Tags: tags})
	}
	if len(out) == 0 {
		return []a2a.AgentSkill{s.chatSkill()}
	}
	slices.SortFunc(out, func(a, b a2a.AgentSkill) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// dualCard is the public card as served: the v1.0 card with the 0.3 keys
// merged in (specification §3.3, "dual serving"), so that 0.3 clients can
// read the same document. The 0.3-only keys never clash with v1.0 keys;
// security schemes carry both the v1.0 oneof key and the 0.3 `type` form
// in one object.
type dualCard struct {
	*a2a.AgentCard
	SecuritySchemes                   map[string]dualScheme  `json:"securitySchemes,omitempty"`
	URL                               string                 `json:"url"`
	PreferredTransport                string                 `json:"preferredTransport"`
	ProtocolVersion                   string                 `json:"protocolVersion"`
	AdditionalInterfaces              []a2a.AgentInterface03 `json:"additionalInterfaces,omitempty"`
	SupportsAuthenticatedExtendedCard bool                   `json:"supportsAuthenticatedExtendedCard,omitempty"`
	Security                          []map[string][]string  `json:"security,omitempty"`
}

// dualScheme is one security scheme in both shapes.
type dualScheme struct {
	a2a.SecurityScheme
	a2a.SecurityScheme03
}

// encodeDualCard encodes card with the 0.3 keys merged in.
func encodeDualCard(card *a2a.AgentCard) ([]byte, error) {
	v03 := a2a.ToV03Card(card).(*a2a.AgentCard03)
	d := dualCard{
		AgentCard:                         card,
		URL:                               v03.URL,
		PreferredTransport:                v03.PreferredTransport,
		ProtocolVersion:                   v03.ProtocolVersion,
		SupportsAuthenticatedExtendedCard: v03.SupportsAuthenticatedExtendedCard,
		Security:                          v03.Security,
	}
	for _, in := range card.SupportedInterfaces {
		if in.ProtocolVersion == a2a.ProtocolVersionV03 {
			d.AdditionalInterfaces = append(d.AdditionalInterfaces, a2a.AgentInterface03{URL: in.URL, Transport: in.ProtocolBinding})
		}
	}
	if len(card.SecuritySchemes) > 0 {
		d.SecuritySchemes = make(map[string]dualScheme, len(card.SecuritySchemes))
		for name, sch := range card.SecuritySchemes {
			d.SecuritySchemes[name] = dualScheme{SecurityScheme: sch, SecurityScheme03: v03.SecuritySchemes[name]}
		}
	}
	return a2a.Marshal(d)
}
