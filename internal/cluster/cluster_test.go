package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/store/storetest"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// host is a scripted host: turns go to a channel, cancels are recorded.
type host struct {
	started chan *tasks.Turn
	mu      sync.Mutex
	cancels []string
}

func (h *host) StartTurn(ctx context.Context, t *tasks.Turn) error { h.started <- t; return nil }
func (h *host) CancelTurn(ctx context.Context, t *tasks.Turn, reason string) error {
	h.mu.Lock()
	h.cancels = append(h.cancels, t.TaskID)
	h.mu.Unlock()
	return nil
}

func (h *host) cancelled(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.cancels, id)
}

// node is one replica: store, cluster, manager and host.
type node struct {
	st   *store.Postgres
	c    *Cluster
	m    *tasks.Manager
	host *host
}

func startNode(t *testing.T, dsn, name string, lease time.Duration) *node {
	t.Helper()
	st, c := openReplica(t, dsn, name, lease)
	h := &host{started: make(chan *tasks.Turn, 100)}
	n := &node{st: st, c: c, host: h}
	t.Cleanup(func() { n.stop() })
	n.m = startManager(t, st, c, h)
	return n
}

// openReplica opens replica name's store and cluster (closed by the
// caller's clean-up).
func openReplica(t *testing.T, dsn, name string, lease time.Duration) (*store.Postgres, *Cluster) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, dsn, store.PostgresOptions{Replica: name})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(ctx, Options{Store: st, Lease: lease, ForwardTimeout: 5 * time.Second})
	if err != nil {
		_ = st.Close()
		t.Fatal(err)
	}
	return st, c
}

// startManager starts a task manager on st and c for h (Start runs the
// cluster for it).
func startManager(t *testing.T, st tasks.Store, c tasks.Cluster, h *host) *tasks.Manager {
	t.Helper()
	m, err := tasks.NewManager(tasks.Options{Store: st, Executor: h, RequestTimeout: 5 * time.Second, Cluster: c})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

func (n *node) stop() {
	if n.m != nil {
		_ = n.m.Close(context.Background())
	}
	_ = n.c.Close(context.Background())
	_ = n.st.Close()
}

var alice = security.Identity{ID: "peer:alice", Tier: security.TierTrusted, Authenticated: true}

// start sends a non-blocking message to n and returns the task id once n's
// host has the turn.
func (n *node) start(t *testing.T, text string) string {
	t.Helper()
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart(text)),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}}
	resp, err := n.m.Send(context.Background(), tasks.SendParams{Caller: alice, Scope: alice.ID, Request: req})
	if err != nil || resp.Task == nil {
		t.Fatalf("Send: %+v, %v", resp, err)
	}
	select {
	case <-n.host.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the host got no turn")
	}
	return resp.Task.ID
}

func progress(text string) tasks.Update {
	m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart(text))
	return tasks.Update{Kind: tasks.UpdateProgress, Message: &m}
}

func final(text string) tasks.Update {
	m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart(text))
	return tasks.Update{Kind: tasks.UpdateFinal, Message: &m}
}

// statusText is the text of a status message, or "".
func statusText(s a2a.TaskStatus) string {
	if s.Message == nil || len(s.Message.Parts) == 0 {
		return ""
	}
	return s.Message.Parts[0].TextValue()
}

// collect reads a stream to its end: the snapshot's state and status text,
// then one line per event.
func collect(t *testing.T, sub *tasks.Subscription) []string {
	t.Helper()
	var out []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				if err := sub.Err(); err != nil {
					t.Errorf("stream ended with %v", err)
				}
				return out
			}
			switch r := ev.Response; {
			case r.Task != nil:
				out = append(out, "task:"+string(r.Task.Status.State)+":"+statusText(r.Task.Status))
			case r.StatusUpdate != nil:
				out = append(out, "status:"+string(r.StatusUpdate.Status.State)+":"+statusText(r.StatusUpdate.Status))
			case r.ArtifactUpdate != nil:
				out = append(out, "artifact")
			}
		case <-timeout:
			t.Fatalf("stream did not end; got %v", out)
		}
	}
}

