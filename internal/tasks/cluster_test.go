package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// hub is an in-memory stand-in for the database replicas share: one store,
// who wrote each task last, each task's published events, and the
// replicas (with whether they are alive). It implements the Cluster
// contract the way internal/cluster does on PostgreSQL.
type hub struct {
	mu      sync.Mutex
	store   *store.Memory
	writer  map[string]string   // task → replica that saved it last
	events  map[string][][]byte // task → every event published, seq = index+1
	changed chan struct{}       // closed and replaced on every publish
	members map[string]*Manager
	dead    map[string]bool
}

func newHub() *hub {
	return &hub{store: store.NewMemory(0), writer: map[string]string{}, events: map[string][][]byte{},
		changed: make(chan struct{}), members: map[string]*Manager{}, dead: map[string]bool{}}
}

// replica is one replica's view of the hub.
type replica struct {
	h    *hub
	name string
}

func (r replica) Persist(ctx context.Context, rec *store.TaskRecord, ds []store.Delivery, events [][]byte) error {
	h := r.h
	h.mu.Lock()
	defer h.mu.Unlock()
	id := rec.Task.ID
	if old, err := h.store.GetTask(ctx, id, ""); err == nil && old.Task.Status.State.Terminal() && h.writer[id] != r.name {
		return fmt.Errorf("save task %s: %w", id, ErrTakenOver)
	}
	if err := h.store.SaveTask(ctx, rec, ds); err != nil {
		return err
	}
	h.writer[id] = r.name
	if len(events) > 0 {
		h.events[id] = append(h.events[id], events...)
		close(h.changed)
		h.changed = make(chan struct{})
	}
	return nil
}

func (r replica) Follow(ctx context.Context, id string) (Remote, error) {
	h := r.h
	h.mu.Lock()
	defer h.mu.Unlock()
	rec, err := h.store.GetTask(ctx, id, "")
	if err != nil {
		return nil, err
	}
	f := &follower{h: h, id: id, snap: rec, next: len(h.events[id]), ch: make(chan []byte, 64), done: make(chan struct{})}
	go f.run()
	return f, nil
}

func (r replica) Forward(ctx context.Context, op ForwardOp, id string) (bool, error) {
	h := r.h
	h.mu.Lock()
	w := h.writer[id]
	m := h.members[w]
	alive := w != "" && w != r.name && !h.dead[w] && m != nil
	h.mu.Unlock()
	if !alive {
		return false, nil
	}
	return true, m.HandleForwarded(ctx, op, id)
}

func (r replica) Recover(ctx context.Context) ([]*store.TaskRecord, error) {
	h := r.h
	h.mu.Lock()
	defer h.mu.Unlock()
	all, err := h.store.ActiveTasks(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(rec *store.TaskRecord) bool { return h.writer[rec.Task.ID] != r.name }), nil
}

// follower is a Remote on the hub.
type follower struct {
	h         *hub
	id        string
	snap      *store.TaskRecord
	next      int
	ch        chan []byte
	done      chan struct{}
	closeOnce sync.Once
}

func (f *follower) run() {
	defer close(f.ch)
	for {
		f.h.mu.Lock()
		evs := f.h.events[f.id][f.next:]
		changed := f.h.changed
		f.h.mu.Unlock()
		for _, ev := range evs {
			select {
			case f.ch <- ev:
				f.next++
			case <-f.done:
				return
			}
		}
		select {
		case <-changed:
		case <-f.done:
			return
		}
	}
}

func (f *follower) Snapshot() *store.TaskRecord { return f.snap }
func (f *follower) Events() <-chan []byte       { return f.ch }
func (f *follower) Err() error                  { return nil }
func (f *follower) Close()                      { f.closeOnce.Do(func() { close(f.done) }) }

// join starts a manager as replica name on h.
func (h *hub) join(t *testing.T, name string) *env {
	t.Helper()
	ex := newFakeExec()
	m, err := NewManager(Options{Store: h.store, Executor: ex, RequestTimeout: 5 * time.Second, Cluster: replica{h, name}})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.members[name] = m
	h.mu.Unlock()
	if _, err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return &env{m: m, exec: ex, store: h.store}
}

// startTask sends a non-blocking message to e and returns the task and
// its turn on e's host.
func startTask(t *testing.T, e *env, who string) (*a2a.Task, *Turn) {
	t.Helper()
	p := sendParams(alice, "work on "+who, func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	})
	resp, err := e.m.Send(context.Background(), p)
	if err != nil || resp.Task == nil {
		t.Fatalf("Send: %+v, %v", resp, err)
	}
	return resp.Task, e.exec.next(t)
}

// describe renders an event as kind:detail for sequence checks.
func describe(ev Event) string {
	r := ev.Response
	switch {
	case r.Task != nil:
		return "task:" + string(r.Task.Status.State)
	case r.StatusUpdate != nil:
		s := "status:" + string(r.StatusUpdate.Status.State)
		if m := r.StatusUpdate.Status.Message; m != nil && len(m.Parts) > 0 {
			s += ":" + m.Parts[0].TextValue()
		}
		return s
	case r.ArtifactUpdate != nil:
		return "artifact:" + r.ArtifactUpdate.Artifact.ArtifactID
	}
	return "?"
}

