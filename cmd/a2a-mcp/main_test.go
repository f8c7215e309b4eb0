package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A flag wins over its environment variable; the variable applies without
// the flag.
func TestFlagsWinOverTheirEnvironmentVariables(t *testing.T) {
	t.Setenv("A2A_MCP_LOG_LEVEL", "debug")
	t.Setenv("A2A_MCP_INBOUND", "1")
	t.Setenv("A2A_MCP_DATA", "/env/data")
	s, err := parse([]string{"--log-level", "error", "--inbound=false"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.logLevel != "error" || s.inbound || s.data != "/env/data" {
		t.Errorf("settings = %+v", s)
	}
}

// Mistakes in the command line or the environment are usage errors that
// name what to fix.
func TestBadSettingsAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--log-level", "loud"}, nil, `unknown log level "loud"`},
		{nil, map[string]string{"A2A_MCP_INBOUND": "yes please"}, "A2A_MCP_INBOUND"},
		{[]string{"serve"}, nil, "takes flags only"},
		{[]string{"--nope"}, nil, "flag provided but not defined"},
	} {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		var stderr bytes.Buffer
		if code := run(c.args, io.NopCloser(strings.NewReader("")), nopWriteCloser{io.Discard}, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v %v: exit %d, stderr %q, want 2 and %q", c.args, c.env, code, stderr.String(), c.want)
		}
		for k := range c.env {
			os.Unsetenv(k)
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// A plugin that is not there is an error saying how to build it or where
// to point a2a-mcp; ./bin/plugins/a2a-plugin is found (make build's
// layout).
func TestPluginIsFoundOrTheErrorSaysHowToBuildIt(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"--plugin", filepath.Join(t.TempDir(), "missing")}, io.NopCloser(strings.NewReader("")), nopWriteCloser{io.Discard}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "go build -o bin/plugins/ ./cmd/a2a-plugin") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}

	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("PATH", "")
	if _, err := findPlugin(""); err == nil || !strings.Contains(err.Error(), "A2A_MCP_PLUGIN") {
		t.Errorf("no plugin anywhere: %v", err)
	}
	if err := os.MkdirAll(filepath.Join("bin", "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("bin", "plugins", pluginFile), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := findPlugin("")
	if err != nil || got != filepath.Join(dir, "bin", "plugins", pluginFile) {
		t.Errorf("found %q, %v", got, err)
	}
}

// --config reads JSON or YAML objects; anything else says what is wrong.
func TestConfigIsAJSONOrYAMLObject(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ body, want string }{
		{`{"port": 0, "a2a_agents": [{"name": "x", "url": "http://h"}]}`, `"port":0`},
		{"port: 0\na2a_agents:\n  - name: x\n    url: http://h\n", `"port":0`},
		{"", `{}`},
	} {
		cfg, err := loadConfig(write("c.yaml", c.body))
		if err != nil || !strings.Contains(string(cfg.raw), c.want) {
			t.Errorf("%q: %s, %v", c.body, cfg.raw, err)
		}
		if c.want != "{}" && !cfg.has("port") {
			t.Errorf("%q: port not seen", c.body)
		}
	}
	if _, err := loadConfig(write("bad.yaml", "- a list\n")); err == nil || !strings.Contains(err.Error(), "not a JSON or YAML object") {
		t.Errorf("a list: %v", err)
	}
	if _, err := loadConfig(filepath.Join(dir, "none.json")); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("a missing file: %v", err)
	}
}
