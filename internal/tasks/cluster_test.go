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
	// slowFollow, when set, runs at the end of every Follow, after its
	// snapshot (outside mu): a test blocks in it to hold a Follow on the
	// database while the task moves on.
	slowFollow func()
	// beforeFollow, when set, runs at the start of every Follow, before
	// its snapshot (outside mu); an error fails the Follow. A test saves
	// the task elsewhere in it, between the moment a replica asks to
	// follow the task and the snapshot.
	beforeFollow func() error
	// open counts the follows not closed yet.
	open int
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
	before := h.beforeFollow
	h.mu.Unlock()
	if before != nil {
		if err := before(); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	rec, err := h.store.GetTask(ctx, id, "")
	if err != nil {
		h.mu.Unlock()
		return nil, err
	}
	f := &follower{h: h, id: id, snap: rec, next: len(h.events[id]), ch: make(chan []byte, 64), done: make(chan struct{})}
	h.open++
	slow := h.slowFollow
	h.mu.Unlock()
	go f.run()
	if slow != nil {
		slow()
	}
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

// Run: the hub has no lease to keep; tests fail orphans themselves.
func (r replica) Run(Local) {}

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
func (f *follower) Close() {
	f.closeOnce.Do(func() {
		close(f.done)
		f.h.mu.Lock()
		f.h.open--
		f.h.mu.Unlock()
	})
}

// openFollows is the number of follows not closed yet.
func (h *hub) openFollows() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open
}

// holdFollow makes the next Follow on h wait after taking its snapshot,
// like one on a slow database: entered receives when it waits, and it
// returns once release is called (at the latest when the test ends). Later
// Follows do not wait.
func (h *hub) holdFollow(t *testing.T) (entered <-chan struct{}, release func()) {
	in := make(chan struct{}, 1)
	gate := make(chan struct{})
	var once, closeOnce sync.Once
	h.mu.Lock()
	h.slowFollow = func() {
		once.Do(func() {
			in <- struct{}{}
			<-gate
		})
	}
	h.mu.Unlock()
	release = func() { closeOnce.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return in, release
}

// onFollow makes every later Follow on h call f first, before it takes its
// snapshot, with the number of Follows that called f before (0 for the
// first); an error from f fails that Follow.
func (h *hub) onFollow(f func(n int) error) {
	n := 0
	h.mu.Lock()
	h.beforeFollow = func() error {
		h.mu.Lock()
		i := n
		n++
		h.mu.Unlock()
		return f(i)
	}
	h.mu.Unlock()
}

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
		"artifact:" + task.ID + "-answer-1", "status:TASK_STATE_COMPLETED"}
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
			sub, turn := fetchMail(t, a)
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
			resumeAndFinish(t, b, turn.TaskID)
			want = append(want, "status:TASK_STATE_AUTH_REQUIRED:sign in first",
				"status:TASK_STATE_WORKING", "artifact:"+turn.TaskID+"-answer-1", "status:TASK_STATE_COMPLETED")
			if got := drain(t, sub); !slices.Equal(got, want) {
				t.Fatalf("stream on a:\n got  %v\n want %v", got, want)
			}
		})
	}
}

// within runs f in the background and fails the test unless it returns
// within d — while a Follow of the same task is still waiting on the
// database.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s waited for a Follow of the same task on the database: the task's lock is held across it", what)
	}
}

