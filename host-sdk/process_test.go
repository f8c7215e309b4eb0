//go:build unix

package hostsdk_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func link(t *testing.T, target, dir, name string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestManagerLoadsTheGoodPluginAndSkipsWhatIsNotOne(t *testing.T) {
	bins := build(t, goodPlugin, wrongProtocol)
	dir := t.TempDir()
	link(t, bins[0], dir, "testplugin")
	link(t, bins[1], dir, "wrongproto")
	writeFile(t, dir, "garbage.sh", "#!/bin/sh\necho this is not a plugin\nsleep 5\n", 0o755)
	writeFile(t, dir, "quits.sh", "#!/bin/sh\nexit 0\n", 0o755)
	writeFile(t, dir, "README", "plugins go here\n", 0o644)

	log, logs := testLogger(t)
	ev := newEvents()
	dataDir := t.TempDir()
	var m *hostsdk.Manager
	m, err := startManager(t, hostsdk.Options{
		Dir: dir, Logger: log, Host: managerHost(&m), DataDir: dataDir, OnEvent: ev.record,
		StartTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}

	plugins := m.Plugins()
	if len(plugins) != 1 || plugins[0].Name() != "testplugin" || plugins[0].State() != hostsdk.StateReady {
		t.Fatalf("plugins = %v", plugins)
	}
	if n := ev.count(hostsdk.EventSkipped); n != 3 {
		t.Errorf("skipped %d candidates, want 3 (wrongproto, garbage.sh, quits.sh): %v", n, ev.snapshot())
	}
	for _, e := range ev.snapshot() {
		if e.Kind == hostsdk.EventSkipped && !errors.Is(e.Err, hostsdk.ErrHandshake) {
			t.Errorf("skip of %s: %v does not match ErrHandshake", e.Plugin, e.Err)
		}
	}
	for _, want := range []string{
		`skipping plugin candidate: not executable`, `README`,
		`skipping plugin candidate: path=` + filepath.Join(dir, "wrongproto"), `incompatible API version with plugin. Plugin version: 2, Client versions: [1]`,
		`skipping plugin candidate: path=` + filepath.Join(dir, "garbage.sh"), `Unrecognized remote plugin message: this is not a plugin`,
		`skipping plugin candidate: path=` + filepath.Join(dir, "quits.sh"),
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("host log lacks %q", want)
		}
	}

	if !strings.Contains(logs.String(), "Failed to read any lines from plugin's stdout") &&
		!strings.Contains(logs.String(), "plugin exited before we could connect") {
		t.Error("host log does not say that quits.sh exited without a handshake")
	}

	p := plugins[0]
	desc := p.Describe()
	if desc.GetVersion() != "1.0.0" || desc.GetProtocolMinor() != plugin.ProtocolMinor {
		t.Errorf("Describe = %v", desc)
	}
	ts, ok := p.Toolset()
	if !ok {
		t.Fatal("no toolset")
	}
	pidRes, err := ts.CallTool(ctxT(t), &pb.CallToolRequest{Name: "pid"}, nil)
	if err != nil || atoi(t, pidRes.GetContent()) != p.Pid() {
		t.Fatalf("pid tool = %v, %v; Pid() = %d", pidRes, err, p.Pid())
	}
	if eps := p.Endpoints(); !slices.Equal(eps, []string{"test://testplugin/" + strconv.Itoa(p.Pid())}) {
		t.Errorf("endpoints = %v", eps)
	}

	tools, err := m.Tools(ctxT(t))
	if err != nil || len(tools) < 9 || tools[0].GetToolset() != "testplugin" {
		t.Fatalf("Tools = %v, %v", tools, err)
	}
	res, err := m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "echo", ArgumentsJson: `{"x":1}`}, nil)
	if err != nil || res.GetContent() != `{"x":1}` {
		t.Errorf("echo = %v, %v", res, err)
	}
	res, err = m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "inject", ArgumentsJson: `{"text":"ping","chat_id":"c"}`}, nil)
	if err != nil || res.GetContent() != "echo: ping" {
		t.Errorf("inject (plugin → Host.HandleMessage → Platform.Send) = %v, %v", res, err)
	}
	_, err = m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "no_such_tool"}, nil)
	if !errors.Is(err, plugin.ErrUnknownTool) || !strings.Contains(err.Error(), "echo") {
		t.Errorf("unknown tool: err = %v (should list the known ones)", err)
	}
	_, err = m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "panic"}, nil)
	if status.Code(err) != codes.Internal {
		t.Errorf("panic tool: err = %v, want Internal", err)
	}
	if _, err := m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "echo"}, nil); err != nil || p.State() != hostsdk.StateReady {
		t.Errorf("after a panicking tool: %v, state %v (the plugin should live on)", err, p.State())
	}

	pid := p.Pid()
	if err := m.Close(ctxT(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if p.State() != hostsdk.StateStopped {
		t.Errorf("state after Close = %v", p.State())
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "testplugin", "drained")); err != nil || string(b) != strconv.Itoa(pid) {
		t.Errorf("drain marker = %q, %v; Close should Drain before it kills", b, err)
	}
	waitGone(t, pid, 5*time.Second)
}

