package security

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Defaults of an [OAuthVerifier].
const (
	// DefaultClockSkew is how far exp, nbf and iat may be off.
	DefaultClockSkew = 30 * time.Second
	// DefaultScopePrefix starts every operation scope: "a2a:send", ….
	DefaultScopePrefix = "a2a:"
	// DefaultIdentityClaim is the claim that names the caller.
	DefaultIdentityClaim = "sub"
	// DefaultKeyRefetch is the least time between two JWK Set fetches
	// that tokens signed by an unknown key cause.
	DefaultKeyRefetch = 30 * time.Second
	// KeysMaxAge is how long a fetched JWK Set is used before it is
	// fetched again, so that a key the issuer removed stops verifying.
	KeysMaxAge = time.Hour
	// discoveryRetry is the least time between two discovery attempts of
	// an issuer that failed.
	discoveryRetry = 10 * time.Second
	// idpTimeout bounds one request to an issuer.
	idpTimeout = 10 * time.Second
	// keyFetchWait bounds how long a request waits for its issuer's JWK
	// Set to be fetched; the fetch goes on (bounded by idpTimeout) for
	// the requests after it, and this one is refused saying the keys
	// could not be fetched.
	keyFetchWait = 2 * time.Second
	// maxClaimBytes bounds the value of the identity claim.
	maxClaimBytes = 256
)

// TrustedScope is the scope (after the prefix) that gives [TierTrusted]
// when an issuer leaves TrustedClaim at its default.
const TrustedScope = "trusted"

// OAuthIssuer is one OpenID provider whose JWT access tokens the agent
// accepts.
type OAuthIssuer struct {
	// Name names the issuer in identities ("oauth:<name>:<subject>") and
	// card schemes. Letters, digits and ".-_@".
	Name string
	// URL is the issuer identifier: tokens' iss must equal it, and the
	// discovery document is at URL + "/.well-known/openid-configuration".
	URL string
	// Audience is the aud the tokens must carry (this agent's identifier
	// at the issuer).
	Audience string
	// IdentityClaim is the claim whose value names the caller
	// (DefaultIdentityClaim when empty).
	IdentityClaim string
	// ScopePrefix starts the operation scopes (DefaultScopePrefix when
	// empty).
	ScopePrefix string
	// IgnoreScopes lets a token do whatever its tier's policy allows,
	// whatever its scopes (for issuers that cannot mint the operation
	// scopes). By default a token may use only the operations whose
	// scope it carries.
	IgnoreScopes bool
	// TrustedClaim and TrustedValues give [TierTrusted] to tokens whose
	// claim holds one of the values (a string, a space-separated string or
	// an array of strings). Defaults: the "scope" claim and the value
	// ScopePrefix + TrustedScope. Other tokens are [TierPublic].
	TrustedClaim  string
	TrustedValues []string
	// TokenURL is the token endpoint the card advertises for the
	// client-credentials flow (default: the discovery document's
	// token_endpoint).
	TokenURL string
}

