package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// fakeExec is a scripted host: each started turn goes to a channel and the
// test plays the agent by calling Apply/EndTurn.
type fakeExec struct {
	started   chan *Turn
	mu        sync.Mutex
	cancelled []string
	refuse    error
}

func newFakeExec() *fakeExec { return &fakeExec{started: make(chan *Turn, 1024)} }

func (f *fakeExec) StartTurn(ctx context.Context, t *Turn) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.started <- t
	return nil
}

func (f *fakeExec) CancelTurn(ctx context.Context, t *Turn, reason string) error {
	f.mu.Lock()
	f.cancelled = append(f.cancelled, t.TaskID)
	f.mu.Unlock()
	return nil
}

func (f *fakeExec) cancelledIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancelled...)
}

func (f *fakeExec) next(t *testing.T) *Turn {
	t.Helper()
	select {
	case turn := <-f.started:
		return turn
	case <-time.After(5 * time.Second):
		t.Fatal("no turn started")
		return nil
	}
}

func (f *fakeExec) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case turn := <-f.started:
		t.Fatalf("unexpected turn for task %s", turn.TaskID)
	case <-time.After(d):
	}
}

type env struct {
	m     *Manager
	exec  *fakeExec
	store store.Store
}

func newEnv(t *testing.T, mod func(*Options)) *env {
	t.Helper()
	st := store.NewMemory(10_000)
	ex := newFakeExec()
	opts := Options{Store: st, Executor: ex, RequestTimeout: 5 * time.Second}
	if mod != nil {
		mod(&opts)
	}
	m, err := NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return &env{m: m, exec: ex, store: st}
}

var alice = security.Identity{ID: "peer:alice", Tier: security.TierTrusted, Authenticated: true}
var bob = security.Identity{ID: "peer:bob", Tier: security.TierTrusted, Authenticated: true}

func sendParams(who security.Identity, text string, mod func(*a2a.SendMessageRequest)) SendParams {
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart(text))}
	if mod != nil {
		mod(req)
	}
	return SendParams{Caller: who, Scope: who.ID, Request: req}
}

func agentMsg(text string) *a2a.Message {
	m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart(text))
	return &m
}

// sendAsync runs a blocking Send in the background.
func (e *env) sendAsync(p SendParams) chan sendResult {
	ch := make(chan sendResult, 1)
	go func() {
		r, err := e.m.Send(context.Background(), p)
		ch <- sendResult{r, err}
	}()
	return ch
}

type sendResult struct {
	resp *a2a.SendMessageResponse
	err  error
}

func wait(t *testing.T, ch chan sendResult) sendResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("send did not return")
		return sendResult{}
	}
}

func code(err error) int {
	var e *a2a.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestBlockingSendReturnsCompletedTaskWithAnswer(t *testing.T) {
	e := newEnv(t, nil)
	ch := e.sendAsync(sendParams(alice, "hello", nil))
	turn := e.exec.next(t)
	if turn.Sender.ID != alice.ID || turn.Message.Text() != "hello" || turn.ContextID == "" || turn.TaskID == "" {
		t.Fatalf("turn = %+v", turn)
	}
	if err := e.m.Apply(context.Background(), turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("hi there")}); err != nil {
		t.Fatal(err)
	}
	r := wait(t, ch)
	if r.err != nil {
		t.Fatal(r.err)
	}
	task := r.resp.Task
	if task == nil || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resp = %+v", r.resp)
	}
	if task.Status.Message != nil {
		t.Errorf("status message = %+v, want none (the answer is the artifact)", task.Status.Message)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "hi there" {
		t.Errorf("artifacts = %+v", task.Artifacts)
	}
	if len(task.History) != 1 || task.History[0].Role != a2a.RoleUser {
		t.Errorf("history = %+v", task.History)
	}
	// Persisted, and visible only to its owner.
	got, err := e.m.Get(context.Background(), alice.ID, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := e.m.Get(context.Background(), bob.ID, &a2a.GetTaskRequest{ID: task.ID}); code(err) != -32001 {
		t.Fatalf("other peer's get: err = %v, want -32001", err)
	}
	// The host's late ProcessingComplete changes nothing.
	if err := e.m.EndTurn(context.Background(), turn.TaskID, OutcomeSuccess, ""); err != nil {
		t.Fatal(err)
	}
}

func TestDirectReplyAnswersWithMessageAndLeavesNoTask(t *testing.T) {
	e := newEnv(t, nil)
	ch := e.sendAsync(sendParams(alice, "ping", nil))
	turn := e.exec.next(t)
	if err := e.m.Apply(context.Background(), turn.TaskID, Update{Kind: UpdateDirectReply, Message: agentMsg("pong")}); err != nil {
		t.Fatal(err)
	}
	r := wait(t, ch)
	if r.err != nil || r.resp.Message == nil || r.resp.Task != nil {
		t.Fatalf("resp = %+v, err = %v", r.resp, r.err)
	}
	if r.resp.Message.Text() != "pong" || r.resp.Message.ContextID != turn.ContextID || r.resp.Message.TaskID != "" {
		t.Errorf("message = %+v", r.resp.Message)
	}
	if _, err := e.m.Get(context.Background(), alice.ID, &a2a.GetTaskRequest{ID: turn.TaskID}); code(err) != -32001 {
		t.Fatalf("direct-reply task should not exist; err = %v", err)
	}
}

func TestNonBlockingSendReturnsAtOnceAndTaskIsQueryable(t *testing.T) {
	e := newEnv(t, nil)
	r, err := e.m.Send(context.Background(), sendParams(alice, "work", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Task == nil || r.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("resp = %+v", r)
	}
	turn := e.exec.next(t)
	got, err := e.m.Get(context.Background(), alice.ID, &a2a.GetTaskRequest{ID: r.Task.ID})
	if err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("get = %+v, %v", got, err)
	}
	// Even a direct reply completes a task the client already knows.
	if err := e.m.Apply(context.Background(), turn.TaskID, Update{Kind: UpdateDirectReply, Message: agentMsg("done")}); err != nil {
		t.Fatal(err)
	}
	got, _ = e.m.Get(context.Background(), alice.ID, &a2a.GetTaskRequest{ID: r.Task.ID})
	if got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s", got.Status.State)
	}
}

