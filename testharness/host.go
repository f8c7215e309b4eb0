package testharness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// A2APluginName is the name the A2A plugin gives in Describe; Options.Env
// and Options.PluginConfig are for it.
const A2APluginName = "a2a"

// Options configure a harness Host. The zero value launches the A2A plugin
// with an echo agent.
type Options struct {
	// Agent is what the host's agent does; nil means EchoScenario().
	Agent Behavior
	// Tools overrides the tool registry of the agent (Host.ListTools).
	Tools []*pb.ToolDefinition

	// PluginConfig is the A2A plugin's configuration section: any value
	// encoding/json accepts (a map, a struct, json.RawMessage).
	PluginConfig any
	// PluginConfigs are configuration sections of other plugins, by plugin
	// name.
	PluginConfigs map[string]any
	// Env is set in the A2A plugin's environment.
	Env map[string]string
	// PluginEnv is set in other plugins' environments, by plugin name.
	PluginEnv map[string]map[string]string
	// EnvAllow adds variables of this process's environment that plugins
	// inherit (exact names or PREFIX* patterns; see hostsdk.Options).
	EnvAllow []string

	// PluginsDir, when set, is the plugins directory to load as it is:
	// nothing is built. The reference host uses it.
	PluginsDir string
	// NoA2APlugin leaves out the A2A plugin binary (PluginBinary); only
	// Binaries are built.
	NoA2APlugin bool
	// Binaries are other binaries to build into the plugins directory,
	// e.g. TestPluginBinary.
	Binaries []Binary
	// BuildFlags are extra "go build" flags, e.g. "-race" or "-cover".
	// When empty, the flags in the TESTHARNESS_BUILD_FLAGS environment
	// variable (space-separated) are used, so a whole suite can run its
	// plugins race-instrumented: TESTHARNESS_BUILD_FLAGS=-race go test ./...
	BuildFlags []string

	// DataDir is the root of the plugins' data directories; empty means a
	// temporary directory.
	DataDir string
	// LogLevel is the plugins' log level; default "debug" under Start,
	// "info" under StartHost.
	LogLevel string
	// Logger receives the host's and the plugins' logs; Start defaults it
	// to the test's log.
	Logger Logger
	// Recorder receives every call; nil means a new one.
	Recorder *Recorder
	// HostName and HostVersion are HostInfo.name and .version given to
	// plugins; default "testharness" and "dev".
	HostName, HostVersion string
	// HostProtocolMinor is HostInfo.protocol_minor, to play a host of an
	// older contract (e.g. 1 for a host without call streams); 0 means
	// plugin.ProtocolMinor.
	HostProtocolMinor uint32
	// Agents, when set, are the host's agents (contract 1.4,
	// HostInfo.agents), the first its default; each turn is played with
	// the behavior of the agent it is for (AgentRouter), Agent for those
	// without one of their own.
	Agents []HostAgent
	// HostCannotCancel plays a host whose CancelTurn cannot stop a running
	// turn (HostInfo.cancel_turn_unsupported, contract 1.3), like OpenClaw.
	HostCannotCancel bool
	// StartTimeout bounds each step of bringing a plugin up (default 20s).
	StartTimeout time.Duration
	// Restart is the supervisor's policy for crashed plugins.
	Restart hostsdk.RestartPolicy
	// AllowFailures keeps the host running when a plugin fails to come up
	// (e.g. a test of a refused configuration); inspect Plugin(name).
	AllowFailures bool
	// OnEvent, when set, also receives every plugin life event.
	OnEvent func(hostsdk.Event)
	// OnReady, when set, is called with a plugin's handle each time it
	// becomes ready (first start and every restart), e.g. to print its
	// endpoints, which may change on restart. Called from host-sdk's
	// goroutines: keep it quick.
	OnReady func(*hostsdk.Plugin)
}

