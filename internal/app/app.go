// Package app is the A2A plugin's composition root: it implements the
// contract's Lifecycle, Platform and Toolset by wiring configuration, the
// store, the task manager, the bridge to the host, the inbound HTTP server,
// push delivery and the outbound tools. cmd/a2a-plugin hands it to
// plugin.Serve.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/bridge"
	"github.com/a2a-plugin/a2a-plugin/internal/cluster"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tools"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Name is the plugin name the host sees.
const Name = "a2a"

// DatabaseFile is the SQLite file inside the host's data directory.
const DatabaseFile = "a2a-plugin.db"

// App is the A2A plugin.
type App struct {
	log     hclog.Logger
	version string
	getenv  func(string) string

	// lifecycle serialises Configure and Drain, which may block for long
	// (opening a PostgreSQL store waits up to its connect timeout; a drain
	// waits for open streams). mu guards the fields below and is held only
	// briefly, so calls that only look at them (Send, a tool call, Connect)
	// never wait behind a Configure that is still connecting.
	lifecycle sync.Mutex
	mu        sync.Mutex
	cfg       *config.Config
	dataDir   string
	host      plugin.Host
	store     store.Store
	tasks     *tasks.Manager
	bridge    *bridge.Bridge
	// agents are the host agents served, the default first (whose
	// manager and bridge are tasks and bridge); one with id "" for a host
	// without agents.
	agents []*agentRun
	parts  *parts
	// undo takes down what Configure took up, in reverse (Drain).
	undo undoList
	// draining is set while Drain runs (without a.mu held).
	draining bool

	// PprofOn, when set, is called once a Configure that turns pprof on
	// has succeeded: cmd/a2a-plugin uses it to start sampling heap
	// allocations, which it keeps off otherwise (process-wide runtime
	// settings stay with the program, not this package).
	PprofOn func()
	// Environ, when set, lists the plugin's environment (os.Environ):
	// Configure warns about A2A_ variables that are no setting.
	Environ func() []string
}

// New returns an unconfigured plugin. getenv is usually os.Getenv.
func New(log hclog.Logger, version string, getenv func(string) string) *App {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return &App{log: log, version: version, getenv: getenv}
}

// Describe implements plugin.Lifecycle.
func (a *App) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{
		Name:          Name,
		Version:       a.version,
		ProtocolMinor: plugin.ProtocolMinor,
		Description:   "A2A (Agent2Agent v1.0) platform adapter and toolset: remote agents talk to the host's live agent, and the agent delegates to them.",
		EnvPrefixes:   []string{"A2A_"},
	}, nil
}

