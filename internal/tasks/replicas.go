package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// replicas is this manager's part in a cluster of replicas sharing its
// store (Options.Cluster): the replica machinery — saving through the
// Cluster, following a task another replica runs, moving a task's streams
// to follow it through the database while it waits for its client,
// forwarding a cancel, letting go of a task another replica finished —
// lives on this one type. Without a Cluster (c nil, one process, the
// default) every method gives the single-process answer (save to the
// store, nothing to follow or forward), so the manager's own paths read
// without the replica branches. It also owns the goroutines that pump a
// followed task's events into a stream: the manager's wait group counts
// them, and Close stops them.
type replicas struct {
	m *Manager
	c Cluster // nil: one process

	// pumps are the follows feeding streams from the Cluster (pump),
	// guarded by m.mu; Close closes them.
	pumps map[*follow]struct{}
}

// liveReplica is a live task's bookkeeping for replicas.
type liveReplica struct {
	// saves counts the saves of the task by this replica (and records
	// reloaded from the store). A follow through the Cluster, opened with
	// lt.mu released, fits lt's streams only if no save happened meanwhile
	// (see followOpenLocked).
	saves uint64
	// ahead are follows opened for lt's streams before the update that
	// puts the task at AUTH_REQUIRED or INPUT_REQUIRED is saved (see
	// followAheadLocked), valid while saves is still aheadAt.
	ahead   []follow
	aheadAt uint64
}

// recover returns the running tasks this process must fail at start: all
// of the store's, or with a Cluster those this replica ran (other
// replicas' tasks are theirs; those of replicas that died are failed once
// their lease expires, FailOrphan).
func (r *replicas) recover(ctx context.Context) ([]*store.TaskRecord, error) {
	if r.c == nil {
		return r.m.store.ActiveTasks(ctx)
	}
	return r.c.Recover(ctx)
}

// run starts the Cluster's background work, with the manager answering
// for this replica.
func (r *replicas) run() {
	if r.c != nil {
		r.c.Run(r.m)
	}
}

// forward asks the replica running a task to do op (see Cluster.Forward);
// false without a Cluster.
func (r *replicas) forward(ctx context.Context, op ForwardOp, taskID string) (bool, error) {
	if r.c == nil {
		return false, nil
	}
	return r.c.Forward(ctx, op, taskID)
}

// beforeInterruptLocked prepares Apply's update that puts lt at st: when
// st is an interrupted state (AUTH_REQUIRED, INPUT_REQUIRED) and streams
// stay open at it, they will follow the task through the Cluster from
// before the update is saved (the answer or the credentials may reach
// another replica), so the follows are opened now, with lt.mu released
// while the Cluster talks to the database: everything after reads lt
// afresh. It reports whether streams move; then the caller closes the
// follows no stream took with dropAheadLocked, and after a successful
// update moves the streams still on lt with followSettledLocked. Without
// a Cluster it does nothing.
func (r *replicas) beforeInterruptLocked(lt *liveTask, st a2a.TaskState) bool {
	if st == "" || r.c == nil || lt.staying(st) == 0 {
		return false
	}
	r.followAheadLocked(lt, st)
	return true
}

// moveStreamsLocked is applyLocked's step before it saves lt at an
// interrupted state: the streams that stay open get this update and every
// later one through the Cluster, whichever replica resumes the task
// (followElsewhereLocked, with the follows beforeInterruptLocked opened).
// Without a Cluster, or with no such stream, it does nothing.
func (r *replicas) moveStreamsLocked(lt *liveTask) {
	if st := lt.rec.Task.Status.State; r.c != nil && st.Interrupted() && lt.staying(st) > 0 {
		r.followElsewhereLocked(lt)
	}
}

// pump runs pumpRemote for sub in a goroutine the manager owns: the
// manager's wait group counts it, and Close closes its follow, which ends
// it. After Close the follow is closed and sub ends at once.
func (r *replicas) pump(sub *Subscription, f follow) {
	m := r.m
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		f.Close()
		sub.finish(ErrClosed)
		return
	}
	fp := &f
	if r.pumps == nil {
		r.pumps = map[*follow]struct{}{}
	}
	r.pumps[fp] = struct{}{}
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		pumpRemote(sub, *fp)
		m.mu.Lock()
		delete(r.pumps, fp)
		m.mu.Unlock()
	}()
}

