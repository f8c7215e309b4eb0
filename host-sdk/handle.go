package hostsdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// ErrUnavailable matches (errors.Is) every error of a call made through a
// Plugin handle while the plugin has no running process: starting,
// restarting after a crash, failed or stopped.
var ErrUnavailable = errors.New("plugin unavailable")

// unavailableError says why a plugin cannot take calls.
type unavailableError struct {
	plugin string
	why    string
	cause  error // the call's own error, when it failed in flight
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("plugin %q is unavailable (%s)", e.plugin, e.why)
}

func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }
func (e *unavailableError) Unwrap() error        { return e.cause }

// Plugin is the host's handle on one plugin. It stays valid across restarts:
// its Platform, Toolset and Lifecycle views forward every call to the
// current process, and fail at once with an ErrUnavailable error while there
// is none.
type Plugin struct {
	m      *Manager
	path   string // the executable; empty in-process
	file   string // the candidate's file name
	stderr *lineRing
	spawn  func(ctx context.Context, name string, prefixes []string) (*instance, error)

	mu          sync.Mutex
	name        string
	desc        *pb.DescribeResponse
	inst        *instance // nil unless ready
	state       State
	lastErr     error
	crashReason string
	restarts    []time.Time // restarts within the policy window
	stopping    bool
	stopCh      chan struct{}
	wg          sync.WaitGroup // supervisor goroutines
}

func newPlugin(m *Manager, c Candidate) *Plugin {
	return &Plugin{
		m: m, path: c.Path, file: c.Name, name: c.Name,
		stderr: newLineRing(stderrLines),
		state:  StateStarting,
		stopCh: make(chan struct{}),
	}
}

// Name is the name the plugin gave in Describe (its file name before that).
func (p *Plugin) Name() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.name
}

// Path is the plugin's executable ("" for an in-process plugin).
func (p *Plugin) Path() string { return p.path }

// Describe is (a copy of) the plugin's last Describe answer; nil before the
// first.
func (p *Plugin) Describe() *pb.DescribeResponse {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.desc == nil {
		return nil
	}
	return proto.CloneOf(p.desc)
}

// State is where the plugin is in its life.
func (p *Plugin) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// LastError is the most recent failure: a crash reason (with the tail of the
// plugin's stderr), a refused Configure, a failed restart. It is kept after
// a successful restart, so it answers "what went wrong last"; State says
// whether the plugin is fine now.
func (p *Plugin) LastError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// Endpoints are where the plugin's platform listens, from its last
// ConnectResponse (nil for a plugin without a platform or while down).
func (p *Plugin) Endpoints() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == nil {
		return nil
	}
	return slices.Clone(p.inst.endpoints)
}

// Pid is the process id of the running plugin (0 while down or in-process).
func (p *Plugin) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == nil {
		return 0
	}
	return p.inst.pid
}

// RecentStderr returns the last lines the plugin wrote to stderr (hclog JSON
// lines rendered as text), oldest first; n <= 0 means all that are kept.
func (p *Plugin) RecentStderr(n int) []string { return p.stderr.tail(n) }

// ProtocolMinor is the contract minor version the plugin gave in its last
// Describe (0 before the first). A host uses it to decide what the plugin
// understands, e.g. SendRequest.ends_turn from 1.1 on; Platform().Send
// also checks it on every call (see there).
func (p *Plugin) ProtocolMinor() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.desc.GetProtocolMinor()
}

// hasCapability reports whether the last Describe listed c.
func (p *Plugin) hasCapability(c pb.Capability) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.desc != nil && slices.Contains(p.desc.GetCapabilities(), c)
}

// Platform returns the plugin's platform adapter, if Describe listed one.
func (p *Plugin) Platform() (plugin.Platform, bool) {
	if !p.hasCapability(pb.Capability_CAPABILITY_PLATFORM) {
		return nil, false
	}
	return platformHandle{p}, true
}

// Toolset returns the plugin's toolset, if Describe listed one.
func (p *Plugin) Toolset() (plugin.Toolset, bool) {
	if !p.hasCapability(pb.Capability_CAPABILITY_TOOLSET) {
		return nil, false
	}
	return toolsetHandle{p}, true
}

// Lifecycle returns the plugin's lifecycle service. Hosts rarely need it:
// the Manager describes, configures and drains plugins itself. Tests use it
// to call Configure by hand (see InProcessOptions.NoConfigure).
func (p *Plugin) Lifecycle() plugin.Lifecycle { return lifecycleHandle{p} }

// unavailableLocked explains why there is no process to call.
func (p *Plugin) unavailableLocked(cause error) error {
	var why string
	switch p.state {
	case StateStarting:
		why = "starting"
	case StateRestarting:
		why = "restarting after crash: " + p.crashReason
	case StateFailed:
		why = "failed"
		if p.lastErr != nil {
			why += ": " + p.lastErr.Error()
		}
	case StateStopped:
		why = "stopped by the host"
	default:
		why = p.state.String()
	}
	return &unavailableError{plugin: p.name, why: why, cause: cause}
}

// current returns the running instance or an ErrUnavailable error.
func (p *Plugin) current() (*instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == nil || p.state != StateReady {
		return nil, p.unavailableLocked(nil)
	}
	return p.inst, nil
}

