package tasks

import (
	"context"
	"sync"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// changeLog collects what a watcher is told.
type changeLog struct {
	mu      sync.Mutex
	changes []Change
}

func (l *changeLog) add(c Change) {
	l.mu.Lock()
	l.changes = append(l.changes, c)
	l.mu.Unlock()
}

func (l *changeLog) states(taskID string) []a2a.TaskState {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []a2a.TaskState
	for _, c := range l.changes {
		if c.TaskID == taskID {
			out = append(out, c.State)
		}
	}
	return out
}

func (l *changeLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.changes)
}

func TestWatchSeesEveryDurableChangeWithOwnerUntilStopped(t *testing.T) {
	e := newEnv(t, nil)
	var log changeLog
	stop := e.m.Watch(log.add)
	ctx := context.Background()

	r, err := e.m.Send(ctx, sendParams(alice, "work", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	if err != nil {
		t.Fatal(err)
	}
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("thinking")}))
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))

	got := log.states(r.Task.ID)
	if len(got) < 3 || got[len(got)-1] != a2a.TaskStateCompleted {
		t.Fatalf("states seen = %v, want the reveal, the progress and COMPLETED last", got)
	}
	log.mu.Lock()
	c := log.changes[0]
	log.mu.Unlock()
	if c.Owner != alice.ID || c.ContextID != r.Task.ContextID || c.CreatedAt.IsZero() || c.UpdatedAt.IsZero() {
		t.Fatalf("change = %+v, want the owner, the context and both times", c)
	}
	// Each change is durable by the time the watcher hears of it.
	rec, err := e.store.GetTask(ctx, r.Task.ID, "")
	if err != nil || rec.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("stored task = %+v, %v", rec, err)
	}

	stop()
	n := log.len()
	done := e.sendAsync(sendParams(bob, "more", nil))
	turn = e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("ok")}))
	wait(t, done)
	if log.len() != n {
		t.Fatalf("a stopped watcher was told %d more changes", log.len()-n)
	}
}

func TestWatchIsNotToldAboutTasksNobodyCanSee(t *testing.T) {
	e := newEnv(t, nil)
	var log changeLog
	defer e.m.Watch(log.add)()
	ch := e.sendAsync(sendParams(alice, "ping", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(context.Background(), turn.TaskID, Update{Kind: UpdateDirectReply, Message: agentMsg("pong")}))
	if r := wait(t, ch); r.err != nil || r.resp.Message == nil {
		t.Fatalf("resp = %+v, %v", r.resp, r.err)
	}
	if n := log.len(); n != 0 {
		t.Fatalf("watcher told %d changes of a direct reply's provisional task, which never existed for clients", n)
	}
}