// stopPumpsLocked closes the follows of every pump, so that they end;
// Close then waits for them with the manager's other goroutines. m.mu must
// be held.
func (r *replicas) stopPumpsLocked() {
	for f := range r.pumps {
		f.Close()
	}
}

// dropTakenOverLocked lets go of a task another replica finished: waiters
// get the stored task, streams end (a client that resubscribes sees the
// stored task), the context moves on and the host's turn is stopped.
// lt.mu must be held.
func (r *replicas) dropTakenOverLocked(ctx context.Context, lt *liveTask) {
	m := r.m
	m.log.Warn("another replica finished this task; dropping this replica's copy", lt.logArgs()...)
	if rec, err := m.store.GetTask(context.WithoutCancel(ctx), lt.rec.Task.ID, ""); err == nil {
		lt.rec = *rec
	}
	lt.repl.saves++ // the record changed under this replica's follows
	lt.revealed, lt.pending = true, nil
	turn, running := lt.turn, lt.turnRunning
	for _, s := range lt.subs {
		s.finish(ErrTakenOver)
	}
	lt.subs = nil
	select {
	case <-lt.settled:
	default:
		close(lt.settled)
	}
	lt.turnRunning, lt.turn = false, nil
	m.mu.Lock()
	delete(m.hostTurns, lt.rec.Task.ID)
	m.advanceLocked(lt)
	m.mu.Unlock()
	if running && turn != nil {
		m.cancelOnHost(turn, "another replica finished the task")
	}
}

// save saves rec with its deliveries: to the store, or through the Cluster,
// publishing events to the replicas that follow the task.
func (r *replicas) save(ctx context.Context, rec *store.TaskRecord, deliveries []store.Delivery, events []Event) error {
	if r.c == nil {
		return r.m.store.SaveTask(ctx, rec, deliveries)
	}
	bodies := make([][]byte, 0, len(events))
	for i := range events {
		b, err := events[i].encode()
		if err != nil {
			return fmt.Errorf("encoding an event of task %s: %w", rec.Task.ID, err)
		}
		bodies = append(bodies, b)
	}
	return r.c.Persist(ctx, rec, deliveries, bodies)
}

// subscribe starts a stream on a task that is not live here, which
// another replica runs or will resume: the stored task, then the events
// any replica saves, until the task settles. ok is false without a
// Cluster (a task not live here is one this process loads).
func (r *replicas) subscribe(ctx context.Context, id, scope string) (_ *Subscription, ok bool, _ error) {
	if r.c == nil {
		return nil, false, nil
	}
	sub, err := r.followRemote(ctx, id, scope)
	return sub, true, err
}

// followRemote is subscribe with a Cluster.
func (r *replicas) followRemote(ctx context.Context, id, scope string) (*Subscription, error) {
	m := r.m
	rem, err := r.c.Follow(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a2a.ErrTaskNotFound(id)
	}
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	snap := rem.Snapshot()
	if scope != "" && snap.Owner != scope {
		rem.Close()
		return nil, a2a.ErrTaskNotFound(id)
	}
	st := snap.Task.Status.State
	if st.Terminal() {
		rem.Close()
		return nil, a2a.ErrUnsupportedOperation(fmt.Sprintf(
			"task %s is already %s; there is nothing to subscribe to (use GetTask for its result)", id, st))
	}
	sub := newSubscription(m, nil, nil, true)
	t := snap.Task
	sub.deliver([]Event{{Response: a2a.StreamResponse{Task: &t}}})
	sub.mu.Lock()
	sub.stop = rem.Close
	sub.mu.Unlock()
	r.pump(sub, follow{Remote: rem})
	return sub, nil
}

// follow is a follow through the Cluster opened for a stream of a live
// task (see followOpenLocked).
type follow struct {
	Remote
	// moved: another replica saved the task after this one last did and
	// before the snapshot was taken, so the stream has not seen the
	// snapshot: it gets it first (see pumpRemote).
	moved bool
}