// TestFollowerGetsEveryEventAfterItsSnapshot subscribes on replica b while
// replica a saves a burst of updates: whatever the snapshot caught, the
// events continue it with nothing missing and nothing twice.
func TestFollowerGetsEveryEventAfterItsSnapshot(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	a, b := startNode(t, dsn, "a", 5*time.Second), startNode(t, dsn, "b", 5*time.Second)
	ctx := context.Background()
	for round := range 3 {
		id := a.start(t, "burst")
		const n = 150
		go func() {
			for i := range n {
				if err := a.m.Apply(ctx, id, progress(fmt.Sprintf("p%03d", i))); err != nil {
					t.Error(err)
					return
				}
			}
			if err := a.m.Apply(ctx, id, final("done")); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(time.Duration(round) * 5 * time.Millisecond)
		sub, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: id})
		if err != nil {
			if a2aCode(err) == a2a.CodeUnsupportedOperation {
				continue // finished before we subscribed
			}
			t.Fatal(err)
		}
		got := collect(t, sub)
		if len(got) < 3 || !strings.HasPrefix(got[0], "task:TASK_STATE_WORKING") {
			t.Fatalf("round %d: stream %v", round, got)
		}
		first := 0
		if s := strings.TrimPrefix(got[0], "task:TASK_STATE_WORKING:p"); s != got[0] {
			fmt.Sscanf(s, "%d", &first)
			first++
		}
		var want []string
		for i := first; i < n; i++ {
			want = append(want, fmt.Sprintf("status:TASK_STATE_WORKING:p%03d", i))
		}
		want = append(want, "artifact", "status:TASK_STATE_COMPLETED:")
		if !slices.Equal(got[1:], want) {
			t.Fatalf("round %d: after the snapshot %q the stream was\n%v\nwant\n%v", round, got[0], got[1:], want)
		}
	}
}

func a2aCode(err error) int {
	if e, ok := err.(*a2a.Error); ok {
		return e.Code
	}
	return 0
}

func TestCancelIsForwardedToTheReplicaRunningTheTurn(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	a, b := startNode(t, dsn, "a", 5*time.Second), startNode(t, dsn, "b", 5*time.Second)
	ctx := context.Background()
	id := a.start(t, "long work")
	sub, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	task, err := b.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("Cancel on b = %+v, %v", task, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !a.host.cancelled(id) {
		if time.Now().After(deadline) {
			t.Fatal("a's host never got CancelTurn")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if b.host.cancelled(id) {
		t.Error("b's host got CancelTurn for a task it does not run")
	}
	if got := collect(t, sub); len(got) != 2 || !strings.HasPrefix(got[1], "status:TASK_STATE_CANCELED") {
		t.Errorf("stream on b: %v", got)
	}
	// The answer of the owning replica comes back as an A2A error.
	if _, err := b.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: id}); a2aCode(err) != a2a.CodeTaskNotCancelable {
		t.Errorf("second cancel: %v", err)
	}
	// A push config created on b reaches the turn running on a.
	id2 := a.start(t, "more work")
	if _, err := b.m.CreatePushConfig(ctx, alice.ID, alice.ID, a2a.TaskPushNotificationConfig{TaskID: id2, ID: "hook", URL: "https://h.example"}); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Apply(ctx, id2, final("ok")); err != nil {
		t.Fatal(err)
	}
	ds, err := a.st.DueDeliveries(ctx, time.Now().Add(time.Minute), 0)
	if err != nil || len(ds) != 1 || ds[0].ConfigID != "hook" {
		t.Errorf("deliveries after a config made on b: %+v, %v", ds, err)
	}
}

// TestDeadReplicasTasksAreFailedAfterTheLease: replica a stops renewing
// its lease (it crashed); after the lease, b fails a's running task, and
// a stream on b sees the failure. a's interrupted task keeps waiting.
func TestDeadReplicasTasksAreFailedAfterTheLease(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	// Long enough that a renewal delayed by a loaded machine does not
	// orphan a's tasks before the "crash", nor end the lease right after.
	const lease = 3 * time.Second
	a := startNode(t, dsn, "a", lease)
	b := startNode(t, dsn, "b", lease)
	ctx := context.Background()
	running := a.start(t, "running")
	waiting := a.start(t, "question")
	m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart("which one?"))
	if err := a.m.Apply(ctx, waiting, tasks.Update{Kind: tasks.UpdateInputRequired, Message: &m}); err != nil {
		t.Fatal(err)
	}
	sub, err := b.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: running})
	if err != nil {
		t.Fatal(err)
	}
	// a "crashes": its background work stops, its lease is not renewed
	// and not given up.
	a.c.stop()
	a.c.wg.Wait()
	crashed := time.Now()
	got := collect(t, sub)
	// Renewed and checked every lease/3, the lease runs out 2/3 to 3/3 of
	// it after the crash; lease/2 leaves room for a late renewal.
	if took := time.Since(crashed); took < lease/2 {
		t.Errorf("the task was failed %v after the crash, before the lease (%v) ran out", took, lease)
	}
	if len(got) != 2 || got[1] != "status:TASK_STATE_FAILED:"+tasks.OrphanReason {
		t.Fatalf("stream on b: %v", got)
	}
	if rec, _ := b.st.GetTask(ctx, waiting, ""); rec.Task.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("the interrupted task is %s, want it still waiting for input", rec.Task.Status.State)
	}
	// a was only cut off: its late answer is refused, b's failure stands.
	if err := a.m.Apply(ctx, running, final("late")); err == nil {
		t.Error("a's late answer was accepted")
	}
	if rec, _ := b.st.GetTask(ctx, running, ""); rec.Task.Status.State != a2a.TaskStateFailed {
		t.Errorf("after a's late answer the task is %s", rec.Task.Status.State)
	}
}

