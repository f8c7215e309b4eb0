package replicas_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// stepsAfter is what a stream of the "steps" task shows after a snapshot
// whose status said last ("" for none): the remaining steps and the end.
func stepsAfter(last string) []string {
	var out []string
	seen := last == ""
	for _, s := range []string{"step 1", "step 2", "step 3", "step 4", "step 5"} {
		if seen {
			out = append(out, "status:WORKING:"+s)
		}
		seen = seen || s == last
	}
	return out
}

// withoutProgress drops the "working" progress of the hang scenario (a
// stream may open just before or after it was saved).
func withoutProgress(evs []string) []string {
	return slices.DeleteFunc(evs, func(e string) bool { return e == "status:WORKING:working" })
}

// TestTasksCreatedOnOneReplicaAreServedByTheOthers: a task created on
// replica 0 is read, listed, streamed and given push configs on replicas
// 1 and 2, and a stream broken on one replica is re-attached on another.
func TestTasksCreatedOnOneReplicaAreServedByTheOthers(t *testing.T) {
	rc := newReceiver(t)
	rs := startReplicas(t, pgDSN(t), 3, nil)
	tk := rs[0].send(t, "steps for the others", true, nil)
	// Streamed on 1 and 2 at once (checked below).
	subs := []*stream{
		rs[1].openStream(t, "SubscribeToTask", map[string]any{"id": tk.ID}),
		rs[2].openStream(t, "SubscribeToTask", map[string]any{"id": tk.ID}),
	}

	// Read and listed anywhere.
	for _, r := range rs[1:] {
		got := r.getTask(t, tk.ID)
		if got.ID != tk.ID || got.ContextID != tk.ContextID || got.Status.State.Terminal() {
			t.Errorf("GetTask on %s: %+v", r.url, got.Status)
		}
		var list a2a.ListTasksResponse
		if err := a2a.Unmarshal(r.ok(t, "ListTasks", map[string]any{"contextId": tk.ContextID}, "List Tasks Response"), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Tasks) != 1 || list.Tasks[0].ID != tk.ID || list.TotalSize != 1 {
			t.Errorf("ListTasks on %s: %+v", r.url, list)
		}
		// Another peer sees nothing, on every replica.
		if _, e := r.call(t, tokBob, "GetTask", map[string]any{"id": tk.ID}); e == nil || e.Code != -32001 {
			t.Errorf("bob's GetTask on %s: %v, want task not found", r.url, e)
		}
	}

	// Push configs: created on 1, read and listed on 2, deleted on 0.
	cfg := map[string]any{"taskId": tk.ID, "id": "hook-1", "url": rc.url("/hook-1")}
	rs[1].ok(t, "CreateTaskPushNotificationConfig", cfg, "")
	rs[2].ok(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "hook-1"}, "")
	var pcs a2a.ListTaskPushNotificationConfigsResponse
	if err := a2a.Unmarshal(rs[2].ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": tk.ID}, ""), &pcs); err != nil || len(pcs.Configs) != 1 {
		t.Fatalf("configs listed on replica 2: %+v, %v", pcs, err)
	}
	rs[0].ok(t, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "hook-1"}, "")

	// Both streams: the snapshot, then every later step in order, then the
	// answer.
	for i, s := range subs {
		first, ok := s.next(t, 10*time.Second)
		if !ok || first.Task == nil {
			t.Fatalf("stream %d: first event %s, want the task", i, describe(first))
		}
		want := append(stepsAfter(statusText(first.Task.Status)), "artifact:"+tk.ID+"-answer-1", "status:COMPLETED")
		if got := s.rest(t, 20*time.Second); !slices.Equal(got, want) {
			t.Errorf("stream %d after snapshot %q:\n got  %v\n want %v", i, statusText(first.Task.Status), got, want)
		}
	}
	if got := rs[2].getTask(t, tk.ID); got.Status.State != a2a.TaskStateCompleted || len(got.History) < 1 || len(got.Artifacts) == 0 {
		t.Errorf("the finished task on replica 2: %s with %d history entries and %d artifacts", got.Status.State, len(got.History), len(got.Artifacts))
	}
}

