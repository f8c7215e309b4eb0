package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestBinaryCompletesHandshakeDescribeConfigureConnect launches the binary
// as a host does and checks every step of bringing it up: the go-plugin
// handshake, Describe (name, platform and toolset, protocol minor),
// Configure, and Connect reporting the endpoint it really serves on.
func TestBinaryCompletesHandshakeDescribeConfigureConnect(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	p := h.Plugin(testharness.A2APluginName)
	if p.State() != hostsdk.StateReady || p.Pid() == 0 {
		t.Fatalf("plugin state %s pid %d: %v", p.State(), p.Pid(), p.LastError())
	}
	d := p.Describe()
	if d.GetName() != "a2a" {
		t.Errorf("Describe name = %q, want a2a", d.GetName())
	}
	if want := []pb.Capability{pb.Capability_CAPABILITY_PLATFORM, pb.Capability_CAPABILITY_TOOLSET}; !slices.Equal(d.GetCapabilities(), want) {
		t.Errorf("Describe capabilities = %v, want %v", d.GetCapabilities(), want)
	}
	if d.GetProtocolMinor() != plugin.ProtocolMinor {
		t.Errorf("Describe protocol minor = %d, want %d", d.GetProtocolMinor(), plugin.ProtocolMinor)
	}
	if d.GetVersion() == "" || d.GetDescription() == "" || !slices.Contains(d.GetEnvPrefixes(), "A2A_") {
		t.Errorf("Describe = %v", d)
	}
	// Connect reported exactly one endpoint, and the card is served there.
	if eps := h.Endpoints(testharness.A2APluginName); len(eps) != 1 {
		t.Fatalf("endpoints = %v, want one", eps)
	}
	resp, err := http.Get(h.url + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz on the reported endpoint: %v %v", resp, err)
	}
	resp.Body.Close()
	// The toolset half is served too: the outbound tools are listed.
	tools, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.GetName())
	}
	for _, want := range []string{"a2a_discover", "a2a_call"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
}

// TestConfigureRefusesBadSettingsNamingThem checks that a misconfigured
// plugin fails Configure — surfaced through host-sdk as a failed plugin —
// with a message naming the setting to fix, and never serves.
func TestConfigureRefusesBadSettingsNamingThem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		config map[string]any
		env    map[string]string
		want   []string
	}{
		{"unknown key", map[string]any{"port": 0, "bogus_setting": true}, nil,
			[]string{`unknown setting "bogus_setting"`}},
		{"near-miss key", map[string]any{"port": 0, "requestTimeout": "5s"}, nil,
			[]string{`"requestTimeout"`, `did you mean "request_timeout"`}},
		{"all interfaces without a token", map[string]any{"port": 0, "host": "0.0.0.0"}, nil,
			[]string{`host "0.0.0.0"`, "A2A_BEARER_TOKEN"}},
		{"malformed environment value", map[string]any{"port": 0}, map[string]string{"A2A_REQUEST_TIMEOUT": "soon"},
			[]string{"A2A_REQUEST_TIMEOUT", `"soon"`}},
		{"unknown store", map[string]any{"port": 0, "store": "mongo"}, nil,
			[]string{`store "mongo"`, "A2A_STORE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := testharness.Start(t, testharness.Options{
				Agent: newGatedAgent(t), PluginConfig: tc.config, Env: tc.env, AllowFailures: true,
			})
			p := h.Plugin(testharness.A2APluginName)
			if p == nil {
				t.Fatalf("the plugin was not loaded at all: %v", h.Events())
			}
			if p.State() != hostsdk.StateFailed {
				t.Fatalf("state = %s, want failed", p.State())
			}
			err := p.LastError()
			if err == nil {
				t.Fatal("no error recorded for the refused configuration")
			}
			msg := err.Error()
			if !strings.Contains(msg, "refused its configuration") {
				t.Errorf("error does not say Configure refused: %s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q: %s", w, msg)
				}
			}
			if eps := h.Endpoints(testharness.A2APluginName); len(eps) != 0 {
				t.Errorf("a refused plugin reports endpoints %v", eps)
			}
		})
	}
}

// TestConnectFailsClearlyWhenThePortIsTaken checks that a port held by
// another process fails Connect with an error naming the address and the
// setting that chooses it.
func TestConnectFailsClearlyWhenThePortIsTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	h := testharness.Start(t, testharness.Options{
		Agent: newGatedAgent(t), PluginConfig: baseConfig(map[string]any{"port": port}), AllowFailures: true,
	})
	p := h.Plugin(testharness.A2APluginName)
	if p == nil || p.State() != hostsdk.StateFailed {
		t.Fatalf("plugin = %v, want failed", p)
	}
	msg := p.LastError().Error()
	for _, w := range []string{"could not connect its platform", "127.0.0.1:" + strconv.Itoa(port), "already in use", "A2A_PORT"} {
		if !strings.Contains(msg, w) {
			t.Errorf("Connect error lacks %q: %s", w, msg)
		}
	}
}

