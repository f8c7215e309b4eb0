package inbound_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestBlockingWaitsAndReturnImmediatelyDoesNot holds a turn on the host:
// a blocking SendMessage does not answer until the turn settles, a
// non-blocking one (returnImmediately) answers at once with the task still
// running, which then completes.
func TestBlockingWaitsAndReturnImmediatelyDoesNot(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	c := newClient(h.url)

	t.Run("returnImmediately", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		tk := c.sendTask(t, ctx, nonBlocking(msg("slow non-blocking")))
		if tk.Status.State != stSubmitted && tk.Status.State != stWorking {
			t.Fatalf("non-blocking send answered %s, want a running task", tk.Status.State)
		}
		// The answer came while the turn is still held on the host.
		if got := c.getTask(t, ctx, tk.ID); got.Status.State != stWorking && got.Status.State != stSubmitted {
			t.Fatalf("task is %s before the release", got.Status.State)
		}
		h.agent.release(tk.ID)
		if got := c.waitState(t, ctx, tk.ID, stCompleted); got.answer() != "slow done" {
			t.Errorf("answer = %q", got.answer())
		}
	})
	t.Run("blocking", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		key := newID("blocking")
		answered := make(chan *task, 1)
		go func() {
			var res sendResult
			r := c.call(t, ctx, "SendMessage", msg("wait-for "+key))
			if r.Err == nil {
				_ = json.Unmarshal(r.Result, &res)
			}
			answered <- res.Task
		}()
		hm := h.handleMessageWith(t, ctx, "wait-for "+key)
		// The turn has reported progress and is held: the blocking send
		// must still be waiting.
		if _, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
			return c.Kind == testharness.KindSend && c.TurnID == hm.TurnID
		}); err != nil {
			t.Fatal(err)
		}
		// Until the blocking send answers, nobody knows the task's id, so
		// it is not revealed yet (package tasks: lazy reveal).
		c.call(t, ctx, "GetTask", map[string]any{"id": hm.TaskID}).wantError(t, -32001, "TASK_NOT_FOUND")
		select {
		case tk := <-answered:
			t.Fatalf("the blocking send answered before the turn settled: %+v", tk)
		default:
		}
		h.agent.release(key)
		tk := <-answered
		if tk == nil || tk.Status.State != stCompleted || tk.answer() != "released "+key {
			t.Fatalf("blocking send = %+v", tk)
		}
	})
}

// TestRequestTimeoutReturnsTheTaskWhichLaterCompletes sets a short
// request_timeout: a blocking send whose turn is held returns the task as
// it is (not terminal), and the task completes later, when the host
// answers — how long an RPC waits is not how long a task may live.
func TestRequestTimeoutReturnsTheTaskWhichLaterCompletes(t *testing.T) {
	t.Parallel()
	h := startHost(t, map[string]any{"request_timeout": "1s"}, nil)
	ctx := within(t)
	c := newClient(h.url)
	tk := c.sendTask(t, ctx, msg("slow past the request timeout"))
	if tk.Status.State != stWorking {
		t.Fatalf("blocking send after request_timeout = %s, want the running task", tk.Status.State)
	}
	s, r := c.openStream(t, ctx, "SubscribeToTask", map[string]any{"id": tk.ID})
	if r != nil {
		t.Fatalf("refused: %s", r.Body)
	}
	if first, err := s.next(); err != nil || first.Task == nil || first.Task.Status.State != stWorking {
		t.Fatalf("snapshot %s %v", first.label(), err)
	}
	h.agent.release(tk.ID)
	evs := s.all()
	if len(evs) == 0 || evs[len(evs)-1].label() != "status:"+stCompleted || streamAnswer(evs) != "slow done" {
		t.Errorf("the task went on to %v", labels(evs))
	}
}

// TestWatchdogFailsSilentTasksOnly sets a short task_silence_timeout: a
// turn whose host sends nothing (and never completes, or hangs) is failed
// by the watchdog with a reason naming the setting, and the host's turn is
// canceled; a turn that keeps reporting progress for longer than the
// timeout survives and completes.
func TestWatchdogFailsSilentTasksOnly(t *testing.T) {
	t.Parallel()
	const silence = 2 * time.Second
	h := startHost(t, map[string]any{"task_silence_timeout": silence.String()}, nil)
	c := newClient(h.url)

	for _, text := range []string{"silent host", "hang forever"} {
		t.Run(text, func(t *testing.T) {
			t.Parallel()
			ctx := within(t)
			tk := c.sendTask(t, ctx, nonBlocking(msg(text)))
			s, r := c.openStream(t, ctx, "SubscribeToTask", map[string]any{"id": tk.ID})
			if r != nil {
				t.Fatalf("refused: %s", r.Body)
			}
			evs := s.all()
			last := evs[len(evs)-1]
			if last.StatusUpdate == nil || last.StatusUpdate.Status.State != stFailed {
				t.Fatalf("silent task ended %v", labels(evs))
			}
			reason := last.StatusUpdate.Status.Message.text()
			if !strings.Contains(reason, "silent") || !strings.Contains(reason, "A2A_TASK_SILENCE_TIMEOUT") {
				t.Errorf("watchdog reason %q", reason)
			}
			// The host is told to stop the turn.
			ct := h.cancelTurn(t, ctx, tk.ID)
			if text == "hang forever" {
				hm := h.handleMessage(t, ctx, tk.ID)
				if resp, _ := ct.Response.(*pb.CancelTurnResponse); !resp.GetCancelled() {
					t.Errorf("the hanging turn was not stopped: %v", ct.Response)
				}
				if pc := h.completion(t, ctx, hm.TurnID); pc.GetOutcome() != pb.Outcome_OUTCOME_CANCELLED {
					t.Errorf("the hanging turn ended %s", pc.GetOutcome())
				}
			}
		})
	}
	t.Run("progress keeps a long task alive", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		// 40 progress messages 100 ms apart: 4 s of work, twice the
		// silence timeout, never silent for more than a tick.
		tk := c.sendTask(t, ctx, nonBlocking(msg("beat 40 100")))
		got := c.waitState(t, ctx, tk.ID, stCompleted)
		if got.answer() != "beat done" {
			t.Errorf("answer = %q", got.answer())
		}
		hm := h.handleMessage(t, ctx, tk.ID)
		final, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
			return c.Kind == testharness.KindSend && c.TurnID == hm.TurnID && c.Send().GetKind() == pb.SendKind_SEND_KIND_FINAL
		})
		if err != nil {
			t.Fatal(err)
		}
		if lived := final.Time.Sub(hm.Time); lived <= silence {
			t.Errorf("the task lived %v, not longer than the silence timeout %v: the test proves nothing", lived, silence)
		}
		for _, ct := range h.Recorder().CallsOf(testharness.KindCancelTurn) {
			if ct.TaskID == tk.ID {
				t.Errorf("the watchdog canceled a task that kept reporting progress")
			}
		}
	})
}