// TestFollowingThroughTheClusterDoesNotHoldTheTask: while a stream's
// Follow waits on a slow database before the AUTH_REQUIRED update is saved
// (with progress first, and without), the task answers reads and takes new
// streams; every stream, the one that joined meanwhile too, then follows
// the task to the replica that resumes it and gets each event once.
func TestFollowingThroughTheClusterDoesNotHoldTheTask(t *testing.T) {
	for _, progressFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("progress first ", progressFirst), func(t *testing.T) {
			h := newHub()
			a, b := h.join(t, "a"), h.join(t, "b")
			ctx := context.Background()
			sub, turn := fetchMail(t, a)
			want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING"}
			joined := "task:TASK_STATE_WORKING" // the snapshot of a stream that joins while Follow waits
			if progressFirst {
				if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("looking")}); err != nil {
					t.Fatal(err)
				}
				want = append(want, "status:TASK_STATE_WORKING:looking")
			}
			entered, release := h.holdFollow(t)
			applied := signInLater(a, turn.TaskID)
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatal("Apply(AUTH_REQUIRED) did not follow the task through the cluster")
			}
			within(t, 2*time.Second, "GetTask", func() {
				if _, err := a.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: turn.TaskID}); err != nil {
					t.Errorf("GetTask: %v", err)
				}
			})
			var late *Subscription
			var err error
			within(t, 2*time.Second, "SubscribeToTask", func() {
				late, err = a.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: turn.TaskID})
			})
			if err != nil {
				t.Fatal(err)
			}
			release()
			if err := <-applied; err != nil {
				t.Fatal(err)
			}
			if err := a.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""); err != nil {
				t.Fatal(err)
			}
			if n := a.m.ActiveCount(); n != 0 {
				t.Errorf("a keeps %d tasks in memory while its streams follow through the cluster", n)
			}
			resumeAndFinish(t, b, turn.TaskID)
			rest := []string{"status:TASK_STATE_WORKING", "artifact:" + turn.TaskID + "-answer-1", "status:TASK_STATE_COMPLETED"}
			auth := "status:TASK_STATE_AUTH_REQUIRED:sign in first"
			want = append(append(want, auth), rest...)
			if got := drain(t, sub); !slices.Equal(got, want) {
				t.Errorf("first stream on a:\n got  %v\n want %v", got, want)
			}
			wantLate := append([]string{joined, auth}, rest...)
			if got := drain(t, late); !slices.Equal(got, wantLate) {
				t.Errorf("stream that joined while Follow waited:\n got  %v\n want %v", got, wantLate)
			}
			waitFor(t, func() bool { return h.openFollows() == 0 })
		})
	}
}

// TestFollowOpenedBeforeASaveIsOpenedAgain: the host's output saved while
// a stream's Follow waits on the database (before the AUTH_REQUIRED update
// is saved) reaches the stream once — from the task, not again from a
// follow whose snapshot predates it — and the follow is opened again.
func TestFollowOpenedBeforeASaveIsOpenedAgain(t *testing.T) {
	h := newHub()
	a, b := h.join(t, "a"), h.join(t, "b")
	ctx := context.Background()
	sub, turn := fetchMail(t, a)
	if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("looking")}); err != nil {
		t.Fatal(err)
	}
	entered, release := h.holdFollow(t)
	applied := signInLater(a, turn.TaskID)
	<-entered
	within(t, 2*time.Second, "the host's artifact", func() {
		if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateArtifact, Artifact: &a2a.Artifact{ArtifactID: "partial", Parts: []a2a.Part{a2a.TextPart("x")}}}); err != nil {
			t.Errorf("artifact: %v", err)
		}
	})
	release()
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if err := a.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""); err != nil {
		t.Fatal(err)
	}
	resumeAndFinish(t, b, turn.TaskID)
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING:looking", "artifact:partial",
		"status:TASK_STATE_AUTH_REQUIRED:sign in first",
		"status:TASK_STATE_WORKING", "artifact:" + turn.TaskID + "-answer-1", "status:TASK_STATE_COMPLETED"}
	if got := drain(t, sub); !slices.Equal(got, want) {
		t.Fatalf("stream on a:\n got  %v\n want %v", got, want)
	}
	waitFor(t, func() bool { return h.openFollows() == 0 })
}

// TestTaskResumedHereWhileFollowWaitsKeepsItsStreams: the credentials reach
// this replica while its streams' Follow waits on the database after the
// AUTH_REQUIRED update was saved (the follow before the save failed): the
// task resumes here, the follow is dropped and the streams get the
// resumed turn from the task.
func TestTaskResumedHereWhileFollowWaitsKeepsItsStreams(t *testing.T) {
	h := newHub()
	a, _ := h.join(t, "a"), h.join(t, "b")
	ctx := context.Background()
	sub, turn := fetchMail(t, a)
	h.onFollow(func(n int) error {
		if n == 0 {
			return errors.New("the database is unreachable")
		}
		return nil
	})
	entered, release := h.holdFollow(t)
	applied := signInLater(a, turn.TaskID)
	<-entered
	ch := a.sendAsync(sendParams(alice, "token: abc", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
	again := a.exec.next(t) // started, and saved WORKING, while Follow waits
	release()
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if err := a.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("3 new mails")}); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, ch); r.err != nil || r.resp.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resumed send on a = %+v, %v", r.resp, r.err)
	}
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_AUTH_REQUIRED:sign in first",
		"status:TASK_STATE_WORKING", "artifact:" + turn.TaskID + "-answer-1", "status:TASK_STATE_COMPLETED"}
	if got := drain(t, sub); !slices.Equal(got, want) {
		t.Fatalf("stream on a:\n got  %v\n want %v", got, want)
	}
	waitFor(t, func() bool { return h.openFollows() == 0 })
	if n := a.m.ActiveCount(); n != 0 {
		t.Errorf("a keeps %d tasks", n)
	}
}

