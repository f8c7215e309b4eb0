// Package mcphosts_test drives real coding-agent CLIs, installed from npm
// at pinned versions by make mcp-hosts, against this project: Claude Code
// (claude -p), Codex CLI (codex exec) and Gemini CLI (gemini -p) each load
// the A2A plugin's MCP face (cmd/a2a-mcp) as an MCP server over stdio,
// and a scripted model (testharness/fakemodel) on loopback makes the CLI
// call a2a_call.
// The call reaches a real A2A agent: the reference host (cmd/agenthost)
// running a command agent that upper-cases what it is sent, so its answer
// can only come from it. The model's next request must carry that answer.
// Gemini CLI is also tested as an A2A client of the reference host
// (remote_agent_test.go), and each CLI's own "mcp add" as a user installs
// the face (install_test.go).
//
// The CLIs are found through MCPHOSTS_CLAUDE, MCPHOSTS_CODEX and
// MCPHOSTS_GEMINI, which make test-go sets; without them a test fails and
// says to run make test-mcp-hosts (docs/mcp-hosts-testing.md).
package mcphosts_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/fakemodel"
)

// cliTimeout bounds one CLI run: a guard against hangs, not an assertion
// on speed.
const cliTimeout = 4 * time.Minute

func TestMain(m *testing.M) {
	code := m.Run()
	closeWorld()
	os.Exit(code)
}

// cli is the path of a pinned CLI from its environment variable, or fails
// the test saying how to install it.
func cli(t *testing.T, env, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and launches binaries and real CLIs")
	}
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set: run these tests with make test-mcp-hosts (or make test), which installs the pinned %s and the other CLIs under ~/.cache/a2a-plugin (make mcp-hosts) and sets MCPHOSTS_CLAUDE, MCPHOSTS_CODEX and MCPHOSTS_GEMINI; see docs/mcp-hosts-testing.md", env, name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v; run make mcp-hosts to install the pinned %s", env, p, err, name)
	}
	return p
}

// world is what every test shares: the built binaries and one reference
// host serving an A2A agent on loopback.
type world struct {
	root, agenthost, plugins string
	// peerURL is the reference host's A2A base URL.
	peerURL string
	// face is the a2a-mcp binary; faceConfig and agentsJSON its plugin
	// settings as a file and as A2A_AGENTS.
	face, faceConfig, agentsJSON string
	cmd                          *exec.Cmd
	done                         chan struct{}
	stdout                       *testharness.SyncBuffer
	stderr                       *testharness.SyncBuffer
	tmp                          string
}

var (
	worldOnce sync.Once
	theWorld  *world
	worldErr  string
)

// peerAgent is the reference host's agent: a command agent (as make run
// AGENT="command:…" runs it) that answers what it is sent in upper case.
const peerAgent = "command:tr a-z A-Z"

// sharedWorld builds agenthost and the plugin once and starts the
// reference host, on first use; closeWorld stops it after all tests.
func sharedWorld(t *testing.T) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and launches binaries and real CLIs")
	}
	worldOnce.Do(func() { theWorld, worldErr = startWorld() })
	if worldErr != "" {
		t.Fatal(worldErr)
	}
	return theWorld
}

