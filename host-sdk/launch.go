package hostsdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// instance is one running plugin process (or in-process server) and its
// go-plugin client. It is never reused: a restart makes a new one.
type instance struct {
	client    *goplugin.Client
	lifecycle plugin.Lifecycle
	platform  plugin.Platform // set by bringUp when Describe lists a platform
	toolset   plugin.Toolset  // set by bringUp when Describe lists a toolset
	host      *plugin.HostServer
	done      <-chan struct{} // closed when the process exited
	cmd       *exec.Cmd       // nil in-process
	pid       int
	env       []string
	desc      *pb.DescribeResponse
	endpoints []string
	exitState string // how it ended; read after done is closed
	// stderrFrom marks where this process's lines start in the plugin's
	// stderr ring.
	stderrFrom uint64
}

// killGrace is how long kill lets go-plugin end the process before it kills
// the plugin's whole process group.
const killGrace = 3 * time.Second

// kill ends the process (if still running) and releases the client.
func (in *instance) kill() { killClient(in.client, in.cmd) }

// killClient kills a go-plugin client's process. go-plugin waits for EOF on
// the plugin's pipes, which a child of the plugin may hold open; if the
// client does not finish within killGrace, the plugin's whole process group
// is killed.
func killClient(client *goplugin.Client, cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		client.Kill()
	}()
	select {
	case <-done:
	case <-time.After(killGrace):
		killProcessGroup(cmd)
		<-done
	}
}

// exitStatus says how the process ended; call it after done is closed.
func (in *instance) exitStatus() string {
	if in.exitState != "" {
		return in.exitState
	}
	if in.cmd != nil && in.cmd.ProcessState != nil {
		return in.cmd.ProcessState.String() // "exit status 3", "signal: killed"
	}
	return "the process exited"
}

// diedUnder reports whether a call failed because the process died: a
// transport error (Unavailable, or Canceled as go-plugin closes the
// connection) and the process gone. A plugin's own Unavailable error on a
// healthy connection returns at once; after a transport failure, go-plugin
// takes a few milliseconds to report the exit.
func (in *instance) diedUnder(err error) bool {
	var wait time.Duration
	switch status.Code(err) {
	case codes.Canceled:
		select {
		case <-in.done:
			return true
		default:
			return false
		}
	case codes.Unavailable:
		wait = 500 * time.Millisecond
		if rpc, cerr := in.client.Client(); cerr == nil {
			if gc, ok := rpc.(*goplugin.GRPCClient); ok && gc.Conn.GetState() == connectivity.Ready {
				wait = 50 * time.Millisecond // most likely the plugin's own error
			}
		}
	default:
		return false
	}
	select {
	case <-in.done:
		return true
	case <-time.After(wait):
		return false
	}
}

func (in *instance) dispense(name string) (any, error) {
	rpc, err := in.client.Client()
	if err != nil {
		return nil, err
	}
	return rpc.Dispense(name)
}

// validName keeps plugin names usable as directory names and config keys.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ErrHandshake matches (errors.Is) the error of an executable that did not
// complete the go-plugin handshake: not a plugin, a plugin of another
// protocol major, or one that exited or stayed silent past StartTimeout.
// Such candidates are skipped (EventSkipped carries the error).
var ErrHandshake = errors.New("handshake failed")

