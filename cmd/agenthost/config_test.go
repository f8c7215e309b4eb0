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

func TestHostConfigErrorsNameTheLine(t *testing.T) {
	tests := map[string]struct{ src, want string }{
		"unknown key":       {"plugins: {}\nplugin_dir: x\n", "line 2: field plugin_dir not found"},
		"section not a map": {"plugins:\n  a2a: 42\n", "plugins.a2a (line 2): want a mapping"},
		"env not a map":     {"env:\n  a2a: [A=1]\n", "line 2"},
		"yaml syntax":       {"plugins: [\n", "yaml:"},
		"non-string key":    {"plugins:\n  a2a:\n    1: x\n", "plugins.a2a (line 3): key 1 is not a string"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "host.yaml")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadHostConfig(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, path, tt.want)
			}
		})
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