// TestPluginLogsItsVersionAtStart: the first thing the plugin logs names
// its build (version, commit, contract, Go), so a host's log of a bug
// says which binary it was.
func TestPluginLogsItsVersionAtStart(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lines []string
	logger := testharness.LoggerFunc(func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	})
	startHostWith(t, newGatedAgent(t), testharness.Options{PluginConfig: baseConfig(nil), Logger: logger})
	mu.Lock()
	defer mu.Unlock()
	contract := "contract=" + strconv.Itoa(plugin.ProtocolMajor) + "." + strconv.Itoa(plugin.ProtocolMinor)
	for _, l := range lines {
		if strings.Contains(l, "a2a-plugin starting") {
			for _, w := range []string{"version=", "commit=", contract, "go=go1."} {
				if !strings.Contains(l, w) {
					t.Errorf("the start line lacks %q: %s", w, l)
				}
			}
			return
		}
	}
	t.Errorf("no \"a2a-plugin starting\" line among the %d logged", len(lines))
}

// TestDrainFailsRunningTasksThatStayReadableAfterRestart drains the plugin
// while a slow task runs: the task ends FAILED with a reason the client can
// act on, and with the SQLite store it is still there, as it was left,
// after the plugin restarts.
func TestDrainFailsRunningTasksThatStayReadableAfterRestart(t *testing.T) {
	t.Parallel()
	h := startHost(t, map[string]any{"store": "sqlite"}, nil)
	ctx := within(t)
	c := newClient(h.url)

	done := c.sendTask(t, ctx, msg("before the drain"))
	asked := c.sendTask(t, ctx, msg("ask before the drain"))
	h.turnEnded(t, ctx, asked.ID)
	slow := c.sendTask(t, ctx, nonBlocking(msg("slow drain")))
	// The turn is running on the host when the host drains the plugin.
	hm := h.handleMessage(t, ctx, slow.ID)
	dr, err := h.Plugin(testharness.A2APluginName).Lifecycle().Drain(ctx, &pb.DrainRequest{TimeoutMs: 10_000})
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if dr.GetAbandoned() != 1 {
		t.Errorf("Drain abandoned %d tasks, want 1", dr.GetAbandoned())
	}
	// A drained plugin no longer serves.
	if resp, err := http.Get(h.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the drained plugin still answers HTTP (%d)", resp.StatusCode)
	}
	if err := h.Restart(ctx, testharness.A2APluginName); err != nil {
		t.Fatalf("restart: %v", err)
	}
	c = newClient(strings.TrimSuffix(h.Endpoint(testharness.A2APluginName), "/"))

	got := c.getTask(t, ctx, slow.ID)
	if got.Status.State != stFailed {
		t.Fatalf("after drain and restart the slow task is %s, want FAILED", got.Status.State)
	}
	reason := got.Status.Message.text()
	if !strings.Contains(reason, "shutting down") || !strings.Contains(reason, "again") {
		t.Errorf("failure reason %q does not say the agent shut down and to retry", reason)
	}
	if got.ContextID != slow.ContextID || len(got.History) == 0 || got.History[0].text() != "slow drain" {
		t.Errorf("the restored task lost its context or history: %+v", got)
	}
	if prev := c.getTask(t, ctx, done.ID); prev.Status.State != stCompleted || prev.answer() != "echo: before the drain" {
		t.Errorf("the completed task after restart = %s %q", prev.Status.State, prev.answer())
	}
	// A task waiting for its client had no work running: it survives the
	// drain and can still be answered.
	if got := c.getTask(t, ctx, asked.ID); got.Status.State != stInputRequired {
		t.Errorf("the input-required task is %s after drain and restart", got.Status.State)
	} else if ans := c.sendTask(t, ctx, msg("teal", "taskId", asked.ID)); ans.Status.State != stCompleted || ans.answer() != "got: teal" {
		t.Errorf("answering it after the restart = %s %q", ans.Status.State, ans.answer())
	}
	// The host's turn is still running (see TestDrainStopsTheHostTurnOfAnAbandonedTask):
	// its late answer reaches the new process, which refuses it — a failed
	// task never comes back to life.
	h.agent.release(slow.ID)
	h.completion(t, ctx, hm.TurnID) // it fails: its final Send is refused
	for _, call := range h.Recorder().Filter(func(c testharness.Call) bool {
		return c.Kind == testharness.KindSend && c.TurnID == hm.TurnID && c.Send().GetKind() == pb.SendKind_SEND_KIND_FINAL
	}) {
		if call.Err == nil {
			t.Errorf("the restarted plugin accepted a final answer for a task failed by the drain")
		}
	}
	if got := c.getTask(t, ctx, slow.ID); got.Status.State != stFailed {
		t.Errorf("a late answer changed the drained task to %s", got.Status.State)
	}
	// Its context takes new work after the restart.
	next := c.sendTask(t, ctx, msg("after the restart", "contextId", slow.ContextID))
	if next.Status.State != stCompleted || next.ContextID != slow.ContextID {
		t.Errorf("a new task in the drained task's context = %s in %s", next.Status.State, next.ContextID)
	}
}

