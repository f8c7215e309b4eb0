// Command a2a-mcp is the MCP face of the A2A plugin: an MCP server over
// stdio that an MCP host (Claude Code, Codex, Gemini CLI, Cursor) launches,
// and that launches and supervises the a2a-plugin binary through host-sdk
// and gives the host's model its a2a_* tools. With --inbound the session
// also answers inbound A2A tasks through Claude Code channels (see
// host-sdk/mcp and docs/mcp.md).
//
//	a2a-mcp [--plugin PATH] [--config FILE] [--inbound] [--data DIR] [--log-level LEVEL]
//	a2a-mcp version
//
// Every flag has an environment variable (A2A_MCP_PLUGIN, A2A_MCP_CONFIG,
// A2A_MCP_INBOUND, A2A_MCP_DATA, A2A_MCP_LOG_LEVEL), since MCP hosts
// configure servers with an env block; the flag wins. The plugin's own
// settings come from --config and from A2A_* variables, which it inherits.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	hclog "github.com/hashicorp/go-hclog"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	yaml "go.yaml.in/yaml/v3"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	hostmcp "github.com/a2a-plugin/a2a-plugin/host-sdk/mcp"
	"github.com/a2a-plugin/a2a-plugin/internal/version"
)

// pluginFile is the plugin executable's file name.
const pluginFile = "a2a-plugin"