// callError explains a failed call. When the process died under the call,
// the caller gets the same ErrUnavailable error as later callers.
func (p *Plugin) callError(inst *instance, method string, err error) error {
	if inst.diedUnder(err) {
		p.handleExit(inst)
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.unavailableLocked(err)
	}
	return fmt.Errorf("plugin %q: %s: %w", p.Name(), method, err)
}

// invoke runs f against the current instance.
func invoke[T any](p *Plugin, method string, f func(*instance) (T, error)) (T, error) {
	var zero T
	inst, err := p.current()
	if err != nil {
		return zero, err
	}
	v, err := f(inst)
	if err != nil {
		return zero, p.callError(inst, method, err)
	}
	return v, nil
}

func noLonger(p *Plugin, what string) error {
	return fmt.Errorf("plugin %q no longer offers a %s (its Describe changed on restart): %w", p.Name(), what, plugin.ErrUnimplemented)
}

type platformHandle struct{ p *Plugin }

// ProtocolMinor is the plugin's protocol minor (Plugin.ProtocolMinor), so
// a host holding only the Platform can tell what it understands.
func (h platformHandle) ProtocolMinor() uint32 { return h.p.ProtocolMinor() }

func (h platformHandle) call(inst *instance) (plugin.Platform, error) {
	if inst.platform == nil {
		return nil, noLonger(h.p, "platform")
	}
	return inst.platform, nil
}

func (h platformHandle) Connect(ctx context.Context, req *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	return invoke(h.p, "Connect", func(in *instance) (*pb.ConnectResponse, error) {
		pf, err := h.call(in)
		if err != nil {
			return nil, err
		}
		return pf.Connect(ctx, req)
	})
}

func (h platformHandle) Disconnect(ctx context.Context, req *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	return invoke(h.p, "Disconnect", func(in *instance) (*pb.DisconnectResponse, error) {
		pf, err := h.call(in)
		if err != nil {
			return nil, err
		}
		return pf.Disconnect(ctx, req)
	})
}

// Send delivers output. A Send with ends_turn reaching a process older than
// protocol 1.1 (which would ignore the field and wait for the end of the
// turn) is sent without it and followed by ProcessingComplete SUCCESS, so a
// host may set ends_turn whatever plugin serves the call.
func (h platformHandle) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	return invoke(h.p, "Send", func(in *instance) (*pb.SendResponse, error) {
		pf, err := h.call(in)
		if err != nil {
			return nil, err
		}
		if !req.GetEndsTurn() || in.desc.GetProtocolMinor() >= 1 {
			return pf.Send(ctx, req)
		}
		old := proto.CloneOf(req)
		old.EndsTurn = false
		return plugin.SendThenEndTurn(ctx, pf, old)
	})
}

func (h platformHandle) ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	return invoke(h.p, "ProcessingComplete", func(in *instance) (*pb.ProcessingCompleteResponse, error) {
		pf, err := h.call(in)
		if err != nil {
			return nil, err
		}
		return pf.ProcessingComplete(ctx, req)
	})
}

type toolsetHandle struct{ p *Plugin }

func (h toolsetHandle) call(inst *instance) (plugin.Toolset, error) {
	if inst.toolset == nil {
		return nil, noLonger(h.p, "toolset")
	}
	return inst.toolset, nil
}

func (h toolsetHandle) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return invoke(h.p, "ListTools", func(in *instance) ([]*pb.ToolDefinition, error) {
		ts, err := h.call(in)
		if err != nil {
			return nil, err
		}
		return ts.ListTools(ctx)
	})
}

func (h toolsetHandle) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	return invoke(h.p, fmt.Sprintf("CallTool %q", req.GetName()), func(in *instance) (*pb.ToolResult, error) {
		ts, err := h.call(in)
		if err != nil {
			return nil, err
		}
		return ts.CallTool(ctx, req, progress)
	})
}

type lifecycleHandle struct{ p *Plugin }

func (h lifecycleHandle) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return invoke(h.p, "Describe", func(in *instance) (*pb.DescribeResponse, error) {
		return in.lifecycle.Describe(ctx, req)
	})
}

// Configure forwards to the plugin. A non-nil host is served to the plugin
// through the go-plugin broker (see plugin.LifecycleGRPCPlugin).
func (h lifecycleHandle) Configure(ctx context.Context, req *pb.ConfigureRequest, host plugin.Host) (*pb.ConfigureResponse, error) {
	return invoke(h.p, "Configure", func(in *instance) (*pb.ConfigureResponse, error) {
		return in.lifecycle.Configure(ctx, req, host)
	})
}

func (h lifecycleHandle) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	return invoke(h.p, "Drain", func(in *instance) (*pb.DrainResponse, error) {
		return in.lifecycle.Drain(ctx, req)
	})
}

// logger is the plugin's sub-logger of the manager's.
func (p *Plugin) logger() hclog.Logger { return p.m.log.With("plugin", p.Name()) }

// crashSummary is the exit status and the tail of stderr, on one line.
func crashSummary(status string, tail []string) string {
	if len(tail) == 0 {
		return status + " (no warning or error on stderr)"
	}
	for i, l := range tail {
		if len(l) > 300 {
			tail[i] = l[:300] + "…"
		}
	}
	return status + "; stderr: " + strings.Join(tail, " | ")
}