// Configure implements plugin.Lifecycle: it loads and checks the settings,
// opens the store, recovers tasks a previous run left behind and builds every
// part. Any misconfiguration fails Configure with a message naming the
// setting.
func (a *App) Configure(ctx context.Context, req *pb.ConfigureRequest, host plugin.Host) (_ *pb.ConfigureResponse, err error) {
	var environ []string
	if a.Environ != nil {
		environ = a.Environ()
	}
	cfg, warnings, err := config.LoadChecked(req.GetConfigJson(), a.getenv, environ)
	if err != nil {
		// The host shows the message as it is: it names the setting, its
		// source (the host's section or an environment variable) and the fix.
		return nil, plugin.Mark(plugin.ErrInvalidArgument, err)
	}
	a.lifecycle.Lock()
	defer a.lifecycle.Unlock()
	a.mu.Lock()
	configured := a.tasks != nil
	a.mu.Unlock()
	if configured {
		return nil, plugin.Mark(plugin.ErrNotReady, errors.New("a2a plugin: Configure called twice; restart the plugin to change its configuration"))
	}
	// Whatever is built goes on undo with how to take it down, in one
	// pass: a later step that fails takes everything before it down
	// again, so a failed Configure leaves nothing running (Configure may
	// be retried); Drain runs the same list.
	var undo undoList
	defer func() {
		if err != nil {
			_ = undo.run(context.WithoutCancel(ctx))
		}
	}()
	agents, err := servedAgents(cfg, req.GetHost())
	if err != nil {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, err)
	}
	st, cl, w, err := openStore(cfg, req.GetDataDir(), a.log)
	if err != nil {
		return nil, err
	}
	undo.add(func(context.Context) error { return st.Close() })
	if cl != nil {
		undo.add(leave(cl))
	}
	warnings = append(warnings, w...)
	p, err := newParts(cfg, req.GetDataDir(), a.version, host, hostRPCs(req), st, cl, a.log, &undo)
	if err != nil {
		// A setting the checks let through that cannot be used (a key
		// file, a policy, a peer's card keys): the configuration is wrong.
		return nil, plugin.Mark(plugin.ErrInvalidArgument, err)
	}
	if hostCannotCancel(req) {
		p.srvOpts.Card.Extensions = append(p.srvOpts.Card.Extensions, noRunningCancel)
	}
	if host == nil {
		return nil, plugin.Mark(plugin.ErrNotReady, errors.New("a2a plugin: the host did not offer its callback service (HostService); it is required to inject inbound messages"))
	}
	// Each agent's bridge runs its manager's turns on the host and hands
	// the host's output to the manager (Send, ProcessingComplete), so the
	// two are built in one pass: the bridge first, then the manager
	// around it (buildAgents).
	topts := tasks.Options{
		RequestTimeout: time.Duration(cfg.RequestTimeout), SilenceTimeout: time.Duration(cfg.TaskSilenceTimeout),
		Notifier: p.notifier(), Observer: p.observer(),
		MaxPushConfigsPerTask: cfg.MaxPushConfigsPerTask,
		HostCannotCancel:      hostCannotCancel(req),
	}
	if err := a.buildAgents(agents, host, st, cl, topts, p); err != nil {
		return nil, err
	}
	// The tasks saved while the host declared no agents are its default
	// agent's, the agent at the root: found, listed and recovered there.
	if id := agents[0].id; id != "" {
		if _, err := st.AdoptTasks(ctx, id); err != nil {
			return nil, err
		}
	}
	// Before the managers start: the tasks they fail for the previous run
	// end, and so do their delegations.
	if err := p.startCascade(ctx, agents, &undo); err != nil {
		return nil, err
	}
	failed, err := startAgents(ctx, agents, &undo)
	if err != nil {
		return nil, err
	}
	mgr, br := agents[0].tasks, agents[0].bridge
	if failed > 0 {
		warnings = append(warnings, fmt.Sprintf("failed %d task(s) that were running when the plugin last stopped", failed))
	}
	if err = p.start(agents, host, &undo); err != nil {
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	bgDone := make(chan struct{})
	go a.background(bg, cfg, st, bgDone)
	undo.add(func(context.Context) error { stop(); <-bgDone; return nil })
	a.mu.Lock()
	a.cfg, a.dataDir, a.host, a.store, a.tasks, a.bridge, a.parts, a.undo = cfg, req.GetDataDir(), host, st, mgr, br, p, undo
	a.agents = agents
	a.mu.Unlock()
	if cfg.Pprof && a.PprofOn != nil {
		a.PprofOn()
	}
	a.log.Info("configured", "store", cfg.Store, "addr", cfg.Addr(), "auth", cfg.HasToken())
	return &pb.ConfigureResponse{Warnings: warnings}, nil
}

// undoList is what Configure took up, each entry with how to take it down:
// run takes everything down in reverse order — when a later step of
// Configure fails, and in Drain (whose ctx bounds it).
type undoList []func(ctx context.Context) error

// add puts f on the list.
func (u *undoList) add(f func(ctx context.Context) error) { *u = append(*u, f) }

// run takes down everything on the list, last first, and empties it.
func (u *undoList) run(ctx context.Context) error {
	var errs []error
	for i := len(*u) - 1; i >= 0; i-- {
		errs = append(errs, (*u)[i](ctx))
	}
	*u = nil
	return errors.Join(errs...)
}