// TestStreamFollowsATaskSavedElsewhereBeforeItsSnapshot: another replica
// resumes (and maybe finishes) the task after this one saved it at
// AUTH_REQUIRED, before the follow for its stream takes its snapshot, for
// a task whose follow opened before the update failed. The stream gets the task as stored then, and
// the events saved after it; it ends when the task does.
func TestStreamFollowsATaskSavedElsewhereBeforeItsSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		progressFirst, finish bool
	}{
		// (A stream's task is stored when the stream starts, so the
		// follows before the save are always tried.)
		{"early follow failed, finished elsewhere", true, true},
		{"early follow failed, resumed elsewhere", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHub()
			a, b := h.join(t, "a"), h.join(t, "b")
			ctx := context.Background()
			sub, turn := fetchMail(t, a)
			want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING"}
			settledFollow := 0 // which Follow is the one opened after the save
			if tc.progressFirst {
				if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("looking")}); err != nil {
					t.Fatal(err)
				}
				want = append(want, "status:TASK_STATE_WORKING:looking")
				settledFollow = 1 // the first, before the save, fails
			}
			var ch chan sendResult
			h.onFollow(func(n int) error {
				switch {
				case n < settledFollow:
					return errors.New("the database is unreachable")
				case n > settledFollow:
					return nil
				}
				ch = b.sendAsync(sendParams(alice, "token: abc", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
				again := b.exec.next(t) // b saved the task WORKING
				if tc.finish {
					if err := b.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("3 new mails")}); err != nil {
						t.Error(err)
					}
				}
				return nil
			})
			if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("sign in first")}); err != nil {
				t.Fatal(err)
			}
			if ch == nil {
				t.Fatal("no follow was opened after the AUTH_REQUIRED update was saved")
			}
			if err := a.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""); err != nil {
				t.Fatal(err)
			}
			want = append(want, "status:TASK_STATE_AUTH_REQUIRED:sign in first")
			if tc.finish {
				want = append(want, "task:TASK_STATE_COMPLETED")
			} else {
				if err := b.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("3 new mails")}); err != nil {
					t.Fatal(err)
				}
				want = append(want, "task:TASK_STATE_WORKING", "artifact:"+turn.TaskID+"-answer-1", "status:TASK_STATE_COMPLETED")
			}
			if r := wait(t, ch); r.err != nil || r.resp.Task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("resumed send on b = %+v, %v", r.resp, r.err)
			}
			if got := drain(t, sub); !slices.Equal(got, want) {
				t.Fatalf("stream on a:\n got  %v\n want %v", got, want)
			}
			if sub.Err() != nil {
				t.Errorf("stream ended with %v", sub.Err())
			}
			waitFor(t, func() bool { return h.openFollows() == 0 })
			if n := a.m.ActiveCount(); n != 0 {
				t.Errorf("a keeps %d tasks", n)
			}
		})
	}
}