// spawnProcess launches p's executable with the environment for name and the
// declared prefixes, runs the go-plugin handshake and Describe.
func (m *Manager) spawnProcess(ctx context.Context, p *Plugin, name string, prefixes []string) (*instance, error) {
	env := m.envFor(name, prefixes)
	cmd := exec.Command(p.path)
	cmd.Env = env
	ownProcessGroup(cmd)
	plog := m.log.Named(name)
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  plugin.Handshake,
		Plugins:          plugin.PluginMap(plog),
		Cmd:              cmd,
		SkipHostEnv:      true, // cmd.Env is the whole environment
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     m.opts.StartTimeout,
		Logger:           goPluginLogger{Logger: plog, fallback: name},
		Stderr:           p.stderr,
		SyncStdout:       &lineWriter{fn: func(l string) { plog.Info("plugin wrote to stdout", "line", l) }},
		SyncStderr: &lineWriter{fn: func(l string) {
			p.stderr.add(l)
			plog.Info("plugin wrote to stderr", "line", l)
		}},
		GRPCDialOptions: plugin.DialOptions(),
	})
	stderrFrom := p.stderr.mark()
	rpc, err := client.Client()
	if err != nil {
		killProcessGroup(cmd) // children may hold its pipes open
		client.Kill()
		return nil, fmt.Errorf("%w with %s (is it an agentplugin plugin built for protocol major %d?): %w",
			ErrHandshake, p.path, plugin.ProtocolMajor, err)
	}
	if v := client.NegotiatedVersion(); v != plugin.ProtocolMajor {
		killClient(client, cmd)
		return nil, fmt.Errorf("%w with %s: it speaks protocol major %d, the host %d", ErrHandshake, p.path, v, plugin.ProtocolMajor)
	}
	inst, err := describe(ctx, m, client, rpc)
	if err != nil {
		killClient(client, cmd)
		return nil, fmt.Errorf("%s: %w", p.path, err)
	}
	inst.cmd = cmd
	inst.pid = cmd.Process.Pid
	inst.env = env
	inst.stderrFrom = stderrFrom
	return inst, nil
}

// describe dispenses the lifecycle of a connected client and calls Describe.
func describe(ctx context.Context, m *Manager, client *goplugin.Client, rpc goplugin.ClientProtocol) (*instance, error) {
	raw, err := rpc.Dispense(plugin.NameLifecycle)
	if err != nil {
		return nil, fmt.Errorf("dispense the lifecycle service: %w", err)
	}
	lc, ok := raw.(plugin.Lifecycle)
	if !ok {
		return nil, fmt.Errorf("dispense the lifecycle service: got %T", raw)
	}
	notifier, ok := raw.(plugin.ExitNotifier)
	if !ok {
		return nil, fmt.Errorf("dispense the lifecycle service: %T cannot report exits", raw)
	}
	dctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	desc, err := lc.Describe(dctx, &pb.DescribeRequest{HostProtocolMinor: plugin.ProtocolMinor})
	if err != nil {
		return nil, fmt.Errorf("Describe failed: %w", err)
	}
	if !validName.MatchString(desc.GetName()) {
		return nil, fmt.Errorf("Describe gave the name %q; a plugin name must be 1-64 letters, digits, '.', '_' or '-' and start with a letter or digit", desc.GetName())
	}
	return &instance{client: client, lifecycle: lc, done: notifier.Done(), desc: desc}, nil
}

// firstLaunch launches a candidate for the first time. When its Describe
// shows that it should have had a different environment (declared
// prefixes, PluginEnv under its real name), it is launched once more with
// that environment, so a first start and a restart see the same variables.
func (m *Manager) firstLaunch(ctx context.Context, p *Plugin) (*instance, error) {
	inst, err := p.spawn(ctx, p.file, nil)
	if err != nil {
		return nil, err
	}
	if inst.cmd == nil {
		return inst, nil // in-process: no environment of its own
	}
	name, prefixes := inst.desc.GetName(), inst.desc.GetEnvPrefixes()
	if slices.Equal(inst.env, m.envFor(name, prefixes)) {
		return inst, nil
	}
	m.log.Debug("relaunching plugin with the environment it declared", "plugin", name, "path", p.path, "env_prefixes", prefixes)
	inst.kill()
	again, err := p.spawn(ctx, name, prefixes)
	if err != nil {
		return nil, err
	}
	if got := again.desc.GetName(); got != name {
		again.kill()
		return nil, fmt.Errorf("%s described itself as %q, then as %q when relaunched", p.path, name, got)
	}
	return again, nil
}

