//go:build unix

package hostsdk_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// envChildHost turns the test binary into a tiny host (see runChildHost).
const envChildHost = "HOSTSDK_TEST_CHILD_HOST_PLUGIN"

var binDir string

func TestMain(m *testing.M) {
	if path := os.Getenv(envChildHost); path != "" {
		runChildHost(path)
		return
	}
	dir, err := os.MkdirTemp("", "hostsdk-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// runChildHost is a host in a subprocess: it loads the plugin at path,
// prints "PID <plugin pid>" and waits to be killed.
func runChildHost(path string) {
	m := hostsdk.NewManager(hostsdk.Options{
		Paths:  []string{path},
		Logger: hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Warn}),
	})
	if err := m.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "child host:", err)
		os.Exit(1)
	}
	p, ok := m.Plugin("testplugin")
	if !ok {
		fmt.Fprintln(os.Stderr, "child host: testplugin did not load")
		os.Exit(1)
	}
	fmt.Printf("PID %d\n", p.Pid())
	select {}
}

// Variants of the test plugin, built once per test binary run.
type variant struct {
	file    string
	ldflags string
}

var (
	goodPlugin     = variant{"testplugin", "-X main.name=testplugin"}
	wrongProtocol  = variant{"wrongproto", "-X main.name=testplugin -X main.protocolVersion=2"}
	versionTwo     = variant{"testplugin-v2", "-X main.name=testplugin -X main.version=2.0.0"}
	otherNamed     = variant{"other", "-X main.name=other"}
	buildsMu       sync.Mutex
	builds         = map[variant]func() (string, error){}
	pluginPkg      = "./internal/testplugin/cmd/testplugin"
	processTimeout = 20 * time.Second
)

// buildPath returns the path of v's binary, building it on first use.
func buildPath(v variant) (string, error) {
	buildsMu.Lock()
	f, ok := builds[v]
	if !ok {
		f = sync.OnceValues(func() (string, error) {
			out := filepath.Join(binDir, v.file)
			args := []string{"build", "-o", out}
			if v.ldflags != "" {
				args = append(args, "-ldflags", v.ldflags)
			}
			cmd := exec.Command("go", append(args, pluginPkg)...)
			if msg, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("go build %s: %v\n%s", v.file, err, msg)
			}
			return out, nil
		})
		builds[v] = f
	}
	buildsMu.Unlock()
	return f()
}

// build builds the variants in parallel (the link step dominates) and
// returns their paths.
func build(t testing.TB, vs ...variant) []string {
	t.Helper()
	paths := make([]string, len(vs))
	errs := make([]error, len(vs))
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Go(func() { paths[i], errs[i] = buildPath(v) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testLogger logs into a buffer that is printed when the test fails.
func testLogger(t testing.TB) (hclog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host log:\n%s", buf)
		}
	})
	return hclog.New(&hclog.LoggerOptions{Name: "host", Output: buf, Level: hclog.Debug}), buf
}

// testHost answers every message with "echo: <text>" through the
// platform of the plugin it came from, asynchronously, as an agent would.
type testHost struct {
	platform func(name string) (plugin.Platform, bool)
}

func (h *testHost) HandleMessage(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	pf, ok := h.platform(req.GetPlatform())
	if !ok {
		return nil, fmt.Errorf("no platform %q: %w", req.GetPlatform(), plugin.ErrInvalidArgument)
	}
	go func() {
		_, _ = pf.Send(context.Background(), &pb.SendRequest{
			Platform: req.GetPlatform(), ChatId: req.GetChatId(), TaskId: req.GetTaskId(),
			Kind: pb.SendKind_SEND_KIND_FINAL, Text: "echo: " + req.GetText(), EndsTurn: true,
		})
	}()
	return &pb.HandleMessageResponse{TurnId: "turn-" + req.GetTaskId()}, nil
}

func (h *testHost) CancelTurn(context.Context, *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	return &pb.CancelTurnResponse{}, nil
}

func (h *testHost) ListTools(context.Context) ([]*pb.ToolDefinition, error) { return nil, nil }

// managerHost is a testHost answering through m's plugins.
func managerHost(m **hostsdk.Manager) *testHost {
	return &testHost{platform: func(name string) (plugin.Platform, bool) {
		p, ok := (*m).Plugin(name)
		if !ok {
			return nil, false
		}
		return p.Platform()
	}}
}

// events records Options.OnEvent calls and lets a test wait for one.
type events struct {
	mu   sync.Mutex
	all  []hostsdk.Event
	wake chan struct{}
}

func newEvents() *events { return &events{wake: make(chan struct{}, 1)} }

func (e *events) record(ev hostsdk.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *events) count(kind hostsdk.EventKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// waitCount waits until n events of kind were seen.
func (e *events) waitCount(t *testing.T, kind hostsdk.EventKind, n int, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for e.count(kind) < n {
		select {
		case <-e.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("saw %d %v events within %s, want %d; all: %v", e.count(kind), kind, within, n, e.snapshot())
		}
	}
}

func (e *events) snapshot() []hostsdk.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]hostsdk.Event(nil), e.all...)
}

// startManager starts a Manager and closes it when the test ends.
func startManager(t *testing.T, opts hostsdk.Options) (*hostsdk.Manager, error) {
	t.Helper()
	m := hostsdk.NewManager(opts)
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	err := m.Start(ctx)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
		defer cancel()
		_ = m.Close(ctx)
	})
	return m, err
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	t.Cleanup(cancel)
	return ctx
}

// processGone reports whether pid no longer runs (a zombie counts as gone:
// it cannot hold a port, and in a container nobody may reap it).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if i := strings.LastIndexByte(line, ')'); i >= 0 && i+2 < len(line) {
		return line[i+2] == 'Z'
	}
	return false
}

func waitGone(t *testing.T, pid int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for !processGone(pid) {
		if time.Since(start) > within {
			t.Fatalf("process %d still runs %s later", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}
