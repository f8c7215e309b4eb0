// Package oidcop runs a real OpenID provider on loopback for the tests of
// the plugin's OAuth 2.0 / OpenID Connect support: the OpenID provider of
// github.com/zitadel/oidc/v3 (its pkg/op: discovery, the token endpoint
// with the client-credentials grant, JWT access tokens, the JWK Set), on
// an in-memory storage of registered clients and signing keys that this
// package supplies, as the library requires of every user.
//
// A test starts a Provider, registers clients, gets tokens from it over
// HTTP the way any OAuth client does, and rotates its signing keys. It is
// imported only by tests.
package oidcop

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// TokenPath is where the provider's token endpoint is, under its issuer URL.
const TokenPath = "/oauth/token"

// Client is an OAuth client registered with the provider for the
// client-credentials grant.
type Client struct {
	// ID and Secret are the client's credentials.
	ID, Secret string
	// Subject is the sub of its tokens (default: ID).
	Subject string
	// Scopes are the scopes the client may be granted; a request for
	// others gets only these (intersected).
	Scopes []string
	// Audiences are the audiences the client may ask for with the
	// "audience" parameter; the first is the default when it asks for
	// none. A request for another audience gets the default.
	Audiences []string
	// Lifetime is how long its tokens are valid (default 1h). A negative
	// lifetime issues tokens that have already expired.
	Lifetime time.Duration
	// Claims are extra claims put into its access tokens (e.g. groups).
	Claims map[string]any
}

// Provider is a running OpenID provider on 127.0.0.1.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:port), also
	// its base: discovery is at Issuer + "/.well-known/openid-configuration".
	Issuer string
	// TokenURL is the token endpoint.
	TokenURL string

	srv *http.Server
	st  *storage
}

// Start starts a provider on a free loopback port; it stops when the test
// ends. It fails t when it cannot.
func Start(t testing.TB) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("oidcop: listen: %v", err)
	}
	issuer := "http://" + ln.Addr().String()
	st := &storage{clients: map[string]Client{}}
	if err := st.rotate(false, jose.RS256); err != nil {
		t.Fatalf("oidcop: signing key: %v", err)
	}
	cfg := &op.Config{
		CryptoKey:                sha256.Sum256([]byte("oidcop test provider " + issuer)),
		DefaultLogoutRedirectURI: "/",
		AuthMethodPost:           true,
		SupportedScopes:          []string{oidc.ScopeOpenID},
	}
	// Loopback over plain HTTP: the provider refuses an http issuer
	// unless told it is allowed.
	provider, err := op.NewProvider(cfg, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatalf("oidcop: provider: %v", err)
	}
	p := &Provider{Issuer: issuer, TokenURL: issuer + TokenPath, st: st}
	p.srv = &http.Server{Handler: audienceParam(provider), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = p.srv.Shutdown(ctx)
	})
	return p
}

// DiscoveryURL is the provider's OpenID Connect discovery document.
func (p *Provider) DiscoveryURL() string { return p.Issuer + "/.well-known/openid-configuration" }

// AddClient registers (or replaces) a client.
func (p *Provider) AddClient(c Client) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.clients[c.ID] = c
}

// RotateKey makes a new signing key (with a new kid) the one tokens are
// signed with. With keepOld the JWK Set keeps publishing the previous keys
// (as providers do while tokens signed with them are still valid);
// without it only the new key is published. alg is the new key's
// algorithm (RS256 or ES256).
func (p *Provider) RotateKey(t testing.TB, keepOld bool, alg jose.SignatureAlgorithm) {
	t.Helper()
	if err := p.st.rotate(keepOld, alg); err != nil {
		t.Fatalf("oidcop: rotate key: %v", err)
	}
}

// SigningKeyID is the kid tokens are signed with now.
func (p *Provider) SigningKeyID() string {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	return p.st.keys[len(p.st.keys)-1].id
}