// TestAuthRequiredStreamsFollowTheTaskToTheReplicaThatResumesIt: streams
// on replica a stay open while the task waits for credentials; the
// credentials reach replica b, whose host resumes and finishes the task,
// and every stream on a gets each event of the resumed turn once. (First
// output AUTH_REQUIRED, which first stores the task, or after progress:
// the streams follow the task from after or from before that update.)
func TestAuthRequiredStreamsFollowTheTaskToTheReplicaThatResumesIt(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	a, b := startNode(t, dsn, "a", 5*time.Second), startNode(t, dsn, "b", 5*time.Second)
	ctx := context.Background()
	for _, progressFirst := range []bool{false, true} {
		req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("fetch my mail"))}
		sub, err := a.m.Stream(ctx, tasks.SendParams{Caller: alice, Scope: alice.ID, Request: req})
		if err != nil {
			t.Fatal(err)
		}
		var turn *tasks.Turn
		select {
		case turn = <-a.host.started:
		case <-time.After(10 * time.Second):
			t.Fatal("a's host got no turn")
		}
		id := turn.TaskID
		want := []string{"task:TASK_STATE_SUBMITTED:", "status:TASK_STATE_WORKING:"}
		var late *tasks.Subscription
		if progressFirst {
			if err := a.m.Apply(ctx, id, progress("looking")); err != nil {
				t.Fatal(err)
			}
			want = append(want, "status:TASK_STATE_WORKING:looking")
			if late, err = a.m.Subscribe(ctx, alice.ID, &a2a.SubscribeToTaskRequest{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		ask := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart("sign in first"))
		if err := a.m.Apply(ctx, id, tasks.Update{Kind: tasks.UpdateAuthRequired, Message: &ask}); err != nil {
			t.Fatal(err)
		}
		if err := a.m.EndTurn(ctx, id, tasks.OutcomeSuccess, ""); err != nil {
			t.Fatal(err)
		}
		if n := a.m.ActiveCount(); n != 0 {
			t.Errorf("a keeps %d tasks while its streams follow through the cluster", n)
		}
		resumed := make(chan error, 1)
		go func() {
			msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart("token: abc"))
			msg.TaskID = id
			resp, err := b.m.Send(ctx, tasks.SendParams{Caller: alice, Scope: alice.ID, Request: &a2a.SendMessageRequest{Message: msg}})
			if err == nil && (resp.Task == nil || resp.Task.Status.State != a2a.TaskStateCompleted) {
				err = fmt.Errorf("resumed send on b answered %+v", resp)
			}
			resumed <- err
		}()
		select {
		case again := <-b.host.started:
			if !again.Continuation || again.TaskID != id {
				t.Fatalf("b's host got %+v", again)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("b's host got no turn")
		}
		if err := b.m.Apply(ctx, id, final("3 new mails")); err != nil {
			t.Fatal(err)
		}
		if err := <-resumed; err != nil {
			t.Fatal(err)
		}
		rest := []string{"status:TASK_STATE_AUTH_REQUIRED:sign in first", "status:TASK_STATE_WORKING:", "artifact", "status:TASK_STATE_COMPLETED:"}
		if got := collect(t, sub); !slices.Equal(got, append(want, rest...)) {
			t.Errorf("progress first %v: stream on a:\n got  %v\n want %v", progressFirst, got, append(want, rest...))
		}
		if late != nil {
			wantLate := append([]string{"task:TASK_STATE_WORKING:looking"}, rest...)
			if got := collect(t, late); !slices.Equal(got, wantLate) {
				t.Errorf("second stream on a:\n got  %v\n want %v", got, wantLate)
			}
		}
	}
}