// TestStreamEndsWhenTheTaskIsFinishedElsewhereBeforeItsEarlyFollow: the
// task is canceled on another replica (this one, seen as dead, did not
// answer the forwarded cancel) before the follow opened ahead of the
// AUTH_REQUIRED update takes its snapshot. The update is refused; the
// stream gets the canceled task and ends.
func TestStreamEndsWhenTheTaskIsFinishedElsewhereBeforeItsEarlyFollow(t *testing.T) {
	h := newHub()
	a, b := h.join(t, "a"), h.join(t, "b")
	ctx := context.Background()
	sub, turn := fetchMail(t, a)
	if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("looking")}); err != nil {
		t.Fatal(err)
	}
	h.onFollow(func(n int) error {
		if n == 0 {
			h.mu.Lock()
			h.dead["a"] = true
			h.mu.Unlock()
			if got, err := b.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: turn.TaskID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
				t.Errorf("Cancel on b: %+v, %v", got, err)
			}
		}
		return nil
	})
	if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("sign in first")}); !errors.Is(err, ErrTakenOver) {
		t.Fatalf("Apply(AUTH_REQUIRED) after the cancel on b: %v, want ErrTakenOver", err)
	}
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING:looking", "task:TASK_STATE_CANCELED"}
	if got := drain(t, sub); !slices.Equal(got, want) {
		t.Fatalf("stream on a:\n got  %v\n want %v", got, want)
	}
	waitFor(t, func() bool { return h.openFollows() == 0 })
}

// TestTurnQueuedHereWhileFollowWaitsKeepsItsStreams: the credentials reach
// this replica while its streams' Follow waits after the AUTH_REQUIRED
// update was saved (the follow before the save failed), and the resumed
// turn waits in its context's queue, not saved yet: the streams stay on
// the task and get the resumed turn from it.
func TestTurnQueuedHereWhileFollowWaitsKeepsItsStreams(t *testing.T) {
	h := newHub()
	a, _ := h.join(t, "a"), h.join(t, "b")
	ctx := context.Background()
	sub, turn := fetchMail(t, a)
	var busy *Turn
	now := func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}
	h.onFollow(func(n int) error {
		switch n {
		case 0:
			return errors.New("the database is unreachable")
		case 1:
		default:
			return nil
		}
		// Another task of the context takes it; then the credentials come.
		if _, err := a.m.Send(ctx, sendParams(alice, "and my calendar", func(r *a2a.SendMessageRequest) {
			now(r)
			r.Message.ContextID = turn.ContextID
		})); err != nil {
			t.Error(err)
			return nil
		}
		busy = a.exec.next(t)
		if _, err := a.m.Send(ctx, sendParams(alice, "token: abc", func(r *a2a.SendMessageRequest) {
			now(r)
			r.Message.TaskID = turn.TaskID
		})); err != nil {
			t.Error(err)
		}
		return nil
	})
	if err := a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("sign in first")}); err != nil {
		t.Fatal(err)
	}
	if busy == nil {
		t.Fatal("no follow was opened after the AUTH_REQUIRED update was saved")
	}
	if n := h.openFollows(); n != 0 {
		t.Errorf("%d streams follow the task through the cluster while its resumed turn waits on this replica", n)
	}
	if err := a.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Apply(ctx, busy.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("free at 3")}); err != nil {
		t.Fatal(err)
	}
	again := a.exec.next(t)
	if !again.Continuation || again.TaskID != turn.TaskID {
		t.Fatalf("next turn on a = %+v, want the continuation", again)
	}
	if err := a.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("3 new mails")}); err != nil {
		t.Fatal(err)
	}
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_AUTH_REQUIRED:sign in first",
		"status:TASK_STATE_WORKING", "artifact:" + turn.TaskID + "-answer-1", "status:TASK_STATE_COMPLETED"}
	if got := drain(t, sub); !slices.Equal(got, want) {
		t.Fatalf("stream on a:\n got  %v\n want %v", got, want)
	}
	waitFor(t, func() bool { return h.openFollows() == 0 })
}

// signInLater applies the AUTH_REQUIRED update "sign in first" to taskID on
// r in the background and returns its result.
func signInLater(r *env, taskID string) <-chan error {
	applied := make(chan error, 1)
	go func() {
		applied <- r.m.Apply(context.Background(), taskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("sign in first")})
	}()
	return applied
}

