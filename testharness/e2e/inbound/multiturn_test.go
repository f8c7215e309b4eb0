package inbound_test

import (
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestMultiTurnConversations continues interrupted tasks and starts new
// tasks in existing conversations, and checks the id rules: the host sees
// one conversation per context, continuations are flagged, and messages to
// unknown, finished or mismatched tasks are refused with exact codes.
func TestMultiTurnConversations(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	c := newClient(h.url)

	// continueTask answers an interrupted task and checks both turns
	// reached the same host conversation, the second flagged continuation.
	continueTask := func(t *testing.T, asked *task, answer map[string]any, wantAnswer string) *task {
		t.Helper()
		ctx := within(t)
		// The answer goes out at once, as a program would send it — maybe
		// before the asking turn's ProcessingComplete reached the plugin
		// (TestLateCompletionOfTheAskingTurnDoesNotEndItsContinuation makes
		// that order certain).
		got := c.sendTask(t, ctx, answer)
		if got.ID != asked.ID || got.ContextID != asked.ContextID {
			t.Fatalf("continuation answered task %s/%s, want %s/%s", got.ID, got.ContextID, asked.ID, asked.ContextID)
		}
		if got.Status.State != stCompleted || got.answer() != wantAnswer {
			t.Fatalf("continuation = %s %q, want COMPLETED %q", got.Status.State, got.answer(), wantAnswer)
		}
		turns := h.Recorder().Filter(func(c testharness.Call) bool {
			return c.Kind == testharness.KindHandleMessage && c.TaskID == asked.ID
		})
		if len(turns) != 2 {
			t.Fatalf("host got %d turns for the task, want 2", len(turns))
		}
		first, second := turns[0].HandleMessage(), turns[1].HandleMessage()
		if first.GetChatId() != asked.ContextID || second.GetChatId() != asked.ContextID {
			t.Errorf("turns in conversations %s and %s, want %s", first.GetChatId(), second.GetChatId(), asked.ContextID)
		}
		if first.GetContinuation() || !second.GetContinuation() {
			t.Errorf("continuation flags = %t, %t; want false, true", first.GetContinuation(), second.GetContinuation())
		}
		// The history tells the exchange in order — the request, the
		// question, the answer to it — and the final answer is the
		// artifact, not repeated there.
		full := c.getTask(t, ctx, asked.ID)
		var roles []string
		for _, m := range full.History {
			roles = append(roles, m.Role)
		}
		if want := []string{"ROLE_USER", "ROLE_AGENT", "ROLE_USER"}; !equal(roles, want) || full.answer() != wantAnswer {
			t.Errorf("history roles = %v, want %v", roles, want)
		}
		return got
	}

	t.Run("answer by taskId alone", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		asked := c.sendTask(t, ctx, msg("ask for a colour"))
		if asked.Status.State != stInputRequired || asked.Status.Message.text() != "Which colour?" {
			t.Fatalf("ask = %s %q", asked.Status.State, asked.Status.Message.text())
		}
		continueTask(t, asked, msg("blue", "taskId", asked.ID), "got: blue")
	})
	t.Run("answer by taskId and contextId", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		asked := c.sendTask(t, ctx, msg("ask again"))
		continueTask(t, asked, msg("green", "taskId", asked.ID, "contextId", asked.ContextID), "got: green")
	})
	t.Run("answer a question asked by a final reply", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		asked := c.sendTask(t, ctx, msg("finalask for a size"))
		if asked.Status.State != stInputRequired || asked.Status.Message.text() != "Which size?" {
			t.Fatalf("[INPUT_REQUIRED] reply = %s %q", asked.Status.State, asked.Status.Message.text())
		}
		continueTask(t, asked, msg("large", "taskId", asked.ID), "got: large")
	})
	t.Run("answer on a stream", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		asked := c.sendTask(t, ctx, msg("ask on a stream"))
		s, r := c.openStream(t, ctx, "SendStreamingMessage", msg("red", "taskId", asked.ID))
		if r != nil {
			t.Fatalf("refused: %s", r.Body)
		}
		evs := s.all()
		if len(evs) < 2 || evs[0].Task == nil || evs[0].Task.ID != asked.ID || evs[len(evs)-1].label() != "status:"+stCompleted {
			t.Fatalf("continuation stream = %v", labels(evs))
		}
		checkStreamConsistency(t, evs)
		if ans := streamAnswer(evs); ans != "got: red" {
			t.Errorf("answer = %q", ans)
		}
	})
	t.Run("contextId alone starts a new task in the conversation", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		first := c.sendTask(t, ctx, msg("hello conversation"))
		second := c.sendTask(t, ctx, msg("whoami in the same conversation", "contextId", first.ContextID))
		if second.ID == first.ID || second.ContextID != first.ContextID || second.Status.State != stCompleted {
			t.Fatalf("second task %s in %s (%s), first %s in %s", second.ID, second.ContextID, second.Status.State, first.ID, first.ContextID)
		}
		hm := h.handleMessage(t, ctx, second.ID).HandleMessage()
		if hm.GetChatId() != first.ContextID || hm.GetContinuation() {
			t.Errorf("host conversation %s continuation %t", hm.GetChatId(), hm.GetContinuation())
		}
		// The host's session sees it as the second message of the chat.
		if want := "local:127.0.0.1 in " + first.ContextID + " for " + second.ID + " message " + hm.GetMessageId() + " turn 2"; second.answer() != want {
			t.Errorf("answer = %q, want %q", second.answer(), want)
		}
		var l listResult
		c.call(t, ctx, "ListTasks", map[string]any{"contextId": first.ContextID}).ok(t, &l)
		if len(l.Tasks) != 2 {
			t.Errorf("the conversation lists %d tasks, want 2", len(l.Tasks))
		}
	})

	t.Run("refusals", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		done := c.sendTask(t, ctx, msg("finished business"))
		asked := c.sendTask(t, ctx, msg("ask for refusals"))
		h.turnEnded(t, ctx, asked.ID)
		working := c.sendTask(t, ctx, nonBlocking(msg("slow refusals")))
		h.handleMessage(t, ctx, working.ID)
		cases := []struct {
			name   string
			params map[string]any
			code   int
			reason string
		}{
			{"unknown task", msg("hi", "taskId", "no-such-task"), -32001, "TASK_NOT_FOUND"},
			{"completed task", msg("more", "taskId", done.ID), -32004, "UNSUPPORTED_OPERATION"},
			{"task still working", msg("more", "taskId", working.ID), -32004, "UNSUPPORTED_OPERATION"},
			{"context of another task", msg("blue", "taskId", asked.ID, "contextId", done.ContextID), -32602, "INVALID_PARAMS"},
		}
		for _, tc := range cases {
			e := c.call(t, ctx, "SendMessage", tc.params).wantError(t, tc.code, tc.reason)
			if tc.code == -32004 && !strings.Contains(e.Message, "task") {
				t.Errorf("%s: message %q does not explain", tc.name, e.Message)
			}
		}
		// Nothing reached the host, and the interrupted task still waits.
		if got := c.getTask(t, ctx, asked.ID); got.Status.State != stInputRequired {
			t.Errorf("the asking task is %s after a refused answer", got.Status.State)
		}
		if n := len(h.Recorder().Filter(func(c testharness.Call) bool {
			return c.Kind == testharness.KindHandleMessage && (c.TaskID == done.ID || c.TaskID == asked.ID)
		})); n != 2 {
			t.Errorf("host got %d turns for the refused tasks, want only their first 2", n)
		}
		h.agent.release(working.ID)
	})
}

// TestLateCompletionOfTheAskingTurnDoesNotEndItsContinuation answers a
// question at once, before the host's ProcessingComplete of the turn that
// asked it arrives. That late completion belongs to the first turn; the
// continuation must still end with the host's real answer.
func TestLateCompletionOfTheAskingTurnDoesNotEndItsContinuation(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)
	asked := c.sendTask(t, ctx, msg("ask-late"))
	if asked.Status.State != stInputRequired {
		t.Fatalf("ask = %s", asked.Status.State)
	}
	got := c.sendTask(t, ctx, msg("blue", "taskId", asked.ID))
	if got.Status.State != stCompleted || got.answer() != "got: blue" {
		t.Errorf("continuation = %s %q (status %q), want COMPLETED with the host's answer %q",
			got.Status.State, got.answer(), got.Status.Message.text(), "got: blue")
	}
}
