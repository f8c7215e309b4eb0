package tools

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/testharness/oidcop"
)

// The audience of the OAuth-protected peer.
const peerAudience = "https://mail.test"

// oauthPeer is an A2A peer protecting itself with OAuth: it checks every
// bearer token with security.OAuthVerifier against the real provider on
// loopback and refuses the tokens it was told to revoke. "mail …" asks
// for credentials (AUTH_REQUIRED); the next message on that task
// completes it.
type oauthPeer struct {
	*tokenPeer
	revoked sync.Map // token → true
}

func newOAuthPeer(t *testing.T, op *oidcop.Provider) *oauthPeer {
	t.Helper()
	v, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: true,
		Issuers: []security.OAuthIssuer{{Name: "idp", URL: op.Issuer, Audience: peerAudience}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	p := &oauthPeer{tokenPeer: newTokenPeer(t, "")}
	inner := p.srv.Config.Handler
	p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/rpc" {
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			if _, revoked := p.revoked.Load(tok); revoked {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if _, err := v.Authenticate(r.Context(), tok); err != nil {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			// The token is good: let the token peer's check pass.
			p.accept.Store(tok)
		}
		inner.ServeHTTP(w, r)
	})
	return p
}

// countTokens counts the token requests that reach the provider.
type countTokens struct{ n atomic.Int64 }

func (c *countTokens) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == oidcop.TokenPath {
		c.n.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestOAuthPeerTokensAreFetchedCachedAndRefreshed: a peer configured with
// OAuth 2.0 client credentials gets a token from the real provider on
// first use, keeps it across calls, gets a new one when the peer refuses
// it (401) or asks for credentials (AUTH_REQUIRED, resuming the task), and
// shortly before it expires.
func TestOAuthPeerTokensAreFetchedCachedAndRefreshed(t *testing.T) {
	op := oidcop.Start(t)
	op.AddClient(oidcop.Client{ID: "alice", Secret: "alice-secret", Scopes: []string{"a2a:send", "a2a:get"},
		Audiences: []string{"https://someone-else.test", peerAudience}, Lifetime: 10 * time.Minute})
	p := newOAuthPeer(t, op)
	secretFile := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secretFile, "alice-secret\n")
	var clock atomic.Pointer[time.Time]
	now := time.Now()
	clock.Store(&now)
	counter := &countTokens{}
	ts, err := New(Config{Agents: []config.Peer{{Name: "mail", URL: p.srv.URL, OAuth2: &config.PeerOAuth{
		TokenURL: op.TokenURL, ClientID: "alice", ClientSecretFile: secretFile, Scopes: []string{"a2a:send", "a2a:get"}, Audience: peerAudience,
	}}}}, Deps{Store: store.NewMemory(100), tokenClient: &http.Client{Transport: counter}, Now: func() time.Time { return *clock.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	call := func(msg string, want ...string) {
		t.Helper()
		mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "mail", "message": msg}, nil), want...)
	}
	call("hi", "hello")
	call("hi again", "hello")
	if n := counter.n.Load(); n != 1 {
		t.Fatalf("%d token requests for two calls; want 1 (the token is kept)", n)
	}
	_, auth := p.messages()
	first := auth[0]
	if auth[1] != first || !strings.HasPrefix(first, "Bearer ey") {
		t.Fatalf("authorizations %v", auth)
	}

	// The peer stops accepting the token: a 401, a new token, one retry.
	p.revoked.Store(strings.TrimPrefix(first, "Bearer "), true)
	call("after revocation", "hello")
	if n := counter.n.Load(); n != 2 {
		t.Fatalf("%d token requests after a 401; want 2", n)
	}

	// The peer asks for credentials: a new token, and the task resumes.
	call("mail me my inbox", "3 new mails", "asked for credentials", "the OAuth 2.0 client credentials")
	if n := counter.n.Load(); n != 3 {
		t.Fatalf("%d token requests after AUTH_REQUIRED; want 3", n)
	}

	// Shortly before it expires (a quarter of its 10 minutes, at most a
	// minute, before), the token is replaced before it is used.
	later := now.Add(10*time.Minute - 59*time.Second)
	clock.Store(&later)
	call("near expiry", "hello")
	if n := counter.n.Load(); n != 4 {
		t.Fatalf("%d token requests near expiry; want 4", n)
	}
	msgs, auth := p.messages()
	if len(msgs) != len(auth) || auth[len(auth)-1] == auth[len(auth)-2] {
		t.Fatalf("the last call used the old token: %v", auth)
	}
	// The peer accepted every token, so each was asked for its audience:
	// the provider's default audience for alice is another one.
}

