// Command agenthost is the reference agent host: it loads agentplugin
// plugins (such as the A2A plugin) from a plugins directory through host-sdk,
// exactly as a real host would, and plays the host's agent with a scripted
// scenario, an echo, or a shell command.
//
//	agenthost run     [--plugins DIR] [--config host.yaml] [--agent SPEC] [--data DIR] [--log-level LEVEL]
//	agenthost tool    NAME ['JSON'] [same flags]
//	agenthost plugins [--plugins DIR] [--config host.yaml] [--json]
//
// "agenthost tool" calls the tool on the "agenthost run" of the same data
// directory when one runs (control.go), and otherwise on a throw-away host.
// A plugin that crashes more often than the restart policy allows makes
// "agenthost run" exit with status 3, for its supervisor to act on.
//
// See host.example.yaml for the configuration file and testharness/README.md
// for scenario files.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/internal/version"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // a failure, or a tool result with is_error
	exitUsage = 2
	// exitGaveUp: a plugin crashed more often than the restart policy
	// allows, and "agenthost run" stopped rather than serve without it.
	exitGaveUp = 3
)

// Defaults of the common flags.
const (
	defaultPluginsDir = "./bin/plugins"
	defaultDataDir    = "./bin/data"
	defaultAgent      = "echo"
	defaultLogLevel   = "info"
)

// defaultEnvAllow is what plugins inherit from this host's environment on
// top of host-sdk's base list (PATH, HOME, proxies, …).
var defaultEnvAllow = []string{"A2A_*"}

