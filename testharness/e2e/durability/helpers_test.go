// Package durability_test proves, through the real a2a-plugin binary
// launched by the test harness exactly as a host launches it, that the
// plugin's state is durable and that push notifications are delivered:
//
//   - restart_test.go: every task (each state, two owners), push config and
//     outbound conversation survives kill -9; running and queued tasks are
//     failed with a clear reason and their webhooks told; interrupted tasks
//     can still be answered; what a stream showed is in the store before
//     the client sees it; a graceful stop fails running tasks too; the
//     conversation of a task failed at start-up is usable again.
//   - webhook_test.go: every delivery is signed, authenticated, a valid
//     v1.0 StreamResponse and in task order; webhook outages and plugin
//     restarts lose nothing; permanent failures are given up and recorded;
//     webhook URLs pass the SSRF guard; configs on running tasks get the
//     rest; a generated signing key survives restarts.
//   - pushconfig_test.go: the four push-config methods (v1.0 and 0.3
//     shapes, aliases), inline configs, scoping between peers, push
//     disabled, inline configs on continuations.
//   - jssdk_test.go: the official JS SDK client manages push configs
//     (testharness/interop/js/client-push.mjs).
//   - retention_test.go: old finished tasks are pruned, unfinished ones stay.
//   - scale_test.go: ListTasks through the binary on a 100k-task store
//     (seeded by testdata/seed, a separate process).
package durability_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // read the plugin's database (read-only) to check what it recorded

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// Tokens and the push secret the tests configure.
const (
	tokAlice   = "alice-token-7f3a9c"
	tokBob     = "bob-token-41d2e8"
	pushSecret = "durability-push-secret-5b7e"
)

// peerTokens is A2A_PEER_TOKENS for two named peers.
const peerTokens = "alice:" + tokAlice + ",bob:" + tokBob

// rpcTimeout bounds one JSON-RPC call.
const rpcTimeout = 30 * time.Second

// minParallel is the default -parallel of this package: its tests spend
// their time waiting for plugin processes, webhooks, backoffs and the
// one-minute prune interval, not on the CPU, so they run side by side even
// on a two-core machine (an explicit -parallel wins).
const minParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit && runtime.GOMAXPROCS(0) < minParallel {
		_ = flag.Set("test.parallel", strconv.Itoa(minParallel))
	}
	os.Exit(m.Run())
}