// drain reads sub until it ends.
func drain(t *testing.T, sub *Subscription) []string {
	t.Helper()
	var out []string
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return out
			}
			out = append(out, describe(ev))
		case <-timeout:
			t.Fatalf("stream did not end; got %v", out)
		}
	}
}

func TestStreamOnAnotherReplicaGetsEveryEventInOrder(t *testing.T) {
	h := newHub()
	a, b := h.join(t, "a"), h.join(t, "b")
	task, _ := startTask(t, a, "a")
	ctx := context.Background()
	sub, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.m.Subscribe(ctx, bob.ID, &a2a.SubscribeToTaskRequest{ID: task.ID}); code(err) != a2a.CodeTaskNotFound {
		t.Fatalf("bob subscribing to alice's task on b: %v, want task not found", err)
	}
	for _, u := range []Update{
		{Kind: UpdateProgress, Message: agentMsg("one")},
		{Kind: UpdateArtifact, Artifact: &a2a.Artifact{ArtifactID: "art", Parts: []a2a.Part{a2a.TextPart("x")}}},
		{Kind: UpdateProgress, Message: agentMsg("two")},
		{Kind: UpdateFinal, Message: agentMsg("done")},
	} {
		if err := a.m.Apply(ctx, task.ID, u); err != nil {
			t.Fatal(err)
		}
	}
	got := drain(t, sub)
	want := []string{"task:TASK_STATE_WORKING", "status:TASK_STATE_WORKING:one", "artifact:art", "status:TASK_STATE_WORKING:two",
		"artifact:" + task.ID + "-answer-1", "status:TASK_STATE_COMPLETED:done"}
	if !slices.Equal(got, want) {
		t.Fatalf("stream on b:\n got  %v\n want %v", got, want)
	}
	if sub.Err() != nil {
		t.Errorf("stream ended with %v", sub.Err())
	}
	if _, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: task.ID}); code(err) != a2a.CodeUnsupportedOperation {
		t.Errorf("subscribing to the finished task: %v", err)
	}
}

func TestCancelOnAnotherReplicaReachesTheOwningHost(t *testing.T) {
	h := newHub()
	a, b := h.join(t, "a"), h.join(t, "b")
	task, _ := startTask(t, a, "a")
	ctx := context.Background()
	got, err := b.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("Cancel on b: %+v, %v", got, err)
	}
	waitFor(t, func() bool { return slices.Contains(a.exec.cancelledIDs(), task.ID) })
	if ids := b.exec.cancelledIDs(); len(ids) != 0 {
		t.Errorf("b's host was asked to cancel %v", ids)
	}
	if a.m.ActiveCount() != 0 {
		t.Errorf("a still holds %d tasks", a.m.ActiveCount())
	}
	// A second cancel, on either replica, finds it finished.
	if _, err := b.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: task.ID}); code(err) != a2a.CodeTaskNotCancelable {
		t.Errorf("second cancel: %v", err)
	}
	// Bob cannot cancel alice's task through another replica either.
	other, _ := startTask(t, a, "a2")
	if _, err := b.m.Cancel(ctx, bob.ID, &a2a.CancelTaskRequest{ID: other.ID}); code(err) != a2a.CodeTaskNotFound {
		t.Errorf("bob's cancel: %v", err)
	}
}

