package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExampleHostConfigParses(t *testing.T) {
	cfg, err := loadHostConfig("host.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	configs, err := cfg.pluginConfigs()
	if err != nil {
		t.Fatal(err)
	}
	var a2a map[string]any
	if err := json.Unmarshal(configs["a2a"], &a2a); err != nil {
		t.Fatal(err)
	}
	if a2a["port"] != 41241.0 || a2a["agent_name"] != "Reference Agent" {
		t.Fatalf("a2a section = %v", a2a)
	}
	if agents := a2a["a2a_agents"].([]any); agents[0].(map[string]any)["name"] != "peer-b" {
		t.Fatalf("a2a_agents = %v", agents)
	}
	if cfg.Env["a2a"]["A2A_RATE_LIMIT"] != "600" || cfg.EnvAllow[0] != "OTEL_EXPORTER_OTLP_ENDPOINT" {
		t.Fatalf("env = %v, env_allow = %v", cfg.Env, cfg.EnvAllow)
	}
	if got := cfg.resolve(cfg.PluginsDir); got != filepath.Join("..", "..", "bin", "plugins") {
		t.Fatalf("plugins_dir resolves to %q", got)
	}
}

// Every mistake in host.yaml gets one message naming the file and line,
// what was expected and, for a misspelled key, the closest valid one.
func TestHostConfigMistakesNameTheLineAndTheFix(t *testing.T) {
	tests := map[string]struct{ src, want string }{
		"unknown key": {"plugins: {}\nplugin_dir: x\n",
			`host.yaml:2: unknown key "plugin_dir"; did you mean "plugins_dir"? (the keys are agent, agents, data_dir, env, env_allow, log_level, plugins, plugins_dir, restart)`},
		"plugin for plugins": {"plugin:\n  a2a:\n    port: 1\n",
			`host.yaml:1: unknown key "plugin"; did you mean "plugins"?`},
		"section not a map": {"plugins:\n  a2a: 42\n",
			`host.yaml:2: plugins.a2a: want a mapping (the plugin's configuration), got the value "42"`},
		"env not a map": {"env:\n  a2a: [A=1]\n",
			`host.yaml:2: env.a2a: want a mapping of variable names to values, e.g. {A2A_RATE_LIMIT: "600"}, got a list`},
		"yaml syntax": {"plugins: [\n", `host.yaml:1: did not find expected node content`},
		"bad indentation": {"plugins:\n  a2a:\n    port: 41241\n   agent_name: x\n",
			`host.yaml:4: "agent_name: x" is indented by 3 spaces, which matches none of the lines above it (0, 2, 4 spaces): line it up with the keys it belongs with`},
		"non-string key":   {"plugins:\n  a2a:\n    1: x\n", `host.yaml:3: plugins.a2a: key 1 is not a string`},
		"list for a value": {"data_dir: [a, b]\n", `host.yaml:1: data_dir: want a single value, got a list`},
		"unset variable": {"plugins:\n  a2a:\n    port: ${AGENTHOST_TEST_UNSET}\n",
			`host.yaml:3: ${AGENTHOST_TEST_UNSET} is not set in the environment; set it, or give a default as ${AGENTHOST_TEST_UNSET:-value}`},
		"bad restart":       {"restart: {max_restart: 2}\n", `host.yaml:1: restart: unknown key "max_restart"; did you mean "max_restarts"?`},
		"bad window":        {"restart: {window: soon}\n", `host.yaml:1: restart.window: want a duration such as 5m, got "soon"`},
		"agents not a list": {"agents: {id: a}\n", `host.yaml:1: agents: want a list of agents`},
		"agent bad id":      {"agents:\n  - id: Main Agent\n", `host.yaml:2: agents[0]: id "Main Agent" is no agent id`},
		"agent twice":       {"agents:\n  - id: a\n  - id: a\n", `host.yaml:3: agents[1]: agent "a" is listed twice`},
		"agent typo":        {"agents:\n  - id: a\n    nmae: A\n", `host.yaml:3: agents[0]: unknown key "nmae"; did you mean "name"?`},
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile("host.yaml", []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadHostConfig("host.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
}

func TestHostConfigExpandsTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.yaml")
	src := "plugins:\n  a2a:\n    port: ${P}\n    agent_name: \"${N:-Bob} the agent\"\n    quoted: '${P}'\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadHostConfigEnv(path, func(k string) (string, bool) { return map[string]string{"P": "41999"}[k], k == "P" })
	if err != nil {
		t.Fatal(err)
	}
	sections, err := cfg.pluginConfigs()
	if err != nil {
		t.Fatal(err)
	}
	// A plain value is typed after expansion (a number); a quoted one stays a string.
	if got := string(sections["a2a"]); got != `{"agent_name":"Bob the agent","port":41999,"quoted":"41999"}` {
		t.Fatalf("section = %s", got)
	}
}

func TestEmptyHostConfigIsValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.yaml")
	if err := os.WriteFile(path, []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadHostConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if configs, _ := cfg.pluginConfigs(); len(configs) != 0 {
		t.Fatalf("configs = %v", configs)
	}
}

func TestFlagsWinOverTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	other := filepath.Join(dir, "other")
	for _, d := range []string{plugins, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "host.yaml")
	if err := os.WriteFile(path, []byte("plugins_dir: plugins\nagent: command:cat\nlog_level: debug\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newFlags("run", "run", os.Stderr)
	if _, err := c.parse([]string{"--config", path, "--plugins", other}); err != nil {
		t.Fatal(err)
	}
	s, err := c.settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.pluginsDir != other || s.agent != "command:cat" || s.logLevel != "debug" || s.dataDir != defaultDataDir {
		t.Fatalf("settings = %+v", s)
	}
	c = newFlags("run", "run", os.Stderr)
	if _, err := c.parse([]string{"--config", path}); err != nil {
		t.Fatal(err)
	}
	if s, err = c.settings(); err != nil || s.pluginsDir != plugins {
		t.Fatalf("plugins_dir from the file = %q (%v)", s.pluginsDir, err)
	}
}

func TestFlagsMayFollowPositionalArguments(t *testing.T) {
	c := newFlags("tool", "tool", os.Stderr)
	pos, err := c.parse([]string{"inject", "--plugins", "x", `{"a":1}`, "--agent", "echo", "--", "--literal"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pos, " ") != `inject {"a":1} --literal` || c.pluginsDir != "x" {
		t.Fatalf("pos = %q, plugins = %q", pos, c.pluginsDir)
	}
}

func TestAgentSpecs(t *testing.T) {
	scenario := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(scenario, []byte("default: [{reply: hi}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for spec, wantErr := range map[string]string{
		"echo":                 "",
		"scenario:" + scenario: "",
		"command:tr a-z A-Z":   "",
		"echo:x":               "takes no argument",
		"scenario:":            "needs a file",
		"scenario:/nope.yaml":  "no such file",
		"command:  ":           "needs a command",
		"llm":                  `unknown agent "llm"`,
	} {
		_, err := parseAgent(spec)
		if (wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("parseAgent(%q) = %v, want error containing %q", spec, err, wantErr)
		}
	}
}