func collect(t *testing.T, sub *Subscription) []a2a.StreamResponse {
	t.Helper()
	var out []a2a.StreamResponse
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return out
			}
			out = append(out, ev.Response)
		case <-timeout:
			t.Fatalf("stream did not end; got %d events", len(out))
		}
	}
}

// answer returns the text of a task's answer artifacts.
func answer(t *a2a.Task) string {
	s := ""
	for _, a := range t.Artifacts {
		s += a.Text()
	}
	return s
}

func kinds(evs []a2a.StreamResponse) string {
	s := ""
	for _, ev := range evs {
		switch {
		case ev.Task != nil:
			s += "task(" + string(ev.Task.Status.State) + ") "
		case ev.Message != nil:
			s += "message "
		case ev.StatusUpdate != nil:
			s += "status(" + string(ev.StatusUpdate.Status.State) + ") "
		case ev.ArtifactUpdate != nil:
			s += "artifact "
		}
	}
	return s
}

func TestStreamStartsWithTaskThenEveryUpdateInOrder(t *testing.T) {
	e := newEnv(t, nil)
	sub, err := e.m.Stream(context.Background(), sendParams(alice, "go", nil))
	if err != nil {
		t.Fatal(err)
	}
	turn := e.exec.next(t)
	ctx := context.Background()
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("step 1")}))
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateArtifact, Artifact: &a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x")}}}))
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateArtifact, Artifact: &a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("y")}}, Append: true, LastChunk: true}))
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	got := kinds(collect(t, sub))
	want := "task(TASK_STATE_SUBMITTED) status(TASK_STATE_WORKING) status(TASK_STATE_WORKING) artifact artifact artifact status(TASK_STATE_COMPLETED) "
	if got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	task, _ := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: turn.TaskID})
	if len(task.Artifacts) != 2 || len(task.Artifacts[0].Parts) != 2 {
		t.Fatalf("chunks were not merged: %+v", task.Artifacts)
	}
}

func TestInputRequiredThenContinuationByTaskID(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "book a table", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("for how many?")}))
	r := wait(t, ch)
	if r.err != nil || r.resp.Task.Status.State != a2a.TaskStateInputRequired || r.resp.Task.Status.Message.Text() != "for how many?" {
		t.Fatalf("resp = %+v, %v", r.resp, r.err)
	}
	must(t, e.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""))
	// Answer with the task id only: the context is inferred.
	ch = e.sendAsync(sendParams(alice, "four", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
	turn2 := e.exec.next(t)
	if !turn2.Continuation || turn2.TaskID != turn.TaskID || turn2.ContextID != turn.ContextID {
		t.Fatalf("continuation turn = %+v", turn2)
	}
	must(t, e.m.Apply(ctx, turn2.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("booked for four")}))
	r = wait(t, ch)
	// History: the request, the question, the answer to it (the final
	// answer is the artifact).
	if r.err != nil || r.resp.Task.Status.State != a2a.TaskStateCompleted || len(r.resp.Task.History) != 3 || answer(r.resp.Task) != "booked for four" {
		t.Fatalf("resp = %+v, %v", r.resp, r.err)
	}
}

