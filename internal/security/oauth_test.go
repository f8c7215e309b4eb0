package security_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/testharness/oidcop"
)

// The audience tokens for the agent under test carry.
const agentAudience = "https://agent.test"

// allScopes are the operation scopes of the default prefix.
var allScopes = []string{"a2a:send", "a2a:get", "a2a:list", "a2a:cancel", "a2a:subscribe", "a2a:push-config", "a2a:extended-card", "a2a:trusted"}

// countingTransport counts the requests per path.
type countingTransport struct {
	jwks atomic.Int64
	all  atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.all.Add(1)
	if r.URL.Path == "/keys" {
		c.jwks.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// newOP starts a provider with the client "agent-a" (send and get) and
// returns it with a verifier for it.
func newOP(t *testing.T, mod func(*security.OAuthConfig)) (*oidcop.Provider, *security.OAuthVerifier, *countingTransport) {
	t.Helper()
	op := oidcop.Start(t)
	op.AddClient(oidcop.Client{ID: "agent-a", Secret: "secret-a", Scopes: allScopes, Audiences: []string{agentAudience, "https://other.test"}})
	ct := &countingTransport{}
	cfg := security.OAuthConfig{
		Issuers:           []security.OAuthIssuer{{Name: "idp", URL: op.Issuer, Audience: agentAudience}},
		AllowLoopbackHTTP: true,
		Transport:         ct,
	}
	if mod != nil {
		mod(&cfg)
	}
	v, err := security.NewOAuthVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return op, v, ct
}

func TestOAuthDiscoveryAndAClientCredentialsToken(t *testing.T) {
	op, v, ct := newOP(t, nil)
	tok := op.Token(t, "agent-a", "secret-a", []string{"a2a:send", "a2a:get"}, agentAudience)
	id, err := v.Authenticate(context.Background(), tok)
	if err != nil {
		t.Fatalf("token refused: %v", err)
	}
	if id.ID != "oauth:idp:agent-a" || id.Tier != security.TierPublic || !id.Authenticated || !id.Scoped {
		t.Errorf("identity = %+v", id)
	}
	for p, want := range map[security.Permission]bool{security.PermSend: true, security.PermGet: true, security.PermList: false, security.PermPushConfig: false} {
		if id.Permits(p) != want {
			t.Errorf("Permits(%s) = %v, want %v", p, !want, want)
		}
	}
	// Discovery found the token endpoint, which the card advertises.
	s := v.Schemes()
	if len(s) != 1 || s[0].TokenURL != op.TokenURL || s[0].DiscoveryURL != op.DiscoveryURL() || s[0].Issuer != "idp" {
		t.Errorf("schemes = %+v", s)
	}
	if len(s[0].Scopes) != 8 || s[0].Scopes[0].Name != "a2a:send" || s[0].Scopes[7].Name != "a2a:trusted" {
		t.Errorf("scopes = %+v", s[0].Scopes)
	}
	// A second token is checked with the cached keys.
	before := ct.jwks.Load()
	if _, err := v.Authenticate(context.Background(), op.Token(t, "agent-a", "secret-a", []string{"a2a:list"}, agentAudience)); err != nil {
		t.Fatal(err)
	}
	if ct.jwks.Load() != before || before != 1 {
		t.Errorf("JWK Set fetched %d times, then %d", before, ct.jwks.Load())
	}
}

func TestOAuthRefusesBadTokensSayingWhichCheckFailed(t *testing.T) {
	op, v, _ := newOP(t, nil)
	op.AddClient(oidcop.Client{ID: "old", Secret: "s", Scopes: allScopes, Audiences: []string{agentAudience}, Lifetime: -time.Hour})
	other := oidcop.Start(t) // a real provider this agent does not accept
	other.AddClient(oidcop.Client{ID: "agent-a", Secret: "secret-a", Scopes: allScopes, Audiences: []string{agentAudience}})
	good := op.Token(t, "agent-a", "secret-a", []string{"a2a:send"}, agentAudience)
	parts := strings.Split(good, ".")

	// tampered: the payload says another subject; the signature is the original's.
	var claims map[string]any
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(payload, &claims)
	claims["sub"] = "admin"
	forged, _ := json.Marshal(claims)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2]
	// unsigned: alg none, the original claims, no signature.
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	// HS256 with a secret anyone could choose.
	hsHead := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	mac := hmac.New(sha256.New, []byte("guess"))
	mac.Write([]byte(hsHead + "." + parts[1]))
	hs := hsHead + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	for _, tc := range []struct {
		name, token, want string
	}{
		{"expired", op.Token(t, "old", "s", []string{"a2a:send"}, ""), "has expired (exp)"},
		{"wrong audience", op.Token(t, "agent-a", "secret-a", []string{"a2a:send"}, "https://other.test"), "audience (aud) is not this agent"},
		{"wrong issuer", other.Token(t, "agent-a", "secret-a", []string{"a2a:send"}, agentAudience), "issuer (iss) is not one this agent accepts"},
		{"tampered", tampered, "signature does not verify"},
		{"unsigned", none, `unsigned (alg "none")`},
		{"hmac", hs, "signing algorithm is not accepted"},
		{"not a jwt", "just-a-random-token", "not a signed JWT"},
		{"garbage jwt", "aGVsbG8.d29ybGQ.eA", "not a signed JWT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Authenticate(context.Background(), tc.token)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, security.ErrUnauthorized) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
			// Nothing useful to an attacker: neither the token nor the
			// configuration is echoed.
			for _, secret := range []string{tc.token, agentAudience, op.Issuer, parts[2]} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q echoes %q", err, secret)
				}
			}
		})
	}
}