const usage = `agenthost — reference agent host for agentplugin plugins (e.g. the A2A plugin)

Usage:
  agenthost run     [flags]             load every plugin and serve until Ctrl-C
  agenthost tool    NAME ['JSON'] [flags]  call one plugin tool — on the running host of
                                        the same --data when there is one; result on
                                        stdout as the model reads it (a2a_call, a2a_task,
                                        a2a_discover end it with a JSON summary line, for
                                        scripts: | tail -n 1), progress on stderr;
                                        exit 1 if is_error
  agenthost plugins [flags]             list the plugins found and what was skipped
  agenthost version                     print the version

Common flags:
  --plugins DIR      plugins directory (default ./bin/plugins)
  --config FILE      host configuration (see cmd/agenthost/host.example.yaml)
  --agent SPEC       the host's agent: echo | scenario:FILE | command:'CMD' (default echo)
  --data DIR         root of the plugins' data directories (default ./bin/data)
  --log-level LEVEL  trace, debug, info, warn, error, off (default info; warn for tool,
                     off for plugins)

Examples:
  agenthost run --plugins bin/plugins --agent scenario:testharness/testdata/demo.yaml
  agenthost run --agent "command:tr a-z A-Z"
  agenthost tool a2a_discover '{"url":"http://127.0.0.1:41241"}'
  agenthost plugins --plugins bin/plugins

Exit status: 0 ok, 1 failure (or a tool result with is_error), 2 usage,
3 a plugin crashed more often than restart allows (run).

Run "agenthost COMMAND --help" for the flags of one command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without os.Exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(rest, stdout, stderr)
	case "tool":
		return cmdTool(rest, stdout, stderr)
	case "plugins":
		return cmdPlugins(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "--version":
		fmt.Fprint(stdout, version.Get("agenthost").String())
		return exitOK
	}
	fmt.Fprintf(stderr, "agenthost: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

// common holds the flags every command takes.
type common struct {
	fs         *flag.FlagSet
	pluginsDir string
	configPath string
	agent      string
	dataDir    string
	logLevel   string
}

func newFlags(name, synopsis string, stderr io.Writer) *common {
	c := &common{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	c.fs.SetOutput(stderr)
	c.fs.StringVar(&c.pluginsDir, "plugins", defaultPluginsDir, "`DIR` to load plugins from")
	c.fs.StringVar(&c.configPath, "config", "", "host configuration `FILE` (YAML; see host.example.yaml)")
	c.fs.StringVar(&c.agent, "agent", defaultAgent, "the host's agent: echo | scenario:FILE | command:'CMD'")
	c.fs.StringVar(&c.dataDir, "data", defaultDataDir, "`DIR` under which each plugin gets its data directory")
	c.fs.StringVar(&c.logLevel, "log-level", defaultLogLevel, "log `LEVEL`: trace, debug, info, warn, error, off")
	c.fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: agenthost %s\n\nFlags:\n", synopsis)
		c.fs.PrintDefaults()
	}
	return c
}

// parse parses flags placed anywhere among the positional arguments and
// returns the positional ones.
func (c *common) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := c.fs.Parse(args); err != nil {
			return nil, err
		}
		rest := c.fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// settings merges flags (when given) over host.yaml over defaults.
type settings struct {
	pluginsDir, dataDir, logLevel, agent string
	cfg                                  *hostConfig
}

func (c *common) settings() (*settings, error) {
	cfg, err := loadHostConfig(c.configPath)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	pick := func(flagName, flagVal, cfgVal string) string {
		if set[flagName] || cfgVal == "" {
			return flagVal
		}
		return cfgVal
	}
	s := &settings{
		pluginsDir: pick("plugins", c.pluginsDir, cfg.resolve(cfg.PluginsDir)),
		dataDir:    pick("data", c.dataDir, cfg.resolve(cfg.DataDir)),
		logLevel:   pick("log-level", c.logLevel, cfg.LogLevel),
		agent:      pick("agent", c.agent, cfg.Agent),
		cfg:        cfg,
	}
	switch s.logLevel {
	case "trace", "debug", "info", "warn", "error", "off":
	default:
		return nil, fmt.Errorf("unknown log level %q (want trace, debug, info, warn, error or off)", s.logLevel)
	}
	if info, err := os.Stat(s.pluginsDir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("plugins directory %s not found: build the plugins into it (e.g. go build -o %s/ ./cmd/a2a-plugin) or pass --plugins DIR",
			s.pluginsDir, s.pluginsDir)
	}
	return s, nil
}

// parseAgent turns an --agent spec into a behavior.
func parseAgent(spec string) (testharness.Behavior, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "echo":
		if arg != "" {
			return nil, fmt.Errorf("--agent echo takes no argument, got %q", spec)
		}
		return testharness.EchoScenario(), nil
	case "scenario":
		if arg == "" {
			return nil, errors.New("--agent scenario:FILE needs a file, e.g. scenario:agent.yaml")
		}
		return testharness.LoadScenario(arg)
	case "command":
		if strings.TrimSpace(arg) == "" {
			return nil, errors.New("--agent command:CMD needs a command, e.g. command:'tr a-z A-Z'")
		}
		return testharness.NewCommandBehavior(arg), nil
	}
	return nil, fmt.Errorf("unknown agent %q (want echo, scenario:FILE or command:CMD)", spec)
}

// hostOptions builds the harness options shared by every command.
func (s *settings) hostOptions(logger testharness.Logger) (testharness.Options, error) {
	behavior, err := parseAgent(s.agent)
	if err != nil {
		return testharness.Options{}, err
	}
	configs, err := s.cfg.pluginConfigs()
	if err != nil {
		return testharness.Options{}, err
	}
	pc := make(map[string]any, len(configs))
	for name, raw := range configs {
		pc[name] = raw
	}
	dataDir, err := filepath.Abs(s.dataDir)
	if err != nil {
		return testharness.Options{}, err
	}
	var agents []testharness.HostAgent
	for i, a := range s.cfg.Agents {
		ha := testharness.HostAgent{ID: a.ID, Name: a.Name, Description: a.Description}
		if a.Agent != "" {
			spec := a.Agent
			if file, ok := strings.CutPrefix(spec, "scenario:"); ok && file != "" {
				spec = "scenario:" + s.cfg.resolve(file)
			}
			if ha.Agent, err = parseAgent(spec); err != nil {
				return testharness.Options{}, fmt.Errorf("%s:%d: agents[%d] (%s): %w", s.cfg.path, a.line, i, a.ID, err)
			}
		}
		agents = append(agents, ha)
	}
	return testharness.Options{
		Agents:        agents,
		Restart:       hostsdk.RestartPolicy{MaxRestarts: s.cfg.Restart.MaxRestarts, Window: s.cfg.Restart.Window},
		Agent:         behavior,
		PluginsDir:    s.pluginsDir,
		DataDir:       dataDir,
		LogLevel:      s.logLevel,
		Logger:        logger,
		PluginConfigs: pc,
		PluginEnv:     s.cfg.Env,
		EnvAllow:      append(append([]string(nil), defaultEnvAllow...), s.cfg.EnvAllow...),
		HostName:      "agenthost",
		HostVersion:   version.Version(),
		AllowFailures: true,
	}, nil
}

// hostSetup is how every command starts: the settings of the parsed flags
// and the harness options built from them, logging to stderr.
func (c *common) hostSetup(stderr io.Writer) (*settings, testharness.Options, error) {
	s, err := c.settings()
	if err != nil {
		return nil, testharness.Options{}, err
	}
	opts, err := s.hostOptions(stderrLogger(stderr))
	if err != nil {
		return nil, testharness.Options{}, err
	}
	return s, opts, nil
}

// lockedHostSetup is hostSetup for the commands that use the data
// directory (run and tool): it also locks the directory; release unlocks
// it.
func (c *common) lockedHostSetup(stderr io.Writer) (s *settings, opts testharness.Options, release func(), err error) {
	s, opts, err = c.hostSetup(stderr)
	if err != nil {
		return nil, opts, nil, err
	}
	release, err = lockDataDir(opts.DataDir)
	if err != nil {
		return nil, opts, nil, err
	}
	return s, opts, release, nil
}

// stderrLogger logs lines to w with a timestamp.
func stderrLogger(w io.Writer) testharness.Logger {
	l := log.New(w, "", log.Ltime|log.Lmicroseconds)
	return testharness.LoggerFunc(l.Printf)
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	c := newFlags("run", "run [flags]", stderr)
	var cpuProfile string
	c.fs.StringVar(&cpuProfile, "cpuprofile", "", "profile this host process's CPU into `FILE`, written when it is told to stop (the a2a plugin has its own pprof setting)")
	pos, err := c.parse(args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agenthost run: unexpected arguments %q\n", pos)
		return exitUsage
	}
	s, opts, release, err := c.lockedHostSetup(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	defer release()
	// Profiling starts once this host owns its data directory (a host
	// refused for a busy directory leaves an older profile alone) and is
	// written on the first stop signal, before the drain, which a second
	// signal may cut short.
	stopProfile := func() {}
	if cpuProfile != "" {
		if stopProfile, err = startCPUProfile(cpuProfile); err != nil {
			fmt.Fprintf(stderr, "agenthost: %v\n", err)
			return exitError
		}
		defer stopProfile()
	}
	// Nobody reads the calls of a host that serves for hours: count them
	// only, instead of keeping copies that would grow and cost CPU.
	opts.Recorder = testharness.NewCountingRecorder()
	out := &syncWriter{w: stdout}
	printEndpoints := func(p *hostsdk.Plugin) {
		for _, ep := range p.Endpoints() {
			out.printf("%s: serving at %s\n", p.Name(), ep)
		}
	}
	// Endpoints are printed once the configuration is checked, then again
	// after each restart.
	var serving atomic.Bool
	opts.OnReady = func(p *hostsdk.Plugin) {
		if serving.Load() {
			printEndpoints(p)
		}
	}
	// A plugin that fails for good once the host serves (it crashed more
	// often than the restart policy allows) ends the host: a supervisor
	// sees the exit status and can restart the whole host, where a host
	// left running without its plugin would look healthy with its port
	// closed.
	gaveUp := make(chan hostsdk.Event, 1)
	opts.OnEvent = func(ev hostsdk.Event) {
		if ev.Kind == hostsdk.EventFailed && serving.Load() {
			select {
			case gaveUp <- ev:
			default:
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := testharness.StartHost(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	ready, failed := reportPlugins(h, stderr)
	if err := s.cfg.unknownSections(pluginNames(h)); err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		closeHost(h, stderr)
		return exitError
	}
	if ready == 0 {
		if failed == 0 {
			fmt.Fprintf(stderr, "agenthost: no plugins in %s\n", s.pluginsDir)
		}
		closeHost(h, stderr)
		return exitError
	}
	for _, p := range h.Manager().Plugins() {
		if p.State() == hostsdk.StateReady {
			printEndpoints(p)
		}
	}
	serving.Store(true)
	stopControl, err := serveControl(opts.DataDir, h, func(f string, a ...any) { opts.Logger.Logf("agenthost: "+f, a...) })
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
	}
	defer stopControl()
	if tools, err := h.Tools(ctx); err == nil && len(tools) > 0 {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.GetName()
		}
		out.printf("tools: %s\n", strings.Join(names, ", "))
	}
	out.printf("agenthost: %d plugin(s) ready; Ctrl-C to stop\n", ready)

	code := exitOK
	select {
	case <-ctx.Done():
		out.printf("agenthost: stopping (draining plugins)\n")
	case ev := <-gaveUp:
		fmt.Fprintf(stderr, "agenthost: ERROR: %v\n"+
			"agenthost: giving up: plugin %s is down for good, so this host stops (exit status %d) for its supervisor to restart it; "+
			"the restart policy is host.yaml's restart section (max_restarts, window)\n", ev.Err, ev.Plugin, exitGaveUp)
		code = exitGaveUp
	}
	stopProfile()
	stop() // a second Ctrl-C kills at once
	stopControl()
	if err := closeHost(h, stderr); err != nil && code == exitOK {
		return exitError
	}
	return code
}

// reportPlugins prints, once, why each plugin that is not ready failed,
// and counts the ready and the failed ones.
func reportPlugins(h *testharness.Host, stderr io.Writer) (ready, failed int) {
	for _, p := range h.Manager().Plugins() {
		if p.State() == hostsdk.StateReady {
			ready++
			continue
		}
		failed++
		if err := p.LastError(); err != nil {
			fmt.Fprintf(stderr, "agenthost: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "agenthost: plugin %q is %s\n", p.Name(), p.State())
		}
	}
	return ready, failed
}

// pluginNames lists the names of the plugins found, ready or not.
func pluginNames(h *testharness.Host) []string {
	var names []string
	for _, p := range h.Manager().Plugins() {
		names = append(names, p.Name())
	}
	return names
}

func closeHost(h *testharness.Host, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := h.Close(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: stopping plugins: %v\n", err)
	}
	return err
}

func cmdTool(args []string, stdout, stderr io.Writer) int {
	c := newFlags("tool", "tool NAME ['JSON'] [flags]", stderr)
	c.logLevel = "warn"
	c.fs.Lookup("log-level").DefValue = "warn"
	chatID := c.fs.String("chat", "", "chat id of the calling conversation (CallToolRequest.chat_id)")
	timeout := c.fs.Duration("timeout", 5*time.Minute, "give up on the call after this long")
	pos, err := c.parse(args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) < 1 || len(pos) > 2 {
		fmt.Fprintf(stderr, "agenthost tool: want a tool name and optional JSON arguments, got %d arguments\n", len(pos))
		c.fs.Usage()
		return exitUsage
	}
	name, argsJSON := pos[0], "{}"
	if len(pos) == 2 {
		argsJSON = pos[1]
	}
	var probe map[string]any
	if err := json.Unmarshal([]byte(argsJSON), &probe); err != nil {
		fmt.Fprintf(stderr, "agenthost tool: the arguments must be a JSON object: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	printProgress := func(msg string, f float64) {
		if f >= 0 && f <= 1 {
			fmt.Fprintf(stderr, "progress: %s (%.0f%%)\n", msg, f*100)
		} else {
			fmt.Fprintf(stderr, "progress: %s\n", msg)
		}
	}
	printResult := func(content string, isError bool) int {
		return printToolResult(stdout, stderr, name, content, isError)
	}

	// The host running on this data directory, when there is one, makes
	// the call with its plugins: same peers, same state, and no second
	// server on its port.
	s, err := c.settings()
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	dataDir, err := filepath.Abs(s.dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	res, err := callRunning(cctx, dataDir, controlRequest{Tool: name, Arguments: argsJSON, ChatID: *chatID, TimeoutMS: timeout.Milliseconds()},
		func(p controlProgress) { printProgress(p.Message, p.Fraction) })
	switch {
	case err == nil:
		return printResult(res.Content, res.IsError)
	case !errors.Is(err, errNoHost):
		fmt.Fprintf(stderr, "agenthost tool %s: %v\n", name, err)
		return exitError
	}

	// No host runs there: a throw-away one makes the call. Its A2A server
	// listens on a free port (A2A_PORT=0), never on the configured one,
	// which another agent may be serving.
	_, opts, release, err := c.lockedHostSetup(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	defer release()
	opts.PluginEnv = withPluginEnv(opts.PluginEnv, "a2a", "A2A_PORT", "0")
	h, err := testharness.StartHost(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	defer closeHost(h, stderr)
	if _, failed := reportPlugins(h, stderr); failed > 0 {
		return exitError
	}
	if err := s.cfg.unknownSections(pluginNames(h)); err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	r, err := h.CallToolProgress(cctx, &pb.CallToolRequest{Name: name, ArgumentsJson: argsJSON, ChatId: *chatID, Platform: "agenthost"},
		func(p *pb.ToolProgress) error {
			printProgress(p.GetMessage(), p.GetFraction())
			return nil
		})
	if err != nil {
		fmt.Fprintf(stderr, "agenthost tool %s: %v\n", name, err)
		return exitError
	}
	return printResult(r.GetContent(), r.GetIsError())
}

// summaryTools are the a2a plugin's tools whose result ends with one line
// of JSON summing it up (internal/tools: writeJSONLine for a2a_call and
// a2a_task, discover.go for a2a_discover). Other results may end with a
// line of JSON a peer wrote (a2a_history), which is no summary.
var summaryTools = map[string]string{
	"a2a_call":     "peer, state, task_id, context_id",
	"a2a_task":     "peer, state, task_id, context_id",
	"a2a_discover": "agent, name, protocol, skills, streaming, signed",
}

// printToolResult prints a tool's result to stdout exactly as the model
// reads it (scripts take it from there) and returns the exit status. When
// the result ends with the a2a plugin's JSON summary line, a note on
// stderr says what that line is, once per call, without changing stdout.
func printToolResult(stdout, stderr io.Writer, tool, content string, isError bool) int {
	fmt.Fprintln(stdout, content)
	if keys, ok := summaryTools[tool]; ok {
		lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
		var summary map[string]any
		if last := lines[len(lines)-1]; strings.HasPrefix(last, "{") && json.Unmarshal([]byte(last), &summary) == nil {
			fmt.Fprintf(stderr, "agenthost: the last line is %s's summary in JSON (%s), for the model and for scripts: take it with | tail -n 1\n", tool, keys)
		}
	}
	if isError {
		return exitError
	}
	return exitOK
}

// withPluginEnv returns env (copied) with name=value set for plugin.
func withPluginEnv(env map[string]map[string]string, plugin, name, value string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(env)+1)
	for p, vars := range env {
		out[p] = maps.Clone(vars)
	}
	if out[plugin] == nil {
		out[plugin] = map[string]string{}
	}
	out[plugin][name] = value
	return out
}

// pluginInfo is one line of "agenthost plugins".
type pluginInfo struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	ProtocolMinor uint32   `json:"protocol_minor"`
	Capabilities  []string `json:"capabilities"`
	State         string   `json:"state"`
	Path          string   `json:"path"`
	Endpoints     []string `json:"endpoints,omitempty"`
	Description   string   `json:"description,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// skippedInfo is a file of the plugins directory that is not a plugin.