func TestMessageIDRulesForExistingTasks(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "x", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("y")}))
	wait(t, ch)
	ch = e.sendAsync(sendParams(alice, "q", nil))
	asking := e.exec.next(t)
	must(t, e.m.Apply(ctx, asking.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("?")}))
	wait(t, ch)

	tests := []struct {
		name string
		who  security.Identity
		mod  func(*a2a.SendMessageRequest)
		want int
	}{
		{"unknown task", alice, func(r *a2a.SendMessageRequest) { r.Message.TaskID = "nope" }, -32001},
		{"terminal task", alice, func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }, -32004},
		{"another peer's task", bob, func(r *a2a.SendMessageRequest) { r.Message.TaskID = asking.TaskID }, -32001},
		{"mismatched context", alice, func(r *a2a.SendMessageRequest) {
			r.Message.TaskID, r.Message.ContextID = asking.TaskID, "other"
		}, -32602},
		{"another peer's context", bob, func(r *a2a.SendMessageRequest) { r.Message.ContextID = turn.ContextID }, -32602},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.m.Send(ctx, sendParams(tc.who, "m", tc.mod))
			if code(err) != tc.want {
				t.Fatalf("err = %v, want code %d", err, tc.want)
			}
		})
	}
	e.exec.none(t, 50*time.Millisecond)
}

func TestSameContextRunsInOrderOtherContextsInParallel(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	first := e.sendAsync(localParams("1", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "c1" }))
	t1 := e.exec.next(t)
	second := e.sendAsync(localParams("2", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "c1" }))
	other := e.sendAsync(localParams("3", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "c2" }))
	t3 := e.exec.next(t)
	if t3.ContextID != "c2" {
		t.Fatalf("expected the other context to start while c1 is busy, got %s", t3.ContextID)
	}
	e.exec.none(t, 50*time.Millisecond) // c1's second turn waits
	must(t, e.m.Apply(ctx, t1.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("one")}))
	t2 := e.exec.next(t)
	if t2.Message.Text() != "2" || t2.ContextID != "c1" {
		t.Fatalf("second turn = %+v", t2)
	}
	must(t, e.m.Apply(ctx, t2.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("two")}))
	must(t, e.m.Apply(ctx, t3.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("three")}))
	for ch, want := range map[chan sendResult]string{first: "one", second: "two", other: "three"} {
		if r := wait(t, ch); r.err != nil || answer(r.resp.Task) != want {
			t.Fatalf("want %q, got %+v %v", want, r.resp, r.err)
		}
	}
}

func TestCancelStopsHostTurnAndMarksTaskCanceled(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	r, err := e.m.Send(ctx, sendParams(alice, "long", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	turn := e.exec.next(t)
	if _, err := e.m.Cancel(ctx, bob.ID, &a2a.CancelTaskRequest{ID: r.Task.ID}); code(err) != -32001 {
		t.Fatalf("other peer cancel err = %v", err)
	}
	task, err := e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: r.Task.ID})
	must(t, err)
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("state = %s", task.Status.State)
	}
	waitFor(t, func() bool { return len(e.exec.cancelledIDs()) == 1 && e.exec.cancelledIDs()[0] == turn.TaskID })
	if _, err := e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: r.Task.ID}); code(err) != -32002 {
		t.Fatalf("second cancel err = %v, want -32002", err)
	}
	if err := e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("late")}); !errors.Is(err, ErrTaskNotRunning) {
		t.Fatalf("late output err = %v", err)
	}
	// The context is free again.
	e.sendAsync(sendParams(alice, "next", func(r *a2a.SendMessageRequest) { r.Message.ContextID = turn.ContextID }))
	e.exec.next(t)
}

func TestCancelWorksOnInputRequiredTask(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "q", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("?")}))
	wait(t, ch)
	task, err := e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: turn.TaskID})
	must(t, err)
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("state = %s", task.Status.State)
	}
}

func TestWatchdogFailsSilentTurnsOnly(t *testing.T) {
	// The chatty turn reports every 30 ms against a 1 s silence timeout:
	// room for a loaded machine to stall its reporter without failing it.
	e := newEnv(t, func(o *Options) { o.SilenceTimeout = time.Second })
	ctx := context.Background()
	silent := e.sendAsync(sendParams(alice, "a", nil))
	ts := e.exec.next(t)
	chatty := e.sendAsync(sendParams(alice, "b", nil))
	tc := e.exec.next(t)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
				_ = e.m.Apply(ctx, tc.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("still working")})
			}
		}
	}()
	r := wait(t, silent)
	if r.err != nil || r.resp.Task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("silent task = %+v, %v", r.resp, r.err)
	}
	// The chatty turn outlives another whole silence timeout.
	time.Sleep(time.Second)
	close(stop)
	waitFor(t, func() bool { ids := e.exec.cancelledIDs(); return len(ids) == 1 && ids[0] == ts.TaskID })
	must(t, e.m.Apply(ctx, tc.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("ok")}))
	if r := wait(t, chatty); r.resp.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("chatty task = %s", r.resp.Task.Status.State)
	}
}

