package tasks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// TestHostThatCannotCancelGetsRunningCancelsRefused plays a host that
// declared it cannot stop a running turn (contract 1.3): CancelTask of the
// running task is -32002 and changes nothing (no CancelTurn, the task stays
// WORKING and completes with the agent's answer), while a task still queued
// behind it in the same context and a task waiting for input are canceled.
func TestHostThatCannotCancelGetsRunningCancelsRefused(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.HostCannotCancel = true })
	ctx := context.Background()
	cid := "" // the first message opens the conversation
	nonBlocking := func(r *a2a.SendMessageRequest) {
		r.Message.ContextID = cid
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}
	running, err := e.m.Send(ctx, sendParams(alice, "long", nonBlocking))
	must(t, err)
	cid = running.Task.ContextID
	turn := e.exec.next(t)
	queued, err := e.m.Send(ctx, sendParams(alice, "behind it", nonBlocking))
	must(t, err)

	_, err = e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: running.Task.ID})
	var aerr *a2a.Error
	if code(err) != -32002 || !strings.Contains(err.Error(), "cannot stop a running turn") {
		t.Fatalf("cancel of the running task: %v, want -32002 saying the host cannot stop it", err)
	}
	if errors.As(err, &aerr); aerr.Reason != "TASK_NOT_CANCELABLE" {
		t.Errorf("reason = %q", aerr.Reason)
	}
	if got := e.exec.cancelledIDs(); len(got) != 0 {
		t.Errorf("the host was told to cancel %v although it cannot", got)
	}
	if task, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: running.Task.ID}); err != nil || task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("after the refused cancel the task is %v (%v), want still WORKING", task.Status.State, err)
	}

	// The queued task never reached the host: it is canceled.
	task, err := e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: queued.Task.ID})
	must(t, err)
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("queued task after cancel = %s", task.Status.State)
	}

	// The running task ends with its answer, as the host's run did.
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("which one?")}))
	waitFor(t, func() bool {
		task, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: running.Task.ID})
		return err == nil && task.Status.State == a2a.TaskStateInputRequired
	})
	// Waiting for input, nothing runs on the host: it is canceled.
	task, err = e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: running.Task.ID})
	must(t, err)
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("input-required task after cancel = %s", task.Status.State)
	}
	e.exec.none(t, 50*time.Millisecond) // the canceled queued task never started
}