// agentsNode is one replica of a host with several agents: one store and
// one cluster, and per agent a task manager on the agent's views of both.
type agentsNode struct {
	st     *store.Postgres
	c      *Cluster
	agents map[string]*node
}

func startAgentsNode(t *testing.T, dsn, name string, lease time.Duration, agents ...string) *agentsNode {
	t.Helper()
	st, c := openReplica(t, dsn, name, lease)
	n := &agentsNode{st: st, c: c, agents: map[string]*node{}}
	t.Cleanup(func() {
		for _, a := range n.agents {
			_ = a.m.Close(context.Background())
		}
		_ = c.Close(context.Background())
		_ = st.Close()
	})
	for _, ag := range agents {
		h := &host{started: make(chan *tasks.Turn, 100)}
		n.agents[ag] = &node{st: st, c: c, m: startManager(t, store.ForAgent(st, ag), c.ForAgent(ag), h), host: h}
	}
	return n
}

// TestSeveralAgentsShareOneClusterPerReplica: a host with two agents runs
// them on PostgreSQL replicas. A task is saved as its agent's, a cancel
// that reaches another replica is done by the same agent's manager on the
// replica running it (the other agent's host is not asked), and when that
// replica dies each agent's running task is failed by the surviving
// replica's manager of that agent.
func TestSeveralAgentsShareOneClusterPerReplica(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	const lease = 3 * time.Second
	a := startAgentsNode(t, dsn, "a", lease, "alpha", "beta")
	b := startAgentsNode(t, dsn, "b", lease, "alpha", "beta")
	ctx := context.Background()

	id := a.agents["beta"].start(t, "long work")
	if rec, err := a.st.GetTask(ctx, id, ""); err != nil || rec.Agent != "beta" {
		t.Fatalf("stored task = %+v, %v; want it saved as beta's", rec, err)
	}
	// Another agent does not see it, on either replica.
	if _, err := b.agents["alpha"].m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: id}); a2aCode(err) != a2a.CodeTaskNotFound {
		t.Fatalf("cancel of beta's task through alpha = %v; want task not found", err)
	}
	task, err := b.agents["beta"].m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("Cancel on b = %+v, %v", task, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !a.agents["beta"].host.cancelled(id) {
		if time.Now().After(deadline) {
			t.Fatal("beta's host on a never got CancelTurn")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, n := range []*node{a.agents["alpha"], b.agents["alpha"], b.agents["beta"]} {
		if n.host.cancelled(id) {
			t.Error("a host that does not run the task got its CancelTurn")
		}
	}

	ra := a.agents["alpha"].start(t, "alpha's work")
	rb := a.agents["beta"].start(t, "beta's work")
	a.c.stop() // a crashes: no renewal, no goodbye
	a.c.wg.Wait()
	for _, tc := range []struct{ id, agent string }{{ra, "alpha"}, {rb, "beta"}} {
		deadline := time.Now().Add(4 * lease)
		for {
			rec, err := b.st.GetTask(ctx, tc.id, "")
			if err != nil {
				t.Fatal(err)
			}
			if rec.Task.Status.State == a2a.TaskStateFailed {
				if rec.Agent != tc.agent || statusText(rec.Task.Status) != tasks.OrphanReason {
					t.Errorf("failed orphan = agent %q, %q; want agent %q and the orphan reason", rec.Agent, statusText(rec.Task.Status), tc.agent)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's task of the dead replica is still %s", tc.agent, rec.Task.Status.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