func TestProcessingCompleteOutcomesSettleRunningTasks(t *testing.T) {
	for _, tc := range []struct {
		outcome Outcome
		want    a2a.TaskState
	}{
		{OutcomeSuccess, a2a.TaskStateCompleted},
		{OutcomeFailure, a2a.TaskStateFailed},
		{OutcomeRejected, a2a.TaskStateRejected},
		{OutcomeCancelled, a2a.TaskStateCanceled},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			e := newEnv(t, nil)
			ch := e.sendAsync(sendParams(alice, "x", nil))
			turn := e.exec.next(t)
			must(t, e.m.EndTurn(context.Background(), turn.TaskID, tc.outcome, "boom"))
			r := wait(t, ch)
			if r.err != nil || r.resp.Task.Status.State != tc.want {
				t.Fatalf("resp = %+v, %v", r.resp, r.err)
			}
		})
	}
}

func TestRefusedTurnFailsTaskWithReason(t *testing.T) {
	e := newEnv(t, nil)
	e.exec.refuse = errors.New("session closed")
	r, err := e.m.Send(context.Background(), sendParams(alice, "x", nil))
	must(t, err)
	if r.Task.Status.State != a2a.TaskStateFailed || r.Task.Status.Message == nil {
		t.Fatalf("resp = %+v", r.Task)
	}
}

func TestSlowSubscriberIsDroppedWithoutBlockingTask(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.SubscriberBuffer = 4 })
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "go", nil))
	must(t, err)
	turn := e.exec.next(t)
	for i := 0; i < 20; i++ {
		must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg(fmt.Sprint(i))}))
	}
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	collect(t, sub)
	if !errors.Is(sub.Err(), ErrDropped) {
		t.Fatalf("sub.Err = %v", sub.Err())
	}
	task, _ := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: turn.TaskID})
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s", task.Status.State)
	}
}

func TestSubscribeStartsWithSnapshotAndFollows(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	r, err := e.m.Send(ctx, sendParams(alice, "x", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	turn := e.exec.next(t)
	if _, err := e.m.Subscribe(ctx, bob.ID, &a2a.SubscribeToTaskRequest{ID: r.Task.ID}); code(err) != -32001 {
		t.Fatalf("other peer subscribe err = %v", err)
	}
	s1, err := e.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: r.Task.ID})
	must(t, err)
	s2, err := e.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: r.Task.ID})
	must(t, err)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("p")}))
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("f")}))
	k1, k2 := kinds(collect(t, s1)), kinds(collect(t, s2))
	want := "task(TASK_STATE_WORKING) status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) "
	if k1 != want || k2 != want {
		t.Fatalf("streams:\n%s\n%s\nwant %s", k1, k2, want)
	}
	if _, err := e.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: r.Task.ID}); code(err) != -32004 {
		t.Fatalf("subscribe to terminal err = %v", err)
	}
}

func TestPushDeliveriesQueuedForEveryUpdateAfterReveal(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	p := sendParams(alice, "x", nil)
	p.PushConfig = &a2a.TaskPushNotificationConfig{URL: "https://example.test/hook"}
	ch := e.sendAsync(p)
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("f")}))
	wait(t, ch)
	var states []string
	for {
		ds, err := e.store.DueDeliveries(ctx, time.Now().Add(time.Hour), 10)
		must(t, err)
		if len(ds) == 0 {
			break
		}
		var sr a2a.StreamResponse
		must(t, a2a.Unmarshal(ds[0].Body, &sr))
		switch {
		case sr.StatusUpdate != nil:
			states = append(states, string(sr.StatusUpdate.Status.State))
		case sr.ArtifactUpdate != nil:
			states = append(states, "artifact")
		default:
			states = append(states, "other")
		}
		must(t, e.store.CompleteDelivery(ctx, ds[0].ID, false, ""))
	}
	want := fmt.Sprint([]string{"TASK_STATE_WORKING", "artifact", "TASK_STATE_COMPLETED"})
	if fmt.Sprint(states) != want {
		t.Fatalf("deliveries = %v, want %v", states, want)
	}
}

func TestStartFailsTasksLeftRunningByPreviousProcess(t *testing.T) {
	st := store.NewMemory(100)
	ctx := context.Background()
	now := time.Now()
	for id, state := range map[string]a2a.TaskState{"run": a2a.TaskStateWorking, "ask": a2a.TaskStateInputRequired, "done": a2a.TaskStateCompleted} {
		must(t, st.SaveTask(ctx, &store.TaskRecord{Task: a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: state}},
			Owner: alice.ID, CreatedAt: now, UpdatedAt: now}, nil))
	}
	m, err := NewManager(Options{Store: st, Executor: newFakeExec()})
	must(t, err)
	n, err := m.Start(ctx)
	must(t, err)
	defer m.Close(ctx)
	if n != 1 {
		t.Fatalf("failed %d tasks, want 1", n)
	}
	for id, want := range map[string]a2a.TaskState{"run": a2a.TaskStateFailed, "ask": a2a.TaskStateInputRequired, "done": a2a.TaskStateCompleted} {
		task, err := m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: id})
		must(t, err)
		if task.Status.State != want {
			t.Errorf("%s: state %s, want %s", id, task.Status.State, want)
		}
	}
}