func TestOrphanedTaskIsFailedAndFollowersTold(t *testing.T) {
	h := newHub()
	a, b, c := h.join(t, "a"), h.join(t, "b"), h.join(t, "c")
	task, _ := startTask(t, a, "a")
	ctx := context.Background()
	if _, err := b.m.CreatePushConfig(ctx, alice.ID, alice.ID, a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "hook", URL: "https://h.example"}); err != nil {
		t.Fatal(err)
	}
	sub, err := c.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.dead["a"] = true // its lease expired
	h.mu.Unlock()
	if err := b.m.FailOrphan(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	// A second sweeper finds nothing to do.
	if err := c.m.FailOrphan(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	rec, err := h.store.GetTask(ctx, task.ID, "")
	if err != nil || rec.Task.Status.State != a2a.TaskStateFailed || !strings.Contains(rec.Task.Status.Message.Parts[0].TextValue(), "replica running it stopped") {
		t.Fatalf("stored task %+v, %v", rec.Task.Status, err)
	}
	if got, want := drain(t, sub), []string{"task:TASK_STATE_WORKING", "status:TASK_STATE_FAILED:" + OrphanReason}; !slices.Equal(got, want) {
		t.Errorf("stream on c: %v, want %v", got, want)
	}
	ds, _ := h.store.DueDeliveries(ctx, time.Now().Add(time.Minute), 0)
	if len(ds) != 1 || ds[0].ConfigID != "hook" || !strings.Contains(string(ds[0].Body), "TASK_STATE_FAILED") {
		t.Errorf("webhook deliveries %+v, want the failure", ds)
	}
	// The dead replica, had it only been cut off, cannot overwrite it.
	if err := a.m.Apply(ctx, task.ID, Update{Kind: UpdateFinal, Message: agentMsg("late")}); !errors.Is(err, ErrTakenOver) {
		t.Errorf("a's late answer: %v, want ErrTakenOver", err)
	}
	if a.m.ActiveCount() != 0 {
		t.Errorf("a kept the task (%d live)", a.m.ActiveCount())
	}
	waitFor(t, func() bool { return slices.Contains(a.exec.cancelledIDs(), task.ID) }) // a's host stops the turn

	if rec, _ := h.store.GetTask(ctx, task.ID, ""); rec.Task.Status.State != a2a.TaskStateFailed {
		t.Errorf("after a's late answer the task is %s", rec.Task.Status.State)
	}
}

func TestPushConfigOnAnotherReplicaGetsTheNextUpdates(t *testing.T) {
	h := newHub()
	a, b := h.join(t, "a"), h.join(t, "b")
	task, _ := startTask(t, a, "a")
	ctx := context.Background()
	if _, err := b.m.CreatePushConfig(ctx, alice.ID, alice.ID, a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "hook", URL: "https://h.example"}); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Apply(ctx, task.ID, Update{Kind: UpdateProgress, Message: agentMsg("p")}); err != nil {
		t.Fatal(err)
	}
	ds, _ := h.store.DueDeliveries(ctx, time.Now().Add(time.Minute), 0)
	if len(ds) != 1 || ds[0].ConfigID != "hook" {
		t.Fatalf("deliveries after the config was created on b: %+v", ds)
	}
	if err := b.m.DeletePushConfig(ctx, alice.ID, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "hook"}); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Apply(ctx, task.ID, Update{Kind: UpdateFinal, Message: agentMsg("f")}); err != nil {
		t.Fatal(err)
	}
	if ds, _ := h.store.DueDeliveries(ctx, time.Now().Add(time.Minute), 0); len(ds) != 0 {
		t.Fatalf("deliveries after the config was deleted on b: %+v", ds)
	}
}

func TestStartFailsOnlyThisReplicasTasks(t *testing.T) {
	h := newHub()
	a, b := h.join(t, "a"), h.join(t, "b")
	ta, _ := startTask(t, a, "a")
	tb, _ := startTask(t, b, "b")
	// "a" restarts with the same replica id (a's old manager is gone).
	h.mu.Lock()
	delete(h.members, "a")
	h.mu.Unlock()
	a2 := h.join(t, "a")
	ctx := context.Background()
	if rec, _ := h.store.GetTask(ctx, ta.ID, ""); rec.Task.Status.State != a2a.TaskStateFailed {
		t.Errorf("a's task after a restarted: %s, want FAILED", rec.Task.Status.State)
	}
	if rec, _ := h.store.GetTask(ctx, tb.ID, ""); rec.Task.Status.State != a2a.TaskStateWorking {
		t.Errorf("b's task after a restarted: %s, want WORKING", rec.Task.Status.State)
	}
	_ = a2
}

// TestAuthRequiredStreamFollowsTheTaskToAnotherReplica: a stream on
// replica a stays open at AUTH_REQUIRED; the peer's credentials reach
// replica b, whose host resumes the task, and the stream on a gets every
// event of the resumed turn. (First output AUTH_REQUIRED, or after
// progress: the task is stored by that update or before it.)
func TestAuthRequiredStreamFollowsTheTaskToAnotherReplica(t *testing.T) {
	for _, progressFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("progress first ", progressFirst), func(t *testing.T) {
			h := newHub()
			a, b := h.join(t, "a"), h.join(t, "b")
			ctx := context.Background()
			sub, err := a.m.Stream(ctx, sendParams(alice, "fetch my mail", nil))
			if err != nil {
				t.Fatal(err)
			}
			turn := a.exec.next(t)
			want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING"}
			if progressFirst {
				if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("looking")}); err != nil {
					t.Fatal(err)
				}
				want = append(want, "status:TASK_STATE_WORKING:looking")
			}
			if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("sign in first")}); err != nil {
				t.Fatal(err)
			}
			if err := a.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""); err != nil {
				t.Fatal(err)
			}
			if n := a.m.ActiveCount(); n != 0 {
				t.Errorf("a keeps %d tasks in memory while its stream follows through the cluster", n)
			}
			ch := b.sendAsync(sendParams(alice, "token: abc", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
			again := b.exec.next(t)
			if !again.Continuation || again.TaskID != turn.TaskID {
				t.Fatalf("continuation on b = %+v", again)
			}
			if err := b.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("3 new mails")}); err != nil {
				t.Fatal(err)
			}
			if r := wait(t, ch); r.err != nil || r.resp.Task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("resumed send on b = %+v, %v", r.resp, r.err)
			}
			want = append(want, "status:TASK_STATE_AUTH_REQUIRED:sign in first",
				"status:TASK_STATE_WORKING", "artifact:"+turn.TaskID+"-answer-1", "status:TASK_STATE_COMPLETED:3 new mails")
			if got := drain(t, sub); !slices.Equal(got, want) {
				t.Fatalf("stream on a:\n got  %v\n want %v", got, want)
			}
		})
	}
}
