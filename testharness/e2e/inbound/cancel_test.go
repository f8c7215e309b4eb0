package inbound_test

import (
	"context"
	"strings"
	"testing"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestCancelReachesTheHost cancels tasks in every cancelable situation and
// checks that the task is CANCELED at once, that the host is told
// (CancelTurn) and really stops the turn, and that a finished task is
// -32002.
func TestCancelReachesTheHost(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	c := newClient(h.url)

	// cancel takes the subtest's context: the subtests are parallel, so
	// they may start long after this function returned (they wait for a
	// free slot of -parallel), when a context made here may have expired.
	cancel := func(t *testing.T, ctx context.Context, id string) *task {
		t.Helper()
		var got task
		c.call(t, ctx, "CancelTask", map[string]any{"id": id, "metadata": map[string]any{"why": "test"}}).ok(t, &got)
		if got.ID != id || got.Status.State != stCanceled || got.Status.Message == nil || got.Status.Message.Role != "ROLE_AGENT" {
			t.Fatalf("CancelTask = %s %+v", got.Status.State, got.Status.Message)
		}
		return &got
	}

	t.Run("a running turn stops on the host", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		tk := c.sendTask(t, ctx, nonBlocking(msg("hang until canceled")))
		hm := h.handleMessage(t, ctx, tk.ID)
		cancel(t, ctx, tk.ID)
		ct := h.cancelTurn(t, ctx, tk.ID)
		if r := ct.CancelTurn(); r.GetChatId() != tk.ContextID || r.GetPlatform() != "a2a" || r.GetReason() == "" {
			t.Errorf("CancelTurn = %v", r)
		}
		if resp, ok := ct.Response.(*pb.CancelTurnResponse); !ok || !resp.GetCancelled() {
			t.Errorf("the host did not stop a running turn: %v", ct.Response)
		}
		// The scripted turn stopped: it ends CANCELLED.
		if pc := h.completion(t, ctx, hm.TurnID); pc.GetOutcome() != pb.Outcome_OUTCOME_CANCELLED {
			t.Errorf("the canceled turn ended %s", pc.GetOutcome())
		}
		if got := c.getTask(t, ctx, tk.ID); got.Status.State != stCanceled {
			t.Errorf("after the host's completion the task is %s", got.Status.State)
		}
		c.call(t, ctx, "CancelTask", map[string]any{"id": tk.ID}).wantError(t, -32002, "TASK_NOT_CANCELABLE")
	})

	t.Run("a streamed task's stream ends canceled", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		s, r := c.openStream(t, ctx, "SendStreamingMessage", msg("slowmany streamed then canceled"))
		if r != nil {
			t.Fatalf("refused: %s", r.Body)
		}
		first, err := s.next()
		if err != nil || first.Task == nil {
			t.Fatalf("first event %s %v", first.label(), err)
		}
		h.handleMessage(t, ctx, first.Task.ID)
		cancel(t, ctx, first.Task.ID)
		evs := s.all()
		if len(evs) == 0 || evs[len(evs)-1].label() != "status:"+stCanceled {
			t.Errorf("stream after cancel = %v", labels(evs))
		}
		h.cancelTurn(t, ctx, first.Task.ID)
	})

	t.Run("an input-required task", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		asked := c.sendTask(t, ctx, msg("ask then cancel"))
		if asked.Status.State != stInputRequired {
			t.Fatalf("ask = %s", asked.Status.State)
		}
		h.turnEnded(t, ctx, asked.ID)
		cancel(t, ctx, asked.ID)
		// The host is told, so it can drop the open question.
		ct := h.cancelTurn(t, ctx, asked.ID)
		if ct.CancelTurn().GetChatId() != asked.ContextID {
			t.Errorf("CancelTurn = %v", ct.CancelTurn())
		}
		c.call(t, ctx, "SendMessage", msg("too late", "taskId", asked.ID)).wantError(t, -32004, "UNSUPPORTED_OPERATION")
	})

	t.Run("a queued turn never reaches the host", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		key := newID("queue")
		cid := newID("ctx-queue")
		first := c.sendTask(t, ctx, nonBlocking(msg("wait-for "+key, "contextId", cid)))
		h.handleMessage(t, ctx, first.ID)
		queued := c.sendTask(t, ctx, nonBlocking(msg("queued then canceled", "contextId", cid)))
		after := c.sendTask(t, ctx, nonBlocking(msg("after the canceled one", "contextId", cid)))
		cancel(t, ctx, queued.ID)
		h.agent.release(key)
		c.waitState(t, ctx, first.ID, stCompleted)
		if got := c.waitState(t, ctx, after.ID, stCompleted); got.answer() != "echo: after the canceled one" {
			t.Errorf("the next task answered %q", got.answer())
		}
		if n := len(h.Recorder().Filter(func(c testharness.Call) bool {
			return c.Kind == testharness.KindHandleMessage && c.TaskID == queued.ID
		})); n != 0 {
			t.Errorf("the canceled queued message reached the host %d times", n)
		}
		if got := c.getTask(t, ctx, queued.ID); got.Status.State != stCanceled {
			t.Errorf("the queued task is %s", got.Status.State)
		}
	})

	t.Run("finished tasks are not cancelable", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		for _, text := range []string{"hello cancel", "fail before cancel", "reject before cancel"} {
			tk := c.sendTask(t, ctx, msg(text))
			e := c.call(t, ctx, "CancelTask", map[string]any{"id": tk.ID}).wantError(t, -32002, "TASK_NOT_CANCELABLE")
			md, _ := e.info()["metadata"].(map[string]any)
			if md["taskId"] != tk.ID || md["state"] != tk.Status.State || !strings.Contains(e.Message, tk.ID) {
				t.Errorf("%s: -32002 metadata %v message %q", tk.Status.State, md, e.Message)
			}
		}
		c.call(t, ctx, "CancelTask", map[string]any{"id": "no-such-task"}).wantError(t, -32001, "TASK_NOT_FOUND")
	})
}