func TestManyConcurrentTasksEachGetTheirOwnAnswer(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	// An agent that answers each turn with its own text, in order per context.
	go func() {
		for turn := range e.exec.started {
			go func(turn *Turn) {
				_ = e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("re:" + turn.Message.Text())})
				_ = e.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, "")
			}(turn)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 500)
	for i := 0; i < 500; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			text := fmt.Sprintf("msg-%d", i)
			r, err := e.m.Send(ctx, localParams(text, func(r *a2a.SendMessageRequest) { r.Message.ContextID = fmt.Sprintf("ctx-%d", i%25) }))
			if err != nil {
				errs <- err
				return
			}
			if got := answer(r.Task); got != "re:"+text {
				errs <- fmt.Errorf("task %d got %q", i, got)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAuthRequiredKeepsStreamOpenAndResumesOnFreshCredentials(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "fetch my mail", nil))
	must(t, err)
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("sign in to the mail service first")}))
	must(t, e.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""))
	// A blocking GetTask sees the interrupted state; a resubscriber stays too.
	task, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: turn.TaskID})
	must(t, err)
	if task.Status.State != a2a.TaskStateAuthRequired || task.Status.Message.Text() != "sign in to the mail service first" {
		t.Fatalf("task = %+v", task.Status)
	}
	resub, err := e.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: turn.TaskID})
	must(t, err)
	// The peer comes back on the same task with credentials.
	ch := e.sendAsync(sendParams(alice, "token: abc", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
	again := e.exec.next(t)
	if !again.Continuation || again.TaskID != turn.TaskID {
		t.Fatalf("continuation = %+v", again)
	}
	must(t, e.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("3 new mails")}))
	if r := wait(t, ch); r.err != nil || r.resp.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resumed send = %+v, %v", r.resp, r.err)
	}
	want := "task(TASK_STATE_SUBMITTED) status(TASK_STATE_WORKING) status(TASK_STATE_AUTH_REQUIRED) status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) "
	if got := kinds(collect(t, sub)); got != want {
		t.Fatalf("original stream:\n got %s\nwant %s", got, want)
	}
	want = "task(TASK_STATE_AUTH_REQUIRED) status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) "
	if got := kinds(collect(t, resub)); got != want {
		t.Fatalf("resubscribed stream:\n got %s\nwant %s", got, want)
	}
}

func TestAuthRequiredTaskLeavesMemoryWithItsLastStream(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "x", nil))
	must(t, err)
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("creds?")}))
	if n := e.m.ActiveCount(); n != 1 {
		t.Fatalf("active = %d while a stream follows the task", n)
	}
	sub.Close()
	if n := e.m.ActiveCount(); n != 0 {
		t.Fatalf("active = %d after the last stream closed", n)
	}
	// Still answerable, and still resumable from the store.
	ch := e.sendAsync(sendParams(alice, "creds", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID }))
	again := e.exec.next(t)
	must(t, e.m.Apply(ctx, again.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("ok")}))
	if r := wait(t, ch); r.err != nil || r.resp.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resp = %+v, %v", r.resp, r.err)
	}
}

func TestLateProcessingCompleteOfTheAskingTurnDoesNotEndTheContinuation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "book", nil))
	ask := e.exec.next(t)
	must(t, e.m.Apply(ctx, ask.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("how many?")}))
	wait(t, ch)
	// The peer answers before the host reported the asking turn's end.
	ch = e.sendAsync(sendParams(alice, "four", func(r *a2a.SendMessageRequest) { r.Message.TaskID = ask.TaskID }))
	cont := e.exec.next(t)
	must(t, e.m.EndTurn(ctx, ask.TaskID, OutcomeSuccess, "")) // late: the asking turn
	task, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: ask.TaskID})
	must(t, err)
	if task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the asking turn's late end settled the continuation: %s", task.Status.State)
	}
	must(t, e.m.Apply(ctx, cont.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("booked")}))
	must(t, e.m.EndTurn(ctx, cont.TaskID, OutcomeSuccess, ""))
	if r := wait(t, ch); r.err != nil || answer(r.resp.Task) != "booked" {
		t.Fatalf("resp = %+v, %v", r.resp, r.err)
	}
}