// Host is a simulated agent host running real plugin binaries: it launches
// every plugin of a plugins directory through host-sdk exactly as a host
// does, with an Agent serving the host callback service, and exposes the
// plugins' endpoints and tools.
type Host struct {
	opts       Options
	log        Logger
	agent      *Agent
	rec        *Recorder
	m          *hostsdk.Manager
	pluginsDir string
	tmpDirs    []string

	mu     sync.Mutex
	events []hostsdk.Event

	closeOnce sync.Once
	closeErr  error
}

// Start builds the plugin binaries (once per test binary), launches them
// with a new Host and stops them when the test ends (Drain, then kill).
// Failures fail the test.
func Start(t testing.TB, opts Options) *Host {
	t.Helper()
	gate := &gatedLogger{l: t}
	if opts.Logger != nil {
		gate.l = opts.Logger
	}
	opts.Logger = gate
	if opts.LogLevel == "" {
		opts.LogLevel = "debug"
	}
	if opts.DataDir == "" {
		opts.DataDir = filepath.Join(t.TempDir(), "data")
	}
	if opts.PluginsDir == "" {
		dir := filepath.Join(t.TempDir(), "plugins")
		if err := buildInto(context.Background(), dir, opts); err != nil {
			t.Fatalf("testharness: %v", err)
		}
		opts.PluginsDir = dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := StartHost(ctx, opts)
	if err != nil {
		gate.close()
		t.Fatalf("testharness: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Logf("testharness: closing the host: %v", err)
		}
		gate.close()
	})
	return h
}

// StartHost is Start for use outside tests: it builds the binaries unless
// opts.PluginsDir is set, starts the plugins and returns when they are up.
// The caller must Close the host.
func StartHost(ctx context.Context, opts Options) (*Host, error) {
	h := &Host{opts: opts, log: orNop(opts.Logger)}
	if opts.PluginsDir == "" {
		dir, err := os.MkdirTemp("", "testharness-plugins-")
		if err != nil {
			return nil, err
		}
		h.tmpDirs = append(h.tmpDirs, dir)
		if err := buildInto(ctx, dir, opts); err != nil {
			h.removeTmp()
			return nil, err
		}
		opts.PluginsDir = dir
	}
	h.pluginsDir = opts.PluginsDir
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	configs, err := pluginConfigs(opts)
	if err != nil {
		h.removeTmp()
		return nil, err
	}
	pluginEnv := map[string]map[string]string{}
	for name, env := range opts.PluginEnv {
		pluginEnv[name] = env
	}
	if len(opts.Env) > 0 {
		if _, dup := pluginEnv[A2APluginName]; dup {
			h.removeTmp()
			return nil, fmt.Errorf("testharness: the %s plugin's environment is given twice (Env and PluginEnv[%q])", A2APluginName, A2APluginName)
		}
		pluginEnv[A2APluginName] = opts.Env
	}

	behavior := opts.Agent
	if behavior == nil {
		behavior = EchoScenario()
	}
	if len(opts.Agents) > 0 {
		behavior = NewAgentRouter(behavior, opts.Agents)
	}
	// The agent logs through hclog too, so the log level applies to it.
	hl := NewHCLogger(h.log, "host", opts.LogLevel)
	agentLog := hl.Named("agent")
	agent, err := NewAgent(behavior, AgentOptions{Tools: opts.Tools, Recorder: opts.Recorder, CannotCancel: opts.HostCannotCancel,
		Logger: LoggerFunc(func(format string, args ...any) {
			if agentLog.IsInfo() { // a line per turn: not formatted when nobody reads it
				agentLog.Info(fmt.Sprintf(format, args...))
			}
		})})
	if err != nil {
		h.removeTmp()
		return nil, err
	}
	h.agent, h.rec = agent, agent.Recorder()
	agent.Attach(routerPlatform{h})
	agent.SetToolCaller(h.callTool)

	hostName := opts.HostName
	if hostName == "" {
		hostName = "testharness"
	}
	hostVersion := opts.HostVersion
	if hostVersion == "" {
		hostVersion = "dev"
	}
	startTimeout := opts.StartTimeout
	if startTimeout <= 0 {
		startTimeout = 20 * time.Second
	}
	h.m = hostsdk.NewManager(hostsdk.Options{
		Dir:          opts.PluginsDir,
		Logger:       hl,
		Host:         agent.Handler(),
		Config:       configs,
		DataDir:      opts.DataDir,
		LogLevel:     opts.LogLevel,
		HostInfo:     &pb.HostInfo{Name: hostName, Version: hostVersion, ProtocolMinor: opts.HostProtocolMinor, Agents: hostAgentsInfo(opts.Agents)},
		EnvAllow:     opts.EnvAllow,
		PluginEnv:    pluginEnv,
		StartTimeout: startTimeout,
		Restart:      opts.Restart,
		OnEvent:      h.onEvent,
	})
	if err := h.m.Start(ctx); err != nil && !opts.AllowFailures {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Close(cctx)
		return nil, fmt.Errorf("starting plugins from %s: %w", opts.PluginsDir, err)
	}
	if len(h.m.Plugins()) == 0 && !opts.AllowFailures {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Close(cctx)
		return nil, fmt.Errorf("no plugin loaded from %s%s", opts.PluginsDir, h.skippedSummary())
	}
	return h, nil
}

