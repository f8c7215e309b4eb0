// Package tracing_test checks, through the real plugin binary, that a
// chain of agents is one W3C trace: a client's traceparent reaches the
// host of the agent it calls, the agent's delegation to a second agent
// continues that trace (same trace id, a new span id), and so do the
// webhook notifications of the client's task.
package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// deadline bounds every wait; it guards against hangs and says nothing
// about how fast anything should be.
const deadline = 60 * time.Second

// The client's trace: trace id 4bf9…4736, its own span 00f0…02b7.
const (
	clientTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	clientTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID      = "00f067aa0ba902b7"
)

// alice delegates every message to bob with a2a_call and answers with
// what bob said.
const aliceScenario = `
name: alice
default:
  actions:
    - call_tool:
        name: a2a_call
        args: {agent: bob, message: "{{parts_text}}"}
        reply: "bob says: {{result}}"
`

// traceparent splits a W3C traceparent into its trace and span ids; ok is
// false unless it is a well-formed version 00 value.
func traceparent(tp string) (traceID, spanID string, ok bool) {
	f := strings.Split(tp, "-")
	if len(f) != 4 || f[0] != "00" || len(f[1]) != 32 || len(f[2]) != 16 || len(f[3]) != 2 {
		return "", "", false
	}
	return f[1], f[2], true
}

// hookRecorder is a webhook that records the traceparent of every POST.
type hookRecorder struct {
	*httptest.Server
	mu    sync.Mutex
	posts []post
}

// post is one notification: its traceparent and what it said (a state, or
// "artifact").
type post struct{ traceparent, event string }

func newHookRecorder(t *testing.T) *hookRecorder {
	h := &hookRecorder{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev struct {
			StatusUpdate *struct {
				Status struct{ State string } `json:"status"`
			} `json:"statusUpdate"`
		}
		_ = json.Unmarshal(b, &ev)
		p := post{traceparent: r.Header.Get("traceparent"), event: "artifact"}
		if ev.StatusUpdate != nil {
			p.event = ev.StatusUpdate.Status.State
		}
		h.mu.Lock()
		h.posts = append(h.posts, p)
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.Close)
	return h
}

// completed reports whether the completion of the task was delivered.
func (h *hookRecorder) completed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.posts {
		if p.event == "TASK_STATE_COMPLETED" {
			return true
		}
	}
	return false
}

func TestAChainOfAgentsIsOneTrace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	base := map[string]any{"port": 0, "store": "memory", "rate_limit": 0}
	with := func(extra map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range base {
			c[k] = v
		}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}

	bob := testharness.Start(t, testharness.Options{PluginConfig: with(map[string]any{"agent_name": "Bob"})})
	sc, err := testharness.ParseScenario([]byte(aliceScenario), "alice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	alice := testharness.Start(t, testharness.Options{Agent: sc, PluginConfig: with(map[string]any{
		"agent_name":          "Alice",
		"a2a_agents":          []map[string]any{{"name": "bob", "url": bob.Endpoint(testharness.A2APluginName)}},
		"allow_loopback_urls": true,
	})})
	hook := newHookRecorder(t)

	// The client: a blocking SendMessage to Alice with its trace and a
	// webhook for the task.
	params := map[string]any{
		"message": map[string]any{"messageId": "m-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "what is the weather in Lyon?"}}},
		"configuration": map[string]any{"blocking": true,
			"taskPushNotificationConfig": map[string]any{"url": hook.URL + "/hook", "token": "client-token"}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, alice.Endpoint(testharness.A2APluginName), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("traceparent", clientTraceparent)
	req.Header.Set("tracestate", "client=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(answer), "bob says") || !strings.Contains(string(answer), "TASK_STATE_COMPLETED") {
		t.Fatalf("Alice answered %s, want a completed task with Bob's answer", answer)
	}

	// Alice's host got the client's trace with the message.
	hm, err := alice.Recorder().WaitFor(ctx, func(c testharness.Call) bool { return c.HandleMessage() != nil })
	if err != nil {
		t.Fatal(err)
	}
	if tr := hm.HandleMessage().GetTrace(); tr.GetTraceparent() != clientTraceparent || tr.GetTracestate() != "client=1" {
		t.Errorf("Alice's host got trace %v, want the client's %s", tr, clientTraceparent)
	}
	// Alice's agent called a2a_call without a trace of its own: the plugin
	// continued the turn's.
	call, err := alice.Recorder().WaitFor(ctx, func(c testharness.Call) bool { return c.ToolCall() != nil })
	if err != nil {
		t.Fatal(err)
	}
	if call.ToolCall().GetTrace() != nil || call.ToolCall().GetPlatform() != "a2a" {
		t.Fatalf("the scenario's tool call = %v; this test needs one made during the A2A turn without a trace", call.ToolCall())
	}

	// Bob's host got the same trace id, with a new span: Alice's call.
	bhm, err := bob.Recorder().WaitFor(ctx, func(c testharness.Call) bool { return c.HandleMessage() != nil })
	if err != nil {
		t.Fatal(err)
	}
	got := bhm.HandleMessage().GetTrace().GetTraceparent()
	traceID, spanID, ok := traceparent(got)
	if !ok || traceID != clientTraceID {
		t.Errorf("Bob's host got traceparent %q, want trace id %s", got, clientTraceID)
	}
	if spanID == clientSpanID {
		t.Errorf("Alice's call to Bob reused the client's span id %s; want a new span", clientSpanID)
	}
	if ts := bhm.HandleMessage().GetTrace().GetTracestate(); ts != "client=1" {
		t.Errorf("Bob's host got tracestate %q, want the client's", ts)
	}

	// The webhook notifications of the client's task are in the trace too.
	for end := time.Now().Add(deadline); !hook.completed(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the webhook never got the task's completion")
		}
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	for i, p := range hook.posts {
		traceID, spanID, ok := traceparent(p.traceparent)
		if !ok || traceID != clientTraceID || spanID == clientSpanID {
			t.Errorf("webhook POST %d (%s) carried traceparent %q, want a new span in trace %s", i, p.event, p.traceparent, clientTraceID)
		}
	}
}