// savedElsewhere reports whether snap, the task as stored, is not rec, the
// task as this replica last saved it: another replica saved it since. Any
// save by another replica changes the status (resuming the task, canceling
// or failing it) before anything else, so comparing the status — its
// state, time and message — is enough. The store keeps times to the
// millisecond.
func savedElsewhere(snap, rec *store.TaskRecord) bool {
	msgID := func(m *a2a.Message) string {
		if m == nil {
			return ""
		}
		return m.MessageID
	}
	a, b := snap.Task.Status, rec.Task.Status
	return a.State != b.State || snap.StatusMillis() != rec.StatusMillis() || msgID(a.Message) != msgID(b.Message)
}

// followAttempts bounds how often followAheadLocked and
// followSettledLocked open follows again because the task was saved (or a
// stream joined) while they waited for the Cluster.
const followAttempts = 3

// followOpenLocked opens n follows of lt's task through the Cluster for
// lt's streams. Opening one talks to the database (registering a watch,
// reading the task, waiting for a save in progress), so lt.mu is released
// meanwhile — the task's other work (its streams, reads, a cancel) must not
// wait on the network — and held again on return; callers re-check
// whatever they read of lt before. ok reports that this replica did not
// save lt meanwhile; otherwise the follows are closed and none returned.
// Each follow's events are then exactly those saved from now on, and its
// snapshot the task as this replica last saved it — unless another
// replica saved the task since (lt.repl.saves counts only this replica's
// saves): such a follow is marked moved, and its stream gets the snapshot
// first. A follow that cannot be opened is logged and left out (its stream
// stays on lt). lt.mu must be held.
func (r *replicas) followOpenLocked(lt *liveTask, n int) (fs []follow, ok bool) {
	m := r.m
	id, saves := lt.rec.Task.ID, lt.repl.saves
	args := lt.logArgs()
	args = args[:len(args):len(args)]
	lt.mu.Unlock()
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		rem, err := r.c.Follow(ctx, id)
		cancel()
		if err != nil {
			m.log.Warn("a stream of a task waiting for its client cannot follow the task across replicas; it stays on this one", append(args, "error", err)...)
			continue
		}
		fs = append(fs, follow{Remote: rem})
	}
	lt.mu.Lock()
	if lt.repl.saves != saves {
		closeRemotes(fs)
		return nil, false
	}
	for i := range fs {
		fs[i].moved = savedElsewhere(fs[i].Snapshot(), &lt.rec)
	}
	return fs, true
}

// followAheadLocked opens, before Apply saves an update that interrupts lt
// (puts it at st, AUTH_REQUIRED or INPUT_REQUIRED), one follow per stream
// of lt that stays open at st (into lt.repl.ahead), for applyLocked to move the
// streams to as it saves the update (see followElsewhereLocked). It may
// release lt.mu (see followOpenLocked): the caller checks lt afterwards as
// if it had just locked it, and closes unused follows with
// dropAheadLocked.
func (r *replicas) followAheadLocked(lt *liveTask, st a2a.TaskState) {
	for range followAttempts {
		if lt.repl.aheadAt != lt.repl.saves {
			closeRemotes(lt.repl.ahead)
			lt.repl.ahead = nil
		}
		need := lt.staying(st) - len(lt.repl.ahead)
		if r.c == nil || need <= 0 || !lt.revealed || !lt.turnRunning || lt.rec.Task.Status.State.Terminal() {
			return
		}
		fs, ok := r.followOpenLocked(lt, need)
		if !ok {
			continue // saved meanwhile: open them again, from the new save
		}
		lt.repl.ahead, lt.repl.aheadAt = append(lt.repl.ahead, fs...), lt.repl.saves
		if len(fs) < need {
			return // the Cluster failed; the other streams stay on lt
		}
	}
}

// dropAheadLocked closes the follows followAheadLocked opened that no
// stream took.
func (r *replicas) dropAheadLocked(lt *liveTask) {
	closeRemotes(lt.repl.ahead)
	lt.repl.ahead = nil
}

