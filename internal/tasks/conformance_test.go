package tasks

import (
	"context"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The tests in this file pin the wire shape of answers and the life of
// streams at interrupted states (issue 15 items 2, 5 and 6, issue 16's
// "an answer appears once").

// TestFinalAnswerIsOneArtifactNotAlsoAStatusMessage: a final answer goes
// out once, as the task's answer artifact. The COMPLETED status carries no
// copy of it and history does not repeat it, so clients that show status
// messages, artifacts and history together show the answer once.
func TestFinalAnswerIsOneArtifactNotAlsoAStatusMessage(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "hello", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("hi there")}))
	r := wait(t, ch)
	must(t, r.err)
	task := r.resp.Task
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s", task.Status.State)
	}
	if task.Status.Message != nil {
		t.Errorf("the COMPLETED status repeats the answer: %+v", task.Status.Message)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "hi there" || task.Artifacts[0].Name != "answer" {
		t.Errorf("artifacts = %+v", task.Artifacts)
	}
	for _, m := range task.History {
		if m.Role == a2a.RoleAgent {
			t.Errorf("history repeats the answer: %+v", m)
		}
	}
	// The stream shows it once too: one artifact event, a bare COMPLETED.
	sub, err := e.m.Stream(ctx, sendParams(alice, "again", nil))
	must(t, err)
	turn = e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("once")}))
	evs := collect(t, sub)
	last := evs[len(evs)-1].StatusUpdate
	if last == nil || last.Status.State != a2a.TaskStateCompleted || last.Status.Message != nil {
		t.Errorf("last event = %+v", evs[len(evs)-1])
	}
}

// TestProgressNeverBecomesTheFinalStatusMessage: a turn that reports
// progress and then ends successfully without a reply completes with a
// message of its own, never with the progress message's id or text.
func TestProgressNeverBecomesTheFinalStatusMessage(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "work quietly", nil))
	turn := e.exec.next(t)
	progress := agentMsg("still thinking")
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: progress}))
	must(t, e.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""))
	r := wait(t, ch)
	must(t, r.err)
	st := r.resp.Task.Status
	if st.State != a2a.TaskStateCompleted || st.Message == nil {
		t.Fatalf("status = %+v", st)
	}
	if st.Message.MessageID == progress.MessageID || st.Message.Text() == "still thinking" {
		t.Errorf("the progress message became the final status: %+v", st.Message)
	}
	for _, m := range r.resp.Task.History {
		if m.MessageID == progress.MessageID {
			t.Errorf("the progress message went into history: %+v", m)
		}
	}
}

// TestStreamSendsTheTaskAtOnce: the first event of a stream (the Task) is
// there as soon as Stream returns, before the agent said anything, and
// the task is already visible to GetTask. A direct reply that comes later
// completes that task (its text as the answer artifact).
func TestStreamSendsTheTaskAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "hi", nil))
	must(t, err)
	select {
	case ev := <-sub.Events():
		if ev.Response.Task == nil || ev.Response.Task.Status.State != a2a.TaskStateSubmitted {
			t.Fatalf("first event = %+v", ev.Response)
		}
		if _, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: ev.Response.Task.ID}); err != nil {
			t.Fatalf("the streamed task is not visible yet: %v", err)
		}
	default:
		t.Fatal("Stream returned before the first event (the Task) was queued")
	}
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateDirectReply, Message: agentMsg("hello")}))
	if got := kinds(collect(t, sub)); got != "status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) " {
		t.Fatalf("events after the task = %s", got)
	}
	task, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: turn.TaskID})
	must(t, err)
	if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "hello" {
		t.Errorf("artifacts = %+v", task.Artifacts)
	}
}

// TestSubscribeToAnInterruptedTaskFollowsItToTheEnd: SubscribeToTask on a
// task waiting for input (or for credentials) stays open while the client
// answers from elsewhere, and ends at the terminal state.
func TestSubscribeToAnInterruptedTaskFollowsItToTheEnd(t *testing.T) {
	for _, kind := range []UpdateKind{UpdateInputRequired, UpdateAuthRequired} {
		state := a2a.TaskStateInputRequired
		if kind == UpdateAuthRequired {
			state = a2a.TaskStateAuthRequired
		}
		t.Run(string(state), func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			ch := e.sendAsync(sendParams(alice, "book a table", nil))
			turn := e.exec.next(t)
			must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: kind, Message: agentMsg("for how many?")}))
			must(t, wait(t, ch).err)
			must(t, e.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""))

			sub, err := e.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: turn.TaskID})
			must(t, err)
			ch = e.sendAsync(sendParams(alice, "four", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
			again := e.exec.next(t)
			must(t, e.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("booked")}))
			must(t, wait(t, ch).err)
			want := "task(" + string(state) + ") status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) "
			if got := kinds(collect(t, sub)); got != want {
				t.Fatalf("subscriber:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestSubscriberStaysOpenWhenTheTaskAsksAQuestion: a subscriber follows a
// running task through INPUT_REQUIRED to the end, while the stream of the
// request that asked the question ends at it.
func TestSubscriberStaysOpenWhenTheTaskAsksAQuestion(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	stream, err := e.m.Stream(ctx, sendParams(alice, "book", nil))
	must(t, err)
	turn := e.exec.next(t)
	sub, err := e.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: turn.TaskID})
	must(t, err)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("how many?")}))
	if got := kinds(collect(t, stream)); got != "task(TASK_STATE_SUBMITTED) status(TASK_STATE_WORKING) status(TASK_STATE_INPUT_REQUIRED) " {
		t.Fatalf("sending stream = %s", got)
	}
	must(t, e.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""))
	ch := e.sendAsync(sendParams(alice, "two", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
	again := e.exec.next(t)
	must(t, e.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	must(t, wait(t, ch).err)
	want := "task(TASK_STATE_WORKING) status(TASK_STATE_INPUT_REQUIRED) status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) "
	if got := kinds(collect(t, sub)); got != want {
		t.Fatalf("subscriber:\n got %s\nwant %s", got, want)
	}
}