func TestCloseFailsRunningTasksAndStopsTheirHostTurns(t *testing.T) {
	st := store.NewMemory(100)
	ex := newFakeExec()
	m, err := NewManager(Options{Store: st, Executor: ex, RequestTimeout: 5 * time.Second})
	must(t, err)
	_, err = m.Start(context.Background())
	must(t, err)
	ctx := context.Background()
	r, err := m.Send(ctx, sendParams(alice, "long", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	turn := ex.next(t)
	// An auth-required task followed by a stream keeps waiting.
	sub, err := m.Stream(ctx, sendParams(alice, "mail", nil))
	must(t, err)
	authTurn := ex.next(t)
	must(t, m.Apply(ctx, authTurn.TaskID, Update{Kind: UpdateAuthRequired, Message: agentMsg("sign in")}))
	_ = sub
	must(t, m.Close(ctx))
	if ids := ex.cancelledIDs(); len(ids) != 1 || ids[0] != turn.TaskID {
		t.Fatalf("host turns cancelled at close: %v, want [%s]", ids, turn.TaskID)
	}
	rec, err := st.GetTask(ctx, r.Task.ID, "")
	must(t, err)
	if rec.Task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("running task = %s", rec.Task.Status.State)
	}
	rec, err = st.GetTask(ctx, authTurn.TaskID, "")
	must(t, err)
	if rec.Task.Status.State != a2a.TaskStateAuthRequired {
		t.Fatalf("auth-required task = %s", rec.Task.Status.State)
	}
}

func TestInlinePushConfigOnAContinuationIsKept(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "q", nil))
	ask := e.exec.next(t)
	must(t, e.m.Apply(ctx, ask.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("?")}))
	wait(t, ch)
	p := sendParams(alice, "answer", func(r *a2a.SendMessageRequest) { r.Message.TaskID = ask.TaskID })
	p.PushConfig = &a2a.TaskPushNotificationConfig{ID: "later", URL: "https://example.test/hook"}
	ch = e.sendAsync(p)
	cont := e.exec.next(t)
	must(t, e.m.Apply(ctx, cont.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	wait(t, ch)
	pcs, err := e.store.ListPushConfigs(ctx, ask.TaskID)
	must(t, err)
	if len(pcs) != 1 || pcs[0].Config.ID != "later" {
		t.Fatalf("configs = %+v", pcs)
	}
	ds, err := e.store.DueDeliveries(ctx, time.Now().Add(time.Hour), 10)
	must(t, err)
	if len(ds) == 0 || ds[0].ConfigID != "later" {
		t.Fatalf("the continuation's updates were not queued for the new webhook: %+v", ds)
	}
}

// failingStore fails SaveTask while fail is set.
type failingStore struct {
	store.Store
	mu   sync.Mutex
	fail bool
}

func (f *failingStore) SaveTask(ctx context.Context, rec *store.TaskRecord, ds []store.Delivery) error {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return f.Store.SaveTask(ctx, rec, ds)
}

func TestAFailedSaveLeavesTheTaskAsTheStoreHasIt(t *testing.T) {
	fs := &failingStore{Store: store.NewMemory(100)}
	e := newEnv(t, func(o *Options) { o.Store = fs })
	ctx := context.Background()
	r, err := e.m.Send(ctx, sendParams(alice, "x", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	turn := e.exec.next(t)
	fs.mu.Lock()
	fs.fail = true
	fs.mu.Unlock()
	if _, err := e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: r.Task.ID}); err == nil {
		t.Fatal("cancel succeeded although the save failed")
	}
	got, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: r.Task.ID})
	must(t, err)
	if got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("memory ran ahead of the store: %s", got.Status.State)
	}
	fs.mu.Lock()
	fs.fail = false
	fs.mu.Unlock()
	// The host's answer still lands, and the context is free afterwards.
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	e.sendAsync(sendParams(alice, "next", func(r *a2a.SendMessageRequest) { r.Message.ContextID = turn.ContextID }))
	e.exec.next(t)
}

func TestACanceledRequestStillSavesTheUpdateItCaused(t *testing.T) {
	e := newEnv(t, nil)
	r, err := e.m.Send(context.Background(), sendParams(alice, "x", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	e.exec.next(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: r.Task.ID}); err != nil {
		t.Fatalf("cancel with a gone client: %v", err)
	}
	rec, err := e.store.GetTask(context.Background(), r.Task.ID, "")
	must(t, err)
	if rec.Task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("stored state = %s", rec.Task.Status.State)
	}
}

func TestRefusedMessagesToStoredTasksDoNotPinThemInMemory(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "x", nil))
	done := e.exec.next(t)
	must(t, e.m.Apply(ctx, done.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("y")}))
	wait(t, ch)
	ch = e.sendAsync(sendParams(alice, "q", nil))
	asking := e.exec.next(t)
	must(t, e.m.Apply(ctx, asking.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("?")}))
	wait(t, ch)
	for _, id := range []string{done.TaskID, asking.TaskID} {
		_, _ = e.m.Send(ctx, sendParams(bob, "intrude", func(r *a2a.SendMessageRequest) { r.Message.TaskID = id }))
	}
	_, _ = e.m.Send(ctx, sendParams(alice, "again", func(r *a2a.SendMessageRequest) { r.Message.TaskID = done.TaskID }))
	if n := e.m.ActiveCount(); n != 0 {
		t.Fatalf("ActiveCount = %d after refused messages", n)
	}
	// A task waiting for its client takes no host output.
	if err := e.m.Apply(ctx, asking.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("unasked")}); !errors.Is(err, ErrTaskNotRunning) {
		t.Fatalf("output for a waiting task: %v", err)
	}
}