// followElsewhereLocked moves lt's streams that stay open while the task
// waits for its client (every stream at AUTH_REQUIRED, subscribers at
// INPUT_REQUIRED; see Subscription.endsAt), from lt to following the task
// through the Cluster: the message that resumes the task may reach any
// replica, and
// whichever runs it publishes its events to them. Each stream takes one of
// the follows opened beforehand (lt.repl.ahead, valid only if lt was not saved
// since), so it gets the events saved after those follows were opened;
// nothing here waits on the database (a stream whose follow saw the task
// saved by another replica gets the task as stored first, see
// followOpenLocked). A stream left without one stays on lt. lt.mu must be
// held.
func (r *replicas) followElsewhereLocked(lt *liveTask) {
	if lt.repl.aheadAt != lt.repl.saves {
		closeRemotes(lt.repl.ahead)
		lt.repl.ahead = nil
	}
	st := lt.rec.Task.Status.State
	kept := lt.subs[:0]
	for _, sub := range lt.subs {
		if len(lt.repl.ahead) == 0 || sub.endsAt(st) {
			kept = append(kept, sub)
			continue
		}
		f := lt.repl.ahead[0]
		lt.repl.ahead = lt.repl.ahead[1:]
		sub.mu.Lock()
		sub.lt, sub.stop = nil, f.Close
		sub.mu.Unlock()
		r.pump(sub, f)
	}
	clear(lt.subs[len(kept):])
	lt.subs = kept
	closeRemotes(lt.repl.ahead)
	lt.repl.ahead = nil
}

// followSettledLocked moves the streams lt still has once Apply saved it
// at an interrupted state — those of a task first stored by that update, which
// could not follow it before, and any whose follow could not be opened
// before the save — to following the task through the Cluster. They have
// seen everything this replica saved so far, so follows opened now, with
// no save here meanwhile, give them exactly what comes next (with the task
// as stored first if another replica saved it meanwhile, see
// followOpenLocked). It may release lt.mu (see followOpenLocked); if a
// turn resumed the task here meanwhile (saved or still queued), the
// streams stay on lt and get its events from it.
func (r *replicas) followSettledLocked(lt *liveTask) {
	m := r.m
	for range followAttempts {
		if !r.followSettledNowLocked(lt) {
			return
		}
		n := lt.staying(lt.rec.Task.Status.State)
		fs, ok := r.followOpenLocked(lt, n)
		if !ok {
			continue
		}
		if !r.followSettledNowLocked(lt) {
			closeRemotes(fs)
			return
		}
		closeRemotes(lt.repl.ahead)
		lt.repl.ahead, lt.repl.aheadAt = fs, lt.repl.saves
		r.followElsewhereLocked(lt)
		if len(lt.subs) == 0 && lt.turn == nil {
			// Kept in memory only for its streams, which left with
			// their follows: the task is in the store.
			m.mu.Lock()
			if m.live[lt.rec.Task.ID] == lt {
				delete(m.live, lt.rec.Task.ID)
			}
			m.mu.Unlock()
		}
		if len(fs) < n {
			return // the Cluster failed; the other streams stay on lt
		}
	}
}

// followSettledNowLocked reports whether followSettledLocked has streams
// to move: lt waits for its client with no turn here, and streams that
// stay open then. lt.mu must be held.
func (r *replicas) followSettledNowLocked(lt *liveTask) bool {
	st := lt.rec.Task.Status.State
	return r.c != nil && lt.turn == nil && st.Interrupted() && lt.staying(st) > 0
}

// closeRemotes closes follows nobody reads.
func closeRemotes(fs []follow) {
	for _, f := range fs {
		f.Close()
	}
}

// pumpRemote hands a followed task's events to sub until the task reaches
// a state that ends sub (see Subscription.endsAt), sub is dropped
// or closed, or following ends. A moved follow's snapshot goes first, as a
// Task event.
func pumpRemote(sub *Subscription, f follow) {
	defer f.Close()
	if f.moved {
		snap := f.Snapshot()
		t := snap.Task
		if !sub.deliver([]Event{{Response: a2a.StreamResponse{Task: &t}}}) {
			return
		}
		if sub.endsAt(t.Status.State) {
			sub.finish(nil)
			return
		}
	}
	for body := range f.Events() {
		var ev Event
		if err := a2a.Unmarshal(body, &ev.Response); err != nil {
			sub.finish(fmt.Errorf("decoding an event of the task: %w", err))
			return
		}
		ev.JSON = body
		if !sub.deliver([]Event{ev}) {
			return
		}
		if u := ev.Response.StatusUpdate; u != nil && sub.endsAt(u.Status.State) {
			sub.finish(nil)
			return
		}
	}
	err := f.Err()
	if err == nil {
		err = ErrClosed
	}
	sub.finish(err)
}