type skippedInfo struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func cmdPlugins(args []string, stdout, stderr io.Writer) int {
	c := newFlags("plugins", "plugins [flags]", stderr)
	c.logLevel = "off"
	c.fs.Lookup("log-level").DefValue = "off"
	asJSON := c.fs.Bool("json", false, "print JSON instead of a table")
	pos, err := c.parse(args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agenthost plugins: unexpected arguments %q\n", pos)
		return exitUsage
	}
	s, opts, err := c.hostSetup(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	// Listing must not leave state behind or clash with a running host's
	// data: use a throw-away data directory.
	tmp, err := os.MkdirTemp("", "agenthost-plugins-")
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	defer os.RemoveAll(tmp)
	opts.DataDir = tmp

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := testharness.StartHost(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "agenthost: %v\n", err)
		return exitError
	}
	var plugins []pluginInfo
	loaded := map[string]bool{}
	for _, p := range h.Manager().Plugins() {
		d := p.Describe()
		info := pluginInfo{
			Name: p.Name(), Version: d.GetVersion(), ProtocolMinor: d.GetProtocolMinor(),
			State: p.State().String(), Path: p.Path(), Endpoints: p.Endpoints(), Description: d.GetDescription(),
		}
		for _, c := range d.GetCapabilities() {
			info.Capabilities = append(info.Capabilities, strings.ToLower(strings.TrimPrefix(c.String(), "CAPABILITY_")))
		}
		if p.State() != hostsdk.StateReady && p.LastError() != nil {
			info.Error = p.LastError().Error()
		}
		plugins = append(plugins, info)
		loaded[p.Path()] = true
	}
	skipped := skippedFiles(s.pluginsDir, loaded, h.Events())
	closeHost(h, stderr)

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"plugins": plugins, "skipped": skipped})
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tPROTOCOL\tCAPABILITIES\tSTATE\tPATH")
	for _, p := range plugins {
		fmt.Fprintf(tw, "%s\t%s\t1.%d\t%s\t%s\t%s\n", p.Name, p.Version, p.ProtocolMinor, strings.Join(p.Capabilities, ","), p.State, p.Path)
	}
	tw.Flush()
	for _, p := range plugins {
		if p.Error != "" {
			fmt.Fprintf(stdout, "%s: %s\n", p.Name, p.Error)
		}
	}
	if len(plugins) == 0 {
		fmt.Fprintf(stdout, "no plugins in %s\n", s.pluginsDir)
	}
	if len(skipped) > 0 {
		fmt.Fprintln(stdout, "\nskipped:")
		for _, sk := range skipped {
			fmt.Fprintf(stdout, "  %s: %s\n", sk.Path, sk.Reason)
		}
	}
	return exitOK
}