// TestLateEndRacingTheContinuationNeverEndsIt races the asking turn's late
// end against the start of the continuation, many times: whichever comes
// first, the continuation's own answer must decide the task. (EndTurn once
// took its count down before looking at the task, so a continuation that
// started in between was ended by the earlier turn's end.)
func TestLateEndRacingTheContinuationNeverEndsIt(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	for i := range 300 {
		ch := e.sendAsync(sendParams(alice, "book", nil))
		ask := e.exec.next(t)
		must(t, e.m.Apply(ctx, ask.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("how many?")}))
		wait(t, ch)
		ended := make(chan error, 1)
		go func() { ended <- e.m.EndTurn(ctx, ask.TaskID, OutcomeSuccess, "") }()
		ch = e.sendAsync(sendParams(alice, "four", func(r *a2a.SendMessageRequest) { r.Message.TaskID = ask.TaskID }))
		cont := e.exec.next(t)
		must(t, <-ended)
		if err := e.m.Apply(ctx, cont.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("booked")}); err != nil {
			t.Fatalf("round %d: the continuation was ended before its answer: %v", i, err)
		}
		must(t, e.m.EndTurn(ctx, cont.TaskID, OutcomeSuccess, ""))
		if r := wait(t, ch); r.err != nil || answer(r.resp.Task) != "booked" {
			t.Fatalf("round %d: resp = %+v, %v", i, r.resp, r.err)
		}
	}
}

// savesStore counts SaveTask calls per task and remembers the state each
// save stored.
type savesStore struct {
	store.Store
	mu     sync.Mutex
	states map[string][]a2a.TaskState
}

func (s *savesStore) SaveTask(ctx context.Context, rec *store.TaskRecord, ds []store.Delivery) error {
	s.mu.Lock()
	s.states[rec.Task.ID] = append(s.states[rec.Task.ID], rec.Task.Status.State)
	s.mu.Unlock()
	return s.Store.SaveTask(ctx, rec, ds)
}

func (s *savesStore) saved(id string) []a2a.TaskState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.states[id])
}

// nextEvent is the stream's next event, or a failure after 5 s.
func nextEvent(t *testing.T, sub *Subscription) a2a.StreamResponse {
	t.Helper()
	select {
	case ev, ok := <-sub.Events():
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev.Response
	case <-time.After(5 * time.Second):
		t.Fatal("no stream event")
	}
	return a2a.StreamResponse{}
}

func TestAStreamedTaskIsStoredOnceAsItsTurnStarts(t *testing.T) {
	ss := &savesStore{Store: store.NewMemory(100), states: map[string][]a2a.TaskState{}}
	e := newEnv(t, func(o *Options) { o.Store = ss })
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "go", nil))
	must(t, err)
	turn := e.exec.next(t)
	// By the time the host has the turn the task is stored, WORKING, in
	// one write: not SUBMITTED and then WORKING.
	if got := ss.saved(turn.TaskID); !slices.Equal(got, []a2a.TaskState{a2a.TaskStateWorking}) {
		t.Fatalf("saves before the host's output: %v, want one, WORKING", got)
	}
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	if got, want := kinds(collect(t, sub)), "task(TASK_STATE_SUBMITTED) status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) "; got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if got := ss.saved(turn.TaskID); len(got) != 2 || got[1] != a2a.TaskStateCompleted {
		t.Fatalf("saves: %v, want WORKING then COMPLETED", got)
	}
}

func TestAStreamQueuedBehindAnotherTurnGetsItsStoredTaskAtOnce(t *testing.T) {
	ss := &savesStore{Store: store.NewMemory(100), states: map[string][]a2a.TaskState{}}
	e := newEnv(t, func(o *Options) { o.Store = ss })
	ctx := context.Background()
	first := e.sendAsync(localParams("1", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "c1" }))
	t1 := e.exec.next(t)
	sub, err := e.m.Stream(ctx, localParams("2", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "c1" }))
	must(t, err)
	// The context is busy: the stream's first event comes now, and the
	// task it names is stored (SUBMITTED) before the agent gets to it.
	ev := nextEvent(t, sub)
	if ev.Task == nil || ev.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("first event = %+v, want the SUBMITTED task", ev)
	}
	if rec, err := ss.GetTask(ctx, ev.Task.ID, ""); err != nil || rec.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("the queued task in the store: %+v, %v; want it SUBMITTED", rec, err)
	}
	e.exec.none(t, 50*time.Millisecond)
	must(t, e.m.Apply(ctx, t1.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("one")}))
	wait(t, first)
	t2 := e.exec.next(t)
	if t2.TaskID != ev.Task.ID {
		t.Fatalf("the second turn is for task %s, want %s", t2.TaskID, ev.Task.ID)
	}
	must(t, e.m.Apply(ctx, t2.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("two")}))
	if got, want := kinds(collect(t, sub)), "status(TASK_STATE_WORKING) artifact status(TASK_STATE_COMPLETED) "; got != want {
		t.Fatalf("events after the first:\n got %s\nwant %s", got, want)
	}
	if got := ss.saved(t2.TaskID); !slices.Equal(got, []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted}) {
		t.Fatalf("saves: %v", got)
	}
}