// TestCrashedPluginFailsItsRunningTasksOnRestart kills the plugin (as a
// crash would) while a task runs: with the SQLite store, the restarted
// plugin fails that task with a reason the client can act on, instead of
// leaving it WORKING forever.
func TestCrashedPluginFailsItsRunningTasksOnRestart(t *testing.T) {
	t.Parallel()
	h := startHost(t, map[string]any{"store": "sqlite"}, nil)
	ctx := within(t)
	c := newClient(h.url)
	slow := c.sendTask(t, ctx, nonBlocking(msg("slow crash")))
	h.handleMessage(t, ctx, slow.ID)
	if err := h.Restart(ctx, testharness.A2APluginName); err != nil { // SIGKILL, then the supervisor's restart
		t.Fatalf("restart: %v", err)
	}
	c = newClient(strings.TrimSuffix(h.Endpoint(testharness.A2APluginName), "/"))
	got := c.getTask(t, ctx, slow.ID)
	if got.Status.State != stFailed || !strings.Contains(got.Status.Message.text(), "restarted") {
		t.Errorf("after a crash the running task is %s %q, want FAILED saying the plugin restarted", got.Status.State, got.Status.Message.text())
	}
}

// TestDrainStopsTheHostTurnOfAnAbandonedTask checks that Drain, which
// fails the tasks still running, also tells the host to stop their turns
// (CancelTurn), as CancelTask and the watchdog do: otherwise the host's
// live session keeps working for an answer nobody can receive, and its
// conversation stays busy.
func TestDrainStopsTheHostTurnOfAnAbandonedTask(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)
	slow := c.sendTask(t, ctx, nonBlocking(msg("slow abandoned")))
	h.handleMessage(t, ctx, slow.ID)
	if _, err := h.Plugin(testharness.A2APluginName).Lifecycle().Drain(ctx, &pb.DrainRequest{TimeoutMs: 10_000}); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := h.Recorder().WaitFor(wctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.TaskID == slow.ID
	}); err != nil {
		t.Errorf("no CancelTurn reached the host for the task the drain failed: %v", err)
	}
}

// TestRunByHandPrintsVersionOrExplains runs the binary the way a person
// would: --version prints without any handshake, and anything else without
// the host's magic cookie exits non-zero with a message saying what the
// binary is for, never writing to stdout.
func TestRunByHandPrintsVersionOrExplains(t *testing.T) {
	t.Parallel()
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := testharness.BuildBinary(context.Background(), root, testharness.PluginBinary)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, plugin.Handshake.MagicCookieKey+"=") {
			env = append(env, kv)
		}
	}
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{"version", []string{"--version"}, 0,
			[]string{"a2a-plugin ", "agentplugin " + strconv.Itoa(plugin.ProtocolMajor) + "." + strconv.Itoa(plugin.ProtocolMinor), "commit ", "go1.", "A2A protocol"}, nil},
		{"no arguments", nil, 1, nil, []string{"is a plugin", "host", "--version"}},
		{"unknown argument", []string{"serve"}, 1, nil, []string{"is a plugin", "--version"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := within(t)
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			cmd.Env = env
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q: %q", w, stdout.String())
				}
			}
			if tc.wantCode != 0 && stdout.Len() != 0 {
				t.Errorf("wrote to stdout without a handshake: %q", stdout.String())
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q: %q", w, stderr.String())
				}
			}
		})
	}
}

// TestHostOfContract11ServesTasks plays a host that predates call streams
// (contract 1.1, no HostService.HandleMessages): the plugin must carry its
// HandleMessage calls as unary RPCs and tasks must complete as with a
// current host, streamed or not.
func TestHostOfContract11ServesTasks(t *testing.T) {
	t.Parallel()
	h := startHostWith(t, newGatedAgent(t), testharness.Options{PluginConfig: baseConfig(nil), HostProtocolMinor: 1})
	c := newClient(h.url)
	ctx := within(t)
	for i := range 3 {
		tk := c.sendTask(t, ctx, msg(fmt.Sprintf("hello old host %d", i)))
		if tk.Status.State != stCompleted || tk.answer() == "" {
			t.Fatalf("send %d to a 1.1 host: %+v", i, tk)
		}
	}
	var calls int
	for _, call := range h.Recorder().Calls() {
		if call.Kind == testharness.KindHandleMessage {
			calls++
		}
	}
	if calls != 3 {
		t.Errorf("the host saw %d HandleMessage calls, want 3", calls)
	}
}
