package security

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
)

// Tier is how far the plugin trusts a caller. Higher tiers may do more; see
// [Policy] for what each tier may do and the package doc for how a caller
// gets its tier.
type Tier int

// Trust tiers, lowest first.
const (
	// TierPublic is any caller the plugin has no reason to trust: anonymous
	// callers and token holders that are not named as trusted.
	TierPublic Tier = iota
	// TierTrusted is a caller holding a token the operator trusts.
	TierTrusted
	// TierLocal is a caller on the loopback interface presenting no token,
	// when loopback callers are configured as local (the user's own
	// machine). A token always names its holder instead.
	TierLocal
)

// String returns "public", "trusted" or "local".
func (t Tier) String() string {
	switch t {
	case TierPublic:
		return "public"
	case TierTrusted:
		return "trusted"
	case TierLocal:
		return "local"
	}
	return fmt.Sprintf("tier(%d)", int(t))
}

// MarshalText encodes the tier as its name, so tiers read well in JSON and logs.
func (t Tier) MarshalText() ([]byte, error) {
	if t < TierPublic || t > TierLocal {
		return nil, fmt.Errorf("security: cannot encode unknown trust tier %d", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText decodes a tier name accepted by [ParseTier].
func (t *Tier) UnmarshalText(b []byte) error {
	v, err := ParseTier(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ParseTier parses "public", "trusted" or "local" (case-insensitive,
// surrounding spaces ignored).
func ParseTier(s string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "public":
		return TierPublic, nil
	case "trusted":
		return TierTrusted, nil
	case "local":
		return TierLocal, nil
	}
	return 0, fmt.Errorf("security: unknown trust tier %q (want public, trusted or local)", s)
}

// Identity is who made a request, as far as the plugin can tell.
type Identity struct {
	// ID names the caller: "peer:<name>" for a per-peer token,
	// "ip:<address>" for the shared token, "local:<address>" for an
	// unauthenticated loopback caller treated as local, and "anon:<address>"
	// for anyone else. Rate limits, task ownership and audit records key on it.
	ID string
	// Tier decides what the caller may do.
	Tier Tier
	// Authenticated reports whether the caller presented a valid token.
	Authenticated bool
	// Remote is the caller's network address without the port.
	Remote string
	// Scoped limits the caller to the operations in Grants, beside what
	// its tier's policy allows: set for OAuth tokens, whose scopes name
	// the operations they may use.
	Scoped bool
	// Grants are the operations a Scoped caller's token grants.
	Grants Grants
}

// Permits reports whether the caller's credential allows p: always for
// unscoped callers, else when its token granted p. The tier's policy is
// checked separately ([Policy.Allows]); both must agree.
func (id Identity) Permits(p Permission) bool { return !id.Scoped || id.Grants.Has(p) }

// ErrUnauthorized is returned when a request carries credentials that are
// malformed or match no configured token, and by [Authenticator.Admit] when a
// token is required but none was given. Servers answer it with HTTP 401.
var ErrUnauthorized = errors.New("unauthorized")

// AuthConfig configures an [Authenticator].
type AuthConfig struct {
	// BearerToken is the shared token. Its holders get the identity
	// "ip:<address>".
	BearerToken string
	// PeerTokens maps a peer name to that peer's own token (see
	// [ParsePeerTokens]). Holders get the identity "peer:<name>".
	PeerTokens map[string]string
	// TrustedPeers names the peers (keys of PeerTokens, with or without the
	// "peer:" prefix) that get [TierTrusted]. While it is empty, shared-token
	// holders are trusted instead.
	TrustedPeers []string
	// LoopbackIsLocal gives loopback callers that present no token
	// [TierLocal]. A loopback caller presenting a token is the token's
	// caller, with the token's tier.
	LoopbackIsLocal bool
	// OAuth, when set, authenticates bearer tokens that match no static
	// token as JWT access tokens of its issuers. Their callers are never
	// Local: the token names them wherever they connect from.
	OAuth *OAuthVerifier
}

// credential is one configured token, kept only as its digest.
type credential struct {
	digest [sha256.Size]byte
	peer   string // "" for the shared token
}

// Authenticator turns an HTTP request into an [Identity]. It is immutable
// after construction and safe for concurrent use.
type Authenticator struct {
	creds           []credential
	hasShared       bool
	trusted         map[string]bool
	loopbackIsLocal bool
	oauth           *OAuthVerifier
	// lastAnon is the identity id of the last caller without credentials
	// ("local:<address>" or "anon:<address>"), kept so that a run of
	// requests from one address does not build the same string each time.
	lastAnon atomic.Pointer[anonID]
}

// anonID is an identity id without credentials and what it was made from.
type anonID struct {
	remote string
	local  bool
	id     string
}

// anonIdentityID returns "local:"+remote or "anon:"+remote, the last one
// made when it is the same.
func (a *Authenticator) anonIdentityID(remote string, local bool) string {
	if c := a.lastAnon.Load(); c != nil && c.local == local && c.remote == remote {
		return c.id
	}
	c := &anonID{remote: remote, local: local, id: "anon:" + remote}
	if local {
		c.id = "local:" + remote
	}
	// remote is a slice of the request's address; the id holds a copy of
	// it, so the entry keeps only that copy.
	c.remote = c.id[len(c.id)-len(remote):]
	a.lastAnon.Store(c)
	return c.id
}

// NewAuthenticator checks cfg and builds an Authenticator. It refuses tokens
// containing whitespace or control characters, a token used twice, peer names
// that [ParsePeerTokens] would refuse, and trusted peers with no token.
func NewAuthenticator(cfg AuthConfig) (*Authenticator, error) {
	a := &Authenticator{trusted: map[string]bool{}, loopbackIsLocal: cfg.LoopbackIsLocal, oauth: cfg.OAuth}
	seen := map[[sha256.Size]byte]string{}
	add := func(peer, token, what string) error {
		if err := checkToken(token); err != nil {
			return fmt.Errorf("security: %s: %w", what, err)
		}
		d := sha256.Sum256([]byte(token))
		if other, dup := seen[d]; dup {
			return fmt.Errorf("security: %s is the same token as %s; give every peer its own token", what, other)
		}
		seen[d] = what
		a.creds = append(a.creds, credential{digest: d, peer: peer})
		return nil
	}
	if cfg.BearerToken != "" {
		if err := add("", cfg.BearerToken, "the shared bearer token"); err != nil {
			return nil, err
		}
		a.hasShared = true
	}
	// Sorted so that construction, errors and scan order are deterministic.
	names := make([]string, 0, len(cfg.PeerTokens))
	for name := range cfg.PeerTokens {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := checkPeerName(name); err != nil {
			return nil, fmt.Errorf("security: peer tokens: %w", err)
		}
		if err := add(name, cfg.PeerTokens[name], fmt.Sprintf("the token of peer %q", name)); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.TrustedPeers {
		name := strings.TrimPrefix(strings.TrimSpace(p), "peer:")
		if _, ok := cfg.PeerTokens[name]; !ok {
			return nil, fmt.Errorf("security: trusted peer %q has no token; add it to the peer tokens (name:token) or remove it from the trusted peers", p)
		}
		a.trusted[name] = true
	}
	return a, nil
}

// RequiresAuth reports whether any token (or OAuth issuer) is configured.
// When it is false the server should listen on loopback only.
func (a *Authenticator) RequiresAuth() bool { return len(a.creds) > 0 || a.oauth != nil }

// HasStaticTokens reports whether a shared or per-peer token is
// configured (the card's bearer scheme).
func (a *Authenticator) HasStaticTokens() bool { return len(a.creds) > 0 }

// OAuth returns the OAuth verifier, or nil.
func (a *Authenticator) OAuth() *OAuthVerifier { return a.oauth }

// Authenticate identifies the caller of r from its Authorization header and
// remote address. It returns [ErrUnauthorized] (wrapped, with a reason) for a
// malformed Authorization header or a token that matches nothing. A request
// without any Authorization header is never an error here: it gets a local or
// anonymous identity, and [Authenticator.Admit] decides whether that is enough.
func (a *Authenticator) Authenticate(r *http.Request) (Identity, error) {
	return a.AuthenticateCredentials(r.Context(), r.RemoteAddr, r.Header.Values("Authorization"))
}

// AuthenticateCredentials is Authenticate for any transport: remoteAddr
// is the TCP peer ("host:port"), authorization the values of the
// Authorization header or of the gRPC `authorization` metadata. ctx
// bounds an OAuth verification.
func (a *Authenticator) AuthenticateCredentials(ctx context.Context, remoteAddr string, authorization []string) (Identity, error) {
	remote, loopback := remoteHost(remoteAddr)
	local := loopback && a.loopbackIsLocal
	values := authorization
	if len(values) == 0 {
		if local {
			return Identity{ID: a.anonIdentityID(remote, true), Tier: TierLocal, Remote: remote}, nil
		}
		return Identity{ID: a.anonIdentityID(remote, false), Tier: TierPublic, Remote: remote}, nil
	}
	if len(values) > 1 {
		return Identity{}, fmt.Errorf("%w: more than one Authorization header", ErrUnauthorized)
	}
	token, ok := bearerToken(values[0])
	if !ok {
		return Identity{}, fmt.Errorf("%w: the Authorization header must be \"Bearer <token>\"", ErrUnauthorized)
	}
	idx := a.match(token)
	if idx < 0 {
		if a.oauth != nil {
			id, err := a.oauth.Authenticate(ctx, token)
			if err != nil {
				return Identity{}, err
			}
			id.Remote = remote
			return id, nil
		}
		return Identity{}, fmt.Errorf("%w: the bearer token matches no configured token", ErrUnauthorized)
	}
	c := a.creds[idx]
	id := Identity{Authenticated: true, Remote: remote, Tier: TierPublic}
	if c.peer != "" {
		id.ID = "peer:" + c.peer
		if a.trusted[c.peer] {
			id.Tier = TierTrusted
		}
	} else {
		id.ID = "ip:" + remote
		if len(a.trusted) == 0 {
			id.Tier = TierTrusted
		}
	}
	// A presented token names the caller wherever it connects from: a
	// peer holding a token is that peer, on loopback too. Local is only
	// for loopback callers presenting none (the operator's own tools).
	return id, nil
}

// Admit reports whether id may use the authenticated parts of the endpoint
// (everything except the public agent card): when a token is configured, an
// unauthenticated caller must be local. It returns a wrapped
// [ErrUnauthorized] otherwise.
func (a *Authenticator) Admit(id Identity) error {
	if !a.RequiresAuth() || id.Authenticated || id.Tier == TierLocal {
		return nil
	}
	return fmt.Errorf("%w: this agent requires \"Authorization: Bearer <token>\"", ErrUnauthorized)
}

// match returns the index of the credential whose digest equals the digest
// of token, or -1. It always compares against every credential.
func (a *Authenticator) match(token string) int {
	d := sha256.Sum256([]byte(token))
	idx := -1
	for i := range a.creds {
		eq := subtle.ConstantTimeCompare(d[:], a.creds[i].digest[:])
		idx = subtle.ConstantTimeSelect(eq, i, idx)
	}
	return idx
}

// ConstantTimeEqual compares two secrets in time that depends on neither
// their contents nor their lengths: it compares their SHA-256 digests with
// crypto/subtle. Use it for any token comparison outside [Authenticator].
func ConstantTimeEqual(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// bearerToken extracts the token from "Bearer <token>" (scheme
// case-insensitive, RFC 6750 token characters only).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	if token == "" || checkToken(token) != nil {
		return "", false
	}
	return token, true
}

// remoteHost returns the host part of a RemoteAddr and whether it is a
// loopback address.
func remoteHost(addr string) (string, bool) {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host, false
	}
	return host, ip.Unmap().IsLoopback()
}

// ParsePeerTokens parses "name:token,name:token" into a map. Spaces around an
// entry are ignored; a name is letters, digits and ".-_@"; a token is visible
// ASCII without commas. It refuses empty entries, empty names or tokens,
// whitespace inside a name or token, a name given twice and a token given
// twice. An empty string yields an empty map.
func ParsePeerTokens(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	byToken := map[string]string{}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("security: peer tokens: entry %d is empty; write name:token,name:token", i+1)
		}
		name, token, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("security: peer tokens: entry %d (%q) has no colon; write name:token", i+1, redactEntry(entry))
		}
		if err := checkPeerName(name); err != nil {
			return nil, fmt.Errorf("security: peer tokens: entry %d: %w", i+1, err)
		}
		if err := checkToken(token); err != nil {
			return nil, fmt.Errorf("security: peer tokens: entry %d: token of peer %q: %w", i+1, name, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("security: peer tokens: peer %q is listed twice", name)
		}
		if other, dup := byToken[token]; dup {
			return nil, fmt.Errorf("security: peer tokens: peers %q and %q have the same token; give every peer its own token", other, name)
		}
		out[name] = token
		byToken[token] = name
	}
	return out, nil
}

// redactEntry hides everything but the first characters of a malformed
// entry so that an error message never carries a whole token.
func redactEntry(s string) string {
	if len(s) <= 4 {
		return "…"
	}
	return s[:4] + "…"
}

func checkPeerName(name string) error {
	if name == "" {
		return errors.New("empty peer name")
	}
	if len(name) > 64 {
		return fmt.Errorf("peer name %q is longer than 64 characters", name)
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_', c == '@':
		case c == ' ' || c == '\t':
			return fmt.Errorf("peer name %q contains whitespace", name)
		default:
			return fmt.Errorf("peer name %q contains %q; use letters, digits and .-_@", name, c)
		}
	}
	return nil
}

func checkToken(token string) error {
	if token == "" {
		return errors.New("empty token")
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return errors.New("token contains whitespace")
		case c < 0x21 || c > 0x7e:
			return errors.New("token contains a control or non-ASCII character")
		case c == ',':
			return errors.New("token contains a comma")
		}
	}
	return nil
}