// TestStreamReattachesOnAnotherReplica: a client streaming a message on
// replica 0 loses its connection and re-attaches with SubscribeToTask on
// replica 2; what it got before and after covers every step once.
func TestStreamReattachesOnAnotherReplica(t *testing.T) {
	rs := startReplicas(t, pgDSN(t), 3, nil)
	s := rs[0].openStream(t, "SendStreamingMessage", map[string]any{
		"message": map[string]any{"messageId": a2a.NewID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "steps to re-attach"}}},
	})
	first, ok := s.next(t, 10*time.Second)
	if !ok || first.Task == nil {
		t.Fatalf("first event %s, want the task", describe(first))
	}
	id := first.Task.ID
	var before []string
	for len(before) < 2 {
		ev, ok := s.next(t, 10*time.Second)
		if !ok {
			t.Fatalf("the stream ended early: %v", before)
		}
		before = append(before, describe(ev))
	}
	s.cancel() // the connection breaks

	re := rs[2].openStream(t, "SubscribeToTask", map[string]any{"id": id})
	snap, ok := re.next(t, 10*time.Second)
	if !ok || snap.Task == nil || snap.Task.ID != id {
		t.Fatalf("re-attached stream starts with %s, want the task", describe(snap))
	}
	after := re.rest(t, 20*time.Second)
	want := append(stepsAfter(statusText(snap.Task.Status)), "artifact:"+id+"-answer-1", "status:COMPLETED")
	if !slices.Equal(after, want) {
		t.Errorf("after re-attaching at %q:\n got  %v\n want %v", statusText(snap.Task.Status), after, want)
	}
	// Nothing seen before the break is missing from the snapshot.
	last := statusText(snap.Task.Status)
	for _, b := range before {
		if step, ok := strings.CutPrefix(b, "status:WORKING:"); ok && step > last && last != "" {
			t.Errorf("the snapshot (%q) is older than an event already streamed (%q)", last, step)
		}
	}
}

// TestCancelOnAnyReplicaStopsTheOwningHost: the task runs on replica 0's
// host; CancelTask on replica 1 cancels it, and replica 0's host — only
// it — gets CancelTurn. A stream on replica 2 sees the cancellation.
func TestCancelOnAnyReplicaStopsTheOwningHost(t *testing.T) {
	rs := startReplicas(t, pgDSN(t), 3, nil)
	tk := rs[0].send(t, "hang until canceled", true, nil)
	ctx, cancel := contextWithTimeout(20 * time.Second)
	defer cancel()
	if _, err := rs[0].h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindSend && c.TaskID == tk.ID
	}); err != nil {
		t.Fatalf("the host never started the turn: %v", err)
	}
	sub := rs[2].openStream(t, "SubscribeToTask", map[string]any{"id": tk.ID})
	if first, ok := sub.next(t, 10*time.Second); !ok || first.Task == nil {
		t.Fatalf("stream on replica 2 starts with %s", describe(first))
	}

	got := task(t, rs[1].ok(t, "CancelTask", map[string]any{"id": tk.ID}, "Task"))
	if got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask on replica 1: %s", got.Status.State)
	}
	if _, err := rs[0].h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.TaskID == tk.ID
	}); err != nil {
		t.Fatalf("replica 0's host never got CancelTurn: %v", err)
	}
	for i, r := range rs[1:] {
		for _, c := range r.h.Recorder().CallsOf(testharness.KindCancelTurn) {
			if c.TaskID == tk.ID {
				t.Errorf("replica %d's host got CancelTurn for a task it does not run", i+1)
			}
		}
	}
	if rest := withoutProgress(sub.rest(t, 10*time.Second)); len(rest) != 1 || !strings.HasPrefix(rest[0], "status:CANCELED") {
		t.Errorf("stream on replica 2 after the cancel: %v", rest)
	}
	// Every replica now answers that it cannot be canceled again.
	for _, r := range rs {
		if _, e := r.call(t, tokAlice, "CancelTask", map[string]any{"id": tk.ID}); e == nil || e.Code != -32002 {
			t.Errorf("second CancelTask on %s: %v, want task not cancelable", r.url, e)
		}
	}
}

