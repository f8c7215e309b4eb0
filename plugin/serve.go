package plugin

import (
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// ServeOpts is what a plugin's main hands to Serve.
type ServeOpts struct {
	// Lifecycle is required.
	Lifecycle Lifecycle
	// Platform, when set, is served as NamePlatform.
	Platform Platform
	// Toolset, when set, is served as NameToolset.
	Toolset Toolset
	// Logger receives Serve's own logs (panics, watchdog). Nil means
	// NewLogger(""). Configure's log_level is applied to it with SetLevel,
	// so give the implementation a Named() child of the same logger to have
	// its level follow the host's.
	Logger hclog.Logger
	// GRPCServerOptions are appended to ServerOptions for the plugin's
	// gRPC server.
	GRPCServerOptions []grpc.ServerOption
	// Test, when set, serves in go-plugin's test mode: in-process, no
	// handshake on stdout, the ReattachConfig sent on Test.ReattachConfigCh,
	// and serving ends when Test.Context is done. host-sdk's ServeInProcess
	// uses it.
	Test *goplugin.ServeTestConfig
	// Exit ends the process when the watchdog finds the host gone. Nil means
	// os.Exit, or in test mode: stop serving (Serve returns).
	Exit func(code int)
}

// Watchdog timings. See Serve.
const (
	// hostLossDrainTimeout bounds the Drain a plugin runs on itself when its
	// host is gone.
	hostLossDrainTimeout = 2 * time.Second
	// shutdownGrace is how long a plugin waits for the host to stop it after
	// a ShutdownNotice before it exits by itself.
	shutdownGrace = 5 * time.Second
	// parentPollInterval is how often the plugin checks that its parent
	// process is still the one that started it.
	parentPollInterval = 500 * time.Millisecond
)

// NewLogger returns the logger plugins should use: hclog JSON lines on
// stderr (stdout carries go-plugin's handshake; host-sdk parses these lines
// into the host's log), at the level named by EnvLogLevel (default info).
// Create it in main before Serve, pass it as ServeOpts.Logger and give the
// implementation Named children so Configure's log_level reaches all of
// them.
func NewLogger(name string) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(EnvLogLevel))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		Output:     os.Stderr,
		JSONFormat: true,
	})
}

// Serve serves the plugin over go-plugin's gRPC transport and returns when
// the host stops it. Call it from main; it never writes to stdout (which
// carries the handshake).
//
// Only the services supplied in opts are registered; Lifecycle is required
// (Serve panics without it). Every handler runs behind panic recovery: a
// panic becomes codes.Internal naming the method, is logged with its stack,
// and the plugin keeps serving. Messages of up to MaxMessageBytes are
// accepted both ways.
//
// Serve fills two fields of the Describe answer so that they cannot lie:
// capabilities lists exactly the services supplied (a warning is logged when
// the implementation claimed others), and protocol_minor defaults to
// ProtocolMinor when the implementation left it zero. Configure's log_level,
// when set, is applied to Logger.
//
// Watchdog: a plugin must never outlive its host (an orphan would keep its
// port). After a successful Configure that carried a host callback, Serve
// opens HostService.Watch; and from the start it checks every 500 ms that its
// parent process is still the one that launched it. When the stream breaks
// or the parent changes, the plugin runs Drain on itself (2 s at most, or
// waits for a Drain the host already started) and calls opts.Exit(0). A
// ShutdownNotice on the stream means the host is stopping the plugin on
// purpose: the plugin then waits 5 s for that before it exits by itself.
func Serve(opts ServeOpts) {
	if opts.Lifecycle == nil {
		panic("plugin.Serve: ServeOpts.Lifecycle is required")
	}
	logger := opts.Logger
	if logger == nil {
		logger = NewLogger("")
	}
	base := context.Background()
	if opts.Test != nil && opts.Test.Context != nil {
		base = opts.Test.Context
	}
	ctx, cancel := context.WithCancel(base)
	defer cancel()

	exit := opts.Exit
	if exit == nil {
		if opts.Test != nil {
			exit = func(int) { cancel() }
		} else {
			exit = os.Exit
		}
	}

	life := &servedLifecycle{impl: opts.Lifecycle, logger: logger, drained: make(chan struct{})}
	if opts.Platform != nil {
		life.caps = append(life.caps, pb.Capability_CAPABILITY_PLATFORM)
	}
	if opts.Toolset != nil {
		life.caps = append(life.caps, pb.Capability_CAPABILITY_TOOLSET)
	}
	wd := newWatchdog(logger, life, exit)
	life.wd = wd

	serverOpts := append(ServerOptions(logger), opts.GRPCServerOptions...)
	set := PluginSet(life, opts.Platform, opts.Toolset)
	if p, ok := set[NamePlatform].(*PlatformGRPCPlugin); ok {
		p.Logger = logger
	}
	cfg := &goplugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         set,
		Logger:          logger,
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(o, serverOpts...)...)
		},
	}
	if opts.Test != nil {
		tc := *opts.Test
		tc.Context = ctx
		cfg.Test = &tc
	} else {
		// A dead host cannot read our stderr: without this, the first log
		// line after its death would kill us with SIGPIPE before Drain.
		ignoreSIGPIPE()
		wd.watchParent(os.Getppid(), parentPollInterval)
	}

	goplugin.Serve(cfg)

	wd.stop()
	life.closeHost()
}

