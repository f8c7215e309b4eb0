package hostsdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Manager discovers, launches, supervises and stops a host's plugins. Create
// it with NewManager, call Start once and Close once.
type Manager struct {
	opts Options
	log  hclog.Logger

	// ctx ends at Close; restarts and Start run under it.
	ctx    context.Context
	cancel context.CancelFunc

	// inProcessConfig, set by ServeInProcess, is every plugin's config.
	inProcessConfig []byte

	mu         sync.Mutex
	started    bool
	closed     bool
	starting   sync.WaitGroup
	plugins    []*Plugin // sorted by name
	routes     map[string]*Plugin
	tmpDataDir string
}

// NewManager returns a Manager for opts; nothing runs before Start.
func NewManager(opts Options) *Manager {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel}
}

// Start discovers the candidates (Options.Dir and Options.Paths) and brings
// each up: the go-plugin handshake (gRPC only, AutoMTLS, our magic cookie and
// protocol major, bounded by StartTimeout), Describe, Configure with the
// host callback served through the broker, and Connect for platforms.
//
// Candidates that fail the handshake or Describe — a shell script, a
// program that exits at once, a plugin of another protocol major — are
// skipped with a log line saying why, and the others still load. When two
// plugins give the same name the higher version is kept and the other is
// skipped (logged). A plugin that refuses its configuration or cannot
// connect is left in StateFailed; Start then returns an error naming every
// such plugin, and the plugins that are ready stay usable.
//
// Start may be called once. It returns an error at once only when the
// plugins directory cannot be read or the Manager was closed.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return errors.New("hostsdk: Start after Close")
	case m.started:
		m.mu.Unlock()
		return errors.New("hostsdk: Start called twice")
	}
	m.started = true
	m.starting.Add(1)
	m.mu.Unlock()
	defer m.starting.Done()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(m.ctx, cancel)()

	var cands []Candidate
	if m.opts.Dir != "" {
		found, err := Discover(m.opts.Dir, m.log)
		if err != nil {
			return err
		}
		cands = found
	}
	for _, path := range m.opts.Paths {
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("resolve plugin path %q: %w", path, err)
		}
		cands = append(cands, Candidate{Name: filepath.Base(abs), Path: abs})
	}
	if len(cands) == 0 {
		m.log.Info("no plugin candidates", "dir", m.opts.Dir)
		return nil
	}

	// Launch and describe every candidate in parallel.
	type launched struct {
		p    *Plugin
		inst *instance
	}
	results := make([]launched, len(cands))
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Go(func() {
			p := newPlugin(m, c)
			p.spawn = func(ctx context.Context, name string, prefixes []string) (*instance, error) {
				return m.spawnProcess(ctx, p, name, prefixes)
			}
			inst, err := m.firstLaunch(ctx, p)
			if err != nil {
				m.log.Warn("skipping plugin candidate", "path", c.Path, "error", err)
				m.emit(Event{Plugin: c.Path, Kind: EventSkipped, Err: err})
				return
			}
			results[i] = launched{p, inst}
		})
	}
	wg.Wait()

	// Resolve name clashes: the higher version wins.
	winners := map[string]launched{}
	for _, r := range results {
		if r.p == nil {
			continue
		}
		name := r.inst.desc.GetName()
		prev, clash := winners[name]
		if !clash {
			winners[name] = r
			continue
		}
		keep, drop := prev, r
		if compareVersions(r.inst.desc.GetVersion(), prev.inst.desc.GetVersion()) > 0 {
			keep, drop = r, prev
		}
		err := fmt.Errorf("two plugins are named %q: keeping version %q from %s, skipping version %q from %s",
			name, keep.inst.desc.GetVersion(), keep.p.path, drop.inst.desc.GetVersion(), drop.p.path)
		m.log.Warn("skipping plugin: name clash", "error", err)
		drop.inst.kill()
		m.emit(Event{Plugin: drop.p.path, Kind: EventSkipped, Err: err})
		winners[name] = keep
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		for _, w := range winners {
			w.inst.kill()
		}
		return errors.New("hostsdk: the Manager was closed during Start")
	}
	for _, w := range winners {
		w.p.mu.Lock()
		w.p.name, w.p.desc = w.inst.desc.GetName(), w.inst.desc
		w.p.mu.Unlock()
		m.plugins = append(m.plugins, w.p)
	}
	sort.Slice(m.plugins, func(i, j int) bool { return m.plugins[i].name < m.plugins[j].name })
	m.mu.Unlock()

	// Configure and connect in parallel.
	var errMu sync.Mutex
	var errs []error
	for _, w := range winners {
		wg.Go(func() {
			err := m.bringUp(ctx, w.p, w.inst)
			if err == nil {
				if !w.p.install(w.inst) {
					w.inst.kill()
				}
				return
			}
			w.inst.kill()
			w.p.fail(err, true)
			errMu.Lock()
			errs = append(errs, err)
			errMu.Unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Plugins returns every loaded plugin (whatever its state), sorted by name.
// Skipped candidates are not plugins.
func (m *Manager) Plugins() []*Plugin {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.plugins)
}

// Plugin returns the plugin with the given (described) name.
func (m *Manager) Plugin(name string) (*Plugin, bool) {
	for _, p := range m.Plugins() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// Tools lists the tools of every ready plugin with a toolset, each with
// ToolDefinition.toolset set to the plugin's name, and remembers which
// plugin serves which tool for CallTool. A tool name offered by two plugins
// goes to the first by plugin name (logged). Plugins that are down are left
// out; a ready plugin whose ListTools fails is named in the error, and the
// list of the others is returned all the same.
func (m *Manager) Tools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	var all []*pb.ToolDefinition
	var errs []error
	routes := map[string]*Plugin{}
	for _, p := range m.Plugins() {
		ts, ok := p.Toolset()
		if !ok {
			continue
		}
		if st := p.State(); st != StateReady {
			m.log.Debug("leaving out the tools of a plugin that is not ready", "plugin", p.Name(), "state", st)
			continue
		}
		tools, err := ts.ListTools(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, td := range tools {
			if other, dup := routes[td.GetName()]; dup {
				m.log.Warn("two plugins offer the same tool; using the first",
					"tool", td.GetName(), "using", other.Name(), "ignoring", p.Name())
				continue
			}
			td = proto.CloneOf(td)
			td.Toolset = p.Name()
			routes[td.GetName()] = p
			all = append(all, td)
		}
	}
	m.mu.Lock()
	m.routes = routes
	m.mu.Unlock()
	return all, errors.Join(errs...)
}

// CallTool runs req.Name on the plugin that offers it (as learned by Tools,
// which it calls itself for a name it does not know yet). Progress events
// go to progress (may be nil). A tool nobody offers is an error matching
// plugin.ErrUnknownTool; a plugin that is down gives an ErrUnavailable error
// at once.
func (m *Manager) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	p := m.route(req.GetName())
	if p == nil {
		if _, err := m.Tools(ctx); err != nil {
			m.log.Warn("listing tools to route a call", "tool", req.GetName(), "error", err)
		}
		p = m.route(req.GetName())
	}
	if p == nil {
		return nil, fmt.Errorf("no plugin offers tool %q (known: %s): %w", req.GetName(), m.knownTools(), plugin.ErrUnknownTool)
	}
	ts, ok := p.Toolset()
	if !ok {
		return nil, fmt.Errorf("plugin %q no longer offers a toolset: %w", p.Name(), plugin.ErrUnknownTool)
	}
	return ts.CallTool(ctx, req, progress)
}

func (m *Manager) route(tool string) *Plugin {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.routes[tool]
}

func (m *Manager) knownTools() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.routes))
	for n := range m.routes {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// forgetRoutes drops the tool routes; a plugin that came up may offer
// different tools. Routes to a plugin that is merely restarting are kept
// until then, so calls fail fast with ErrUnavailable instead of "unknown".
func (m *Manager) forgetRoutes() {
	m.mu.Lock()
	m.routes = nil
	m.mu.Unlock()
}

// Close stops every plugin: Disconnect platforms, Drain (each bounded by
// DrainTimeout and ctx), a ShutdownNotice on each Watch stream, then kill.
// Plugins are stopped in parallel, and restarts stop. The error lists the
// plugins that did not stop cleanly; they are stopped all the same. Close
// is idempotent.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.starting.Wait()

	plugins := m.Plugins()
	errs := make([]error, len(plugins))
	var wg sync.WaitGroup
	for i, p := range plugins {
		wg.Go(func() { errs[i] = p.stop(ctx) })
	}
	wg.Wait()

	m.mu.Lock()
	tmp := m.tmpDataDir
	m.mu.Unlock()
	if tmp != "" {
		if err := os.RemoveAll(tmp); err != nil {
			m.log.Warn("removing the temporary data directory", "dir", tmp, "error", err)
		}
	}
	return errors.Join(errs...)
}

// emit reports an event to Options.OnEvent.
func (m *Manager) emit(ev Event) {
	if m.opts.OnEvent != nil {
		m.opts.OnEvent(ev)
	}
}