// TestKilledReplicasTaskFailsOnTheOthers: replica 0's plugin is killed
// (SIGKILL, not restarted) while its host runs a task. After the lease,
// another replica fails the task with the documented reason; a stream on
// replica 1 sees it, GetTask on replica 2 reports it, and the task's
// webhook is told.
func TestKilledReplicasTaskFailsOnTheOthers(t *testing.T) {
	rc := newReceiver(t)
	rs := startReplicas(t, pgDSN(t), 3, nil)
	tk := rs[0].send(t, "hang on replica 0", true, map[string]any{"id": "w", "url": rc.url("/w")})
	ctx, cancel := contextWithTimeout(20 * time.Second)
	defer cancel()
	if _, err := rs[0].h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindSend && c.TaskID == tk.ID
	}); err != nil {
		t.Fatalf("the host never started the turn: %v", err)
	}
	sub := rs[1].openStream(t, "SubscribeToTask", map[string]any{"id": tk.ID})
	if first, ok := sub.next(t, 10*time.Second); !ok || first.Task == nil || first.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("stream on replica 1 starts with %s", describe(first))
	}

	if err := rs[0].h.Kill(testharness.A2APluginName); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	rest := withoutProgress(sub.rest(t, 30*time.Second))
	const reason = "The agent stopped while working on this task (the replica running it stopped). Send the request again."
	if len(rest) != 1 || rest[0] != "status:FAILED:"+reason {
		t.Fatalf("stream on replica 1 after the kill: %v", rest)
	}
	took := time.Since(killed)
	t.Logf("the task failed %v after its replica was killed (lease %s)", took.Round(time.Millisecond), replicaLease)
	lease, _ := time.ParseDuration(replicaLease)
	if took < lease/3 {
		t.Errorf("the task failed %v after the kill, before the lease (%s) could expire", took, replicaLease)
	}
	got := rs[2].getTask(t, tk.ID)
	if got.Status.State != a2a.TaskStateFailed || statusText(got.Status) != reason {
		t.Errorf("GetTask on replica 2: %s %q", got.Status.State, statusText(got.Status))
	}
	eventually(t, 20*time.Second, "the webhook hears of the failure", func() bool {
		for _, d := range rc.acked() {
			if d.taskID == tk.ID && d.desc == "status:FAILED:"+reason {
				return true
			}
		}
		return false
	})
}