// OAuthConfig configures an [OAuthVerifier].
type OAuthConfig struct {
	// Issuers are the accepted issuers.
	Issuers []OAuthIssuer
	// ClockSkew is the leeway for exp, nbf and iat (DefaultClockSkew
	// when zero).
	ClockSkew time.Duration
	// AllowLoopbackHTTP lets issuers on loopback addresses be reached
	// over plain http (tests, a provider on the same machine). Every
	// other issuer, and every URL its discovery document names, must be
	// https.
	AllowLoopbackHTTP bool
	// KeyRefetch is the least time between two JWK Set fetches caused by
	// tokens whose key is not known (DefaultKeyRefetch when zero; a
	// negative value: no limit, for tests).
	KeyRefetch time.Duration
	// Transport carries the requests to the issuers (http.DefaultTransport
	// when nil).
	Transport http.RoundTripper
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// OAuthScheme is how one issuer is declared on the Agent Card: OpenID
// Connect with its discovery URL and, once the token endpoint is known,
// the OAuth 2.0 client-credentials flow with it and the scopes.
type OAuthScheme struct {
	// Issuer is the issuer's Name.
	Issuer string
	// DiscoveryURL is the OpenID Connect discovery document.
	DiscoveryURL string
	// TokenURL is the token endpoint; "" until discovery found it (when
	// not configured).
	TokenURL string
	// Scopes are the scopes the agent understands, with what each grants,
	// in a stable order.
	Scopes []ScopeInfo
}

// ScopeInfo is one scope and what it grants.
type ScopeInfo struct {
	Name, Description string
}

// OAuthVerifier authenticates JWT access tokens from configured issuers:
// OpenID Connect discovery and the issuer's JWK Set with go-oidc, the
// signature with go-jose (asymmetric algorithms only; "none" never), then
// iss, aud, exp, nbf and iat with go-jose's jwt validation and the
// configured clock skew. It is safe for concurrent use; Close stops its
// background discovery.
//
// Its API is transport-neutral: [OAuthVerifier.Authenticate] takes the
// bearer token, whatever binding carried it.
type OAuthVerifier struct {
	issuers []*issuer
	byURL   map[string]*issuer
	skew    time.Duration
	now     func() time.Time
	client  *http.Client
	// audience, in a view (ForAgent), replaces every issuer's audience;
	// view says this verifier is a view of another, which owns the
	// discovery (Close is the owner's).
	audience string
	view     bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// acceptedAlgs are the signature algorithms a token may use: every
// asymmetric JWS algorithm go-oidc verifies. HMAC (a shared secret the
// issuer could not publish) and "none" are never accepted.
var acceptedAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512,
	jose.PS256, jose.PS384, jose.PS512, jose.EdDSA,
}

// NewOAuthVerifier checks cfg and builds a verifier. It makes no request:
// call Start to discover the issuers in the background (tokens discover
// their issuer on demand too).
func NewOAuthVerifier(cfg OAuthConfig) (*OAuthVerifier, error) {
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("security: oauth: no issuer configured")
	}
	v := &OAuthVerifier{byURL: map[string]*issuer{}, skew: cfg.ClockSkew, now: cfg.Now}
	if v.skew == 0 {
		v.skew = DefaultClockSkew
	}
	if v.skew < 0 || v.skew > 10*time.Minute {
		return nil, fmt.Errorf("security: oauth: clock skew %s is out of range (0 to 10m)", v.skew)
	}
	if v.now == nil {
		v.now = time.Now
	}
	refetch := cfg.KeyRefetch
	if refetch == 0 {
		refetch = DefaultKeyRefetch
	}
	v.client = newIdPClient(cfg.Transport, cfg.AllowLoopbackHTTP, refetch)
	v.ctx, v.cancel = context.WithCancel(oidc.ClientContext(context.Background(), v.client))
	names := map[string]bool{}
	for i, ic := range cfg.Issuers {
		where := fmt.Sprintf("security: oauth: issuer %d", i+1)
		if ic.Name != "" {
			where = fmt.Sprintf("security: oauth: issuer %q", ic.Name)
		}
		if err := checkPeerName(ic.Name); err != nil {
			return nil, fmt.Errorf("%s: name: %w", where, err)
		}
		if names[ic.Name] {
			return nil, fmt.Errorf("%s: the name is used twice; give every issuer its own", where)
		}
		names[ic.Name] = true
		if err := checkIdPURL(ic.URL, cfg.AllowLoopbackHTTP); err != nil {
			return nil, fmt.Errorf("%s: url: %w", where, err)
		}
		if _, dup := v.byURL[ic.URL]; dup {
			return nil, fmt.Errorf("%s: url %s is configured twice", where, ic.URL)
		}
		if strings.TrimSpace(ic.Audience) == "" {
			return nil, fmt.Errorf("%s: audience is empty; set it to the aud the issuer puts into tokens for this agent", where)
		}
		if ic.TokenURL != "" {
			if err := checkIdPURL(ic.TokenURL, cfg.AllowLoopbackHTTP); err != nil {
				return nil, fmt.Errorf("%s: token_url: %w", where, err)
			}
		}
		if ic.IdentityClaim == "" {
			ic.IdentityClaim = DefaultIdentityClaim
		}
		if ic.ScopePrefix == "" {
			ic.ScopePrefix = DefaultScopePrefix
		}
		if strings.ContainsAny(ic.ScopePrefix, " \t\r\n\"\\") {
			return nil, fmt.Errorf("%s: scope prefix %q must not contain spaces, quotes or backslashes", where, ic.ScopePrefix)
		}
		if ic.TrustedClaim == "" {
			ic.TrustedClaim = "scope"
			if len(ic.TrustedValues) == 0 {
				ic.TrustedValues = []string{ic.ScopePrefix + TrustedScope}
			}
		}
		is := &issuer{cfg: ic, v: v}
		v.issuers = append(v.issuers, is)
		v.byURL[ic.URL] = is
	}
	return v, nil
}

// Start discovers every issuer in the background, so that the card names
// their token endpoints soon; Close stops it.
func (v *OAuthVerifier) Start() {
	for _, is := range v.issuers {
		is.kick()
	}
}