// Token gets an access token for the client with the client-credentials
// grant, over HTTP from the token endpoint (a form POST with HTTP Basic
// client authentication, RFC 6749 §4.4), asking for scopes and, when not
// empty, the audience. It fails t when the provider refuses.
func (p *Provider) Token(t testing.TB, clientID, secret string, scopes []string, audience string) string {
	t.Helper()
	tok, err := p.Fetch(context.Background(), clientID, secret, scopes, audience)
	if err != nil {
		t.Fatalf("oidcop: token for %s: %v", clientID, err)
	}
	return tok
}

// Fetch is Token returning the error. It reads only access_token from
// the answer, so it also returns the tokens of a client whose Lifetime
// is negative (their expires_in is meaningless).
func (p *Provider) Fetch(ctx context.Context, clientID, secret string, scopes []string, audience string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	if audience != "" {
		form.Set("audience", audience)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token endpoint answered %s: %s", resp.Status, body)
	}
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return "", fmt.Errorf("token endpoint answered no access_token: %s", body)
	}
	return tr.AccessToken, nil
}

// audienceKey carries the requested audience to the storage.
type audienceKey struct{}

// audienceParam reads the token request's "audience" parameter (as
// Auth0-style providers take it) and hands it to the storage, which picks
// the token's aud; zitadel's client-credentials request has no audience
// of its own.
func audienceParam(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == TokenPath {
			if err := r.ParseForm(); err == nil {
				if a := r.PostForm.Get("audience"); a != "" {
					r = r.WithContext(context.WithValue(r.Context(), audienceKey{}, a))
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// signingKey is one of the provider's keys.
type signingKey struct {
	id   string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k *signingKey) Key() any                                    { return k.priv }
func (k *signingKey) ID() string                                  { return k.id }

// publicKey is a signingKey as the JWK Set publishes it.
type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return p.k.alg }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return p.k.priv.Public() }

// storage is the provider's op.Storage: registered clients and signing
// keys, nothing else. The interactive flows (authorization code, refresh,
// device, token exchange) are refused.
type storage struct {
	mu      sync.Mutex
	clients map[string]Client
	keys    []*signingKey // published; the last one signs
}

var errUnsupported = errors.New("oidcop: only the client-credentials grant is supported")

func (s *storage) rotate(keepOld bool, alg jose.SignatureAlgorithm) error {
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		return fmt.Errorf("unsupported algorithm %s", alg)
	}
	if err != nil {
		return err
	}
	k := &signingKey{id: uuid.NewString(), alg: alg, priv: priv}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !keepOld {
		s.keys = nil
	}
	s.keys = append(s.keys, k)
	return nil
}

// client implements op.Client for a registered Client.
type client struct{ Client }

func (c client) GetID() string                       { return c.ID }
func (c client) RedirectURIs() []string              { return nil }
func (c client) PostLogoutRedirectURIs() []string    { return nil }
func (c client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c client) ResponseTypes() []oidc.ResponseType  { return nil }
func (c client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c client) LoginURL(string) string               { return "" }
func (c client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c client) IDTokenLifetime() time.Duration       { return time.Hour }
func (c client) DevMode() bool                        { return false }
func (c client) IsScopeAllowed(scope string) bool     { return slices.Contains(c.Scopes, scope) }
func (c client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c client) ClockSkew() time.Duration             { return 0 }
func (c client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// tokenRequest is a granted client-credentials request.
type tokenRequest struct {
	client   Client
	audience []string
	scopes   []string
}

func (r *tokenRequest) GetSubject() string {
	if r.client.Subject != "" {
		return r.client.Subject
	}
	return r.client.ID
}
func (r *tokenRequest) GetAudience() []string { return r.audience }
func (r *tokenRequest) GetScopes() []string   { return r.scopes }

// ClientCredentials authenticates a client.
func (s *storage) ClientCredentials(ctx context.Context, clientID, clientSecret string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok || c.Secret != clientSecret {
		return nil, errors.New("unknown client or wrong secret")
	}
	return client{c}, nil
}

// ClientCredentialsTokenRequest grants the requested scopes the client may
// have, for the requested audience when the client may ask for it.
func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	s.mu.Lock()
	c, ok := s.clients[clientID]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("unknown client")
	}
	req := &tokenRequest{client: c}
	for _, sc := range scopes {
		if slices.Contains(c.Scopes, sc) && !slices.Contains(req.scopes, sc) {
			req.scopes = append(req.scopes, sc)
		}
	}
	if len(c.Audiences) > 0 {
		req.audience = []string{c.Audiences[0]}
		if a, _ := ctx.Value(audienceKey{}).(string); a != "" && slices.Contains(c.Audiences, a) {
			req.audience = []string{a}
		}
	}
	return req, nil
}

