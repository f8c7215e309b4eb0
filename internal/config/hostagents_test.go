package config

import (
	"slices"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestHostAgentSettingsLoad: the three settings from the host's section and
// from the environment, the environment winning.
func TestHostAgentSettingsLoad(t *testing.T) {
	c, err := Load([]byte(`{"expose_agents":["main","beta"],"default_agent":"beta","agent_settings":{"beta":{"name":"Beta","peer_tokens":{"dana":"t-dana"},"trusted_peers":["dana"],"policy":"public=get;trusted=all","rate_limit":7}}}`), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	b := c.AgentSettings["beta"]
	if !slices.Equal(c.ExposeAgents, []string{"main", "beta"}) || c.DefaultAgent != "beta" || b.Name != "Beta" || b.PeerTokens["dana"] != "t-dana" || *b.RateLimit != 7 || !b.OwnTokens() {
		t.Fatalf("loaded %+v %+v", c, b)
	}
	c, err = Load([]byte(`{"expose_agents":["main"]}`), envOf(map[string]string{
		"A2A_EXPOSE_AGENTS": "main,gamma", "A2A_AGENT_SETTINGS": `{"gamma":{"description":"third"}}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.ExposeAgents, []string{"main", "gamma"}) || c.AgentSettings["gamma"].Description != "third" || c.AgentSettings["gamma"].OwnTokens() {
		t.Fatalf("from the environment: %+v", c)
	}
}

// TestHostAgentSettingsMistakes: every mistake fails with a message naming
// the setting (and its variable) and what to do.
func TestHostAgentSettingsMistakes(t *testing.T) {
	for _, c := range []struct {
		section string
		env     map[string]string
		want    []string
	}{
		{``, map[string]string{"A2A_EXPOSE_AGENTS": "main,Not An Id"}, []string{"expose_agents", `"Not An Id"`, "A2A_EXPOSE_AGENTS"}},
		{`{"default_agent":"x/y"}`, nil, []string{"default_agent", "A2A_DEFAULT_AGENT"}},
		{`{"expose_agents":["a"],"default_agent":"b"}`, nil, []string{`default_agent "b" is not in expose_agents`}},
		{``, map[string]string{"A2A_AGENT_SETTINGS": `{"beta":{"tokn":"x"}}`}, []string{"A2A_AGENT_SETTINGS", "tokn"}},
		{`{"agent_settings":{"beta":{"tokn":"x"}}}`, nil, []string{"agent_settings", "tokn"}},
		{``, map[string]string{"A2A_AGENT_SETTINGS": `[1]`}, []string{"A2A_AGENT_SETTINGS", "JSON object of agent ids"}},
		{`{"expose_agents":["a"],"agent_settings":{"b":{"name":"B"}}}`, nil, []string{"agent_settings.b", "not in expose_agents"}},
		{`{"agent_settings":{"b":{"trusted_peers":["zed"],"peer_tokens":{"dana":"t"}}}}`, nil, []string{"agent_settings.b", `trusted peer "zed"`}},
		{`{"agent_settings":{"b":{"rate_limit":-1}}}`, nil, []string{"agent_settings.b", "rate_limit must not be negative"}},
		{`{"agent_settings":{"B!":{}}}`, nil, []string{`"B!"`, "no agent id"}},
	} {
		_, _, err := LoadChecked([]byte(c.section), envOf(c.env), nil)
		if err == nil {
			t.Errorf("%s %v: no error", c.section, c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: %q lacks %q", c.section, c.env, err, w)
			}
		}
	}
}

// TestCheckHostAgents: the settings against the agents a host declares.
func TestCheckHostAgents(t *testing.T) {
	load := func(section string) *Config {
		t.Helper()
		c, err := Load([]byte(section), envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	host := []string{"main", "beta", "gamma"}
	for _, c := range []struct {
		section string
		want    []string
	}{
		{`{}`, host},
		{`{"default_agent":"gamma"}`, []string{"gamma", "main", "beta"}},
		{`{"expose_agents":["beta","gamma"]}`, []string{"beta", "gamma"}},
		{`{"expose_agents":["gamma","beta"],"default_agent":"beta"}`, []string{"beta", "gamma"}},
	} {
		got, err := load(c.section).CheckHostAgents(host)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.section, got, err, c.want)
		}
	}
	if got, err := load(`{}`).CheckHostAgents(nil); err != nil || got != nil {
		t.Errorf("a host without agents: %v %v", got, err)
	}
	for _, c := range []struct {
		section string
		host    []string
		want    []string
	}{
		{`{"expose_agents":["delta"]}`, host, []string{"expose_agents (A2A_EXPOSE_AGENTS)", `"delta"`, "main, beta, gamma"}},
		{`{"default_agent":"delta"}`, host, []string{"default_agent (A2A_DEFAULT_AGENT)", `"delta"`, "main, beta, gamma"}},
		{`{"agent_settings":{"delta":{"name":"D"}}}`, host, []string{"agent_settings (A2A_AGENT_SETTINGS)", `"delta"`}},
		{`{"expose_agents":["main"]}`, nil, []string{"expose_agents (A2A_EXPOSE_AGENTS)", "declares no agents"}},
		{`{"agent_settings":{"main":{"name":"M"}}}`, nil, []string{"agent_settings (A2A_AGENT_SETTINGS)", "declares no agents"}},
		{`{"host":"0.0.0.0","agent_settings":{"main":{"bearer_token":"0123456789abcdef0123"}}}`, []string{"main", "beta"}, []string{`exposes agent "beta"`, "no token"}},
	} {
		cfg, err := Load([]byte(c.section), envOf(nil))
		if err != nil {
			// A non-loopback host without a plugin-wide token fails Load
			// itself unless agents bring their own; that is not this case.
			t.Fatalf("%s: %v", c.section, err)
		}
		_, err = cfg.CheckHostAgents(c.host)
		if err == nil {
			t.Errorf("%s with host agents %v: no error", c.section, c.host)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.section, err, w)
			}
		}
	}
}