// Close stops the background discovery and waits for it (nothing for a
// view: its owner does it).
func (v *OAuthVerifier) Close() {
	if v.view {
		return
	}
	v.cancel()
	v.wg.Wait()
}

// ForAgent returns a view of v for one agent: only the issuers named
// (every one when names is empty), and tokens that carry audience
// instead of each issuer's own (when audience is not ""). The view shares
// v's discovery and key sets; v's Close ends both.
func (v *OAuthVerifier) ForAgent(names []string, audience string) (*OAuthVerifier, error) {
	if audience != "" && strings.TrimSpace(audience) != audience {
		return nil, fmt.Errorf("security: oauth: audience %q has spaces around it; set the exact aud the issuer puts into this agent's tokens", audience)
	}
	w := &OAuthVerifier{byURL: map[string]*issuer{}, skew: v.skew, now: v.now, client: v.client, ctx: v.ctx,
		audience: audience, view: true}
	for _, n := range names {
		found := false
		for _, is := range v.issuers {
			if is.cfg.Name == n {
				found = true
			}
		}
		if !found {
			var all []string
			for _, is := range v.issuers {
				all = append(all, is.cfg.Name)
			}
			return nil, fmt.Errorf("security: oauth: no issuer is named %q (the issuers are %s)", n, strings.Join(all, ", "))
		}
	}
	for _, is := range v.issuers {
		if len(names) == 0 || slices.Contains(names, is.cfg.Name) {
			w.issuers = append(w.issuers, is)
			w.byURL[is.cfg.URL] = is
		}
	}
	return w, nil
}

// audienceOf is the audience the tokens of is must carry here.
func (v *OAuthVerifier) audienceOf(is *issuer) string {
	if v.audience != "" {
		return v.audience
	}
	return is.cfg.Audience
}

// Schemes describes every issuer for the Agent Card. It never blocks: an
// issuer not discovered yet has no TokenURL (unless configured), and a
// discovery is started for it.
func (v *OAuthVerifier) Schemes() []OAuthScheme {
	out := make([]OAuthScheme, 0, len(v.issuers))
	for _, is := range v.issuers {
		s := OAuthScheme{
			Issuer:       is.cfg.Name,
			DiscoveryURL: strings.TrimSuffix(is.cfg.URL, "/") + "/.well-known/openid-configuration",
			TokenURL:     is.tokenURL(),
		}
		if !is.cfg.IgnoreScopes {
			for _, p := range AllPermissions() {
				s.Scopes = append(s.Scopes, ScopeInfo{Name: is.cfg.ScopePrefix + p.String(), Description: p.Description()})
			}
		}
		if is.cfg.TrustedClaim == "scope" {
			for _, tv := range is.cfg.TrustedValues {
				s.Scopes = append(s.Scopes, ScopeInfo{Name: tv, Description: "The trusted tier: what the agent's policy allows trusted callers"})
			}
		}
		out = append(out, s)
	}
	return out
}

// LooksLikeJWT reports whether token has the shape of a compact JWS (three
// base64url parts). It says nothing about validity.
func LooksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2
}