// buildInto builds the binaries Options asks for into dir.
func buildInto(ctx context.Context, dir string, opts Options) error {
	bins := append([]Binary(nil), opts.Binaries...)
	if !opts.NoA2APlugin {
		bins = append([]Binary{PluginBinary}, bins...)
	}
	if len(bins) == 0 {
		return errors.New("nothing to launch: NoA2APlugin is set and Binaries is empty")
	}
	root, err := ModuleRoot("")
	if err != nil {
		return err
	}
	flags := opts.BuildFlags
	if len(flags) == 0 {
		flags = strings.Fields(os.Getenv("TESTHARNESS_BUILD_FLAGS"))
	}
	for _, b := range bins {
		path, err := BuildBinary(ctx, root, b, flags...)
		if err != nil {
			return err
		}
		if _, err := InstallBinary(path, dir, b.Name); err != nil {
			return fmt.Errorf("install %s into %s: %w", b.Name, dir, err)
		}
	}
	return nil
}

// pluginConfigs marshals the configuration sections.
func pluginConfigs(opts Options) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	add := func(name string, v any) error {
		if v == nil {
			return nil
		}
		var b []byte
		switch x := v.(type) {
		case json.RawMessage:
			b = x
		case []byte:
			b = x
		case string:
			b = []byte(x)
		default:
			var err error
			if b, err = json.Marshal(v); err != nil {
				return fmt.Errorf("testharness: configuration of plugin %q: %w", name, err)
			}
		}
		if !json.Valid(b) {
			return fmt.Errorf("testharness: configuration of plugin %q is not valid JSON: %s", name, b)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("testharness: configuration of plugin %q is given twice (PluginConfig and PluginConfigs[%q])", name, name)
		}
		out[name] = b
		return nil
	}
	for name, v := range opts.PluginConfigs {
		if err := add(name, v); err != nil {
			return nil, err
		}
	}
	if err := add(A2APluginName, opts.PluginConfig); err != nil {
		return nil, err
	}
	return out, nil
}

func (h *Host) onEvent(ev hostsdk.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	if h.opts.OnEvent != nil {
		h.opts.OnEvent(ev)
	}
	if ev.Kind == hostsdk.EventReady && h.opts.OnReady != nil {
		if p := h.Plugin(ev.Plugin); p != nil {
			h.opts.OnReady(p)
		}
	}
}

// Events returns every plugin life event so far (ready, skipped, crashed,
// failed, stopped).
func (h *Host) Events() []hostsdk.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostsdk.Event(nil), h.events...)
}

