package cascade

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// deadline bounds every wait for the Tracker's background work; it guards
// against hangs and is never an assertion on how long something took.
const deadline = 30 * time.Second

// fakePeers plays the peers: each cancel is recorded, and answer (if set)
// decides how it goes; by default the task is canceled.
type fakePeers struct {
	mu     sync.Mutex
	calls  []string // peer/task/chain
	answer func(peer, task string, n int) (a2a.TaskState, bool, error)
}

func (f *fakePeers) CancelDelegation(ctx context.Context, peer, taskID, chainID string) (a2a.TaskState, bool, error) {
	f.mu.Lock()
	f.calls = append(f.calls, peer+"/"+taskID+"/"+chainID)
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, peer+"/"+taskID+"/") {
			n++
		}
	}
	answer := f.answer
	f.mu.Unlock()
	if answer != nil {
		return answer(peer, taskID, n)
	}
	return a2a.TaskStateCanceled, false, nil
}

func (f *fakePeers) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// notes records what the Tracker writes into task metadata.
type notes struct {
	mu   sync.Mutex
	last map[string]map[string]any
}

func (n *notes) Annotate(ctx context.Context, taskID, key string, value any) error {
	if key != security.MetaCancelCascade {
		return fmt.Errorf("unexpected key %q", key)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last == nil {
		n.last = map[string]map[string]any{}
	}
	n.last[taskID] = value.(map[string]any)
	return nil
}

func (n *notes) of(taskID string) map[string]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.last[taskID]
}

// world is a Tracker on a store, running.
type world struct {
	t     *testing.T
	store store.Store
	tr    *Tracker
	peers *fakePeers
	notes *notes
	stop  func()
}

func newWorld(t *testing.T, st store.Store, mod func(*Options)) *world {
	t.Helper()
	opts := Options{Store: st, OnFailure: true, BaseBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond}
	if mod != nil {
		mod(&opts)
	}
	tr, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, store: st, tr: tr, peers: &fakePeers{}, notes: &notes{}}
	return w
}

// run loads and starts the Tracker; the test's cleanup stops it.
func (w *world) run() {
	w.t.Helper()
	if err := w.tr.Load(context.Background()); err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.tr.Run(ctx, w.peers, w.notes) }()
	w.stop = func() {
		cancel()
		if err := <-ran; err != nil {
			w.t.Errorf("Run: %v", err)
		}
	}
	w.t.Cleanup(func() {
		if w.stop != nil {
			w.stop()
			w.stop = nil
		}
	})
}