// Authenticate checks a bearer token and returns the identity it names. A
// refused token gets a wrapped [ErrUnauthorized] that says which check
// failed — the algorithm, the issuer, the signature, a time claim, the
// audience, the identity claim — and never echoes the token or the
// agent's configuration. The signature is checked before any claim, so
// a forged token learns nothing about what the claims must be. The
// identity has no Remote: the caller fills it in.
func (v *OAuthVerifier) Authenticate(ctx context.Context, token string) (Identity, error) {
	refuse := func(format string, a ...any) (Identity, error) {
		return Identity{}, fmt.Errorf("%w: "+format, append([]any{ErrUnauthorized}, a...)...)
	}
	jws, err := jose.ParseSignedCompact(token, acceptedAlgs) // a bearer JWT is compact
	if err != nil {
		if alg := headerAlg(token); alg != "" {
			if strings.EqualFold(alg, "none") {
				return refuse("the token is unsigned (alg \"none\"); tokens must be signed by their issuer")
			}
			return refuse("the token's signing algorithm is not accepted (accepted: RS, ES and PS with SHA-256/384/512, and EdDSA)")
		}
		return refuse("the bearer token matches no configured token and is not a signed JWT")
	}
	if len(jws.Signatures) != 1 {
		return refuse("the token must carry exactly one signature")
	}
	var unverified struct {
		Issuer string `json:"iss"`
	}
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &unverified); err != nil {
		return refuse("the token's claims are not a JSON object")
	}
	is := v.byURL[unverified.Issuer]
	if is == nil {
		return refuse("the token's issuer (iss) is not one this agent accepts")
	}
	keys, err := is.keySet(ctx)
	if err != nil {
		return refuse("the keys of the token's issuer could not be fetched; try again later")
	}
	vctx, cancel := context.WithTimeout(ctx, keyFetchWait)
	payload, err := keys.VerifySignature(vctx, token)
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return refuse("the request ended before the token's signature was checked")
	case err.Error() != errKeysDoNotVerify:
		// go-oidc could not get the JWK Set (it says "fetching keys …"),
		// or not within keyFetchWait: the token is not at fault.
		return refuse("the keys of the token's issuer could not be fetched; try again later")
	default:
		return refuse("the token's signature does not verify with its issuer's keys")
	}
	var claims jwt.Claims
	if err := json.Unmarshal(payload, &claims); err != nil {
		return refuse("the token's registered claims are malformed")
	}
	if claims.Expiry == nil {
		return refuse("the token has no expiry (exp)")
	}
	err = claims.ValidateWithLeeway(jwt.Expected{Issuer: is.cfg.URL, AnyAudience: jwt.Audience{v.audienceOf(is)}, Time: v.now()}, v.skew)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return refuse("the token has expired (exp); get a new one from the issuer")
	case errors.Is(err, jwt.ErrNotValidYet):
		return refuse("the token is not valid yet (nbf); check the clocks of the client and the issuer")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return refuse("the token is issued in the future (iat); check the clocks of the client and the issuer")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return refuse("the token's audience (aud) is not this agent; ask the issuer for a token for this agent's audience")
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return refuse("the token's issuer (iss) is not one this agent accepts")
	case err != nil:
		return refuse("the token's registered claims are not valid")
	}
	var all map[string]any
	if err := json.Unmarshal(payload, &all); err != nil {
		return refuse("the token's claims are not a JSON object")
	}
	name, ok := all[is.cfg.IdentityClaim].(string)
	if !ok || name == "" {
		return refuse("the token has no %q claim (a non-empty string) to name the caller", is.cfg.IdentityClaim)
	}
	if len(name) > maxClaimBytes || !utf8.ValidString(name) || strings.ContainsFunc(name, isControl) {
		return refuse("the token's %q claim is longer than %d bytes or holds control characters", is.cfg.IdentityClaim, maxClaimBytes)
	}
	id := Identity{ID: "oauth:" + is.cfg.Name + ":" + name, Tier: TierPublic, Authenticated: true}
	for _, want := range is.cfg.TrustedValues {
		if slices.Contains(claimValues(all[is.cfg.TrustedClaim]), want) {
			id.Tier = TierTrusted
			break
		}
	}
	if !is.cfg.IgnoreScopes {
		id.Scoped = true
		scopes := append(claimValues(all["scope"]), claimValues(all["scp"])...)
		for _, p := range AllPermissions() {
			if slices.Contains(scopes, is.cfg.ScopePrefix+p.String()) {
				id.Grants = id.Grants.With(p)
			}
		}
	}
	return id, nil
}

// errKeysDoNotVerify is go-oidc's error (RemoteKeySet.VerifySignature)
// for a token none of whose issuer's keys verifies it, the key set
// fetched; every other error of it means the key set could not be
// fetched. The test of the outage keeps the text honest.
const errKeysDoNotVerify = "failed to verify id token signature"

// Audience is the audience configured for the named issuer ("" for an
// unknown name).
func (v *OAuthVerifier) Audience(issuerName string) string {
	for _, is := range v.issuers {
		if is.cfg.Name == issuerName {
			return v.audienceOf(is)
		}
	}
	return ""
}

// ScopeFor names the scope a caller authenticated by an issuer needs for
// p, for error messages: the first issuer's when id names none.
func (v *OAuthVerifier) ScopeFor(id Identity, p Permission) string {
	prefix := DefaultScopePrefix
	if len(v.issuers) > 0 {
		prefix = v.issuers[0].cfg.ScopePrefix
	}
	for _, is := range v.issuers {
		if strings.HasPrefix(id.ID, "oauth:"+is.cfg.Name+":") {
			prefix = is.cfg.ScopePrefix
		}
	}
	return prefix + p.String()
}