func TestANonBlockingSendStoresItsTaskOnceAsTheTurnStarts(t *testing.T) {
	ss := &savesStore{Store: store.NewMemory(100), states: map[string][]a2a.TaskState{}}
	e := newEnv(t, func(o *Options) { o.Store = ss })
	ctx := context.Background()
	r, err := e.m.Send(ctx, sendParams(alice, "work", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	// The answer is the submitted task, stored (WORKING: the turn
	// started) in one write before the answer.
	if r.Task == nil || r.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("resp = %+v", r)
	}
	if got := ss.saved(r.Task.ID); !slices.Equal(got, []a2a.TaskState{a2a.TaskStateWorking}) {
		t.Fatalf("saves before the answer: %v, want one, WORKING", got)
	}
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	if got := ss.saved(r.Task.ID); !slices.Equal(got, []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted}) {
		t.Fatalf("saves: %v, want WORKING then COMPLETED", got)
	}
}

func TestANonBlockingSendQueuedBehindAnotherTurnIsStoredBeforeItsAnswer(t *testing.T) {
	ss := &savesStore{Store: store.NewMemory(100), states: map[string][]a2a.TaskState{}}
	e := newEnv(t, func(o *Options) { o.Store = ss })
	ctx := context.Background()
	first := e.sendAsync(localParams("1", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "c1" }))
	t1 := e.exec.next(t)
	r, err := e.m.Send(ctx, localParams("2", func(r *a2a.SendMessageRequest) {
		r.Message.ContextID = "c1"
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	if rec, err := ss.GetTask(ctx, r.Task.ID, ""); err != nil || rec.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("the queued task in the store: %+v, %v; want it SUBMITTED", rec, err)
	}
	must(t, e.m.Apply(ctx, t1.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("one")}))
	wait(t, first)
	if t2 := e.exec.next(t); t2.TaskID != r.Task.ID {
		t.Fatalf("the second turn is for task %s, want %s", t2.TaskID, r.Task.ID)
	}
}

// configFirstStore records deliveries saved before their push config: a
// dispatcher that picks such a delivery up finds no config and drops it.
type configFirstStore struct {
	store.Store
	mu     sync.Mutex
	orphan []string
}

func (s *configFirstStore) SaveTask(ctx context.Context, rec *store.TaskRecord, ds []store.Delivery) error {
	for _, d := range ds {
		if _, err := s.Store.GetPushConfig(ctx, d.TaskID, d.ConfigID); err != nil {
			s.mu.Lock()
			s.orphan = append(s.orphan, d.ConfigID)
			s.mu.Unlock()
		}
	}
	return s.Store.SaveTask(ctx, rec, ds)
}

func TestAWebhookOfANewTaskIsStoredBeforeItsFirstNotification(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(e *env, p SendParams)
	}{
		{"stream", func(e *env, p SendParams) {
			if _, err := e.m.Stream(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}},
		{"non-blocking send", func(e *env, p SendParams) {
			p.Request.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
			if _, err := e.m.Send(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &configFirstStore{Store: store.NewMemory(100)}
			e := newEnv(t, func(o *Options) { o.Store = cs })
			p := sendParams(alice, "x", nil)
			p.PushConfig = &a2a.TaskPushNotificationConfig{URL: "https://example.test/hook"}
			tc.run(e, p)
			turn := e.exec.next(t)
			must(t, e.m.Apply(context.Background(), turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("f")}))
			ds, err := cs.DueDeliveries(context.Background(), time.Now().Add(time.Hour), 10)
			must(t, err)
			if len(ds) == 0 {
				t.Fatal("no notification queued")
			}
			var first a2a.StreamResponse
			must(t, a2a.Unmarshal(ds[0].Body, &first))
			if first.StatusUpdate == nil || first.StatusUpdate.Status.State != a2a.TaskStateWorking {
				t.Errorf("first notification = %s, want the turn's WORKING", ds[0].Body)
			}
			cs.mu.Lock()
			defer cs.mu.Unlock()
			if len(cs.orphan) > 0 {
				t.Errorf("notifications saved before their config was: %v", cs.orphan)
			}
		})
	}
}
