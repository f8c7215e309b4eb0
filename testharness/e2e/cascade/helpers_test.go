// Package cascade_test tests that a cancel reaches the whole delegation
// tree, end to end: every agent is a testharness host launching the real
// cmd/a2a-plugin binary through host-sdk, wired as peers of each other,
// plus the official JS SDK server (testharness/interop/js) as one hop.
// The hosts' agents are Go behaviors that delegate with the plugin's own
// a2a_call tool, exactly as a model does, and then hold their turns until
// they are canceled.
package cascade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// patience bounds every wait for something to happen across the tree. It
// is a guard against hangs, never an assertion on how long it took.
const patience = 90 * time.Second

// config is a plugin's configuration section with extra settings. The rate
// limit is off: every request of this package comes from 127.0.0.1.
func config(extra map[string]any) map[string]any {
	c := map[string]any{"port": 0, "store": "memory", "rate_limit": 0}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// peers is an a2a_agents list: name, URL, name, URL, …
func peers(nameURL ...string) []map[string]any {
	var out []map[string]any
	for i := 0; i+1 < len(nameURL); i += 2 {
		out = append(out, map[string]any{"name": nameURL[i], "url": nameURL[i+1]})
	}
	return out
}

// start starts a harness host with the A2A plugin and behavior b.
func start(t *testing.T, name string, b testharness.Behavior, cfg map[string]any, mod func(*testharness.Options)) *testharness.Host {
	t.Helper()
	opts := testharness.Options{Agent: b, PluginConfig: cfg, Logger: prefixed(t, name)}
	if mod != nil {
		mod(&opts)
	}
	return testharness.Start(t, opts)
}

// prefixed logs to t with the host's name in front.
func prefixed(t *testing.T, name string) testharness.Logger {
	return testharness.LoggerFunc(func(format string, args ...any) {
		t.Logf("%s: %s", name, fmt.Sprintf(format, args...))
	})
}

// hold reports progress (so the task is WORKING) and waits until the turn
// is canceled.
func hold(ctx context.Context, turn *testharness.Turn) error {
	if err := turn.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, "working on it"); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// holder is an agent that holds every turn.
var holder = testharness.BehaviorFunc(hold)

// delegate calls a2a_call as the host's model does and returns the result.
func delegate(ctx context.Context, turn *testharness.Turn, args map[string]any) (*pb.ToolResult, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return turn.CallTool(ctx, &pb.CallToolRequest{Name: "a2a_call", ArgumentsJson: string(b)}, nil)
}

// summaryTaskID is the task id of an a2a_call result's summary line.
func summaryTaskID(r *pb.ToolResult) string {
	c := r.GetContent()
	i := strings.LastIndex(c, "\n{\"")
	if i < 0 {
		return ""
	}
	var s struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal([]byte(c[i+1:]), &s)
	return s.TaskID
}

// ---- speaking A2A to the agents as the test ----------------------------

// rpc makes one JSON-RPC 1.0 call to endpoint as a Local caller (loopback,
// no token) and decodes the result into out.
func rpc(ctx context.Context, endpoint, method string, params, out any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d, not JSON-RPC: %s", method, endpoint, resp.StatusCode, raw)
	}
	if env.Error != nil {
		return fmt.Errorf("%s %s: error %d: %s", method, endpoint, env.Error.Code, env.Error.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Result, out)
}

// task is what the tests read of a task.
type task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
	} `json:"status"`
	Metadata map[string]any `json:"metadata"`
}