// servedLifecycle wraps the plugin's Lifecycle with what Serve adds: honest
// Describe fields, log level, watchdog, drain tracking.
type servedLifecycle struct {
	impl   Lifecycle
	logger hclog.Logger
	caps   []pb.Capability
	wd     *watchdog

	drainStarted atomic.Bool
	drainOnce    sync.Once
	drained      chan struct{} // closed when the first Drain returned

	mu   sync.Mutex
	host *hostClient
}

func (l *servedLifecycle) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	resp, err := l.impl.Describe(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, status.Error(codes.Internal, "Describe returned neither a response nor an error")
	}
	resp = proto.CloneOf(resp)
	if resp.ProtocolMinor == 0 {
		resp.ProtocolMinor = ProtocolMinor
	}
	caps := slices.Clone(l.caps)
	for _, c := range resp.Capabilities {
		switch c {
		case pb.Capability_CAPABILITY_PLATFORM, pb.Capability_CAPABILITY_TOOLSET:
			if !slices.Contains(l.caps, c) {
				l.logger.Warn("Describe claims a capability whose service was not given to Serve; leaving it out",
					"capability", c.String())
			}
		case pb.Capability_CAPABILITY_UNSPECIFIED:
		default:
			if !slices.Contains(caps, c) {
				caps = append(caps, c) // a capability of a newer minor: pass through
			}
		}
	}
	resp.Capabilities = caps
	return resp, nil
}

func (l *servedLifecycle) Configure(ctx context.Context, req *pb.ConfigureRequest, host Host) (*pb.ConfigureResponse, error) {
	if name := req.GetLogLevel(); name != "" {
		if level := hclog.LevelFromString(name); level != hclog.NoLevel {
			l.logger.SetLevel(level)
		} else {
			l.logger.Warn("Configure carried an unknown log level; keeping the current one", "log_level", name)
		}
	}
	resp, err := l.impl.Configure(ctx, req, host)
	if err != nil {
		return nil, err
	}
	if hc, ok := host.(*hostClient); ok {
		l.mu.Lock()
		l.host = hc
		l.mu.Unlock()
		l.wd.watchHost(hc)
	}
	return resp, nil
}

func (l *servedLifecycle) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	l.drainStarted.Store(true)
	defer l.drainOnce.Do(func() { close(l.drained) })
	return l.impl.Drain(ctx, req)
}

// drainSelf drains the plugin when its host is gone: it waits for a Drain
// the host already started, or runs one bounded by timeout.
func (l *servedLifecycle) drainSelf(timeout time.Duration) {
	if l.drainStarted.Load() {
		select {
		case <-l.drained:
		case <-time.After(timeout):
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := l.Drain(ctx, &pb.DrainRequest{TimeoutMs: uint32(timeout / time.Millisecond)}); err != nil {
		l.logger.Warn("drain after losing the host failed", "error", err)
	}
}

func (l *servedLifecycle) closeHost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.host != nil {
		_ = l.host.Close()
	}
}