// relaunch starts a fresh process for a plugin that was running before.
func (m *Manager) relaunch(ctx context.Context, p *Plugin) (*instance, error) {
	p.mu.Lock()
	name, prefixes := p.name, p.desc.GetEnvPrefixes()
	p.mu.Unlock()
	inst, err := p.spawn(ctx, name, prefixes)
	if err != nil {
		return nil, err
	}
	if got := inst.desc.GetName(); got != name {
		inst.kill()
		return nil, fmt.Errorf("%s now describes itself as %q instead of %q; restart the host to load it under its new name", p.path, got, name)
	}
	return inst, nil
}

// bringUp configures a described instance and connects its platform.
func (m *Manager) bringUp(ctx context.Context, p *Plugin, inst *instance) error {
	name := inst.desc.GetName()
	dataDir, err := m.dataDirFor(name)
	if err != nil {
		return err
	}
	hostInfo := m.opts.HostInfo
	if hostInfo == nil {
		hostInfo = &pb.HostInfo{Name: "hostsdk"}
	}
	// What the host can do is what its handler implements.
	hostInfo = plugin.HostInfoOf(m.opts.Host, hostInfo)
	if hostInfo.ProtocolMinor == 0 {
		hostInfo.ProtocolMinor = plugin.ProtocolMinor
	}
	inst.host = plugin.NewHostServer(m.opts.Host, m.opts.HeartbeatInterval)
	cctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	resp, err := inst.lifecycle.Configure(cctx, &pb.ConfigureRequest{
		ConfigJson: m.configFor(name),
		DataDir:    dataDir,
		LogLevel:   m.opts.LogLevel,
		Host:       hostInfo,
	}, inst.host)
	if err != nil {
		// The plugin's message names what to fix and where it came from
		// (its section of the host config, or an environment variable).
		return fmt.Errorf("plugin %q refused its configuration: %w", name, err)
	}
	for _, w := range resp.GetWarnings() {
		// One readable line per warning: it names the setting and the fix.
		m.log.Warn(fmt.Sprintf("plugin %s: %s", name, w))
	}
	caps := inst.desc.GetCapabilities()
	if slices.Contains(caps, pb.Capability_CAPABILITY_TOOLSET) {
		raw, err := inst.dispense(plugin.NameToolset)
		if err != nil {
			return fmt.Errorf("plugin %q: dispense its toolset: %w", name, err)
		}
		inst.toolset = raw.(plugin.Toolset)
	}
	if slices.Contains(caps, pb.Capability_CAPABILITY_PLATFORM) {
		raw, err := inst.dispense(plugin.NamePlatform)
		if err != nil {
			return fmt.Errorf("plugin %q: dispense its platform: %w", name, err)
		}
		inst.platform = raw.(plugin.Platform)
		plugin.UseCallStreams(inst.platform, inst.desc.GetProtocolMinor())
		cr, err := inst.platform.Connect(cctx, &pb.ConnectRequest{})
		if err != nil {
			return fmt.Errorf("plugin %q could not connect its platform: %w", name, err)
		}
		inst.endpoints = cr.GetEndpoints()
	}
	return nil
}

// dataDirFor creates and returns the plugin's own data directory.
func (m *Manager) dataDirFor(name string) (string, error) {
	root := m.opts.DataDir
	if root == "" {
		m.mu.Lock()
		if m.tmpDataDir == "" {
			dir, err := os.MkdirTemp("", "hostsdk-data-")
			if err != nil {
				m.mu.Unlock()
				return "", fmt.Errorf("create a temporary data directory (set Options.DataDir): %w", err)
			}
			m.tmpDataDir = dir
		}
		root = m.tmpDataDir
		m.mu.Unlock()
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create data directory for plugin %q: %w (check Options.DataDir)", name, err)
	}
	return dir, nil
}

// configFor is the plugin's configuration section, "{}" when absent.
func (m *Manager) configFor(name string) []byte {
	if m.inProcessConfig != nil {
		return m.inProcessConfig
	}
	if c, ok := m.opts.Config[name]; ok && len(c) > 0 {
		return c
	}
	return []byte("{}")
}

// envFor is the environment of a plugin process.
func (m *Manager) envFor(name string, prefixes []string) []string {
	return buildEnv(os.Environ(), m.opts.EnvAllow, prefixes, m.opts.PluginEnv[name], m.opts.LogLevel)
}