// TestOAuthPeerTokenFailuresSayWhy: a wrong secret, a missing secret
// variable and a failing command are reported with what to fix, never
// with the secret.
func TestOAuthPeerTokenFailuresSayWhy(t *testing.T) {
	op := oidcop.Start(t)
	op.AddClient(oidcop.Client{ID: "alice", Secret: "right-secret", Scopes: []string{"a2a:send"}, Audiences: []string{peerAudience}})
	p := newOAuthPeer(t, op)
	t.Setenv("A2A_TEST_ALICE_SECRET", "wrong-secret-value")
	oc := func(mod func(*config.PeerOAuth)) *config.PeerOAuth {
		c := &config.PeerOAuth{TokenURL: op.TokenURL, ClientID: "alice", Scopes: []string{"a2a:send"}, Audience: peerAudience}
		mod(c)
		return c
	}
	ts, _ := newToolset(t, Config{Agents: []config.Peer{
		{Name: "wrong", URL: p.srv.URL, OAuth2: oc(func(c *config.PeerOAuth) { c.ClientSecretEnv = "A2A_TEST_ALICE_SECRET" })},
		{Name: "unset", URL: p.srv.URL, OAuth2: oc(func(c *config.PeerOAuth) { c.ClientSecretEnv = "A2A_TEST_UNSET_SECRET" })},
		{Name: "cmd", URL: p.srv.URL, OAuth2: oc(func(c *config.PeerOAuth) { c.ClientSecretCommand = "echo vault sealed >&2; exit 2" })},
		{Name: "good", URL: p.srv.URL, OAuth2: oc(func(c *config.PeerOAuth) { c.ClientSecretCommand = "printf right-secret" })},
	}}, nil)
	for _, tc := range []struct{ peer, want string }{
		{"wrong", "invalid_client"},
		{"unset", "A2A_TEST_UNSET_SECRET is empty or not set"},
		{"cmd", "client_secret_command: the command failed"},
	} {
		r := callTool(t, ts, ToolCall, map[string]any{"agent": tc.peer, "message": "hi"}, nil)
		mustErr(t, r, fmt.Sprintf("a2a_agents[%q].oauth2", tc.peer), tc.want)
		if strings.Contains(r.Content, "wrong-secret-value") || strings.Contains(r.Content, "right-secret") {
			t.Errorf("%s: the result shows the secret:\n%s", tc.peer, r.Content)
		}
	}
	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "good", "message": "hi"}, nil), "hello")
}

// TestPeerAskingForOAuthWithoutCredentialsSaysWhatToSet: a peer whose
// card declares OAuth 2.0 client credentials and OpenID Connect refuses a
// call without a token; the tool error says which oauth2 settings to give.
func TestPeerAskingForOAuthWithoutCredentialsSaysWhatToSet(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"vault","description":"d","version":"1","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		 "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"s","tags":["t"]}],
		 "securitySchemes":{"oauth2-corp":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://idp.corp.test/token","scopes":{"a2a:send":"send","a2a:get":"get"}}}}},
		   "oidc-corp":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://idp.corp.test/.well-known/openid-configuration"}}},
		 "securityRequirements":[{"schemes":{"oauth2-corp":{}}},{"schemes":{"oidc-corp":{}}}]}`, srv.URL)
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "vault", URL: srv.URL}}}, nil)
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "vault", "message": "hi"}, nil)
	mustErr(t, r, "authentication refused (HTTP 401)",
		`The peer's card asks for OAuth 2.0 client credentials at token URL "https://idp.corp.test/token" or OpenID Connect tokens (discovery "https://idp.corp.test/.well-known/openid-configuration"), and no credentials are configured for it`,
		`set a2a_agents["vault"].oauth2`, `"token_url"`, `"client_id"`, `"client_secret_file", "client_secret_env" or "client_secret_command"`, `"scopes": ["a2a:get", "a2a:send"]`, `"audience"`)
	// a2a_discover says so before any call.
	d := callTool(t, ts, ToolDiscover, map[string]any{"url": "vault"}, nil)
	mustOK(t, d, `OAuth 2.0 client credentials (token URL "https://idp.corp.test/token") or OpenID Connect`, `set a2a_agents["vault"].oauth2`)
	// a2a_task too.
	mustErr(t, callTool(t, ts, ToolTask, map[string]any{"agent": "vault", "task_id": "t1", "action": "get"}, nil), `set a2a_agents["vault"].oauth2`)
}