// claimValues reads a claim as a list of strings: a string is split at
// spaces (the "scope" form), an array keeps its string members.
func claimValues(v any) []string {
	switch x := v.(type) {
	case string:
		return strings.Fields(x)
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// headerAlg reads the alg of a compact JWS's header, for the message of a
// token go-jose refused; "" when the token has no readable header. It
// decides nothing.
func headerAlg(token string) string {
	head, _, ok := strings.Cut(token, ".")
	if !ok || len(head) > 4096 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(head, "="))
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	return h.Alg
}

// checkIdPURL accepts an absolute https URL, or an http URL of a loopback
// host when allowLoopbackHTTP.
func checkIdPURL(raw string, allowLoopbackHTTP bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an absolute URL without credentials, query or fragment", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if !isLoopbackName(u.Hostname()) {
			return fmt.Errorf("%q must be https (plain http is allowed only for a loopback host, and only with the loopback allowance)", raw)
		}
		if !allowLoopbackHTTP {
			return fmt.Errorf("%q is plain http: production issuers must be https; for an issuer on this machine (tests) turn on oauth_allow_loopback_http (A2A_OAUTH_ALLOW_LOOPBACK_HTTP)", raw)
		}
		return nil
	}
	return fmt.Errorf("%q must be an https URL", raw)
}

// isLoopbackName reports whether host is a loopback IP or localhost.
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	_, loop := remoteHost(host)
	return loop
}

// issuer is one configured issuer with what discovery found.
type issuer struct {
	cfg OAuthIssuer
	v   *OAuthVerifier

	mu       sync.Mutex
	provider *oidc.Provider
	jwksURL  string
	keys     *oidc.RemoteKeySet
	keysAt   time.Time
	failedAt time.Time
	running  chan struct{} // closed when the running discovery ends; nil when none runs
}

// tokenURL is the configured token endpoint, else the discovered one.
func (is *issuer) tokenURL() string {
	if is.cfg.TokenURL != "" {
		return is.cfg.TokenURL
	}
	is.mu.Lock()
	p := is.provider
	is.mu.Unlock()
	if p == nil {
		is.kick()
		return ""
	}
	return p.Endpoint().TokenURL
}

// kick starts a discovery in the background when none has succeeded,
// none runs, and the last failure is old enough.
func (is *issuer) kick() {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.provider != nil || is.running != nil || (!is.failedAt.IsZero() && time.Since(is.failedAt) < discoveryRetry) {
		return
	}
	if is.v.ctx.Err() != nil {
		return
	}
	is.startLocked()
}

// startLocked starts a discovery; is.mu is held.
func (is *issuer) startLocked() chan struct{} {
	done := make(chan struct{})
	is.running = done
	is.v.wg.Add(1)
	go func() {
		defer is.v.wg.Done()
		ctx, cancel := context.WithTimeout(is.v.ctx, idpTimeout)
		defer cancel()
		p, err := oidc.NewProvider(ctx, is.cfg.URL)
		var jwksURL string
		if err == nil {
			var meta struct {
				JWKSURL string `json:"jwks_uri"`
			}
			if err = p.Claims(&meta); err == nil {
				jwksURL = meta.JWKSURL
				if jwksURL == "" {
					err = errors.New("the discovery document names no jwks_uri")
				}
			}
		}
		is.mu.Lock()
		defer is.mu.Unlock()
		if err == nil {
			is.provider, is.jwksURL = p, jwksURL
		} else {
			is.failedAt = time.Now()
		}
		is.running = nil
		close(done)
	}()
	return done
}

// keySet returns the issuer's key set, discovering the issuer first if
// needed (at most once per discoveryRetry after a failure), and renewing
// the key set after KeysMaxAge.
func (is *issuer) keySet(ctx context.Context) (*oidc.RemoteKeySet, error) {
	for {
		is.mu.Lock()
		if is.provider != nil {
			if is.keys == nil || time.Since(is.keysAt) > KeysMaxAge {
				// A new set fetches the issuer's JWK Set at its first use.
				is.keys, is.keysAt = oidc.NewRemoteKeySet(is.v.ctx, is.jwksURL), time.Now()
			}
			k := is.keys
			is.mu.Unlock()
			return k, nil
		}
		done := is.running
		if done == nil {
			if !is.failedAt.IsZero() && time.Since(is.failedAt) < discoveryRetry {
				is.mu.Unlock()
				return nil, errors.New("the issuer's discovery failed recently")
			}
			if is.v.ctx.Err() != nil {
				is.mu.Unlock()
				return nil, is.v.ctx.Err()
			}
			done = is.startLocked()
		}
		is.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		is.mu.Lock()
		failed := is.provider == nil
		is.mu.Unlock()
		if failed {
			return nil, errors.New("the issuer's discovery failed")
		}
	}
}