// scenario loads the host agent of testdata/agent.yaml.
func scenario(t testing.TB) *testharness.Scenario {
	t.Helper()
	s, err := testharness.LoadScenario(filepath.Join("testdata", "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launchOpts say how to launch one plugin.
type launchOpts struct {
	// config is merged over the base configuration (port 0, sqlite,
	// loopback webhooks allowed, no rate limit, no audit log).
	config map[string]any
	env    map[string]string
	// dataDir, when set, is the host's data root; the database survives
	// restarts there.
	dataDir string
	// logs, when set, also receives every log line.
	logs *logTee
}

// launch starts a harness host running the real plugin binary with the
// scenario agent.
func launch(t *testing.T, o launchOpts) *testharness.Host {
	t.Helper()
	cfg := map[string]any{
		"port":                0,
		"store":               "sqlite",
		"allow_loopback_urls": true,
		"rate_limit":          0,
		"audit_log":           "off",
	}
	maps.Copy(cfg, o.config)
	opts := testharness.Options{
		Agent:        scenario(t),
		PluginConfig: cfg,
		Env:          o.env,
		DataDir:      o.dataDir,
	}
	if o.logs != nil {
		o.logs.t = t
		opts.Logger = o.logs
	}
	h := testharness.Start(t, opts)
	if h.Endpoint(testharness.A2APluginName) == "" {
		t.Fatalf("the a2a plugin has no endpoint")
	}
	return h
}

// logTee forwards log lines to the test and keeps them for assertions.
type logTee struct {
	t     testing.TB
	mu    sync.Mutex
	lines []string
}

func (l *logTee) Logf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
	l.t.Log(s)
}

// matching returns the lines containing every one of subs.
func (l *logTee) matching(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range l.lines {
		for _, s := range subs {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

// client talks JSON-RPC to the plugin as one caller.
type client struct {
	url   string // the JSON-RPC endpoint
	token string // bearer token; "" sends none
}

func clientOf(h *testharness.Host, token string) client {
	return client{url: h.Endpoint(testharness.A2APluginName), token: token}
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// isV03 reports whether method is a 0.3 (slash-style) method name.
func isV03(method string) bool { return strings.Contains(method, "/") }

// call makes one JSON-RPC call. v1.0 methods carry "A2A-Version: 1.0",
// 0.3 methods none. Every response envelope is checked against the v1.0
// rules (errors carry [google.rpc.ErrorInfo]); transport failures fail the
// test.
func (c client) call(t testing.TB, method string, params any) (json.RawMessage, *rpcError) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if !isV03(method) {
		req.Header.Set("A2A-Version", "1.0")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: reading the response: %v", method, err)
	}
	check := func(b []byte) (json.RawMessage, error) { return a2atest.CheckJSONRPCResponse(b, "") }
	if _, v03 := a2av03.LookupMethod(method); v03 {
		check = a2atest.CheckJSONRPCResponseV03 // 0.3 errors carry data as an object
	}
	if _, err := check(out); err != nil {
		t.Errorf("%s: malformed JSON-RPC response: %v\n%s", method, err, out)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("%s: HTTP %d, not JSON: %s", method, resp.StatusCode, out)
	}
	if env.Error != nil {
		return nil, env.Error
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d with a result: %s", method, resp.StatusCode, out)
	}
	return env.Result, nil
}

// ok makes a call that must succeed; a non-empty definition validates the
// result against that definition of the v1.0 schema.
func (c client) ok(t testing.TB, method string, params any, definition string) json.RawMessage {
	t.Helper()
	res, e := c.call(t, method, params)
	if e != nil {
		t.Fatalf("%s %s: %v", method, compact(params), e)
	}
	if definition != "" {
		if err := a2atest.CheckJSON(definition, res); err != nil {
			t.Errorf("%s result: %v\n%s", method, err, res)
		}
	}
	return res
}

// fails makes a call that must fail with code.
func (c client) fails(t testing.TB, method string, params any, code int) *rpcError {
	t.Helper()
	res, e := c.call(t, method, params)
	if e == nil {
		t.Fatalf("%s %s succeeded (%s); want error %d", method, compact(params), res, code)
	}
	if e.Code != code {
		t.Fatalf("%s %s: error %d %q; want %d", method, compact(params), e.Code, e.Message, code)
	}
	return e
}

// msg describes a message to send.
type msg struct {
	text              string
	taskID, contextID string
	metadata          map[string]any
	returnImmediately bool
	// push is an inline configuration.taskPushNotificationConfig.
	push map[string]any
}

func (m msg) params() map[string]any {
	message := map[string]any{
		"messageId": a2a.NewID(),
		"role":      "ROLE_USER",
		"parts":     []any{map[string]any{"text": m.text}},
	}
	if m.taskID != "" {
		message["taskId"] = m.taskID
	}
	if m.contextID != "" {
		message["contextId"] = m.contextID
	}
	if m.metadata != nil {
		message["metadata"] = m.metadata
	}
	p := map[string]any{"message": message}
	cfg := map[string]any{}
	if m.returnImmediately {
		cfg["returnImmediately"] = true
	}
	if m.push != nil {
		cfg["taskPushNotificationConfig"] = m.push
	}
	if len(cfg) > 0 {
		p["configuration"] = cfg
	}
	return p
}

// send sends a message with SendMessage and returns the task it answers
// with.
func (c client) send(t testing.TB, m msg) a2a.Task {
	t.Helper()
	res := c.ok(t, "SendMessage", m.params(), "Send Message Response")
	var r struct {
		Task *a2a.Task `json:"task"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Task == nil {
		t.Fatalf("SendMessage %q: want a task, got %s (%v)", m.text, res, err)
	}
	return *r.Task
}

// stream sends a message with SendStreamingMessage and returns every
// event's StreamResponse, after the stream ended.
func (c client) stream(t testing.TB, m msg) []json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	resp := c.postStream(t, ctx, 7, m)
	defer resp.Body.Close()
	out, err := io.ReadAll(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatalf("SendStreamingMessage: reading the stream: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("SendStreamingMessage: Content-Type %q, body %s", ct, out)
	}
	return a2atest.ValidateSSE(t, out, "Stream Response")
}

// postStream sends m with SendStreamingMessage (JSON-RPC id id) and
// returns the answer, whose body is the stream.
func (c client) postStream(t testing.TB, ctx context.Context, id int, m msg) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "SendStreamingMessage", "params": m.params()})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("SendStreamingMessage: %v", err)
	}
	return resp
}

// getTask returns GetTask's raw result (validated as a Task).
func (c client) getTask(t testing.TB, id string) json.RawMessage {
	t.Helper()
	return c.ok(t, "GetTask", map[string]any{"id": id}, "Task")
}

// task decodes a Task.
func task(t testing.TB, raw json.RawMessage) a2a.Task {
	t.Helper()
	var tk a2a.Task
	if err := json.Unmarshal(raw, &tk); err != nil {
		t.Fatalf("not a task: %v\n%s", err, raw)
	}
	return tk
}

// listTasks returns every task ListTasks shows the caller, following the
// pages, with artifacts.
func (c client) listTasks(t testing.TB, extra map[string]any) (tasks []json.RawMessage, total int) {
	t.Helper()
	token := ""
	for range 100 {
		p := map[string]any{"pageSize": 100, "includeArtifacts": true}
		maps.Copy(p, extra)
		if token != "" {
			p["pageToken"] = token
		}
		res := c.ok(t, "ListTasks", p, "List Tasks Response")
		var page struct {
			Tasks         []json.RawMessage `json:"tasks"`
			NextPageToken *string           `json:"nextPageToken"`
			TotalSize     *int              `json:"totalSize"`
		}
		if err := json.Unmarshal(res, &page); err != nil || page.NextPageToken == nil || page.TotalSize == nil {
			t.Fatalf("ListTasks: malformed page (%v): %s", err, res)
		}
		tasks = append(tasks, page.Tasks...)
		total = *page.TotalSize
		if *page.NextPageToken == "" {
			return tasks, total
		}
		token = *page.NextPageToken
	}
	t.Fatal("ListTasks: more than 100 pages")
	return nil, 0
}

// waitState polls GetTask until the task is in state.
func (c client) waitState(t testing.TB, id string, state a2a.TaskState) a2a.Task {
	t.Helper()
	var last a2a.Task
	eventually(t, 20*time.Second, func() (bool, string) {
		last = task(t, c.getTask(t, id))
		return last.Status.State == state, fmt.Sprintf("task %s is %s, want %s", id, last.Status.State, state)
	})
	return last
}

// eventually polls cond until it holds or timeout passes, then fails the
// test with cond's last explanation.
func eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, why)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// compact renders v as one line of JSON for messages.
func compact(v any) string {
	switch x := v.(type) {
	case json.RawMessage:
		var b bytes.Buffer
		if json.Compact(&b, x) == nil {
			return b.String()
		}
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// textOf joins the text parts of parts.
func textOf(parts []a2a.Part) string {
	var s []string
	for _, p := range parts {
		if p.Text != nil {
			s = append(s, *p.Text)
		}
	}
	return strings.Join(s, "")
}

// statusText is the text of a task's status message.
func statusText(tk a2a.Task) string {
	if tk.Status.Message == nil {
		return ""
	}
	return textOf(tk.Status.Message.Parts)
}

// database opens the plugin's SQLite database read-only, to check what
// the plugin recorded (give-ups, the outbox) while it runs.
func database(t testing.TB, dataDir string) *sql.DB {
	t.Helper()
	path := filepath.Join(dataDir, testharness.A2APluginName, "a2a-plugin.db")
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// count runs a COUNT query.
func count(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// toolJSON returns the machine-readable last line of an a2a_call result.
func toolJSON(t testing.TB, content string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(content), "\n")
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		t.Fatalf("tool result has no JSON summary line: %q", content)
	}
	return v
}
