package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// These tests run the real agenthost binary against the harness's test
// plugin (host-sdk/internal/testplugin) in a plugins directory.

type fixture struct {
	agenthost  string
	pluginsDir string
	dir        string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and launches binaries")
	}
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	host, err := testharness.BuildBinary(ctx, root, testharness.Binary{Name: "agenthost", Package: "./cmd/agenthost"})
	if err != nil {
		t.Fatal(err)
	}
	plug, err := testharness.BuildBinary(ctx, root, testharness.TestPluginBinary)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{agenthost: host, dir: t.TempDir()}
	f.pluginsDir = filepath.Join(f.dir, "plugins")
	if _, err := testharness.InstallBinary(plug, f.pluginsDir, "testplugin"); err != nil {
		t.Fatal(err)
	}
	return f
}

// run runs agenthost with args and returns stdout, stderr and the exit code.
func (f *fixture) run(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.agenthost, args...)
	cmd.Dir = f.dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run agenthost %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

func (f *fixture) write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPluginsCommandListsPluginsAndExplainsSkippedFiles(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.pluginsDir, "README.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.pluginsDir, "script.sh"), []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := f.run(t, nil, "plugins", "--plugins", "plugins", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Plugins []pluginInfo  `json:"plugins"`
		Skipped []skippedInfo `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(got.Plugins) != 1 {
		t.Fatalf("plugins = %+v", got.Plugins)
	}
	p := got.Plugins[0]
	if p.Name != "testplugin" || p.Version != "1.0.0" || p.ProtocolMinor != plugin.ProtocolMinor || p.State != "ready" ||
		strings.Join(p.Capabilities, ",") != "platform,toolset" || p.Path != filepath.Join(f.pluginsDir, "testplugin") {
		t.Fatalf("plugin = %+v", p)
	}
	if len(got.Skipped) != 2 ||
		!strings.Contains(got.Skipped[0].Reason, "not executable") ||
		!strings.Contains(got.Skipped[1].Reason, "handshake failed") {
		t.Fatalf("skipped = %+v", got.Skipped)
	}

	table, _, code := f.run(t, nil, "plugins", "--plugins", "plugins")
	if code != 0 || !strings.Contains(table, fmt.Sprintf("testplugin  1.0.0    1.%d       platform,toolset  ready", plugin.ProtocolMinor)) ||
		!strings.Contains(table, "skipped:\n  "+filepath.Join(f.pluginsDir, "README.txt")) {
		t.Fatalf("table:\n%s", table)
	}
}

func TestPluginsCommandShowsARefusedConfiguration(t *testing.T) {
	f := newFixture(t)
	cfg := f.write(t, "host.yaml", "plugins:\n  testplugin:\n    refuse: missing token\n")
	stdout, stderr, code := f.run(t, nil, "plugins", "--plugins", "plugins", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "failed") || !strings.Contains(stdout, "config.refuse is set (missing token)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestToolCommandPrintsTheResultAndProgress(t *testing.T) {
	f := newFixture(t)
	scenario := f.write(t, "agent.yaml", "default:\n  - progress: working\n  - reply: \"agent got {{text}}\"\n")
	stdout, stderr, code := f.run(t, nil, "tool", "inject", `{"text":"hi"}`, "--plugins", "plugins", "--agent", "scenario:"+scenario)
	if code != 0 || stdout != "agent got hi\n" || !strings.Contains(stderr, "progress: working\n") {
		t.Fatalf("exit %d\nstdout: %q\nstderr:\n%s", code, stdout, stderr)
	}

	stdout, stderr, code = f.run(t, nil, "tool", "sleep", `{"ms":30,"steps":2}`, "--plugins", "plugins")
	if code != 0 || stdout != "slept\n" || !strings.Contains(stderr, "progress: step 1/2 (0%)\nprogress: step 2/2 (50%)\n") {
		t.Fatalf("exit %d\nstdout: %q\nstderr:\n%s", code, stdout, stderr)
	}

	stdout, _, code = f.run(t, nil, "tool", "inject", `{"text":"hi"}`, "--plugins", "plugins", "--agent", "command:tr a-z A-Z")
	if code != 0 || stdout != "HI\n" {
		t.Fatalf("command agent: exit %d, stdout %q", code, stdout)
	}
}

func TestToolCommandExitsOneOnAnErrorResult(t *testing.T) {
	f := newFixture(t)
	stdout, _, code := f.run(t, nil, "tool", "fail", `{"message":"bad input"}`, "--plugins", "plugins")
	if code != 1 || stdout != "bad input\n" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	_, stderr, code := f.run(t, nil, "tool", "no_such_tool", "--plugins", "plugins")
	if code != 1 || !strings.Contains(stderr, `no plugin offers tool "no_such_tool" (known: cancel, complete,`) {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	stdout, _, code = f.run(t, nil, "tool", "inject", `{"text":"x"}`, "--plugins", "plugins", "--agent", "command:echo oops >&2; exit 4")
	if code != 1 || !strings.Contains(stdout, "OUTCOME_FAILURE: command exited with status 4: oops") {
		t.Fatalf("failing agent: exit %d, stdout %q", code, stdout)
	}
}

func TestToolCommandHandsConfigAndEnvironmentFromHostYAML(t *testing.T) {
	f := newFixture(t)
	cfg := f.write(t, "host.yaml", `
plugins_dir: plugins
plugins:
  testplugin:
    greeting: hello
    nested: {n: 1}
env:
  testplugin:
    TESTPLUGIN_MODE: strict
env_allow: [AGENTHOST_TEST_ALLOWED]
`)
	env := []string{"AGENTHOST_TEST_ALLOWED=yes", "AGENTHOST_TEST_SECRET=leak", "A2A_SOMETHING=on"}
	stdout, stderr, code := f.run(t, env, "tool", "config", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Config  map[string]any `json:"config"`
		DataDir string         `json:"data_dir"`
		Host    string         `json:"host"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Config["greeting"] != "hello" || got.Host != "agenthost" || got.DataDir != filepath.Join(f.dir, "bin", "data", "testplugin") {
		t.Fatalf("config = %+v", got)
	}
	for name, want := range map[string]string{
		"TESTPLUGIN_MODE":        "strict",
		"AGENTHOST_TEST_ALLOWED": "yes",
		"AGENTHOST_TEST_SECRET":  "",
		"A2A_SOMETHING":          "on",
	} {
		stdout, _, _ := f.run(t, env, "tool", "env", `{"name":"`+name+`"}`, "--config", cfg)
		if stdout != want+"\n" {
			t.Errorf("plugin sees %s=%q, want %q", name, strings.TrimSpace(stdout), want)
		}
	}
}

func TestRunServesUntilSIGTERM(t *testing.T) {
	f := newFixture(t)
	cmd := exec.Command(f.agenthost, "run", "--plugins", "plugins", "--data", "state", "--cpuprofile", "host.pprof")
	cmd.Dir = f.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	deadline := time.After(time.Minute)
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("agenthost exited early: %v\nstderr:\n%s", seen, stderr.String())
			}
			seen = append(seen, l)
			ready = strings.Contains(l, "plugin(s) ready")
		case <-deadline:
			t.Fatalf("not ready: %v", seen)
		}
	}
	if !strings.HasPrefix(seen[0], "testplugin: serving at test://testplugin/") || !strings.HasPrefix(seen[1], "tools: ") {
		t.Fatalf("output = %q", seen)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "state", "testplugin")); err != nil {
		t.Fatalf("data directory: %v", err)
	}
	// A tool call on the same state goes to the running host (its control
	// socket) instead of starting a second host beside it.
	toolOut, errOut, code := f.run(t, nil, "tool", "config", "--plugins", "plugins", "--data", "state")
	if code != 0 || !strings.Contains(toolOut, `"host":"agenthost"`) {
		t.Fatalf("tool call on the running host: exit %d, stdout %s, stderr %s", code, toolOut, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "state", controlSocket)); err != nil {
		t.Fatalf("control socket: %v", err)
	}
	// A second host on the same state is refused: its plugins would take
	// over the running host's tasks.
	_, errOut, code = f.run(t, nil, "run", "--plugins", "plugins", "--data", "state")
	if code != 1 || !strings.Contains(errOut, "/state is in use by another agenthost (pid ") {
		t.Fatalf("second host on the same data: exit %d, stderr %s", code, errOut)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		seen = append(seen, l)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("agenthost did not stop after SIGTERM")
	}
	if last := seen[len(seen)-1]; last != "agenthost: stopping (draining plugins)" {
		t.Fatalf("last line = %q", last)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "state", controlSocket)); !os.IsNotExist(err) {
		t.Fatalf("the control socket outlived the host: %v", err)
	}
	// The plugin process must have ended, and not by a kill after a failed
	// drain (that would be logged as an error).
	if log := stderr.String(); !strings.Contains(log, "plugin process exited") || strings.Contains(log, "[ERROR]") {
		t.Fatalf("the plugin did not stop cleanly:\n%s", log)
	}
	// --cpuprofile wrote a whole profile (gzipped protobuf) when it stopped.
	if b, err := os.ReadFile(filepath.Join(f.dir, "host.pprof")); err != nil || len(b) < 20 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("CPU profile: %d bytes, %v", len(b), err)
	}
}

func TestUsageAndClearErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	data := t.TempDir()
	tests := []struct {
		args    []string
		code    int
		inOut   string
		inError string
	}{
		{nil, exitUsage, "", "Usage:"},
		{[]string{"help"}, exitOK, "agenthost run", ""},
		{[]string{"version"}, exitOK, "agenthost dev\n  commit ", ""},
		{[]string{"serve"}, exitUsage, "", `unknown command "serve"`},
		{[]string{"run", "--help"}, exitOK, "", "-plugins DIR"},
		{[]string{"tool"}, exitUsage, "", "want a tool name"},
		{[]string{"tool", "x", "{nope"}, exitUsage, "", "the arguments must be a JSON object"},
		{[]string{"run", "--plugins", "/does/not/exist"}, exitError, "", "plugins directory /does/not/exist not found"},
		{[]string{"run", "--plugins", ".", "--agent", "llm"}, exitError, "", `unknown agent "llm"`},
		{[]string{"run", "--plugins", ".", "--log-level", "loud"}, exitError, "", `unknown log level "loud"`},
		{[]string{"run", "--plugins", ".", "--data", data, "--cpuprofile", "/does/not/exist/cpu.pprof"}, exitError, "", "--cpuprofile: open /does/not/exist/cpu.pprof"},
		{[]string{"plugins", "extra"}, exitUsage, "", "unexpected arguments"},
	}
	for _, tt := range tests {
		out.Reset()
		errOut.Reset()
		code := run(tt.args, &out, &errOut)
		if code != tt.code || !strings.Contains(out.String(), tt.inOut) || !strings.Contains(errOut.String(), tt.inError) {
			t.Errorf("agenthost %q: exit %d (want %d)\nstdout: %s\nstderr: %s", tt.args, code, tt.code, out.String(), errOut.String())
		}
	}
}