const usage = `a2a-mcp — the A2A plugin as an MCP server (stdio), for Claude Code, Codex, Gemini CLI, Cursor

Usage:
  a2a-mcp [flags]     serve one MCP session on stdin/stdout (an MCP host starts it)
  a2a-mcp version     print the version

Flags (each also an environment variable; the flag wins):
  --plugin PATH      the a2a-plugin executable (A2A_MCP_PLUGIN; default: a2a-plugin next
                     to a2a-mcp, then ./bin/plugins/a2a-plugin, then a2a-plugin on PATH)
  --config FILE      the plugin's settings, a JSON or YAML object with the keys of
                     host.yaml's a2a section (A2A_MCP_CONFIG); A2A_* variables also apply
  --inbound          answer inbound A2A tasks in the session through Claude Code channels
                     (A2A_MCP_INBOUND=1); off: tools only, and the plugin's A2A server
                     takes a free port unless port / A2A_PORT is set
  --data DIR         root of the plugin's data directory (A2A_MCP_DATA; default: a
                     temporary directory removed when the session ends)
  --log-level LEVEL  trace, debug, info, warn, error, off (A2A_MCP_LOG_LEVEL; default warn);
                     logs go to stderr

Example (Claude Code):
  claude mcp add a2a -e A2A_AGENTS='[{"name":"helper","url":"http://127.0.0.1:41241"}]' -- a2a-mcp

See docs/mcp.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// settings are the parsed flags over the environment.
type settings struct {
	plugin, config, data, logLevel string
	inbound                        bool
}

func parse(args []string, stderr io.Writer) (*settings, error) {
	fs := flag.NewFlagSet("a2a-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	s := &settings{}
	fs.StringVar(&s.plugin, "plugin", os.Getenv("A2A_MCP_PLUGIN"), "the a2a-plugin executable")
	fs.StringVar(&s.config, "config", os.Getenv("A2A_MCP_CONFIG"), "the plugin's settings (JSON or YAML)")
	fs.StringVar(&s.data, "data", os.Getenv("A2A_MCP_DATA"), "root of the plugin's data directory")
	fs.StringVar(&s.logLevel, "log-level", envOr("A2A_MCP_LOG_LEVEL", "warn"), "log level")
	inbound := false
	if v := os.Getenv("A2A_MCP_INBOUND"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("A2A_MCP_INBOUND=%q: want 1, true, 0 or false", v)
		}
		inbound = b
	}
	fs.BoolVar(&s.inbound, "inbound", inbound, "answer inbound A2A tasks through Claude Code channels")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q (a2a-mcp takes flags only; see --help)", fs.Args())
	}
	switch s.logLevel {
	case "trace", "debug", "info", "warn", "error", "off":
	default:
		return nil, fmt.Errorf("unknown log level %q (want trace, debug, info, warn, error or off)", s.logLevel)
	}
	return s, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Fprint(stdout, version.Get("a2a-mcp").String())
		return 0
	}
	s, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "a2a-mcp: %v\n", err)
		return 2
	}
	face, err := s.face(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "a2a-mcp: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := face.Run(ctx, &sdk.IOTransport{Reader: stdin, Writer: stdout}); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "a2a-mcp: %v\n", err)
		return 1
	}
	return 0
}

// face builds the MCP face of the settings.
func (s *settings) face(stderr io.Writer) (*hostmcp.Face, error) {
	path, err := findPlugin(s.plugin)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(s.config)
	if err != nil {
		return nil, err
	}
	level := s.logLevel
	logger := hclog.New(&hclog.LoggerOptions{Name: "a2a-mcp", Output: stderr, Level: hclog.LevelFromString(level)})
	if level == "off" {
		logger = hclog.NewNullLogger()
		level = "error"
	}
	env := map[string]string{}
	if !s.inbound && !cfg.has("port") && os.Getenv("A2A_PORT") == "" {
		// Without inbound nobody calls this session's A2A server, and every
		// session of every MCP host starts its own plugin: a fixed port
		// would clash.
		env["A2A_PORT"] = "0"
	}
	data := s.data
	if data != "" {
		if data, err = filepath.Abs(data); err != nil {
			return nil, err
		}
	}
	return hostmcp.New(hostmcp.Options{
		PluginPath: path,
		Config:     cfg.raw,
		DataDir:    data,
		Inbound:    s.inbound,
		PluginEnv:  env,
		LogLevel:   level,
		Logger:     logger,
		Version:    version.Version(),
		OnReady: func(p *hostsdk.Plugin) {
			for _, ep := range p.Endpoints() {
				fmt.Fprintf(stderr, "a2a-mcp: %s serving at %s\n", p.Name(), ep)
			}
		},
	})
}

// findPlugin is the plugin executable: the one given, else a2a-plugin next
// to this executable, in ./bin/plugins, or on PATH.
func findPlugin(given string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	var tried []string
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			dir := filepath.Dir(self)
			tried = append(tried, filepath.Join(dir, pluginFile), filepath.Join(dir, "plugins", pluginFile))
		}
	}
	tried = append(tried, filepath.Join("bin", "plugins", pluginFile))
	for _, p := range tried {
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return filepath.Abs(p)
		}
	}
	if p, err := exec.LookPath(pluginFile); err == nil {
		return filepath.Abs(p)
	}
	return "", fmt.Errorf("no %s executable found (looked at %s and on PATH): build it (go build -o bin/plugins/ ./cmd/a2a-plugin) and pass --plugin PATH or set A2A_MCP_PLUGIN",
		pluginFile, strings.Join(tried, ", "))
}

// pluginConfig is the plugin's configuration section.
type pluginConfig struct {
	raw  json.RawMessage
	keys map[string]any
}

func (c pluginConfig) has(key string) bool { _, ok := c.keys[key]; return ok }

// loadConfig reads a JSON or YAML object (JSON is YAML); empty path means {}.
func loadConfig(path string) (pluginConfig, error) {
	if path == "" {
		return pluginConfig{raw: json.RawMessage("{}")}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return pluginConfig{}, fmt.Errorf("--config: %w", err)
	}
	var keys map[string]any
	if err := yaml.Unmarshal(b, &keys); err != nil {
		return pluginConfig{}, fmt.Errorf("--config %s: not a JSON or YAML object: %w", path, err)
	}
	if keys == nil {
		keys = map[string]any{}
	}
	raw, err := json.Marshal(keys)
	if err != nil {
		return pluginConfig{}, fmt.Errorf("--config %s: %w (keys must be strings)", path, err)
	}
	return pluginConfig{raw: raw, keys: keys}, nil
}
