package config

import (
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// Each mistake gets one message naming the source of the value, what was
// expected and the closest valid name (docs/troubleshooting.md shows them
// as agenthost prints them).
func TestMistakesGetOneMessageNamingTheSource(t *testing.T) {
	tests := []struct {
		name, section string
		env           map[string]string
		want          string
	}{
		{"misspelled key", `{"prot": 1}`, nil, `config: unknown setting "prot" in the host's a2a section; did you mean "port"?`},
		{"string for a number", `{"port": "zero"}`, nil, `config: "port" in the host's a2a section: want a whole number, got "zero"`},
		{"list for a number", `{"rate_limit": [1]}`, nil, `config: "rate_limit" in the host's a2a section: want a whole number, got a list`},
		{"object for a bool", `{"inspector": {}}`, nil, `config: "inspector" in the host's a2a section: want true or false, got an object`},
		{"number for a list", `{"trusted_peers": 3}`, nil, `config: "trusted_peers" in the host's a2a section: want a list of strings (or one comma-separated string), got the number 3`},
		{"bad duration", `{"call_timeout": "soon"}`, nil, `config: "call_timeout" in the host's a2a section: want a duration such as "90s" or "10m", got "soon"`},
		{"misspelled peer key", `{"a2a_agents":[{"name":"b","url":"https://b.example","tokn":"x"}]}`, nil,
			`config: a2a_agents[0] in the host's a2a section: unknown key "tokn"; did you mean "token"?`},
		{"peer field of the wrong type", `{"a2a_agents":[{"name":"b","url":"https://b.example","signed":"yes"}]}`, nil,
			`config: a2a_agents[0].signed in the host's a2a section: want true or false, got a string`},
		{"peers not a list", `{"a2a_agents":{"name":"b"}}`, nil, `config: "a2a_agents" in the host's a2a section: want a list of peers`},
		{"bad variable", ``, map[string]string{"A2A_PORT": "zero"}, `config: environment variable A2A_PORT: want a whole number, got "zero"`},
		{"refusal set by a variable", ``, map[string]string{"A2A_HOST": "0.0.0.0"}, `[set by the environment variable A2A_HOST]`},
		{"refusal set in the section", `{"port": 70000}`, nil, `config: port 70000 is not a TCP port (0–65535; A2A_PORT) [set by "port" in the host's a2a section]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := LoadChecked([]byte(tc.section), env(tc.env), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant  %s", err, tc.want)
			}
			if strings.Count(err.Error(), "config:") != 1 {
				t.Fatalf("more than one message: %v", err)
			}
		})
	}
}

func TestWarningsForStrayVariablesAndClampedValues(t *testing.T) {
	c, warnings, err := LoadChecked(nil, env(map[string]string{"A2A_MAX_PINGPONG_TURNS": "50"}),
		[]string{"A2A_BEARER_TOKNE=x", "A2A_MAX_PINGPONG_TURNS=50", "A2A_TEST_POSTGRES_DSN=postgres://x", "A2A_ZZZ_UNRELATED=1", "HOME=/root"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"the environment variable A2A_BEARER_TOKNE is not a setting of the a2a plugin and is ignored; did you mean A2A_BEARER_TOKEN?",
		"the environment variable A2A_ZZZ_UNRELATED is not a setting of the a2a plugin and is ignored",
		"max_pingpong_turns 50 (from the environment variable A2A_MAX_PINGPONG_TURNS) is above the hard maximum 20; using 20",
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if c.MaxPingPongTurns != HardMaxPingPongTurns {
		t.Fatalf("max_pingpong_turns = %d", c.MaxPingPongTurns)
	}
}

func TestRefusalCarriesTheHintForAMisspelledVariable(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		want    []string
		notWant string
	}{
		{"misspelled token with a public host", map[string]string{"A2A_HOST": "0.0.0.0", "A2A_BEARER_TOKN": "s3cret"},
			[]string{"no token is set", "config: note: the environment variable A2A_BEARER_TOKN is not a setting of the a2a plugin and is ignored; did you mean A2A_BEARER_TOKEN?"}, ""},
		{"misspelled port next to a bad value", map[string]string{"A2A_PORT": "http", "A2A_POTR": "1"},
			[]string{"A2A_PORT", "did you mean A2A_PORT?"}, ""},
		{"no stray variable, no note", map[string]string{"A2A_HOST": "0.0.0.0"},
			[]string{"no token is set"}, "note:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var environ []string
			for k, v := range c.env {
				environ = append(environ, k+"="+v)
			}
			_, _, err := LoadChecked(nil, env(c.env), environ)
			if err == nil {
				t.Fatal("configuration accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal lacks %q:\n%v", w, err)
				}
			}
			if c.notWant != "" && strings.Contains(err.Error(), c.notWant) {
				t.Errorf("refusal has %q:\n%v", c.notWant, err)
			}
		})
	}
}

// The clamp here and the loop guard's own maximum are one number.
func TestHardMaxPingPongTurnsIsTheLoopGuards(t *testing.T) {
	if HardMaxPingPongTurns != security.HardMaxTurns {
		t.Fatalf("config says %d, security.HardMaxTurns %d", HardMaxPingPongTurns, security.HardMaxTurns)
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"port", "host", "public_url", "bearer_token", "peer_tokens"}
	for word, want := range map[string]string{"prot": "port", "Bearer-Token": "bearer_token", "publc_url": "public_url", "zzzzzz": "", "peer_token": "peer_tokens"} {
		if got := Closest(word, keys); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
}
