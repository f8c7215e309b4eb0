package hostsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// InProcessOptions configure ServeInProcess. The zero value is usable.
type InProcessOptions struct {
	// Host is the host callback implementation served to the plugin.
	Host plugin.HostHandler
	// Config is the plugin's configuration section ("{}" when nil).
	Config json.RawMessage
	// DataDir is the root of the plugin's data directory (t.TempDir() when
	// empty).
	DataDir string
	// LogLevel is passed in ConfigureRequest.log_level.
	LogLevel string
	// HostInfo describes the host, as in Options.
	HostInfo *pb.HostInfo
	// Logger receives the host side's logs (nil discards). The plugin's
	// logs go to ServeOpts.Logger, by default JSON on stderr at warn level.
	Logger hclog.Logger
	// StartTimeout and DrainTimeout are as in Options.
	StartTimeout, DrainTimeout time.Duration
	// OnEvent is as in Options.
	OnEvent func(Event)
	// NoConfigure leaves the plugin described but neither configured nor
	// connected: the handle is ready, and the test calls
	// Lifecycle().Configure itself, e.g. to check that a bad configuration
	// is refused with a clear error.
	NoConfigure bool
}

// TB is the part of testing.TB that ServeInProcess uses; *testing.T and
// *testing.B satisfy it. A non-test package names the methods it needs
// rather than testing.TB, whose unexported method no type outside package
// testing can implement: a host's own harness (or a program that runs a
// plugin in process) can supply one.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// ServeInProcess serves a plugin implementation inside the test binary with
// plugin.Serve in go-plugin's test mode, connects a go-plugin client to it,
// and brings it up as a Manager does (Describe, Configure with opts.Host
// served through the broker, Connect). Every call crosses real gRPC, the
// broker included, so the whole contract can be tested without building a
// binary. The plugin is drained and stopped when the test ends; it is never
// restarted. Failures to bring it up fail the test.
func ServeInProcess(t TB, serve plugin.ServeOpts, opts InProcessOptions) *Plugin {
	t.Helper()
	if serve.Lifecycle == nil {
		t.Fatal("hostsdk.ServeInProcess: plugin.ServeOpts.Lifecycle is required")
	}
	dataDir := opts.DataDir
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	m := NewManager(Options{
		Logger:       opts.Logger,
		Host:         opts.Host,
		DataDir:      dataDir,
		LogLevel:     opts.LogLevel,
		HostInfo:     opts.HostInfo,
		StartTimeout: opts.StartTimeout,
		DrainTimeout: opts.DrainTimeout,
		Restart:      RestartPolicy{MaxRestarts: -1},
		OnEvent:      opts.OnEvent,
	})
	m.inProcessConfig = []byte("{}")
	if len(opts.Config) > 0 {
		m.inProcessConfig = opts.Config
	}
	m.started = true

	p := newPlugin(m, Candidate{Name: "in-process"})
	var spawned atomic.Bool
	p.spawn = func(ctx context.Context, _ string, _ []string) (*instance, error) {
		if !spawned.CompareAndSwap(false, true) {
			return nil, errors.New("an in-process plugin cannot be restarted")
		}
		return m.spawnInProcess(ctx, serve)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Logf("closing the in-process plugin: %v", err)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), m.opts.StartTimeout*3)
	defer cancel()
	inst, err := m.firstLaunch(ctx, p)
	if err != nil {
		t.Fatalf("hostsdk.ServeInProcess: %v", err)
	}
	m.mu.Lock()
	m.plugins = append(m.plugins, p)
	m.mu.Unlock()
	if !opts.NoConfigure {
		if err := m.bringUp(ctx, p, inst); err != nil {
			inst.kill()
			t.Fatalf("hostsdk.ServeInProcess: %v", err)
		}
	} else {
		// Views for the capabilities, as bringUp would make them.
		if err := dispenseViews(inst); err != nil {
			inst.kill()
			t.Fatalf("hostsdk.ServeInProcess: %v", err)
		}
	}
	if !p.install(inst) {
		inst.kill()
		t.Fatal("hostsdk.ServeInProcess: the plugin was stopped while starting")
	}
	return p
}

// dispenseViews dispenses the platform and toolset an instance's Describe
// lists, without configuring or connecting.
func dispenseViews(inst *instance) error {
	for _, c := range inst.desc.GetCapabilities() {
		switch c {
		case pb.Capability_CAPABILITY_PLATFORM:
			raw, err := inst.dispense(plugin.NamePlatform)
			if err != nil {
				return fmt.Errorf("dispense the platform: %w", err)
			}
			inst.platform = raw.(plugin.Platform)
			plugin.UseCallStreams(inst.platform, inst.desc.GetProtocolMinor())
		case pb.Capability_CAPABILITY_TOOLSET:
			raw, err := inst.dispense(plugin.NameToolset)
			if err != nil {
				return fmt.Errorf("dispense the toolset: %w", err)
			}
			inst.toolset = raw.(plugin.Toolset)
		}
	}
	return nil
}

// spawnInProcess runs plugin.Serve in test mode and attaches a client
// (plugin.ConnectInProcess).
func (m *Manager) spawnInProcess(ctx context.Context, serve plugin.ServeOpts) (*instance, error) {
	if serve.Logger == nil {
		// Its own logger: Configure's log_level must not change the host's.
		serve.Logger = hclog.New(&hclog.LoggerOptions{
			Name: "in-process-plugin", Level: hclog.Warn, Output: os.Stderr, JSONFormat: true,
		})
	}
	client, err := plugin.ConnectInProcess(serve, m.log.Named("in-process"), m.opts.StartTimeout)
	if err != nil {
		return nil, err
	}
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("connect to the in-process plugin: %w", err)
	}
	inst, err := describe(ctx, m, client, rpc)
	if err != nil {
		client.Kill()
		return nil, err
	}
	inst.exitState = "the in-process plugin stopped serving"
	return inst, nil
}