// Issue 15, item 11: after the crash the restart policy no longer allows,
// agenthost run stops with exit status 3 and says so, instead of serving on
// without its plugin.
func TestRunExitsWhenAPluginCrashesMoreThanTheRestartPolicyAllows(t *testing.T) {
	f := newFixture(t)
	cfg := f.write(t, "host.yaml", "restart: {max_restarts: 1, window: 5m}\n")
	cmd := exec.Command(f.agenthost, "run", "--plugins", "plugins", "--data", "state", "--config", cfg)
	cmd.Dir = f.dir
	var stdout, stderr testharness.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFor(t, &stdout, "plugin(s) ready")
	// The first crash is restarted; the second is one too many.
	for crash := 1; ; crash++ {
		f.run(t, nil, "tool", "crash", "--plugins", "plugins", "--data", "state")
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitGaveUp {
				t.Fatalf("agenthost ended with %v, want exit status %d\nstderr:\n%s", err, exitGaveUp, stderr.String())
			}
			if crash != 2 {
				t.Fatalf("gave up after %d crashes, want 2", crash)
			}
			log := stderr.String()
			if !strings.Contains(log, `agenthost: ERROR: plugin "testplugin" crashed after 1 restarts within 5m0s; giving up`) ||
				!strings.Contains(log, "agenthost: giving up: plugin testplugin is down for good, so this host stops (exit status 3)") {
				t.Fatalf("the give-up is not said loudly:\n%s", log)
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		if crash == 1 {
			// Wait for the restart before crashing again.
			waitForCount(t, &stdout, "testplugin: serving at", 2)
		}
		if crash > 5 {
			t.Fatalf("agenthost still runs after %d crashes\nstderr:\n%s", crash, stderr.String())
		}
	}
}

func waitFor(t *testing.T, b *testharness.SyncBuffer, text string) {
	t.Helper()
	waitForCount(t, b, text, 1)
}

// waitForCount waits until text was written n times (a minute at most).
func waitForCount(t *testing.T, b *testharness.SyncBuffer, text string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for strings.Count(b.String(), text) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q not seen %d times in:\n%s", text, n, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestToolResultsJSONSummaryLineIsExplainedOnStderr(t *testing.T) {
	const call = "self completed the task (task \"t1\", context \"c1\", state COMPLETED):\nhi\n" +
		"To continue this conversation: a2a_call agent=\"self\" context_id=\"c1\" message=\"…\"\n" +
		`{"context_id":"c1","peer":"self","state":"COMPLETED","task_id":"t1"}`
	cases := []struct {
		name, tool, content string
		isError             bool
		note                string // "" when no note is due
	}{
		{"a2a_call's summary", "a2a_call", call, false, `the last line is a2a_call's summary in JSON (peer, state, task_id, context_id)`},
		{"a2a_discover's summary", "a2a_discover", "Card of configured peer \"self\":\nTo delegate: …\n" + `{"agent":"self","name":"Echo Agent"}`, false, "a2a_discover's summary in JSON"},
		{"a failed a2a_task's summary", "a2a_task", "self failed the task:\nboom\n" + `{"peer":"self","state":"FAILED"}`, true, "a2a_task's summary"},
		{"a2a_history ending with a peer's JSON text", "a2a_history", "Conversation \"c1\":\n← from self:\n" + `{"peer":"x"}`, false, ""},
		{"an argument error has no summary", "a2a_call", `a2a_call: argument "agent" is required`, true, ""},
		{"another plugin's JSON result", "config", `{"host":"agenthost"}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := printToolResult(&stdout, &stderr, c.tool, c.content, c.isError)
			if stdout.String() != c.content+"\n" {
				t.Errorf("stdout = %q, want the result as the model reads it", stdout.String())
			}
			if want := map[bool]int{false: exitOK, true: exitError}[c.isError]; code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			if c.note == "" && stderr.Len() > 0 {
				t.Errorf("unexpected note: %s", stderr.String())
			}
			if c.note != "" && !strings.Contains(stderr.String(), c.note) {
				t.Errorf("stderr = %q, want a note with %q", stderr.String(), c.note)
			}
		})
	}
}