// statusText is the text of the task's status message.
func (t *task) statusText() string {
	if t.Status.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range t.Status.Message.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// send sends text to endpoint without waiting (returnImmediately), in
// contextID when given, and returns the task.
func send(t *testing.T, endpoint, contextID, text string) *task {
	t.Helper()
	msg := map[string]any{"messageId": fmt.Sprintf("m-%d", seq.Add(1)), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	var res struct {
		Task *task `json:"task"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := rpc(ctx, endpoint, "SendMessage", map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": true}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Task == nil {
		t.Fatalf("SendMessage %q answered no task", text)
	}
	return res.Task
}

var seq atomic.Int64

// get reads a task.
func get(ctx context.Context, endpoint, id string) (*task, error) {
	var tk task
	if err := rpc(ctx, endpoint, "GetTask", map[string]any{"id": id}, &tk); err != nil {
		return nil, err
	}
	return &tk, nil
}

// cancel cancels a task as its client does.
func cancel(t *testing.T, endpoint, id string) *task {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	var tk task
	if err := rpc(ctx, endpoint, "CancelTask", map[string]any{"id": id}, &tk); err != nil {
		t.Fatal(err)
	}
	return &tk
}

// remote is a task on one agent of a tree.
type remote struct {
	name     string
	endpoint string
	id       string
}

// waitState waits until every task is in state (by its agent's GetTask).
func waitState(t *testing.T, state string, tasks ...remote) {
	t.Helper()
	for _, r := range tasks {
		waitFor(t, fmt.Sprintf("%s's task %s is %s", r.name, r.id, state), func(ctx context.Context) (bool, string) {
			tk, err := get(ctx, r.endpoint, r.id)
			if err != nil {
				return false, err.Error()
			}
			return tk.Status.State == state, tk.Status.State
		})
	}
}

// stillIn fails unless every task is in state now.
func stillIn(t *testing.T, state string, tasks ...remote) {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	for _, r := range tasks {
		tk, err := get(ctx, r.endpoint, r.id)
		if err != nil {
			t.Fatalf("%s's task %s: %v", r.name, r.id, err)
		}
		if tk.Status.State != state {
			t.Errorf("%s's task %s is %s, want it still %s (%q)", r.name, r.id, tk.Status.State, state, tk.statusText())
		}
	}
}

// waitFor polls cond until it holds; last says what it saw, for the
// failure message.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (ok bool, last string)) {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	last := ""
	for {
		ok, seen := cond(ctx)
		if ok {
			return
		}
		last = seen
		select {
		case <-ctx.Done():
			t.Fatalf("after %s, still not so: %s (last seen: %s)", patience, what, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// taskOf waits for the turn h's agent got whose text contains s and
// returns its task on h.
func taskOf(t *testing.T, name string, h *testharness.Host, s string) remote {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	c, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindHandleMessage && strings.Contains(testharness.PartsText(c.HandleMessage()), s)
	})
	if err != nil {
		t.Fatalf("%s never got a message with %q: %v", name, s, err)
	}
	return remote{name: name, endpoint: h.Endpoint(testharness.A2APluginName), id: c.TaskID}
}

// cascadeOf is the cancel-cascade summary in a task's metadata (nil when
// there is none).
func cascadeOf(tk *task) map[string]any {
	m, _ := tk.Metadata["a2a-plugin/cancel-cascade"].(map[string]any)
	return m
}

// ---- a peer that can be taken down and brought back ---------------------

// switchable is a reverse proxy in front of an agent that answers HTTP
// 503 while it is down, as a peer behind a load balancer does when it is
// gone; the agent is configured with the proxy's URL as its public URL.
type switchable struct {
	srv  *httptest.Server
	down atomic.Bool

	mu    sync.Mutex
	proxy *httputil.ReverseProxy
}

func newSwitchable(t *testing.T) *switchable {
	s := &switchable{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.proxy
		s.mu.Unlock()
		if s.down.Load() || p == nil {
			http.Error(w, "the agent is down", http.StatusServiceUnavailable)
			return
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// to points the proxy at the agent's endpoint.
func (s *switchable) to(t *testing.T, endpoint string) {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	s.mu.Lock()
	s.proxy = httputil.NewSingleHostReverseProxy(u)
	s.mu.Unlock()
}