func TestPluginEnvironmentIsAnAllowlistNotTheHostEnvironment(t *testing.T) {
	bin := build(t, goodPlugin)[0]
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("HOSTSDK_EXTRA_ONE", "extra")
	t.Setenv("TESTPLUGIN_DECLARED", "declared") // the plugin declares TESTPLUGIN_
	log, _ := testLogger(t)
	m, err := startManager(t, hostsdk.Options{
		Paths: []string{bin}, Logger: log, LogLevel: "debug",
		EnvAllow:  []string{"HOSTSDK_EXTRA_*"},
		PluginEnv: map[string]map[string]string{"testplugin": {"FROM_HOST_CONFIG": "yes"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	env := pluginEnv(t, m)
	for _, secret := range []string{"AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY"} {
		if _, ok := env[secret]; ok {
			t.Errorf("%s reached the plugin", secret)
		}
	}
	for k, v := range map[string]string{
		"PATH": os.Getenv("PATH"), "HOSTSDK_EXTRA_ONE": "extra", "TESTPLUGIN_DECLARED": "declared",
		"FROM_HOST_CONFIG": "yes", plugin.EnvLogLevel: "debug",
	} {
		if env[k] != v {
			t.Errorf("plugin sees %s=%q, want %q", k, env[k], v)
		}
	}

	// A restart sees the same environment.
	p, _ := m.Plugin("testplugin")
	oldPid := p.Pid()
	if err := syscall.Kill(oldPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitState(t, p, hostsdk.StateReady, 10*time.Second, func() bool { return p.Pid() != 0 && p.Pid() != oldPid })
	after := pluginEnv(t, m)
	if after["TESTPLUGIN_DECLARED"] != "declared" || after["FROM_HOST_CONFIG"] != "yes" || after["AWS_SECRET_ACCESS_KEY"] != "" {
		t.Errorf("environment after restart differs: %v", after)
	}
}

func pluginEnv(t *testing.T, m *hostsdk.Manager) map[string]string {
	t.Helper()
	res, err := m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "env"}, nil)
	if err != nil {
		t.Fatalf("env tool: %v", err)
	}
	var list []string
	if err := json.Unmarshal([]byte(res.GetContent()), &list); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// waitState waits until p is in state and extra (if any) holds.
func waitState(t *testing.T, p *hostsdk.Plugin, state hostsdk.State, within time.Duration, extra func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for p.State() != state || (extra != nil && !extra()) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin state %v after %s, want %v (last error: %v)", p.State(), within, state, p.LastError())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKilledPluginFailsFastThenIsRestartedAndWorksAgain(t *testing.T) {
	bin := build(t, goodPlugin)[0]
	log, _ := testLogger(t)
	ev := newEvents()
	var m *hostsdk.Manager
	m, err := startManager(t, hostsdk.Options{
		Paths: []string{bin}, Logger: log, Host: managerHost(&m), OnEvent: ev.record,
		// A restart comes 2.5–5 s after the crash: time to see the gap,
		// even on a loaded machine.
		Restart: hostsdk.RestartPolicy{MaxRestarts: 3, BaseBackoff: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin("testplugin")
	ts, _ := p.Toolset()
	oldPid := p.Pid()

	// A call in flight when the process dies.
	hung := make(chan error, 1)
	go func() {
		_, err := ts.CallTool(context.Background(), &pb.CallToolRequest{Name: "hang"}, nil)
		hung <- err
	}()
	time.Sleep(100 * time.Millisecond)
	killed := time.Now()
	if err := syscall.Kill(oldPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-hung:
		if !errors.Is(err, hostsdk.ErrUnavailable) {
			t.Errorf("in-flight call: err = %v, want ErrUnavailable", err)
		}
		if d := time.Since(killed); d > 2*time.Second {
			t.Errorf("the in-flight call took %s to fail", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the in-flight call hangs after its plugin was killed")
	}
	ev.waitCount(t, hostsdk.EventCrashed, 1, 5*time.Second)

	// While it restarts, calls fail at once with a clear error.
	start := time.Now()
	_, err = ts.CallTool(ctxT(t), &pb.CallToolRequest{Name: "echo"}, nil)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a call during the restart took %s", d)
	}
	if !errors.Is(err, hostsdk.ErrUnavailable) ||
		!strings.Contains(err.Error(), `plugin "testplugin" is unavailable (restarting after crash: signal: killed`) {
		t.Errorf("call during restart: err = %v", err)
	}
	if p.State() != hostsdk.StateRestarting {
		t.Errorf("state during restart = %v", p.State())
	}

	ev.waitCount(t, hostsdk.EventReady, 2, 20*time.Second)
	res, err := ts.CallTool(ctxT(t), &pb.CallToolRequest{Name: "echo", ArgumentsJson: `{"again":true}`}, nil)
	if err != nil || res.GetContent() != `{"again":true}` {
		t.Fatalf("echo after the restart through the same handle = %v, %v", res, err)
	}
	if p.Pid() == oldPid || p.Pid() == 0 {
		t.Errorf("pid after restart = %d (was %d)", p.Pid(), oldPid)
	}
	if le := p.LastError(); le == nil || !strings.Contains(le.Error(), "signal: killed") {
		t.Errorf("LastError = %v, want the crash", le)
	}
	res, err = m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "inject", ArgumentsJson: `{"text":"back"}`}, nil)
	if err != nil || res.GetContent() != "echo: back" {
		t.Errorf("host callback after the restart = %v, %v", res, err)
	}
	waitGone(t, oldPid, 5*time.Second)
}

func TestRepeatedCrashesStopAfterMaxRestartsWithTheStderrReason(t *testing.T) {
	bin := build(t, goodPlugin)[0]
	log, _ := testLogger(t)
	ev := newEvents()
	m, err := startManager(t, hostsdk.Options{
		Paths: []string{bin}, Logger: log, OnEvent: ev.record,
		Restart: hostsdk.RestartPolicy{MaxRestarts: 2, Window: time.Minute, BaseBackoff: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin("testplugin")
	for i := 1; i <= 3; i++ {
		waitState(t, p, hostsdk.StateReady, 10*time.Second, nil)
		_, err := m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "crash", ArgumentsJson: `{"reason":"disk quota exceeded #` + strconv.Itoa(i) + `"}`}, nil)
		if !errors.Is(err, hostsdk.ErrUnavailable) {
			t.Fatalf("crash %d: err = %v, want ErrUnavailable", i, err)
		}
		ev.waitCount(t, hostsdk.EventCrashed, i, 5*time.Second)
	}
	ev.waitCount(t, hostsdk.EventFailed, 1, 5*time.Second)
	if p.State() != hostsdk.StateFailed {
		t.Fatalf("state = %v, want failed", p.State())
	}
	if n := ev.count(hostsdk.EventReady); n != 3 {
		t.Errorf("ready events = %d, want 3 (start + 2 restarts)", n)
	}
	le := p.LastError()
	if le == nil || !strings.Contains(le.Error(), "exit status 3") || !strings.Contains(le.Error(), "disk quota exceeded #3") ||
		!strings.Contains(le.Error(), "giving up") {
		t.Fatalf("LastError = %v, want the exit status, the stderr reason and that it gave up", le)
	}
	_, err = m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "echo"}, nil)
	if !errors.Is(err, hostsdk.ErrUnavailable) || !strings.Contains(err.Error(), "failed: ") {
		t.Errorf("call to a failed plugin: %v", err)
	}
	if tail := p.RecentStderr(0); !slices.ContainsFunc(tail, func(l string) bool { return strings.Contains(l, "disk quota exceeded #3") }) {
		t.Errorf("RecentStderr lacks the reason: %q", tail)
	}
}

func TestPluginExitsByItselfWhenItsHostIsKilled(t *testing.T) {
	bin := build(t, goodPlugin)[0]
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), envChildHost+"="+bin)
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Process.Kill()
		_ = host.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child host printed no plugin pid: %v", err)
	}
	pidText, ok := strings.CutPrefix(strings.TrimSpace(line), "PID ")
	if !ok {
		t.Fatalf("child host said %q", line)
	}
	pid := atoi(t, pidText)
	if processGone(pid) {
		t.Fatal("the plugin is not running before its host dies")
	}
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	took := waitGone(t, pid, 5*time.Second)
	t.Logf("the plugin exited %s after its host was killed", took.Round(time.Millisecond))
}

func TestNameClashKeepsTheHigherVersion(t *testing.T) {
	bins := build(t, goodPlugin, versionTwo)
	dir := t.TempDir()
	link(t, bins[0], dir, "a-testplugin")
	link(t, bins[1], dir, "b-testplugin-v2")
	log, logs := testLogger(t)
	ev := newEvents()
	m, err := startManager(t, hostsdk.Options{Dir: dir, Logger: log, OnEvent: ev.record})
	if err != nil {
		t.Fatal(err)
	}
	ps := m.Plugins()
	if len(ps) != 1 || ps[0].Describe().GetVersion() != "2.0.0" || ps[0].Path() != filepath.Join(dir, "b-testplugin-v2") {
		t.Fatalf("plugins = %v", ps)
	}
	want := `two plugins are named "testplugin": keeping version "2.0.0" from ` + filepath.Join(dir, "b-testplugin-v2") +
		`, skipping version "1.0.0" from ` + filepath.Join(dir, "a-testplugin")
	skipped := ev.snapshot()
	if len(skipped) == 0 || skipped[0].Kind != hostsdk.EventSkipped || skipped[0].Err == nil || skipped[0].Err.Error() != want {
		t.Errorf("events = %v, want first a skip saying %q", skipped, want)
	}
	if !strings.Contains(logs.String(), "skipping plugin: name clash") {
		t.Error("host log does not explain the name clash")
	}
}

func TestRefusedConfigurationFailsOnlyThatPlugin(t *testing.T) {
	bins := build(t, goodPlugin, otherNamed)
	log, _ := testLogger(t)
	m, err := startManager(t, hostsdk.Options{
		Paths: bins, Logger: log,
		Config: map[string]json.RawMessage{"other": json.RawMessage(`{"refuse":"listen address taken"}`)},
	})
	if err == nil || !strings.Contains(err.Error(), `plugin "other" refused its configuration`) ||
		!strings.Contains(err.Error(), "listen address taken") || !errors.Is(err, plugin.ErrInvalidArgument) {
		t.Fatalf("Start err = %v", err)
	}
	other, _ := m.Plugin("other")
	good, _ := m.Plugin("testplugin")
	if other.State() != hostsdk.StateFailed || good.State() != hostsdk.StateReady {
		t.Fatalf("states: other %v, testplugin %v", other.State(), good.State())
	}
	if _, err := m.CallTool(ctxT(t), &pb.CallToolRequest{Name: "echo"}, nil); err != nil {
		t.Errorf("the good plugin should still work: %v", err)
	}
}

func TestCloseWhileRestartingStopsTheRestart(t *testing.T) {
	bin := build(t, goodPlugin)[0]
	log, _ := testLogger(t)
	ev := newEvents()
	m, err := startManager(t, hostsdk.Options{
		Paths: []string{bin}, Logger: log, OnEvent: ev.record,
		Restart: hostsdk.RestartPolicy{BaseBackoff: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin("testplugin")
	_ = syscall.Kill(p.Pid(), syscall.SIGKILL)
	ev.waitCount(t, hostsdk.EventCrashed, 1, 5*time.Second)
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		if err := m.Close(ctxT(t)); err != nil {
			t.Errorf("Close: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Close waited %s for a pending restart", d)
		}
	})
	wg.Wait()
	if p.State() != hostsdk.StateStopped || ev.count(hostsdk.EventReady) != 1 {
		t.Errorf("state %v, ready events %d", p.State(), ev.count(hostsdk.EventReady))
	}
}
