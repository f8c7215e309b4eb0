package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/testharness/oidcop"
)

// oauthAudience is the audience of the server under test.
const oauthAudience = "https://agent.test"

// oauthEnv is a test server that accepts the peer tokens of testAuth and
// the JWT access tokens of a real OpenID provider on loopback, with the
// client "svc" (secret "svc-secret") allowed every scope.
func oauthEnv(t *testing.T, mods ...func(*Options)) (*testEnv, *oidcop.Provider) {
	t.Helper()
	op := oidcop.Start(t)
	op.AddClient(oidcop.Client{ID: "svc", Secret: "svc-secret", Audiences: []string{oauthAudience, "https://elsewhere.test"},
		Scopes: []string{"a2a:send", "a2a:get", "a2a:list", "a2a:cancel", "a2a:subscribe", "a2a:push-config", "a2a:extended-card", "a2a:trusted"}})
	v, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: true,
		Issuers: []security.OAuthIssuer{{Name: "idp", URL: op.Issuer, Audience: oauthAudience}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	auth, err := security.NewAuthenticator(security.AuthConfig{
		PeerTokens:   map[string]string{"alice": tokAlice, "bob": tokBob, "carol": tokCarol},
		TrustedPeers: []string{"alice", "bob"}, OAuth: v,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, append([]func(*Options){func(o *Options) {
		o.Auth = auth
		o.Card.ExtendedSkills = []a2a.AgentSkill{{ID: "secret", Name: "Secret", Description: "Only for the authenticated", Tags: []string{"x"}}}
	}}, mods...)...)
	return e, op
}

func TestOAuthScopesMapToOperations(t *testing.T) {
	e, op := oauthEnv(t)
	tok := func(scopes ...string) string { return op.Token(t, "svc", "svc-secret", scopes, oauthAudience) }

	sendGet := tok("a2a:send", "a2a:get")
	task := e.send(sendGet, "hello", nil)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send: %+v", task)
	}
	e.ok(sendGet, "GetTask", &a2a.GetTaskRequest{ID: task.ID})
	// The task belongs to the token's identity, whatever token it shows.
	e.ok(tok("a2a:get"), "GetTask", &a2a.GetTaskRequest{ID: task.ID})
	if got := e.exec.lastTurn().Sender.ID; got != "oauth:idp:svc" {
		t.Errorf("the host saw caller %q", got)
	}

	for _, tc := range []struct {
		name, token, method string
		params              any
		want                string
	}{
		// Public tier (no trusted scope): the tier's policy refuses list
		// before any scope is looked at.
		{"public tier", tok("a2a:list"), "ListTasks", &a2a.ListTasksRequest{}, `trust tier "public"`},
		// Trusted tier without the scope: the token refuses it.
		{"no list scope", tok("a2a:trusted", "a2a:send"), "ListTasks", &a2a.ListTasksRequest{}, `needs the OAuth scope "a2a:list"`},
		{"no send scope", tok("a2a:get"), "SendMessage", sendParams("x", nil), `needs the OAuth scope "a2a:send"`},
		{"no cancel scope", sendGet, "CancelTask", &a2a.CancelTaskRequest{ID: task.ID}, `needs the OAuth scope "a2a:cancel"`},
		{"no card scope", sendGet, "GetExtendedAgentCard", struct{}{}, `needs the OAuth scope "a2a:extended-card"`},
		{"no push scope", tok("a2a:trusted", "a2a:send"), "SendMessage", sendParams("x", func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://hooks.example/x"}}
		}), `needs the OAuth scope "a2a:push-config"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.fails(tc.token, tc.method, tc.params)
			if err.Code != a2a.CodeUnauthorized || !strings.Contains(err.Message, tc.want) {
				t.Errorf("error = %d %s, want %q", err.Code, err.Message, tc.want)
			}
		})
	}

	// With the scopes (and the trusted tier for list), the same calls work.
	all := tok("a2a:trusted", "a2a:list", "a2a:extended-card")
	list := decode[a2a.ListTasksResponse](t, e.ok(all, "ListTasks", &a2a.ListTasksRequest{}))
	if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Errorf("list = %+v", list)
	}
	card := decode[a2a.AgentCard](t, e.ok(all, "GetExtendedAgentCard", struct{}{}))
	if len(card.Skills) == 0 || card.Skills[len(card.Skills)-1].ID != "secret" {
		t.Errorf("extended card skills = %+v", card.Skills)
	}
	// The extended card requires exactly what the public card does.
	if _, ok := card.SecuritySchemes["oauth2-idp"]; !ok || len(card.SecurityRequirements) != 3 {
		t.Errorf("extended card security = %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
	}
	// Static tokens keep working beside OAuth.
	e.send(tokAlice, "static", nil)
}

func TestOAuthRefusalsOverHTTP(t *testing.T) {
	e, op := oauthEnv(t)
	op.AddClient(oidcop.Client{ID: "old", Secret: "s", Scopes: []string{"a2a:send"}, Audiences: []string{oauthAudience}, Lifetime: -1e12})
	body, _ := a2a.MarshalRequest(1, "SendMessage", sendParams("x", nil))
	for _, tc := range []struct{ name, token, want string }{
		{"expired", op.Token(t, "old", "s", []string{"a2a:send"}, ""), "has expired"},
		{"wrong audience", op.Token(t, "svc", "svc-secret", []string{"a2a:send"}, "https://elsewhere.test"), "audience (aud) is not this agent"},
	} {
		status, hdr, b := e.post(tc.token, body, nil)
		if status != http.StatusUnauthorized || !bytes.Contains(b, []byte(tc.want)) ||
			!strings.Contains(hdr.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: HTTP %d %s %q", tc.name, status, b, hdr.Get("WWW-Authenticate"))
		}
		a2atest.ValidateJSONRPCResponse(t, b, "")
	}
}

func TestOAuthCardDeclaresWhatIsAccepted(t *testing.T) {
	e, op := oauthEnv(t)
	// The token endpoint comes from discovery: make sure it has run.
	if _, err := e.srv.opts.Auth.OAuth().Authenticate(t.Context(), op.Token(t, "svc", "svc-secret", nil, oauthAudience)); err != nil {
		t.Fatal(err)
	}
	card := e.srv.card.buildCard(e.url+"/", nil, false)
	a2atest.ValidateJSON(t, "Agent Card", mustJSON(card))
	oauth := card.SecuritySchemes["oauth2-idp"].OAuth2
	if oauth == nil || oauth.Flows.ClientCredentials == nil || oauth.Flows.ClientCredentials.TokenURL != op.TokenURL {
		t.Fatalf("oauth2 scheme = %+v", card.SecuritySchemes["oauth2-idp"])
	}
	if oauth.Flows.AuthorizationCode != nil || len(oauth.Flows.ClientCredentials.Scopes) != 8 ||
		!strings.Contains(oauth.Flows.ClientCredentials.Scopes["a2a:list"], "ListTasks") ||
		!strings.Contains(oauth.Description, oauthAudience) {
		t.Errorf("oauth2 scheme = %+v", oauth)
	}
	if oidc := card.SecuritySchemes["oidc-idp"].OpenIDConnect; oidc == nil || oidc.OpenIDConnectURL != op.DiscoveryURL() {
		t.Errorf("oidc scheme = %+v", card.SecuritySchemes["oidc-idp"])
	}
	if b := card.SecuritySchemes[bearerScheme].HTTPAuth; b == nil || b.Scheme != "Bearer" {
		t.Errorf("bearer scheme = %+v", card.SecuritySchemes[bearerScheme])
	}
	var got []string
	for _, r := range card.SecurityRequirements {
		for n := range r.Schemes {
			got = append(got, n)
		}
	}
	if strings.Join(got, ",") != "bearer,oauth2-idp,oidc-idp" {
		t.Errorf("requirements = %v", got)
	}
	// The served card (0.3 keys too, on this path) carries the same.
	status, _, b := e.do(mustRequest(t, http.MethodGet, e.url+"/.well-known/agent-card.json"), "", nil)
	if status != http.StatusOK || !bytes.Contains(b, []byte(`"tokenUrl":"`+op.TokenURL+`"`)) || !bytes.Contains(b, []byte(`"openIdConnectUrl":"`+op.DiscoveryURL()+`"`)) {
		t.Errorf("served card: HTTP %d %s", status, b)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