func (h *Host) skippedSummary() string {
	var s []string
	for _, ev := range h.Events() {
		if ev.Kind == hostsdk.EventSkipped {
			s = append(s, fmt.Sprintf("%s: %v", ev.Plugin, ev.Err))
		}
	}
	if len(s) == 0 {
		return ""
	}
	return " (skipped: " + strings.Join(s, "; ") + ")"
}

// Agent returns the host's agent.
func (h *Host) Agent() *Agent { return h.agent }

// Recorder returns the recorder of every call in both directions.
func (h *Host) Recorder() *Recorder { return h.rec }

// Manager returns the host-sdk manager running the plugins.
func (h *Host) Manager() *hostsdk.Manager { return h.m }

// PluginsDir is the plugins directory the host loaded.
func (h *Host) PluginsDir() string { return h.pluginsDir }

// Plugin returns the handle of a plugin by name, or nil.
func (h *Host) Plugin(name string) *hostsdk.Plugin {
	p, ok := h.m.Plugin(name)
	if !ok {
		return nil
	}
	return p
}

// Endpoints are where the named plugin's platform listens (from Connect).
func (h *Host) Endpoints(name string) []string {
	if p := h.Plugin(name); p != nil {
		return p.Endpoints()
	}
	return nil
}

// Endpoint is the first endpoint of the named plugin's platform, e.g.
// Endpoint("a2a") = "http://127.0.0.1:41241"; "" when it has none.
func (h *Host) Endpoint(name string) string {
	if eps := h.Endpoints(name); len(eps) > 0 {
		return eps[0]
	}
	return ""
}

// Tools lists the tools of every ready plugin.
func (h *Host) Tools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return h.m.Tools(ctx)
}

// CallTool calls a plugin tool as the host's model would, from no
// particular conversation, and returns its result and the progress events
// it reported. The call is recorded. argsJSON "" means "{}".
func (h *Host) CallTool(ctx context.Context, name, argsJSON string) (*pb.ToolResult, []*pb.ToolProgress, error) {
	if argsJSON == "" {
		argsJSON = "{}"
	}
	var progress []*pb.ToolProgress
	res, err := h.callToolRecorded(ctx, &pb.CallToolRequest{Name: name, ArgumentsJson: argsJSON}, func(p *pb.ToolProgress) error {
		progress = append(progress, p)
		return nil
	})
	return res, progress, err
}

// CallToolProgress is CallTool with progress events delivered as they
// come, and a full request (e.g. with chat_id).
func (h *Host) CallToolProgress(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	if req.GetArgumentsJson() == "" {
		req.ArgumentsJson = "{}"
	}
	return h.callToolRecorded(ctx, req, progress)
}

// callTool serves the agent's call_tool actions.
func (h *Host) callTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	return h.callToolRecorded(ctx, req, progress)
}

func (h *Host) callToolRecorded(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	start := time.Now()
	var mu sync.Mutex
	var events []*pb.ToolProgress
	res, err := h.m.CallTool(ctx, req, func(p *pb.ToolProgress) error {
		mu.Lock()
		events = append(events, p)
		mu.Unlock()
		if progress != nil {
			return progress(p)
		}
		return nil
	})
	mu.Lock()
	call := Call{Time: start, Duration: time.Since(start), Kind: KindCallTool, Request: req, Progress: events, Err: err}
	mu.Unlock()
	if err == nil {
		call.Response = res
	}
	h.rec.Record(call)
	return res, err
}