// task stores a task in state.
func (w *world) task(id string, state a2a.TaskState) {
	w.t.Helper()
	rec := &store.TaskRecord{Task: a2a.Task{ID: id, ContextID: "ctx-" + id, Status: a2a.TaskStatus{State: state}}, Owner: "peer:alice",
		CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := w.store.SaveTask(context.Background(), rec, nil); err != nil {
		w.t.Fatal(err)
	}
}

// end stores the task's final state and tells the Tracker, as the task
// manager's Watch does.
func (w *world) end(id string, state a2a.TaskState) {
	w.t.Helper()
	w.task(id, state)
	w.tr.Ended(id, state)
}

// delegate records a delegation of parent to peer's task remote.
func (w *world) delegate(parent, peer, remote string) {
	w.t.Helper()
	if err := w.tr.Record(context.Background(), store.Delegation{ParentTaskID: parent, ChainID: "chain-" + parent,
		Peer: peer, RemoteTaskID: remote, RemoteContextID: "rc-" + remote}); err != nil {
		w.t.Fatal(err)
	}
}

// states lists parent's delegations as remote:state.
func (w *world) states(parent string) []string {
	w.t.Helper()
	ds, err := w.store.Delegations(context.Background(), parent)
	if err != nil {
		w.t.Fatal(err)
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.RemoteTaskID + ":" + d.State
	}
	return out
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("still not the case after %s: %s", deadline, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestACanceledTaskCancelsItsDelegationsAndNoOthers: when a task is
// canceled, each remote task it delegated gets one CancelTask carrying the
// task's chain; another task's delegations are not touched; the task's
// metadata says all were canceled.
func TestACanceledTaskCancelsItsDelegationsAndNoOthers(t *testing.T) {
	w := newWorld(t, store.NewMemory(0), nil)
	w.task("p1", a2a.TaskStateWorking)
	w.task("p2", a2a.TaskStateWorking)
	w.run()
	w.delegate("p1", "bob", "tb")
	w.delegate("p1", "carol", "tc")
	w.delegate("p2", "bob", "sibling")

	w.end("p1", a2a.TaskStateCanceled)
	eventually(t, "p1's delegations canceled", func() bool {
		return slices.Equal(w.states("p1"), []string{"tb:canceled", "tc:canceled"})
	})
	sent := w.peers.sent()
	slices.Sort(sent)
	if !slices.Equal(sent, []string{"bob/tb/chain-p1", "carol/tc/chain-p1"}) {
		t.Errorf("cancels sent = %v; want one per delegation of p1, with p1's chain", sent)
	}
	if got := w.states("p2"); !slices.Equal(got, []string{"sibling:open"}) {
		t.Errorf("the sibling tree's delegation is %v", got)
	}
	eventually(t, "p1's metadata", func() bool {
		md := w.notes.of("p1")
		return md != nil && md["canceled"] == 2 && md["delegated"] == 2 && md["cause"] == "TASK_STATE_CANCELED" && md["chainId"] == "chain-p1"
	})
	if md := w.notes.of("p1"); md["problems"] != nil || md["failed"] != 0 || md["pending"] != 0 {
		t.Errorf("p1's metadata = %v; want no problems", md)
	}
	if w.notes.of("p2") != nil {
		t.Errorf("p2's metadata was written: %v", w.notes.of("p2"))
	}
}

// TestHowAParentEndsDecidesItsDelegationsFate: a completed task leaves its
// delegations running; a failed or rejected one cancels them unless
// OnFailure is off.
func TestHowAParentEndsDecidesItsDelegationsFate(t *testing.T) {
	for _, tc := range []struct {
		end       a2a.TaskState
		onFailure bool
		want      string
	}{
		{a2a.TaskStateCompleted, true, "kept"},
		{a2a.TaskStateFailed, true, "canceled"},
		{a2a.TaskStateRejected, true, "canceled"},
		{a2a.TaskStateFailed, false, "kept"},
		{a2a.TaskStateRejected, false, "kept"},
		{a2a.TaskStateCanceled, false, "canceled"},
	} {
		t.Run(fmt.Sprintf("%s/on_failure=%t", tc.end, tc.onFailure), func(t *testing.T) {
			w := newWorld(t, store.NewMemory(0), func(o *Options) { o.OnFailure = tc.onFailure })
			w.task("p", a2a.TaskStateWorking)
			w.run()
			w.delegate("p", "bob", "tb")
			w.end("p", tc.end)
			eventually(t, "the delegation settled as "+tc.want, func() bool {
				return slices.Equal(w.states("p"), []string{"tb:" + tc.want})
			})
			if tc.want == "kept" && len(w.peers.sent()) != 0 {
				t.Errorf("cancels sent for a kept delegation: %v", w.peers.sent())
			}
		})
	}
}

// TestAnUnreachablePeerIsAskedAgainAndTheWaitIsShown: a cancel the peer
// could not be reached for is tried again; until it succeeds the parent's
// metadata shows it pending with the error; then canceled.
func TestAnUnreachablePeerIsAskedAgainAndTheWaitIsShown(t *testing.T) {
	w := newWorld(t, store.NewMemory(0), nil)
	release := make(chan struct{})
	w.peers.answer = func(peer, task string, n int) (a2a.TaskState, bool, error) {
		if n == 1 {
			return "", true, errors.New("a2a peer \"bob\": CancelTask: unreachable: connection refused")
		}
		<-release
		return a2a.TaskStateCanceled, false, nil
	}
	w.task("p", a2a.TaskStateWorking)
	w.run()
	w.delegate("p", "bob", "tb")
	w.end("p", a2a.TaskStateCanceled)
	eventually(t, "the first failure in the metadata", func() bool {
		md := w.notes.of("p")
		if md == nil || md["pending"] != 1 {
			return false
		}
		ps, _ := md["problems"].([]any)
		if len(ps) != 1 {
			return false
		}
		p := ps[0].(map[string]any)
		return p["agent"] == "bob" && p["taskId"] == "tb" && p["status"] == "retrying" && p["attempts"] == 1 &&
			strings.Contains(p["error"].(string), "connection refused") && p["nextAttempt"] != nil
	})
	close(release)
	eventually(t, "canceled on a later attempt", func() bool {
		md := w.notes.of("p")
		return md != nil && md["canceled"] == 1 && md["problems"] == nil
	})
	if n := len(w.peers.sent()); n != 2 {
		t.Errorf("%d cancels sent, want 2", n)
	}
}

// TestARefusedCancelIsRecordedAndNotRepeated: a peer that refuses (it
// cannot stop the task, or does not know it) is asked once; the failure
// stays in the metadata. A peer that keeps being unreachable is given up
// after MaxAttempts, which the metadata says too.
func TestARefusedCancelIsRecordedAndNotRepeated(t *testing.T) {
	w := newWorld(t, store.NewMemory(0), func(o *Options) { o.MaxAttempts = 3 })
	w.peers.answer = func(peer, task string, n int) (a2a.TaskState, bool, error) {
		if peer == "refuser" {
			return "", false, errors.New("refused: -32002 the host cannot stop a running turn")
		}
		return "", true, errors.New("unreachable")
	}
	w.task("p", a2a.TaskStateWorking)
	w.run()
	w.delegate("p", "refuser", "t1")
	w.delegate("p", "down", "t2")
	w.end("p", a2a.TaskStateCanceled)
	eventually(t, "both failed", func() bool {
		md := w.notes.of("p")
		return md != nil && md["failed"] == 2
	})
	ps := w.notes.of("p")["problems"].([]any)
	first, second := ps[0].(map[string]any), ps[1].(map[string]any)
	if first["agent"] != "refuser" || first["status"] != "failed" || first["attempts"] != 1 || !strings.Contains(first["error"].(string), "cannot stop") {
		t.Errorf("the refusal = %v", first)
	}
	if second["agent"] != "down" || second["attempts"] != 3 || !strings.Contains(second["error"].(string), "gave up after 3 attempts") {
		t.Errorf("the give-up = %v", second)
	}
	var n1, n2 int
	for _, c := range w.peers.sent() {
		switch {
		case strings.HasPrefix(c, "refuser/"):
			n1++
		case strings.HasPrefix(c, "down/"):
			n2++
		}
	}
	if n1 != 1 || n2 != 3 {
		t.Errorf("asked the refuser %d times and the unreachable peer %d times; want 1 and 3", n1, n2)
	}
}

// TestARemoteTaskThatHadEndedCountsAsFinished: a remote task that had
// ended by itself (the peer says so) is no failure.
func TestARemoteTaskThatHadEndedCountsAsFinished(t *testing.T) {
	w := newWorld(t, store.NewMemory(0), nil)
	w.peers.answer = func(peer, task string, n int) (a2a.TaskState, bool, error) {
		return a2a.TaskStateCompleted, false, nil
	}
	w.task("p", a2a.TaskStateWorking)
	w.run()
	w.delegate("p", "bob", "tb")
	w.end("p", a2a.TaskStateCanceled)
	eventually(t, "finished", func() bool {
		md := w.notes.of("p")
		return md != nil && md["alreadyFinished"] == 1 && md["failed"] == 0
	})
	ds, _ := w.store.Delegations(context.Background(), "p")
	if ds[0].State != store.DelegationFinished || ds[0].RemoteState != "TASK_STATE_COMPLETED" {
		t.Errorf("delegation = %+v", ds[0])
	}
}

// TestADelegationRecordedAfterItsParentWasCanceledIsCanceled: the cancel
// of a task can overtake a call its turn was making; the remote task that
// call started is canceled as soon as it is known.
func TestADelegationRecordedAfterItsParentWasCanceledIsCanceled(t *testing.T) {
	w := newWorld(t, store.NewMemory(0), nil)
	w.run()
	w.end("p", a2a.TaskStateCanceled) // no delegation known yet: nothing to do
	w.delegate("p", "bob", "late")
	eventually(t, "the late delegation canceled", func() bool {
		return slices.Equal(w.states("p"), []string{"late:canceled"})
	})
}

// TestAPendingCancelSurvivesARestart: a cancel that failed is in the
// SQLite file; a new Tracker on the reopened store sends it. An end the
// old process never settled (it stopped between the parent's save and the
// Tracker's) is found at start-up too.
func TestAPendingCancelSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	st, err := store.OpenSQLite(path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, st, nil)
	w.peers.answer = func(peer, task string, n int) (a2a.TaskState, bool, error) {
		return "", true, errors.New("unreachable")
	}
	w.task("p", a2a.TaskStateWorking)
	w.task("missed", a2a.TaskStateWorking)
	w.run()
	w.delegate("p", "bob", "tb")
	w.delegate("missed", "carol", "tc")
	w.end("p", a2a.TaskStateCanceled)
	eventually(t, "a failed attempt", func() bool {
		ds, _ := st.Delegations(context.Background(), "p")
		return len(ds) == 1 && ds[0].Attempts >= 1
	})
	w.stop()
	w.stop = nil
	// The end of "missed" is saved but never told to the Tracker.
	w.task("missed", a2a.TaskStateCanceled)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := store.OpenSQLite(path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st2.Close() })
	w2 := newWorld(t, st2, nil)
	w2.run()
	eventually(t, "both canceled by the new process", func() bool {
		return slices.Equal(w2.states("p"), []string{"tb:canceled"}) && slices.Equal(w2.states("missed"), []string{"tc:canceled"})
	})
	// The metadata is written after the delegation is stored.
	eventually(t, "p's metadata after the restart says canceled", func() bool {
		return w2.notes.of("p")["canceled"] == 1
	})
}

// clock is a settable clock for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestAnEndAnotherReplicaSawReachesTheDelegations: replicas share the
// store. Replica A's turn delegated; the task's end is saved by replica B
// (a cancel of the task while it waited for input, or B failing it after A
// died), whose Tracker did not know the task had delegations. B's periodic
// sweep finds the delegations in the store and cancels them: the end is
// not lost, nor left to A's hourly look at stale tasks (A may be gone).
func TestAnEndAnotherReplicaSawReachesTheDelegations(t *testing.T) {
	st := store.NewMemory(0)
	clk := &clock{now: time.Now()}
	b := newWorld(t, st, func(o *Options) { o.Now = clk.Now })
	b.run() // B started before A's turn delegated
	a := newWorld(t, st, nil)
	a.task("p", a2a.TaskStateWorking)
	a.run()
	a.delegate("p", "bob", "tb")
	a.stop() // A dies
	a.stop = nil

	b.end("p", a2a.TaskStateFailed) // B fails A's orphan
	eventually(t, "p's delegation canceled by replica B", func() bool {
		clk.advance(staleAfter / 4) // whenever B's Run read the clock first
		return slices.Equal(b.states("p"), []string{"tb:canceled"})
	})
}

// TestTheProblemsInTheMetadataAreBounded: a task that delegated a great
// many remote tasks (max_calls_per_task 0 sets no limit) whose cancels all
// failed keeps a bounded list of problems in its metadata — the first
// ones, and how many more there are — not one entry (with up to 500
// characters of error) per remote task; the counts still cover them all.
func TestTheProblemsInTheMetadataAreBounded(t *testing.T) {
	const n = 5000
	ds := make([]store.Delegation, n)
	for i := range ds {
		ds[i] = store.Delegation{ID: int64(i + 1), ParentTaskID: "p", ChainID: "c", Peer: "bob", RemoteTaskID: fmt.Sprintf("t%d", i),
			State: store.DelegationFailed, Cause: "TASK_STATE_CANCELED", Attempts: 1, LastError: strings.Repeat("x", maxErrorText)}
	}
	md := Summarize(ds).metadata()
	ps, _ := md["problems"].([]any)
	if len(ps) == 0 || len(ps) > maxProblems {
		t.Fatalf("%d problems in the metadata; want 1 to %d", len(ps), maxProblems)
	}
	if ps[0].(map[string]any)["taskId"] != "t0" {
		t.Errorf("first problem = %v; want the first delegation's", ps[0])
	}
	if md["failed"] != n || md["moreProblems"] != n-len(ps) {
		t.Errorf("failed = %v, moreProblems = %v; want %d and %d", md["failed"], md["moreProblems"], n, n-len(ps))
	}
}