// resumeAndFinish brings credentials for taskID (at AUTH_REQUIRED) to r,
// which continues the task and completes it with "3 new mails".
func resumeAndFinish(t *testing.T, r *env, taskID string) {
	t.Helper()
	ch := r.sendAsync(sendParams(alice, "token: abc", func(m *a2a.SendMessageRequest) { m.Message.TaskID = taskID }))
	again := r.exec.next(t)
	if !again.Continuation || again.TaskID != taskID {
		t.Fatalf("continuation = %+v", again)
	}
	if err := r.m.Apply(context.Background(), again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("3 new mails")}); err != nil {
		t.Fatal(err)
	}
	if res := wait(t, ch); res.err != nil || res.resp.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resumed send = %+v, %v", res.resp, res.err)
	}
}

// fetchMail opens a stream on r with the message "fetch my mail" and
// returns it with the turn r's host got for it.
func fetchMail(t *testing.T, r *env) (*Subscription, *Turn) {
	t.Helper()
	sub, err := r.m.Stream(context.Background(), sendParams(alice, "fetch my mail", nil))
	if err != nil {
		t.Fatal(err)
	}
	return sub, r.exec.next(t)
}

// TestSubscriberOfAQuestionFollowsTheAnswerOnAnotherReplica: with
// replicas, SubscribeToTask on a task waiting for input — subscribed on
// the replica that asked (the stream moves to following the task through
// the cluster) and on another one (it follows from the start) — stays
// open while the answer reaches a third replica, and ends at COMPLETED;
// the stream of the request that asked ends at the question.
func TestSubscriberOfAQuestionFollowsTheAnswerOnAnotherReplica(t *testing.T) {
	h := newHub()
	a, b, c := h.join(t, "a"), h.join(t, "b"), h.join(t, "c")
	ctx := context.Background()
	stream, turn := fetchMail(t, a)
	onA, err := a.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: turn.TaskID})
	must(t, err)
	must(t, a.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("which folder?")}))
	must(t, a.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""))
	onB, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: turn.TaskID})
	must(t, err)
	if n := a.m.ActiveCount(); n != 0 {
		t.Errorf("a keeps %d tasks in memory while its subscriber follows through the cluster", n)
	}
	resumeAndFinish(t, c, turn.TaskID)
	question := "status:TASK_STATE_INPUT_REQUIRED:which folder?"
	rest := []string{"status:TASK_STATE_WORKING", "artifact:" + turn.TaskID + "-answer-1", "status:TASK_STATE_COMPLETED"}
	if got, want := drain(t, stream), []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", question}; !slices.Equal(got, want) {
		t.Errorf("sending stream on a:\n got  %v\n want %v", got, want)
	}
	if got, want := drain(t, onA), append([]string{"task:TASK_STATE_WORKING", question}, rest...); !slices.Equal(got, want) {
		t.Errorf("subscriber on a:\n got  %v\n want %v", got, want)
	}
	if got, want := drain(t, onB), append([]string{"task:TASK_STATE_INPUT_REQUIRED"}, rest...); !slices.Equal(got, want) {
		t.Errorf("subscriber on b:\n got  %v\n want %v", got, want)
	}
	waitFor(t, func() bool { return h.openFollows() == 0 })
}

// TestCloseEndsStreamsFollowingAnotherReplica: the goroutines that pump a
// followed task's events into streams belong to the manager — Close ends
// their follows and waits for them, and a follow opened after Close ends
// at once.
func TestCloseEndsStreamsFollowingAnotherReplica(t *testing.T) {
	h := newHub()
	a, b := h.join(t, "a"), h.join(t, "b")
	task, _ := startTask(t, a, "a")
	ctx := context.Background()
	sub, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.openFollows(); n != 1 {
		t.Fatalf("%d follows open, want 1", n)
	}
	if err := b.m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Close returned, so the pump ended: its stream is over and its follow
	// closed.
	if got := drain(t, sub); !slices.Equal(got, []string{"task:TASK_STATE_WORKING"}) || !errors.Is(sub.Err(), ErrClosed) {
		t.Errorf("stream after Close: %v, %v", got, sub.Err())
	}
	if n := h.openFollows(); n != 0 {
		t.Errorf("%d follows still open after Close", n)
	}
	if late, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: task.ID}); err == nil {
		if got := drain(t, late); len(got) > 1 || !errors.Is(late.Err(), ErrClosed) {
			t.Errorf("a stream opened after Close: %v, %v", got, late.Err())
		}
	}
	if n := h.openFollows(); n != 0 {
		t.Errorf("%d follows open after a late Subscribe", n)
	}
}