// openStore opens the configured store: SQLite in the data directory, the
// bounded memory store, or PostgreSQL shared with other replicas — then
// with this replica's part of the cluster too (nil otherwise).
func openStore(cfg *config.Config, dataDir string, log hclog.Logger) (store.Store, *cluster.Cluster, []string, error) {
	switch cfg.Store {
	case "memory":
		return store.NewMemory(cfg.MemoryMaxTasks), nil, nil, nil
	case "postgres":
		pg, cl, err := openPostgres(cfg, log)
		if err != nil {
			return nil, nil, nil, err
		}
		return pg, cl, nil, nil
	}
	if dataDir == "" {
		return store.NewMemory(cfg.MemoryMaxTasks), nil, []string{"the host gave no data directory, so tasks are kept in memory only (set A2A_STORE=memory to silence this)"}, nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("a2a plugin: creating the data directory %s: %w", dataDir, err)
	}
	path := filepath.Join(dataDir, DatabaseFile)
	// What the store does on its own (a journal replayed at start, an
	// apply being retried) goes to the plugin's log.
	st, err := store.OpenSQLite(path, store.SQLiteOptions{Logf: func(format string, args ...any) {
		log.Warn(fmt.Sprintf(format, args...))
	}})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("a2a plugin: opening the task database %s: %w", path, err)
	}
	log.Debug("opened task database", "path", path)
	return st, nil, nil, nil
}

// background prunes old state until ctx ends, then closes done.
func (a *App) background(ctx context.Context, cfg *config.Config, st store.Store, done chan<- struct{}) {
	defer close(done)
	retention := time.Duration(cfg.Retention)
	if retention <= 0 {
		<-ctx.Done()
		return
	}
	every := min(max(retention/24, time.Minute), time.Hour)
	t := time.NewTicker(every)
	defer t.Stop()
	// Prune once at start too: a plugin restarted more often than the
	// interval would otherwise never prune.
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		nt, ne, err := st.Prune(ctx, time.Now().Add(-retention))
		if err != nil {
			a.log.Warn("pruning old tasks failed", "error", err)
		} else if nt+ne > 0 {
			a.log.Info("pruned old state", "tasks", nt, "conversation_entries", ne)
		}
	}
}

// Drain implements plugin.Lifecycle: stop serving, fail what is still
// running with a clear reason, flush and close the store.
func (a *App) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	if ms := req.GetTimeoutMs(); ms > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	// Draining runs without holding a.mu: the host's Send and
	// ProcessingComplete must still reach the bridge while open streams
	// finish, or every drain with a stream would wait out its timeout.
	// A Configure still running is waited for, then drained.
	a.lifecycle.Lock()
	defer a.lifecycle.Unlock()
	a.mu.Lock()
	if a.tasks == nil || a.draining {
		a.mu.Unlock()
		return &pb.DrainResponse{}, nil
	}
	a.draining = true
	p, agents, undo := a.parts, a.agents, a.undo
	a.mu.Unlock()

	// Serving stops first (Connect started it after Configure); then
	// everything Configure took up goes down in reverse: the pruning, the
	// task manager (failing what still runs), the server's parts, the
	// cluster's lease, the store.
	errs := []error{p.stopServing(ctx)}
	abandoned := 0
	for _, ar := range agents {
		abandoned += ar.tasks.ActiveCount()
	}
	errs = append(errs, undo.run(ctx))
	a.mu.Lock()
	a.tasks = nil
	a.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		a.log.Warn("drain finished with errors", "error", err)
	}
	return &pb.DrainResponse{Abandoned: uint32(abandoned)}, nil
}

// errNotConfigured refuses a call before Configure.
var errNotConfigured = plugin.Mark(plugin.ErrNotReady, errors.New("a2a plugin: not configured (the host must call Configure first)"))