func TestOAuthClockSkewOnExpiryAndNotBefore(t *testing.T) {
	var now atomic.Pointer[time.Time]
	op, v, _ := newOP(t, func(c *security.OAuthConfig) {
		c.ClockSkew = 20 * time.Second
		c.Now = func() time.Time { return *now.Load() }
	})
	set := func(t time.Time) { now.Store(&t) }
	set(time.Now())
	tok := op.Token(t, "agent-a", "secret-a", []string{"a2a:send"}, agentAudience)
	var c jwt.Claims
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	_ = parsed.UnsafeClaimsWithoutVerification(&c)
	exp, nbf := c.Expiry.Time(), c.NotBefore.Time()
	for _, tc := range []struct {
		at   time.Time
		want string // "" accepted
	}{
		{exp.Add(19 * time.Second), ""},
		{exp.Add(21 * time.Second), "has expired"},
		{nbf.Add(-19 * time.Second), ""},
		{nbf.Add(-21 * time.Second), "not valid yet"},
	} {
		set(tc.at)
		_, err := v.Authenticate(context.Background(), tok)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("at %s: refused within the skew: %v", tc.at, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("at %s: error = %v, want %q", tc.at, err, tc.want)
		}
	}
}

func TestOAuthPicksUpKeyRotation(t *testing.T) {
	op, v, ct := newOP(t, func(c *security.OAuthConfig) { c.KeyRefetch = -1 })
	first := op.SigningKeyID()
	if _, err := v.Authenticate(context.Background(), op.Token(t, "agent-a", "secret-a", nil, agentAudience)); err != nil {
		t.Fatal(err)
	}
	// The provider rotates to a new key (another algorithm too) and stops
	// publishing the old one.
	op.RotateKey(t, false, jose.ES256)
	if op.SigningKeyID() == first {
		t.Fatal("the key did not change")
	}
	tok := op.Token(t, "agent-a", "secret-a", []string{"a2a:get"}, agentAudience)
	id, err := v.Authenticate(context.Background(), tok)
	if err != nil {
		t.Fatalf("a token signed with the rotated key was refused: %v", err)
	}
	if !id.Permits(security.PermGet) {
		t.Errorf("identity = %+v", id)
	}
	if n := ct.jwks.Load(); n != 2 {
		t.Errorf("JWK Set fetched %d times, want 2 (first use, unknown kid)", n)
	}
}