// CreateAccessToken records nothing (tokens are JWTs) and sets the expiry.
func (s *storage) CreateAccessToken(ctx context.Context, r op.TokenRequest) (string, time.Time, error) {
	life := time.Hour
	if tr, ok := r.(*tokenRequest); ok && tr.client.Lifetime != 0 {
		life = tr.client.Lifetime
	}
	return uuid.NewString(), time.Now().Add(life), nil
}

// GetPrivateClaimsFromRequest puts the granted scopes (RFC 9068 "scope")
// and the client's extra claims into the access token.
func (s *storage) GetPrivateClaimsFromRequest(ctx context.Context, r op.TokenRequest, scopes []string) (map[string]any, error) {
	out := map[string]any{}
	if tr, ok := r.(*tokenRequest); ok {
		for k, v := range tr.client.Claims {
			out[k] = v
		}
	}
	if len(scopes) > 0 {
		out["scope"] = strings.Join(scopes, " ")
	}
	return out, nil
}

// GetPrivateClaimsFromScopes is not used: GetPrivateClaimsFromRequest is.
func (s *storage) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	return nil, nil
}

// SigningKey is the newest key.
func (s *storage) SigningKey(ctx context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1], nil
}

// SignatureAlgorithms are the algorithms of the published keys.
func (s *storage) SignatureAlgorithms(ctx context.Context) ([]jose.SignatureAlgorithm, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []jose.SignatureAlgorithm
	for _, k := range s.keys {
		if !slices.Contains(out, k.alg) {
			out = append(out, k.alg)
		}
	}
	return out, nil
}

// KeySet is the published JWK Set.
func (s *storage) KeySet(ctx context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, publicKey{k})
	}
	return out, nil
}

// GetClientByClientID returns a registered client.
func (s *storage) GetClientByClientID(ctx context.Context, clientID string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok {
		return nil, errors.New("unknown client")
	}
	return client{c}, nil
}

// AuthorizeClientIDSecret checks a client's secret.
func (s *storage) AuthorizeClientIDSecret(ctx context.Context, clientID, clientSecret string) error {
	_, err := s.ClientCredentials(ctx, clientID, clientSecret)
	return err
}

// Health reports the storage as healthy.
func (s *storage) Health(context.Context) error { return nil }

// The rest of op.Storage belongs to the flows this provider refuses.

func (s *storage) CreateAuthRequest(context.Context, *oidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) AuthRequestByID(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) AuthRequestByCode(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) SaveAuthCode(context.Context, string, string) error { return errUnsupported }
func (s *storage) DeleteAuthRequest(context.Context, string) error    { return errUnsupported }
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errUnsupported
}
func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errUnsupported
}
func (s *storage) TerminateSession(context.Context, string, string) error { return errUnsupported }
func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return oidc.ErrUnsupportedGrantType()
}
func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}
func (s *storage) SetUserinfoFromToken(context.Context, *oidc.UserInfo, string, string, string) error {
	return errUnsupported
}
func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errUnsupported
}
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errUnsupported
}
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errUnsupported
}
