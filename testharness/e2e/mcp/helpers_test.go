// Package mcp_test drives the MCP face end to end: the real cmd/a2a-mcp
// binary, launched over stdio by the official Go MCP SDK's client (as an
// MCP host launches a stdio server: mcp.CommandTransport), launching the
// real cmd/a2a-plugin next to it through host-sdk. Its peer is the
// reference host (testharness: host-sdk plus the real plugin binary), and
// its inbound side is called by the official A2A Go SDK's client.
//
// Channel notifications (notifications/claude/channel) are a method the Go
// SDK's client does not know; the test reads them off the connection, as
// Claude Code does (channelTap).
package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// patience bounds every wait; a guard against hangs, never an assertion on
// speed.
const patience = 60 * time.Second

// Protocol revisions the face is driven on.
const (
	proto20251125 = "2025-11-25"
	proto20260728 = "2026-07-28"
)

var mcpBinary = testharness.Binary{Name: "a2a-mcp", Package: "./cmd/a2a-mcp"}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// binaries builds a2a-mcp and a2a-plugin into one directory (a2a-mcp finds
// the plugin next to itself, as an installed pair does).
func binaries(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		root, err := testharness.ModuleRoot("")
		if err != nil {
			binErr = err
			return
		}
		dir, err := os.MkdirTemp("", "a2a-mcp-e2e-")
		if err != nil {
			binErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		for _, b := range []testharness.Binary{mcpBinary, testharness.PluginBinary} {
			// As testharness builds the plugins it launches (e.g. -race).
			path, err := testharness.BuildBinary(ctx, root, b, strings.Fields(os.Getenv("TESTHARNESS_BUILD_FLAGS"))...)
			if err != nil {
				binErr = err
				return
			}
			if _, err := testharness.InstallBinary(path, dir, b.Name); err != nil {
				binErr = err
				return
			}
		}
		binDir = dir
	})
	if binErr != nil {
		t.Fatalf("building a2a-mcp and a2a-plugin: %v", binErr)
	}
	return binDir
}

// channelMsg is one notifications/claude/channel the face sent.
type channelMsg struct {
	Content string            `json:"content"`
	Meta    map[string]string `json:"meta"`
}

// channelTap is a client Transport that takes the channel notifications
// off the connection (the SDK's client would drop a method it does not
// know) and passes every other message on.
type channelTap struct {
	sdk.Transport
	ch chan channelMsg
}

func (c channelTap) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tapConn{Connection: conn, ch: c.ch}, nil
}

type tapConn struct {
	sdk.Connection
	ch chan channelMsg
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/claude/channel" {
			var m channelMsg
			if err := json.Unmarshal(req.Params, &m); err != nil {
				m.Content = "UNDECODABLE: " + string(req.Params)
			}
			c.ch <- m
			continue
		}
		return msg, nil
	}
}

// face is a running a2a-mcp and the client session on it.
type face struct {
	cmd      *exec.Cmd
	session  *sdk.ClientSession
	channel  chan channelMsg
	stderr   *testharness.SyncBuffer
	progress chan string
}

// faceOptions say how to start a2a-mcp.
type faceOptions struct {
	protocol string
	inbound  bool
	config   map[string]any
	env      []string
}

// startFace starts a2a-mcp with a configuration file and connects the SDK's
// client to it over stdio.
func startFace(t testing.TB, o faceOptions) *face {
	t.Helper()
	dir := binaries(t)
	cfg := map[string]any{"store": "memory", "rate_limit": 0, "allow_loopback_urls": true}
	for k, v := range o.config {
		cfg[k] = v
	}
	b, _ := json.Marshal(cfg)
	cfgFile := filepath.Join(t.TempDir(), "a2a.json")
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfgFile, "--log-level", "info"}
	if o.inbound {
		args = append(args, "--inbound")
	}
	cmd := exec.Command(filepath.Join(dir, "a2a-mcp"), args...)
	cmd.Env = append(os.Environ(), o.env...)
	f := &face{cmd: cmd, channel: make(chan channelMsg, 16), stderr: &testharness.SyncBuffer{}, progress: make(chan string, 64)}
	cmd.Stderr = f.stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			select {
			case f.progress <- r.Params.Message:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	s, err := client.Connect(ctx, channelTap{Transport: &sdk.CommandTransport{Command: cmd}, ch: f.channel}, &sdk.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		t.Fatalf("connecting to a2a-mcp: %v\nstderr:\n%s", err, f.stderr.String())
	}
	f.session = s
	t.Cleanup(func() {
		_ = s.Close() // closes stdin and waits for a2a-mcp to exit (SIGTERM, SIGKILL after 5s each)
		if strings.Contains(f.stderr.String(), "DATA RACE") {
			t.Error("a2a-mcp (built with -race) reported a data race")
		}
		if t.Failed() {
			t.Logf("a2a-mcp stderr:\n%s", f.stderr.String())
		}
	})
	return f
}

var servingRE = regexp.MustCompile(`a2a serving at (http://\S+)`)

// endpoint is the URL the face's plugin serves A2A at (from its stderr).
func (f *face) endpoint(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) {
		if m := servingRE.FindStringSubmatch(f.stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("a2a-mcp never said where its plugin serves A2A; stderr:\n%s", f.stderr.String())
	return ""
}

// call calls a tool and returns its text and isError; a protocol error
// fails the test.
func (f *face) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := f.session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error instead of a tool result: %v", tool, err)
	}
	return resultText(res), res.IsError
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// nextChannel waits for the next channel notification.
func (f *face) nextChannel(t *testing.T) channelMsg {
	t.Helper()
	select {
	case m := <-f.channel:
		return m
	case <-time.After(patience):
		t.Fatalf("no channel notification came; stderr:\n%s", f.stderr.String())
	}
	return channelMsg{}
}

// pluginPid is the pid of a2a-mcp's child process (the plugin).
func (f *face) pluginPid(t *testing.T) int {
	t.Helper()
	fields := children(f.cmd.Process.Pid)
	if fields == nil {
		t.Skip("cannot read the children of a2a-mcp: needs Linux /proc")
	}
	if len(fields) != 1 {
		t.Fatalf("a2a-mcp has children %v, want exactly the plugin", fields)
	}
	return fields[0]
}

// children lists the child processes of pid (nil when /proc cannot tell).
func children(pid int) []int {
	// Each thread lists the children it started.
	threads, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil || len(threads) == 0 {
		return nil
	}
	out := []int{}
	for _, th := range threads {
		b, err := os.ReadFile(th)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// alive reports whether pid is a running process (a zombie is not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// reference starts the reference host with the A2A plugin and behavior b
// and returns its A2A URL.
func reference(t *testing.T, b testharness.Behavior) (*testharness.Host, string) {
	t.Helper()
	h := testharness.Start(t, testharness.Options{Agent: b, PluginConfig: map[string]any{"port": 0, "store": "memory", "rate_limit": 0},
		Logger: testharness.LoggerFunc(func(format string, args ...any) { t.Logf("ref: "+format, args...) })})
	return h, h.Endpoint("a2a")
}

// peerConfig is the face's configuration with the reference host as peer
// "ref".
func peerConfig(url string, extra map[string]any) map[string]any {
	c := map[string]any{"a2a_agents": []map[string]any{{"name": "ref", "url": url}}}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// killPid kills a process outright (SIGKILL), as a crash would end it.
func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
