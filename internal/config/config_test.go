package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultsAreSafe(t *testing.T) {
	c, err := Load(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "127.0.0.1" || c.Port != 41241 || c.Store != "sqlite" || !c.LoopbackIsLocal || !c.PushEnabled {
		t.Fatalf("defaults = %+v", c)
	}
	if time.Duration(c.RequestTimeout) != time.Minute || c.MaxPingPongTurns != 5 || c.HasToken() || c.OtelEndpoint != "" {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestEnvironmentOverridesHostSection(t *testing.T) {
	c, err := Load([]byte(`{"port": 9000, "agent_name": "From config", "request_timeout": "5s", "a2a_agents": [{"name":"bob","url":"http://127.0.0.1:1"}]}`),
		env(map[string]string{"A2A_PORT": "9100", "A2A_PEER_TOKENS": "alice:t1, bob:t2", "A2A_ADVERTISED_TOOLSETS": "web, files"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 9100 || c.AgentName != "From config" || time.Duration(c.RequestTimeout) != 5*time.Second {
		t.Fatalf("got %+v", c)
	}
	if c.PeerTokens["alice"] != "t1" || c.PeerTokens["bob"] != "t2" || len(c.AdvertisedToolsets) != 2 || len(c.Agents) != 1 {
		t.Fatalf("got %+v", c)
	}
}

func TestBadSettingsNameWhatToFix(t *testing.T) {
	tests := []struct {
		name    string
		section string
		env     map[string]string
		want    string
	}{
		{"unknown key", `{"prot": 1}`, nil, `unknown setting "prot"`},
		{"near miss", `{"Agent-Name": "x"}`, nil, `did you mean "agent_name"`},
		{"not an object", `[1]`, nil, "not a JSON object"},
		{"bad number", ``, map[string]string{"A2A_PORT": "http"}, "A2A_PORT"},
		{"exposed without token", ``, map[string]string{"A2A_HOST": "0.0.0.0"}, "A2A_BEARER_TOKEN"},
		{"tls half", ``, map[string]string{"A2A_TLS_CERT": "c.pem"}, "A2A_TLS_KEY"},
		{"bad store", `{"store": "redis"}`, nil, "sqlite, memory or postgres"},
		{"postgres without a DSN", `{"store": "postgres"}`, nil, "A2A_POSTGRES_DSN"},
		{"tiny replica lease", `{"store": "postgres", "postgres_dsn": "postgres://db/a2a", "replica_lease": "1ms"}`, nil, "replica_lease"},
		{"replicas without a shared push secret", `{"store": "postgres", "postgres_dsn": "postgres://db/a2a"}`, nil, "A2A_PUSH_SECRET"},
		// The bearer token never signs webhooks, so it is no shared key.
		{"replicas with a bearer token but no push secret", `{"store": "postgres", "postgres_dsn": "postgres://db/a2a", "bearer_token": "a-token-of-sufficient-length"}`, nil, "A2A_PUSH_SECRET"},
		{"trusted without token", ``, map[string]string{"A2A_TRUSTED_PEERS": "carol"}, `"carol" has no token`},
		{"malformed pairs", ``, map[string]string{"A2A_PEER_TOKENS": "alice"}, "name:value"},
		{"duplicate peer", `{"a2a_agents":[{"name":"a","url":"http://x"},{"name":"a","url":"http://y"}]}`, nil, "is already used by a2a_agents[0]"},
		{"bad peer url", `{"a2a_agents":[{"name":"a","url":"ftp://x"}]}`, nil, `a2a_agents[0] ("a").url: "ftp://x" must start with http:// or https://`},
		{"two peer credentials", `{"a2a_agents":[{"name":"a","url":"http://x","token":"t","token_file":"/run/a.token"}]}`, nil, `a2a_agents[0] ("a") sets token and token_file; use one`},
		{"command and header", `{"a2a_agents":[{"name":"a","url":"http://x","token_command":"pass a","header":"X-K: v"}]}`, nil, "sets token_command and header; use one"},
		{"bad duration", ``, map[string]string{"A2A_REQUEST_TIMEOUT": "soon"}, "duration"},
		{"bad otel endpoint", ``, map[string]string{"A2A_OTEL_ENDPOINT": "127.0.0.1:4318"}, "A2A_OTEL_ENDPOINT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load([]byte(tc.section), env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestTokenAndExplicitHostWidenTheBind(t *testing.T) {
	c, err := Load(nil, env(map[string]string{"A2A_HOST": "0.0.0.0", "A2A_BEARER_TOKEN": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr() != "0.0.0.0:41241" {
		t.Fatalf("addr = %s", c.Addr())
	}
	// A token alone does not widen the bind.
	c, _ = Load(nil, env(map[string]string{"A2A_BEARER_TOKEN": "s3cret"}))
	if c.Host != "127.0.0.1" {
		t.Fatalf("host = %s", c.Host)
	}
}

func TestPeerTokenErrorsNeverEchoTheToken(t *testing.T) {
	_, err := Load(nil, env(map[string]string{"A2A_PEER_TOKENS": "alice:ok,supersecretvalue"}))
	if err == nil || strings.Contains(err.Error(), "supersecretvalue") {
		t.Fatalf("err = %v", err)
	}
}

func TestEverySettingIsDocumented(t *testing.T) {
	for _, s := range Settings() {
		if s.Key == "" || s.Help == "" {
			t.Errorf("setting %+v lacks a key or help text", s)
		}
	}
}

// The configuration reference must list every setting with its variable
// and default, so the docs cannot drift from the code.
func TestConfigurationReferenceDocumentsEverySetting(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, s := range Settings() {
		row := "| `" + s.Key + "` | "
		i := strings.Index(readme, row)
		if i < 0 {
			t.Errorf("docs/configuration.md lacks a row for setting %q (run make docs)", s.Key)
			continue
		}
		line := readme[i : i+strings.Index(readme[i:], "\n")]
		if s.Env != "" && !strings.Contains(line, "`"+s.Env+"`") {
			t.Errorf("docs/configuration.md's row of %q lacks its variable %s", s.Key, s.Env)
		}
		if s.Default != "" && !strings.Contains(line, "`"+s.Default+"`") {
			t.Errorf("docs/configuration.md's row of %q lacks its default %q", s.Key, s.Default)
		}
	}
}

func TestCardSigningSettings(t *testing.T) {
	c, err := Load([]byte(`{"card_signing_key":"/keys/card.pem","card_signing_kid":"b-2026",
	  "card_trusted_keys":["/keys/shared.jwks.json"],
	  "a2a_agents":[{"name":"b","url":"https://b.example","signed":true,"card_keys":["b-2026=/keys/b.pub.pem"]},
	                {"name":"c","url":"https://c.example","signed":true}]}`),
		env(map[string]string{"A2A_CARD_SIGNING_JKU": "https://a.example/.well-known/jwks.json"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.CardSigningKey != "/keys/card.pem" || c.CardSigningKID != "b-2026" || c.CardSigningJKU != "https://a.example/.well-known/jwks.json" {
		t.Fatalf("signing settings %+v", c)
	}
	if !c.Agents[0].Signed || len(c.Agents[0].CardKeys) != 1 || len(c.CardTrustedKeys) != 1 {
		t.Fatalf("peer settings %+v", c.Agents)
	}
	for section, want := range map[string]string{
		`{"a2a_agents":[{"name":"b","url":"https://b.example","signed":true}]}`: "no key can verify its card",
		`{"card_signing_kid":"x"}`: "need card_signing_key",
		`{"card_signing_key":"k.pem","card_signing_jku":"file:///etc/jwks"}`: "card_signing_jku",
	} {
		if _, err := Load([]byte(section), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (want %q)", section, err, want)
		}
	}
}

func TestPeerTokenFileAndCommand(t *testing.T) {
	c, err := Load([]byte(`{"a2a_agents":[{"name":"f","url":"https://f.example","token_file":"/run/f.token"},
	  {"name":"c","url":"https://c.example","token_command":"vault read -field=token a2a/c"}]}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agents[0].TokenFile != "/run/f.token" || c.Agents[1].TokenCommand != "vault read -field=token a2a/c" {
		t.Fatalf("peers %+v", c.Agents)
	}
}

// TestPeersFollowOneRuleSet pins the rules for a2a_agents that the tools
// rely on (they take the peers as config passed them): names unique
// case-insensitively and of the characters tools accept, http(s) URLs
// without credentials, trust in any case, one credential, a bare token, a
// well-formed header. The same peers come through the environment.
func TestPeersFollowOneRuleSet(t *testing.T) {
	bad := `[{"name":"a","url":"http://x"},{"name":"A","url":"http://y"},{"name":"b c","url":"ftp://z"},` +
		`{"name":"d","url":"http://d","trust":"sometimes","header":"novalue"},{"url":"http://e"},` +
		`{"name":"f","url":"https://user:pw@f.example"},{"name":"g","url":"http://g","token":"Bearer x"},` +
		`{"name":"h","url":"http://h","token":"t","header":"X-Key: v"}]`
	for _, src := range []struct {
		section string
		env     map[string]string
	}{{`{"a2a_agents":` + bad + `}`, nil}, {"", map[string]string{"A2A_AGENTS": bad}}} {
		_, err := Load([]byte(src.section), env(src.env))
		if err == nil {
			t.Fatal("invalid peers accepted")
		}
		for _, want := range []string{`the name "A" is already used by a2a_agents[0]`, `the name "b c" may only use`, "must start with http:// or https://",
			`trust "sometimes" must be trusted or public`, `"Name: value"`, "a2a_agents[4] has no name", "must not carry credentials",
			"token must not contain spaces", "sets token and header; use one credential"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, err)
			}
		}
	}
	c, err := Load([]byte(`{"a2a_agents":[{"name":"ok","url":"https://agent.example","trust":"Trusted","header":"X-Key: v"}]}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Agents[0]; p.TrustTier() != TrustTrusted {
		t.Errorf("trust %q reads as %q", p.Trust, p.TrustTier())
	} else if n, v := p.HeaderField(); n != "X-Key" || v != "v" {
		t.Errorf("header field %q %q", n, v)
	}
	if _, err := Load(nil, env(map[string]string{"A2A_AGENTS": `[{"name":"a","url":"http://x","tokn":"t"}]`})); err == nil || !strings.Contains(err.Error(), `did you mean "token"`) {
		t.Errorf("a misspelled key in A2A_AGENTS: %v", err)
	}
}

func TestParseHeader(t *testing.T) {
	if n, v, err := ParseHeader("X-Api-Key: abc: def"); err != nil || n != "X-Api-Key" || v != "abc: def" {
		t.Fatalf("ParseHeader = %q %q %v", n, v, err)
	}
	for _, bad := range []string{"novalue", ": v", "Bad Name: v", "X-K: a\r\nInjected: 1"} {
		if _, _, err := ParseHeader(bad); err == nil {
			t.Errorf("ParseHeader(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "Injected") {
			t.Errorf("ParseHeader(%q) error shows the value: %v", bad, err)
		}
	}
}