// configured returns the parts, or an error before Configure.
func (a *App) configured() (*parts, *bridge.Bridge, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tasks == nil {
		return nil, nil, errNotConfigured
	}
	return a.parts, a.bridge, nil
}

// Connect implements plugin.Platform: start the A2A HTTP server.
func (a *App) Connect(ctx context.Context, req *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	p, _, err := a.configured()
	if err != nil {
		return nil, err
	}
	url, err := p.startServing(ctx)
	if err != nil {
		return nil, err
	}
	a.log.Info("serving A2A", "url", url)
	return &pb.ConnectResponse{Endpoints: p.endpoints(url)}, nil
}

// Disconnect implements plugin.Platform: stop the A2A HTTP server (nothing
// to do when it never started).
func (a *App) Disconnect(ctx context.Context, req *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	p, _, err := a.configured()
	if err != nil {
		return &pb.DisconnectResponse{}, nil
	}
	return &pb.DisconnectResponse{}, p.stopServing(ctx)
}

// Send implements plugin.Platform: the bridge turns the host's output into
// an update of the task manager.
func (a *App) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	ar, err := a.platform(ctx, req.GetAgentId(), req.GetTaskId())
	if err != nil {
		return nil, err
	}
	return ar.bridge.Send(ctx, ar.tasks, req)
}

// ProcessingComplete implements plugin.Platform.
func (a *App) ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	ar, err := a.platform(ctx, req.GetAgentId(), req.GetTaskId())
	if err != nil {
		return nil, err
	}
	return ar.bridge.ProcessingComplete(ctx, ar.tasks, req)
}

// platform returns the agent whose bridge and task manager the host's
// output for agentID (or, when the host did not name one, taskID) goes
// to, or an error before Configure.
func (a *App) platform(ctx context.Context, agentID, taskID string) (*agentRun, error) {
	a.mu.Lock()
	configured := a.tasks != nil
	a.mu.Unlock()
	if !configured {
		return nil, errNotConfigured
	}
	return a.agentOfOutput(ctx, agentID, taskID)
}

// agentOfTool returns the agent whose turn makes a tool call: the one it
// names, else (a host that does not echo agent_id) the one whose bridge
// holds the turn of its chat — the inbound task the call is made for —
// else the default agent, as Send and ProcessingComplete are routed.
func (a *App) agentOfTool(req *pb.CallToolRequest) (*agentRun, bool) {
	if req.GetAgentId() == "" && len(a.agents) > 1 && req.GetPlatform() == bridge.PlatformName {
		for _, ar := range a.agents {
			if _, _, ok := ar.bridge.TurnFor(req.GetChatId()); ok {
				return ar, true
			}
		}
	}
	return a.agentFor(req.GetAgentId())
}

// ListTools implements plugin.Toolset.
func (a *App) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	p, _, err := a.configured()
	if err != nil {
		return nil, err
	}
	return p.listTools(ctx)
}

// CallTool implements plugin.Toolset.
func (a *App) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	p, _, err := a.configured()
	if err != nil {
		return nil, err
	}
	// A tool call made while answering an inbound A2A task continues that
	// task's delegation chain (loop guard across hops) and its trace: the
	// conversation is the calling agent's own.
	// The call's origin is decided here, once, and passed down.
	org := tools.Origin{Platform: req.GetPlatform(), ChatID: req.GetChatId()}
	ar, known := a.agentOfTool(req)
	if known {
		// Its outbound conversations are the calling agent's own.
		org.Agent = ar.id
	}
	if req.GetPlatform() == bridge.PlatformName && known {
		br := ar.bridge
		if c, ok := br.ChainFor(req.GetChatId()); ok {
			org.Chain = c
		}
		if task, caller, ok := br.TurnFor(req.GetChatId()); ok {
			org.Task, org.Caller = task, caller
		}
		org.Trace, _ = br.TraceFor(req.GetChatId())
	}
	return p.callTool(ctx, org, req, progress)
}