// TestPushDeliveredOnceWhenAReplicaDies: twelve tasks spread over three
// replicas, each with a webhook. The receiver holds every POST until
// replica 0 is killed, so replica 0 dies with deliveries in flight that it
// never saw acknowledged; once its claims lapse the others send them.
// Every notification is acknowledged exactly once (by X-A2A-Delivery-Id),
// each webhook gets its task's notifications in order, and the outbox
// ends empty with nothing given up.
func TestPushDeliveredOnceWhenAReplicaDies(t *testing.T) {
	dsn := pgDSN(t)
	rc := newReceiver(t)
	rc.hold()
	rs := startReplicas(t, dsn, 3, nil)
	const n = 12
	ids := make([]string, n)
	for i := range n {
		tk := rs[i%3].send(t, "echo me", false, map[string]any{"id": "w", "url": rc.url("/t" + string(rune('a'+i)))})
		if tk.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("task %d: %s", i, tk.Status.State)
		}
		ids[i] = tk.ID
	}
	// Each webhook has its first notification in flight, held.
	eventually(t, 20*time.Second, "every webhook has a POST in flight", func() bool { return rc.heldCount() >= n })
	if err := rs[0].h.Kill(testharness.A2APluginName); err != nil {
		t.Fatal(err)
	}
	// Its connections close; the receiver's server notices that and ends
	// those handlers' contexts. Generous for a loaded machine: a handler
	// released before it noticed would acknowledge a POST nobody saw.
	time.Sleep(time.Second)
	aborted := rc.release()
	t.Logf("replica 0 died with %d POSTs in flight", aborted)

	eventually(t, 40*time.Second, "the outbox drains", func() bool {
		return outboxEmpty(t, dsn)
	})
	acked := rc.acked()
	perID := map[string]int{}
	perTask := map[string][]string{}
	for _, d := range acked {
		perID[d.id]++
		perTask[d.taskID] = append(perTask[d.taskID], d.desc)
	}
	for id, k := range perID {
		if k != 1 {
			t.Errorf("delivery %s acknowledged %d times", id, k)
		}
	}
	for _, id := range ids {
		got := perTask[id]
		if len(got) != 3 || got[0] != "status:WORKING" || !strings.HasPrefix(got[1], "artifact:") || got[2] != "status:COMPLETED" {
			t.Errorf("task %s's webhook got %v, want WORKING, the answer, COMPLETED in order", id, got)
		}
	}
	if failed := count(t, dsn, "SELECT count(*) FROM deliveries_failed"); failed != 0 {
		t.Errorf("%d deliveries were given up", failed)
	}
	if aborted == 0 {
		t.Log("note: replica 0 had no POST in flight when it died this time; the takeover was not exercised")
	}
}

// TestSeveralAgentsOnReplicas: hosts with two agents (main, second) run as
// two replicas on one database. A task sent to the second agent on replica
// 0 is that agent's on every replica — read and canceled through
// /agents/second/ on replica 1, which forwards the cancel to replica 0's
// host — and is not the default agent's anywhere.
func TestSeveralAgentsOnReplicas(t *testing.T) {
	agents := []testharness.HostAgent{{ID: "main", Name: "Main"}, {ID: "second", Name: "Second"}}
	rs := launch(t, pgDSN(t), 2, nil, "", agents)
	second := make([]*replica, len(rs))
	for i, r := range rs {
		second[i] = &replica{h: r.h, url: strings.TrimSuffix(r.url, "/") + "/agents/second/"}
	}
	tk := second[0].send(t, "hang until canceled", true, nil)
	ctx, cancel := contextWithTimeout(20 * time.Second)
	defer cancel()
	turn, err := rs[0].h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindSend && c.TaskID == tk.ID
	})
	if err != nil {
		t.Fatalf("the host never started the turn: %v", err)
	}
	if turn.Send().GetAgentId() != "second" {
		t.Fatalf("the turn's output came from agent %q, want second", turn.Send().GetAgentId())
	}
	if got := second[1].getTask(t, tk.ID); got.ID != tk.ID || got.Status.State.Terminal() {
		t.Fatalf("GetTask of the second agent on replica 1: %+v", got.Status)
	}
	for _, r := range rs {
		if _, e := r.call(t, tokAlice, "GetTask", map[string]any{"id": tk.ID}); e == nil || e.Code != -32001 {
			t.Errorf("the default agent's GetTask on %s: %v, want task not found", r.url, e)
		}
	}
	got := task(t, second[1].ok(t, "CancelTask", map[string]any{"id": tk.ID}, "Task"))
	if got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask on replica 1: %s", got.Status.State)
	}
	if _, err := rs[0].h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.TaskID == tk.ID
	}); err != nil {
		t.Fatalf("replica 0's host never got CancelTurn: %v", err)
	}
	// The default agent still works on both replicas.
	if echo := rs[1].send(t, "hello", false, nil); echo.Status.State != a2a.TaskStateCompleted {
		t.Errorf("the default agent's send on replica 1: %s", echo.Status.State)
	}
}
