package tools

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// delegationLog plays cascade.Tracker for the tools.
type delegationLog struct {
	mu sync.Mutex
	ds []store.Delegation
}

func (l *delegationLog) Record(ctx context.Context, d store.Delegation) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ds = append(l.ds, d)
	return nil
}

func (l *delegationLog) all() []store.Delegation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]store.Delegation(nil), l.ds...)
}

// TestCallsForAnInboundTaskAreItsDelegations: a call made while the host
// answers an inbound task records the remote task it started, under that
// task and with the chain the message carried, for a2a_call and
// a2a_orchestrate alike; a call of the host's own user records nothing.
func TestCallsForAnInboundTaskAreItsDelegations(t *testing.T) {
	c := newCapture(t)
	log := &delegationLog{}
	ts, err := New(Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}}, Deps{Store: store.NewMemory(100), Delegations: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	turn := Origin{Task: "inbound-1", Caller: "peer:bob", Chain: security.Chain{ID: "chain-tree", Depth: 1}}
	mustOK(t, callToolFrom(context.Background(), turn, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "do it"}, nil))
	mustOK(t, callToolCtx(context.Background(), t, ts, ToolCall, map[string]any{"agent": "cap", "message": "my own"}, nil))
	// a2a_orchestrate delegates through the same path.
	mustOK(t, callToolFrom(context.Background(), turn, t, ts, ToolOrchestrate, map[string]any{"capability": "echo", "message": "all of you", "mode": "all", "timeout_s": 30}, nil))
	ds := log.all()
	if len(ds) != 2 {
		t.Fatalf("recorded %d delegations, want 2 (the call and the orchestration): %+v", len(ds), ds)
	}
	for _, d := range ds {
		if d.ParentTaskID != "inbound-1" || d.ChainID != "chain-tree" || d.Peer != "cap" || d.RemoteTaskID != "task-ctx-capture" || d.RemoteContextID != "ctx-capture" {
			t.Errorf("delegation = %+v", d)
		}
	}
}

// TestCancelDelegationTellsSuccessRefusalAndRetry: the cancel carries the
// chain; a task the peer canceled, and one it had finished (-32002, then
// GetTask), are no error; a task the peer cannot stop, or does not know,
// is a refusal (no retry); an unreachable or failing peer is worth
// another attempt.
func TestCancelDelegationTellsSuccessRefusalAndRetry(t *testing.T) {
	var mu sync.Mutex
	var chains []string
	peer := fakePeer(t, "p", "work", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		var p struct {
			ID       string         `json:"id"`
			Metadata map[string]any `json:"metadata"`
		}
		_ = a2a.Unmarshal(req.Params, &p)
		w.Header().Set("Content-Type", "application/json")
		state := map[string]string{"finished": "TASK_STATE_COMPLETED", "stuck": "TASK_STATE_WORKING"}[p.ID]
		switch {
		case req.Method == "CancelTask":
			mu.Lock()
			chains = append(chains, p.ID+"="+p.Metadata[security.MetaChainID].(string))
			mu.Unlock()
		}
		switch {
		case req.Method == "CancelTask" && (p.ID == "lingering" || p.ID == "stateless"):
			// Took the cancel, but the task is still running (or says nothing).
			st := map[string]any{"state": "TASK_STATE_WORKING"}
			if p.ID == "stateless" {
				st = map[string]any{}
			}
			b, _ := a2a.EncodeResult(req.ID, map[string]any{"id": p.ID, "contextId": "c", "status": st})
			_, _ = w.Write(b)
		case p.ID == "busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		case p.ID == "broken":
			_, _ = w.Write(a2a.EncodeError(req.ID, a2a.ErrInternal("database is locked")))
		case p.ID == "unknown":
			_, _ = w.Write(a2a.EncodeError(req.ID, a2a.ErrTaskNotFound(p.ID)))
		case req.Method == "CancelTask" && state == "TASK_STATE_WORKING":
			_, _ = w.Write(a2a.EncodeError(req.ID, a2a.ErrTaskRunNotCancelable(p.ID, a2a.TaskStateWorking)))
		case req.Method == "CancelTask" && state != "":
			_, _ = w.Write(a2a.EncodeError(req.ID, a2a.ErrTaskNotCancelable(p.ID, a2a.TaskState(state))))
		default:
			if state == "" {
				state = "TASK_STATE_CANCELED"
			}
			b, _ := a2a.EncodeResult(req.ID, map[string]any{"id": p.ID, "contextId": "c", "status": map[string]any{"state": state}})
			_, _ = w.Write(b)
		}
	})
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "p", URL: peer.URL}}}, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		task, want  string
		retry, fail bool
		why         string
	}{
		{task: "running", want: "TASK_STATE_CANCELED"},
		{task: "finished", want: "TASK_STATE_COMPLETED"},
		{task: "stuck", fail: true, why: "refused to cancel task stuck"},
		{task: "unknown", fail: true, why: "does not know task unknown"},
		{task: "busy", fail: true, retry: true, why: "unreachable"},
		{task: "broken", fail: true, retry: true, why: "database is locked"},
		{task: "lingering", fail: true, retry: true, why: "answered CancelTask with task lingering still TASK_STATE_WORKING"},
		{task: "stateless", fail: true, retry: true, why: "still no state"},
	} {
		state, retry, err := ts.CancelDelegation(ctx, "p", tc.task, "chain-tree")
		switch {
		case tc.fail && (err == nil || retry != tc.retry || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s: state %q retry %t err %v; want retry %t and an error saying %q", tc.task, state, retry, err, tc.retry, tc.why)
		case !tc.fail && (err != nil || string(state) != tc.want):
			t.Errorf("%s: state %q err %v; want %s", tc.task, state, err, tc.want)
		}
	}
	if _, retry, err := ts.CancelDelegation(ctx, "gone", "t", "chain-tree"); err == nil || retry || !strings.Contains(err.Error(), "can no longer be called") {
		t.Errorf("a peer no longer configured: retry %t, %v", retry, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range chains {
		if !strings.HasSuffix(c, "=chain-tree") {
			t.Errorf("a cancel carried the wrong chain: %s", c)
		}
	}
	if len(chains) < 4 {
		t.Errorf("only %d cancels reached the peer: %v", len(chains), chains)
	}
}
