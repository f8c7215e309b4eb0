package config

import (
	"strings"
	"testing"
	"time"
)

func TestOAuthSettingsLoad(t *testing.T) {
	c, err := Load([]byte(`{
		"host": "0.0.0.0",
		"oauth_issuers": [{"issuer": "https://idp.example.com", "audience": "https://agent.example.com", "trusted_claim": "groups", "trusted_values": ["a2a-admins"]}],
		"a2a_agents": [{"name": "bob", "url": "https://bob.example.com", "oauth2": {"token_url": "https://idp.example.com/oauth/token", "client_id": "alice",
			"client_secret_file": "/run/secrets/alice", "scopes": ["a2a:send", "a2a:get"], "audience": "https://bob.example.com"}}]}`),
		env(map[string]string{"A2A_OAUTH_CLOCK_SKEW": "45s"}))
	if err != nil {
		t.Fatal(err)
	}
	// An issuer alone is enough to expose the agent.
	if !c.HasToken() || len(c.OAuthIssuers) != 1 || c.OAuthIssuers[0].IssuerName() != "idp.example.com" || time.Duration(c.OAuthClockSkew) != 45*time.Second {
		t.Errorf("config = %+v", c)
	}
	if o := c.Agents[0].OAuth2; o == nil || o.ClientID != "alice" || len(o.Scopes) != 2 || o.Audience != "https://bob.example.com" {
		t.Errorf("peer oauth2 = %+v", o)
	}
	// From the environment too.
	c, err = Load(nil, env(map[string]string{"A2A_OAUTH_ISSUERS": `[{"name":"corp","issuer":"http://127.0.0.1:9000","audience":"a"}]`, "A2A_OAUTH_ALLOW_LOOPBACK_HTTP": "true"}))
	if err != nil || len(c.OAuthIssuers) != 1 || c.OAuthIssuers[0].IssuerName() != "corp" || time.Duration(c.OAuthClockSkew) != 30*time.Second {
		t.Errorf("from the environment: %+v, %v", c, err)
	}
}

func TestOAuthMistakesNameWhatToFix(t *testing.T) {
	peer := func(oauth string) string {
		return `{"a2a_agents":[{"name":"bob","url":"https://bob.example","oauth2":` + oauth + `}]}`
	}
	for _, tc := range []struct {
		name, section string
		env           map[string]string
		want          string
	}{
		{"http issuer", `{"oauth_issuers":[{"issuer":"http://idp.example","audience":"a"}]}`, nil, `"http://idp.example" must be https`},
		{"loopback issuer without the allowance", `{"oauth_issuers":[{"issuer":"http://127.0.0.1:8080","audience":"a"}]}`, nil, "A2A_OAUTH_ALLOW_LOOPBACK_HTTP"},
		{"no audience", `{"oauth_issuers":[{"issuer":"https://idp.example"}]}`, nil, "audience is empty"},
		{"misspelled issuer key", `{"oauth_issuers":[{"issuer":"https://idp.example","audiance":"a"}]}`, nil, `did you mean "audience"`},
		{"same name twice", `{"oauth_issuers":[{"issuer":"https://idp.example/a","audience":"a"},{"issuer":"https://idp.example/b","audience":"a"}]}`, nil, `both named "idp.example"`},
		{"bad environment list", ``, map[string]string{"A2A_OAUTH_ISSUERS": `{"issuer":"x"}`}, "A2A_OAUTH_ISSUERS"},
		{"skew too large", ``, map[string]string{"A2A_OAUTH_CLOCK_SKEW": "1h"}, "oauth_clock_skew"},
		{"peer without secret", peer(`{"token_url":"https://idp.example/token","client_id":"a"}`), nil, "client_secret_file, client_secret_env or client_secret_command"},
		{"peer with two secrets", peer(`{"token_url":"https://idp.example/token","client_id":"a","client_secret_env":"S","client_secret_file":"/s"}`), nil, "sets client_secret_file and client_secret_env; use one"},
		{"peer without token url", peer(`{"client_id":"a","client_secret_env":"S"}`), nil, "token_url is missing"},
		{"peer with http token url", peer(`{"token_url":"http://idp.example/token","client_id":"a","client_secret_env":"S"}`), nil, "must be https"},
		{"peer misspelled key", peer(`{"token_url":"https://idp.example/token","client_id":"a","client_secret_evn":"S"}`), nil, `did you mean "client_secret_env"`},
		{"peer oauth2 and a token", `{"a2a_agents":[{"name":"bob","url":"https://bob.example","token":"t","oauth2":{"token_url":"https://i/t","client_id":"a","client_secret_env":"S"}}]}`, nil, "sets token and oauth2; use one credential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load([]byte(tc.section), env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