func startWorld() (*world, string) {
	root, err := testharness.ModuleRoot("")
	if err != nil {
		return nil, err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	host, err := testharness.BuildBinary(ctx, root, testharness.Binary{Name: "agenthost", Package: "./cmd/agenthost"})
	if err != nil {
		return nil, err.Error()
	}
	plug, err := testharness.BuildBinary(ctx, root, testharness.PluginBinary)
	if err != nil {
		return nil, err.Error()
	}
	tmp, err := os.MkdirTemp("", "mcphosts-")
	if err != nil {
		return nil, err.Error()
	}
	w := &world{root: root, agenthost: host, plugins: filepath.Join(tmp, "plugins"), tmp: tmp,
		stdout: &testharness.SyncBuffer{}, stderr: &testharness.SyncBuffer{}, done: make(chan struct{})}
	if _, err := testharness.InstallBinary(plug, w.plugins, "a2a-plugin"); err != nil {
		return nil, err.Error()
	}
	port, err := freePort()
	if err != nil {
		return nil, err.Error()
	}
	w.cmd = exec.Command(host, "run", "--plugins", w.plugins, "--data", filepath.Join(tmp, "data"),
		"--config", filepath.Join(root, "cmd", "agenthost", "run.yaml"), "--agent", peerAgent)
	w.cmd.Dir = root
	w.cmd.Env = append(os.Environ(), "RUN_PORT="+port, "RUN_NAME=Upper Agent")
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w.cmd.Stdout, w.cmd.Stderr = w.stdout, w.stderr
	if err := w.cmd.Start(); err != nil {
		return nil, err.Error()
	}
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(w.stdout.String(), "plugin(s) ready") {
		select {
		case <-w.done:
			return nil, "agenthost exited:\n" + w.stdout.String() + "\n" + w.stderr.String()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, "agenthost not ready after 2m:\n" + w.stdout.String() + "\n" + w.stderr.String()
		}
	}
	w.peerURL = "http://127.0.0.1:" + port
	if err := w.installFace(ctx, plug); err != nil {
		w.stop()
		return nil, err.Error()
	}
	return w, ""
}

func (w *world) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-w.done
	}
	_ = os.RemoveAll(w.tmp)
}

func closeWorld() {
	if theWorld != nil {
		theWorld.stop()
	}
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// nonce is a random lower-case word, so each test finds its own call.
func nonce(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "ping " + hex.EncodeToString(b)
}

// startModel starts a fake model scripted to call tool with args and to
// answer with what came back.
func startModel(t *testing.T, tool string, args map[string]any) *fakemodel.Server {
	t.Helper()
	m, err := fakemodel.Start(fakemodel.Script{Tool: tool, Args: args, Answer: "The peer answered: %s"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// baseEnv is a clean environment for a CLI: PATH (for node), a fresh HOME
// and nothing of the caller's vendor keys or settings.
func baseEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"NO_COLOR=1",
		"CI=1",
	}
}

// runCLI runs a CLI to completion in dir and returns its stdout; a non-zero
// exit or a timeout fails the test with both outputs and the model's log.
func runCLI(t *testing.T, m *fakemodel.Server, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The CLI's MCP servers are its children: end the whole group.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	stdout, stderr := &testharness.SyncBuffer{}, &testharness.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s ran %s", filepath.Base(name), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s\nmodel requests:\n%s", name, args, err, stdout.String(), stderr.String(), m.Summary())
	}
	checkGroupGone(t, cmd.Process.Pid)
	return stdout.String()
}

// checkGroupGone fails the test when a process of the CLI's group (the MCP
// face and its plugin among them) outlives the CLI by more than a few
// seconds, and kills what is left.
func checkGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			out, _ := exec.Command("ps", "-o", "pid,args", "-g", strconv.Itoa(pgid)).CombinedOutput()
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatalf("processes outlived the CLI by 15s (killed now):\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkRoundTrip asserts that the model called the tool, was given the A2A
// agent's answer in its next request, and that the CLI printed the model's
// final answer.
func checkRoundTrip(t *testing.T, m *fakemodel.Server, out, msg string) {
	t.Helper()
	want := strings.ToUpper(msg)
	if m.Calls() == 0 {
		t.Fatalf("the model never saw the tool offered, so never called it; requests:\n%s\nCLI output:\n%s", m.Summary(), out)
	}
	for _, r := range m.Requests() {
		if strings.HasPrefix(r.Reply, "call ") && !r.Streamed {
			t.Errorf("the CLI asked for the turn that called the tool without streaming, so the streamed API went untested: %+v", r)
		}
	}
	results := m.Results()
	found := false
	for _, r := range results {
		if strings.Contains(r, want) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no tool result the model was given holds the A2A agent's answer %q; results: %q\nrequests:\n%s", want, results, m.Summary())
	}
	if !strings.Contains(out, "The peer answered:") || !strings.Contains(out, want) {
		t.Fatalf("the CLI did not print the model's final answer with %q; stdout:\n%s", want, out)
	}
	t.Logf("model requests:\n%s", m.Summary())
}
