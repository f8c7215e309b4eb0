package tools

import (
	"context"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// TestDelegationBoundsNeedNoMetadata: while the host answers an inbound
// task (Origin.Task), its outbound calls are bounded per task and per minute
// for the task's caller, whatever chain metadata they carry (a peer that
// drops it makes every hop look like a first one); the refusals name the
// settings, and nothing is sent past them. Calls the host's own user asks
// for are not counted.
func TestDelegationBoundsNeedNoMetadata(t *testing.T) {
	c := newCapture(t)
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}, MaxCallsPerTask: 3, MaxCallsPerMinute: 4}, nil)
	call := func(org Origin) (string, bool) {
		r := callToolFrom(context.Background(), org, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "go on"}, nil)
		return r.Content, r.IsError
	}
	task1 := Origin{Task: "task-1", Caller: "peer:bob"}
	for i := range 3 {
		if out, isErr := call(task1); isErr {
			t.Fatalf("call %d of task-1: %s", i+1, out)
		}
	}
	mustErr(t, callToolFrom(context.Background(), task1, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "one more"}, nil),
		"refused", "max_calls_per_task", "A2A_MAX_CALLS_PER_TASK")
	// A ring through an agent that drops the chain: each hop a new task of
	// the same caller.
	if out, isErr := call(Origin{Task: "task-2", Caller: "peer:bob"}); isErr {
		t.Fatalf("task-2: %s", out)
	}
	mustErr(t, callToolFrom(context.Background(), Origin{Task: "task-3", Caller: "peer:bob"}, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "again"}, nil),
		"refused", "max_calls_per_minute", "A2A_MAX_CALLS_PER_MINUTE", "peer:bob")
	// The host's own user is not bounded.
	for i := range 6 {
		if out, isErr := call(Origin{}); isErr {
			t.Fatalf("the host's own call %d: %s", i+1, out)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.text) != 3+1+6 {
		t.Errorf("the peer got %d messages, want 10 (nothing past the bounds)", len(c.text))
	}
}