// skippedFiles explains every entry of the plugins directory that did not
// become a plugin: host-sdk's reason for candidates it launched and
// skipped, and the discovery rule for the rest.
func skippedFiles(dir string, loaded map[string]bool, events []hostsdk.Event) []skippedInfo {
	reasons := map[string]string{}
	for _, ev := range events {
		if ev.Kind == hostsdk.EventSkipped {
			// go-plugin appends a multi-line explanation; keep the first line.
			reason, _, _ := strings.Cut(fmt.Sprint(ev.Err), "\n")
			reasons[ev.Plugin] = reason
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	var out []skippedInfo
	for _, e := range entries {
		path := filepath.Join(abs, e.Name())
		if loaded[path] {
			continue
		}
		reason := reasons[path]
		if reason == "" {
			info, err := os.Stat(path)
			switch {
			case strings.HasPrefix(e.Name(), "."):
				reason = "hidden file"
			case err != nil:
				reason = "cannot stat it: " + err.Error()
			case info.IsDir():
				reason = "a directory (plugins are single executables)"
			case !info.Mode().IsRegular():
				reason = "not a regular file"
			case info.Mode().Perm()&0o111 == 0:
				reason = "not executable (chmod +x it if it is a plugin)"
			default:
				reason = "not loaded (see the log)"
			}
		}
		out = append(out, skippedInfo{Path: path, Reason: reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func usageErr(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// syncWriter serializes writes from host-sdk's goroutines and main.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format, args...)
}

// startCPUProfile profiles the host process into path until the returned
// function is first called (later calls do nothing).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}, nil
}