func TestOAuthBoundsKeyFetchesOfUnknownKeys(t *testing.T) {
	op, v, ct := newOP(t, nil) // the default refetch interval
	if _, err := v.Authenticate(context.Background(), op.Token(t, "agent-a", "secret-a", nil, agentAudience)); err != nil {
		t.Fatal(err)
	}
	// Tokens with the right issuer and audience, signed by a key the
	// provider never published, under made-up kids.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for i := range 5 {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "forged-" + string(rune('a'+i))}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		forged, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: op.Issuer, Subject: "admin", Audience: jwt.Audience{agentAudience},
			Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Authenticate(context.Background(), forged); err == nil || !strings.Contains(err.Error(), "signature does not verify") {
			t.Fatalf("forged token: %v", err)
		}
	}
	if n := ct.jwks.Load(); n != 1 {
		t.Errorf("the provider's JWK Set was fetched %d times for 5 forged kids; want 1 (one fetch per %s)", n, security.DefaultKeyRefetch)
	}
}

func TestOAuthMapsClaimsToTiersAndIdentities(t *testing.T) {
	op, v, _ := newOP(t, nil)
	op.AddClient(oidcop.Client{ID: "ops", Secret: "s", Subject: "svc-ops", Scopes: allScopes, Audiences: []string{agentAudience},
		Claims: map[string]any{"groups": []string{"staff", "a2a-admins"}, "client_id": "ops"}})

	// The trusted scope gives the trusted tier.
	id, err := v.Authenticate(context.Background(), op.Token(t, "agent-a", "secret-a", []string{"a2a:send", "a2a:trusted"}, agentAudience))
	if err != nil || id.Tier != security.TierTrusted {
		t.Errorf("trusted scope: %+v, %v", id, err)
	}

	// A claim of the operator's choice names the caller, another gives the
	// tier, and scopes may be ignored.
	v2, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: true, Issuers: []security.OAuthIssuer{{
		Name: "corp", URL: op.Issuer, Audience: agentAudience, IdentityClaim: "client_id",
		TrustedClaim: "groups", TrustedValues: []string{"a2a-admins"}, IgnoreScopes: true,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	id, err = v2.Authenticate(context.Background(), op.Token(t, "ops", "s", nil, agentAudience))
	if err != nil || id.ID != "oauth:corp:ops" || id.Tier != security.TierTrusted || id.Scoped || !id.Permits(security.PermList) {
		t.Errorf("claims: %+v, %v", id, err)
	}
	// agent-a's token has a client_id claim too but is not in the group.
	id, err = v2.Authenticate(context.Background(), op.Token(t, "agent-a", "secret-a", nil, agentAudience))
	if err != nil || id.Tier != security.TierPublic {
		t.Errorf("not in the group: %+v, %v", id, err)
	}
	// A token without the identity claim is refused.
	v3, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: true, Issuers: []security.OAuthIssuer{{
		Name: "corp", URL: op.Issuer, Audience: agentAudience, IdentityClaim: "email"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer v3.Close()
	if _, err := v3.Authenticate(context.Background(), op.Token(t, "ops", "s", nil, agentAudience)); err == nil || !strings.Contains(err.Error(), `no "email" claim`) {
		t.Errorf("missing claim: %v", err)
	}
}

func TestOAuthStaticTokensKeepWorkingBesideIt(t *testing.T) {
	op, v, _ := newOP(t, nil)
	a, err := security.NewAuthenticator(security.AuthConfig{PeerTokens: map[string]string{"bob": "bob-token-0123456789"}, LoopbackIsLocal: true, OAuth: v})
	if err != nil {
		t.Fatal(err)
	}
	if !a.RequiresAuth() {
		t.Error("an OAuth issuer alone must require authentication")
	}
	req := func(tok string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.RemoteAddr = "127.0.0.1:5555"
		r.Header.Set("Authorization", "Bearer "+tok)
		return r
	}
	if id, err := a.Authenticate(req("bob-token-0123456789")); err != nil || id.ID != "peer:bob" || id.Scoped {
		t.Errorf("static token: %+v, %v", id, err)
	}
	id, err := a.Authenticate(req(op.Token(t, "agent-a", "secret-a", []string{"a2a:send"}, agentAudience)))
	if err != nil || id.ID != "oauth:idp:agent-a" || id.Remote != "127.0.0.1" {
		t.Errorf("oauth token: %+v, %v", id, err)
	}
	// On loopback too, a token names its holder: never Local.
	if id.Tier == security.TierLocal {
		t.Errorf("an OAuth caller on loopback got the Local tier")
	}
	if _, err := a.Authenticate(req("wrong-token")); err == nil || !strings.Contains(err.Error(), "not a signed JWT") {
		t.Errorf("wrong token: %v", err)
	}
}

func TestOAuthIssuerURLs(t *testing.T) {
	for _, tc := range []struct {
		url       string
		allowHTTP bool
		want      string
	}{
		{"http://idp.example.com", true, "must be https"},
		{"http://127.0.0.1:9", false, "A2A_OAUTH_ALLOW_LOOPBACK_HTTP"},
		{"ftp://idp.example.com", true, "must be an https URL"},
		{"https://idp.example.com?x=1", false, "without credentials, query or fragment"},
		{"https://idp.example.com", false, ""},
		{"http://localhost:8080", true, ""},
	} {
		_, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: tc.allowHTTP,
			Issuers: []security.OAuthIssuer{{Name: "x", URL: tc.url, Audience: "a"}}})
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s (allow http %v): %v, want %q", tc.url, tc.allowHTTP, err, tc.want)
		}
	}
	if _, err := security.NewOAuthVerifier(security.OAuthConfig{Issuers: []security.OAuthIssuer{{Name: "x", URL: "https://idp.example.com"}}}); err == nil || !strings.Contains(err.Error(), "audience is empty") {
		t.Errorf("no audience: %v", err)
	}
}

func TestOAuthUnreachableIssuer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	v, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: true, Issuers: []security.OAuthIssuer{{Name: "gone", URL: url, Audience: "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	tok, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: url, Subject: "x", Audience: jwt.Audience{"a"}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if _, err := v.Authenticate(context.Background(), tok); err == nil || !strings.Contains(err.Error(), "could not be fetched; try again later") {
		t.Errorf("unreachable issuer: %v", err)
	}
	if s := v.Schemes(); len(s) != 1 || s[0].TokenURL != "" || s[0].DiscoveryURL != url+"/.well-known/openid-configuration" {
		t.Errorf("schemes = %+v", s)
	}
}

// FuzzOAuthAuthenticate: whatever a client sends as a bearer token, the
// verifier refuses it with ErrUnauthorized (no signed token of the
// configured issuer can be made up) and never echoes it.
func FuzzOAuthAuthenticate(f *testing.F) {
	issuer := "http://127.0.0.1:9" // nothing listens: discovery fails fast
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	signed, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: issuer, Subject: "x", Audience: jwt.Audience{"a"}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	parts := strings.Split(signed, ".")
	for _, seed := range []string{
		signed, parts[0] + "." + parts[1] + ".", "e30.e30.", "a.b.c", "..", "not-a-jwt",
		base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + ".",
		base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"../../etc"}`)) + "." + parts[1] + "." + parts[2],
		`{"payload":"e30","signatures":[]}`,
	} {
		f.Add(seed)
	}
	v, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: true,
		Issuers: []security.OAuthIssuer{{Name: "idp", URL: issuer, Audience: "a"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(v.Close)
	f.Fuzz(func(t *testing.T, token string) {
		id, err := v.Authenticate(context.Background(), token)
		if err == nil {
			t.Fatalf("a made-up token was accepted: %+v", id)
		}
		if !errors.Is(err, security.ErrUnauthorized) {
			t.Fatalf("error %v does not wrap ErrUnauthorized", err)
		}
		if len(token) >= 12 && strings.Contains(err.Error(), token) {
			t.Fatalf("error %q echoes the token", err)
		}
	})
}