// Kill kills the named plugin's process at once, like a crash; the
// supervisor restarts it according to Options.Restart.
func (h *Host) Kill(name string) error {
	p := h.Plugin(name)
	if p == nil {
		return fmt.Errorf("no plugin named %q", name)
	}
	pid := p.Pid()
	if pid == 0 {
		return fmt.Errorf("plugin %q has no running process (state %s)", name, p.State())
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return proc.Kill()
}

// Restart kills the named plugin and waits until the supervisor has a new
// process ready (configured and connected again).
func (h *Host) Restart(ctx context.Context, name string) error {
	p := h.Plugin(name)
	if p == nil {
		return fmt.Errorf("no plugin named %q", name)
	}
	old := p.Pid()
	if err := h.Kill(name); err != nil {
		return err
	}
	return h.waitReady(ctx, p, old)
}

// WaitReady waits until the named plugin is ready.
func (h *Host) WaitReady(ctx context.Context, name string) error {
	p := h.Plugin(name)
	if p == nil {
		return fmt.Errorf("no plugin named %q", name)
	}
	return h.waitReady(ctx, p, 0)
}

// waitReady waits for the plugin to be ready with a process other than
// oldPid.
func (h *Host) waitReady(ctx context.Context, p *hostsdk.Plugin, oldPid int) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st, pid := p.State(), p.Pid()
		switch {
		case st == hostsdk.StateReady && pid != 0 && pid != oldPid:
			return nil
		case st == hostsdk.StateFailed || st == hostsdk.StateStopped:
			return fmt.Errorf("plugin %q is %s: %v", p.Name(), st, p.LastError())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("plugin %q not ready (state %s): %w", p.Name(), st, ctx.Err())
		case <-tick.C:
		}
	}
}

// Close stops the plugins (Disconnect, Drain, then kill), then the agent
// (remaining turns end CANCELLED). It is idempotent.
func (h *Host) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		if h.m != nil {
			h.closeErr = h.m.Close(ctx)
		}
		if h.agent != nil {
			h.agent.Close()
		}
		h.removeTmp()
	})
	return h.closeErr
}

func (h *Host) removeTmp() {
	for _, d := range h.tmpDirs {
		_ = os.RemoveAll(d)
	}
}

// routerPlatform sends each turn's output to the plugin named by the
// turn's platform; with a single platform plugin, to that one. Handles stay
// valid across restarts.
type routerPlatform struct{ h *Host }

func (r routerPlatform) pick(name string) (plugin.Platform, error) {
	if p := r.h.Plugin(name); p != nil {
		if pf, ok := p.Platform(); ok {
			return pf, nil
		}
	}
	var names []string
	var only plugin.Platform
	for _, p := range r.h.m.Plugins() {
		if pf, ok := p.Platform(); ok {
			names = append(names, p.Name())
			only = pf
		}
	}
	if len(names) == 1 {
		return only, nil
	}
	sort.Strings(names)
	return nil, fmt.Errorf("no platform plugin named %q (platforms: %s)", name, strings.Join(names, ", "))
}

// ProtocolMinorFor is the protocol minor of the plugin that gets the
// output of turns on platform name (see pick), 0 when none does; the agent
// decides on ends_turn with it.
func (r routerPlatform) ProtocolMinorFor(name string) uint32 {
	pf, err := r.pick(name)
	if err != nil {
		return 0
	}
	return protocolMinor(pf, name)
}

func (r routerPlatform) Connect(ctx context.Context, req *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	return nil, errors.New("the harness connects platforms through host-sdk")
}

func (r routerPlatform) Disconnect(ctx context.Context, req *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	return nil, errors.New("the harness disconnects platforms through host-sdk")
}

func (r routerPlatform) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	pf, err := r.pick(req.GetPlatform())
	if err != nil {
		return nil, err
	}
	return pf.Send(ctx, req)
}

func (r routerPlatform) ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	pf, err := r.pick(req.GetPlatform())
	if err != nil {
		return nil, err
	}
	return pf.ProcessingComplete(ctx, req)
}

// NewHCLogger returns an hclog.Logger that writes text lines to l, for
// handing a Logger to host-sdk.
func NewHCLogger(l Logger, name, level string) hclog.Logger {
	lvl := hclog.LevelFromString(level)
	if lvl == hclog.NoLevel {
		lvl = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:        name,
		Level:       lvl,
		Output:      &lineLogger{l: orNop(l)},
		DisableTime: true,
	})
}

// lineLogger turns written bytes into one Logf call per line.
type lineLogger struct {
	mu  sync.Mutex
	l   Logger
	buf []byte
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.l.Logf("%s", w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}
