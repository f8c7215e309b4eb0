package docs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mistakes are the configuration mistakes of docs/troubleshooting.md, each
// with the one message the real agenthost and A2A plugin give for it.
var mistakes = []struct {
	name     string
	hostYAML string   // host.yaml in the working directory ("" for none)
	env      []string // the environment agenthost runs with
	exit     int
	want     string // printed exactly once, and written in the doc
}{
	{
		name:     "misspelled plugin section",
		hostYAML: "plugins:\n  a2a2:\n    port: 0\n",
		exit:     1,
		want:     `agenthost: host.yaml:2: plugins.a2a2: no plugin is named "a2a2"; did you mean "a2a"? (plugins found: a2a; ` + "`agenthost plugins`" + ` lists them)`,
	},
	{
		name:     "misspelled top-level key",
		hostYAML: "plugin:\n  a2a:\n    port: 0\n",
		exit:     1,
		want:     `agenthost: host.yaml:1: unknown key "plugin"; did you mean "plugins"? (the keys are agent, agents, data_dir, env, env_allow, log_level, plugins, plugins_dir, restart)`,
	},
	{
		name:     "bad indentation",
		hostYAML: "plugins:\n  a2a:\n    port: 0\n   agent_name: Bob\n",
		exit:     1,
		want:     `agenthost: host.yaml:4: "agent_name: Bob" is indented by 3 spaces, which matches none of the lines above it (0, 2, 4 spaces): line it up with the keys it belongs with`,
	},
	{
		name:     "misspelled setting",
		hostYAML: "plugins:\n  a2a:\n    prot: 0\n",
		exit:     1,
		want:     `agenthost: plugin "a2a" refused its configuration: config: unknown setting "prot" in the host's a2a section; did you mean "port"?`,
	},
	{
		name:     "value of the wrong type",
		hostYAML: "plugins:\n  a2a:\n    port: zero\n",
		exit:     1,
		want:     `agenthost: plugin "a2a" refused its configuration: config: "port" in the host's a2a section: want a whole number, got "zero"`,
	},
	{
		name:     "list for a number",
		hostYAML: "plugins:\n  a2a:\n    rate_limit: [1, 2]\n",
		exit:     1,
		want:     `agenthost: plugin "a2a" refused its configuration: config: "rate_limit" in the host's a2a section: want a whole number, got a list`,
	},
	{
		name:     "misspelled key of a peer",
		hostYAML: "plugins:\n  a2a:\n    a2a_agents:\n      - {name: bob, url: \"https://bob.example\", tokn: secret}\n",
		exit:     1,
		want:     `agenthost: plugin "a2a" refused its configuration: config: a2a_agents[0] in the host's a2a section: unknown key "tokn"; did you mean "token"?`,
	},
	{
		name: "bad value in the environment",
		env:  []string{"A2A_PORT=zero"},
		exit: 1,
		want: `agenthost: plugin "a2a" refused its configuration: config: environment variable A2A_PORT: want a whole number, got "zero"`,
	},
	{
		name: "refused combination set by the environment",
		env:  []string{"A2A_HOST=0.0.0.0"},
		exit: 1,
		want: `agenthost: plugin "a2a" refused its configuration: config: host "0.0.0.0" exposes the agent beyond this machine, but no token is set: set A2A_BEARER_TOKEN, A2A_PEER_TOKENS or A2A_OAUTH_ISSUERS, or bind 127.0.0.1 [set by the environment variable A2A_HOST]`,
	},
	{
		name: "misspelled environment variable",
		env:  []string{"A2A_BEARER_TOKNE=secret"},
		want: `[WARN]  host: plugin a2a: the environment variable A2A_BEARER_TOKNE is not a setting of the a2a plugin and is ignored; did you mean A2A_BEARER_TOKEN?`,
	},
	{
		name: "value above its hard maximum",
		env:  []string{"A2A_MAX_PINGPONG_TURNS=50"},
		want: `[WARN]  host: plugin a2a: max_pingpong_turns 50 (from the environment variable A2A_MAX_PINGPONG_TURNS) is above the hard maximum 20; using 20`,
	},
	{
		name:     "unset variable in host.yaml",
		hostYAML: "plugins:\n  a2a:\n    port: ${AGENT_PORT}\n",
		exit:     1,
		want:     `agenthost: host.yaml:3: ${AGENT_PORT} is not set in the environment; set it, or give a default as ${AGENT_PORT:-value}`,
	},
}

// TestConfigurationMistakesGetOneDocumentedMessage: each mistake, made with
// the real agenthost and A2A plugin, is reported once, plainly (no gRPC
// wrapping, no doubled logger name or timestamp), naming its real source,
// in the words docs/troubleshooting.md shows.
func TestConfigurationMistakesGetOneDocumentedMessage(t *testing.T) {
	t.Parallel()
	b := build(t)
	doc, err := os.ReadFile(filepath.Join(b.root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mistakes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// agenthost tool runs a throw-away host on a free port, but sets
			// A2A_PORT for it: the environment's mistakes are made with run
			// (which fails before it binds anything).
			args := []string{"tool", "a2a_list", "--plugins", b.plugins, "--data", filepath.Join(dir, "data")}
			if len(m.env) > 0 && m.exit != 0 {
				args = []string{"run", "--plugins", b.plugins, "--data", filepath.Join(dir, "data")}
			}
			if m.hostYAML != "" {
				if err := os.WriteFile(filepath.Join(dir, "host.yaml"), []byte(m.hostYAML), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", "host.yaml")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, b.agenthost, args...)
			cmd.Dir = dir
			cmd.Env = append(withoutA2A(os.Environ()), m.env...)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			text := string(out)
			if code != m.exit || strings.Count(text, m.want) != 1 {
				t.Fatalf("exit %d (want %d); want this once:\n%s\ngot:\n%s", code, m.exit, m.want, text)
			}
			for _, noise := range []string{"rpc error", "desc =", "fix its section of the host config", "timestamp=", "a2a-plugin.a2a-plugin", "@module"} {
				if strings.Contains(text, noise) {
					t.Errorf("the output carries %q:\n%s", noise, text)
				}
			}
			// The message without agenthost's own prefix and the log line's
			// time is what the documentation shows.
			if !strings.Contains(string(doc), m.want) {
				t.Errorf("docs/troubleshooting.md does not show this message:\n%s", m.want)
			}
		})
	}
}

// withoutA2A drops the test process's own A2A_ variables.
func withoutA2A(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "A2A_") {
			out = append(out, kv)
		}
	}
	return out
}
