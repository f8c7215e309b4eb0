package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// Cluster connects a Manager to the other replicas of the plugin that share
// its store (several hosts, each with its own plugin, on one PostgreSQL
// database behind a load balancer). Each replica runs the turns its own
// host was given; the Cluster lets any replica answer for any task:
//
//   - Persist writes a task like Store.SaveTask and, in the same
//     transaction, publishes the events to replicas following the task;
//   - Follow lets a stream on one replica follow a task another one runs:
//     the stored task first, then every event saved after it, in order;
//   - Forward hands a cancel (or news of changed push configs) to the
//     replica whose host runs the task;
//   - Recover names the tasks this replica must fail when it starts.
//
// The Cluster also fails the running tasks of replicas that died (their
// lease expired) through Manager.FailOrphan. With Options.Cluster nil (one
// process, the default) none of this runs and nothing changes.
type Cluster interface {
	// Persist saves rec with its deliveries, as Store.SaveTask does, and
	// publishes events (encoded v1.0 StreamResponses, in order) to the
	// replicas that follow the task, atomically with the save. An error
	// wrapping ErrTakenOver means another replica finished the task
	// meanwhile: nothing was saved, and this replica must let it go.
	Persist(ctx context.Context, rec *store.TaskRecord, deliveries []store.Delivery, events [][]byte) error
	// Follow follows a task run by any replica: Snapshot is the task as
	// stored, and Events delivers every event saved after that snapshot.
	Follow(ctx context.Context, taskID string) (Remote, error)
	// Forward asks the live replica that last wrote the task to do op and
	// waits for its answer (an error from the operation there, e.g. an
	// *a2a.Error, is returned as is). It reports false when no other live
	// replica holds the task, or it did not answer in time: then this
	// replica does it itself.
	Forward(ctx context.Context, op ForwardOp, taskID string) (bool, error)
	// Recover returns the running tasks this replica must fail at start:
	// the ones it ran before it restarted, not those of other replicas.
	Recover(ctx context.Context) ([]*store.TaskRecord, error)
}

// Remote is a task followed through the Cluster.
type Remote interface {
	// Snapshot is the task as stored when following began.
	Snapshot() *store.TaskRecord
	// Events are the encoded StreamResponses saved after the snapshot, in
	// order. The channel is closed when following ends: by Close, by the
	// cluster shutting down, or because this follower fell behind (Err).
	Events() <-chan []byte
	// Err says why Events was closed (nil after Close).
	Err() error
	// Close stops following.
	Close()
}

// ForwardOp is an operation one replica asks another to do.
type ForwardOp string

// Forwarded operations.
const (
	// ForwardCancel cancels the task on the replica running its turn, so
	// its host gets CancelTurn.
	ForwardCancel ForwardOp = "cancel"
	// ForwardPushConfigs tells the replica running the task that its push
	// configs changed in the store; it reloads them before answering, so
	// every update after the change goes to the new set.
	ForwardPushConfigs ForwardOp = "push-configs"
)

// ErrTakenOver is wrapped by Cluster.Persist when another replica finished
// the task (its lease had expired, or it was canceled elsewhere).
var ErrTakenOver = errors.New("another replica finished the task")

// OrphanReason is the status message of a task failed because the replica
// running it stopped renewing its lease.
const OrphanReason = "The agent stopped while working on this task (the replica running it stopped). Send the request again."

// HandleForwarded does an operation another replica forwarded: op on a
// task this replica runs (or ran last). It never forwards again.
func (m *Manager) HandleForwarded(ctx context.Context, op ForwardOp, taskID string) error {
	switch op {
	case ForwardCancel:
		_, err := m.cancel(ctx, "", &a2a.CancelTaskRequest{ID: taskID}, false)
		return err
	case ForwardPushConfigs:
		m.mu.Lock()
		lt := m.live[taskID]
		m.mu.Unlock()
		if lt == nil {
			return nil // nothing cached: the next load reads the store
		}
		pcs, err := m.store.ListPushConfigs(ctx, taskID)
		if err != nil {
			return a2a.ErrInternal(err.Error())
		}
		lt.mu.Lock()
		if !lt.pushUnsaved {
			lt.push = lt.push[:0]
			for _, pc := range pcs {
				lt.push = append(lt.push, pc.Config)
			}
		}
		lt.mu.Unlock()
		return nil
	}
	return fmt.Errorf("unknown forwarded operation %q", op)
}

// FailOrphan fails a running task whose replica died (the Cluster saw its
// lease expire), telling streams and webhooks, with OrphanReason. A task
// that is finished, waits for its client, or runs here is left alone; so is
// one another replica failed first.
func (m *Manager) FailOrphan(ctx context.Context, taskID string) error {
	m.mu.Lock()
	_, here := m.live[taskID]
	m.mu.Unlock()
	if here {
		return nil
	}
	rec, err := m.store.GetTask(ctx, taskID, "")
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if st := rec.Task.Status.State; st.Terminal() || st.Interrupted() {
		return nil
	}
	lt, err := m.loadLive(ctx, rec)
	if err != nil {
		return err
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.turn != nil || lt.rec.Task.Status.State.Terminal() {
		return nil // a continuation started here meanwhile
	}
	err = m.applyLocked(ctx, lt, []change{{state: a2a.TaskStateFailed, history: true, msg: agentText(lt, OrphanReason)}})
	switch {
	case errors.Is(err, ErrTakenOver):
		return nil // another replica failed it first
	case err != nil:
		// Leave it to the next sweep, from the store.
		m.mu.Lock()
		m.advanceLocked(lt)
		m.mu.Unlock()
		return err
	}
	m.log.Warn("failed a task whose replica stopped", lt.logArgs()...)
	return nil
}

// dropTakenOverLocked lets go of a task another replica finished: waiters
// get the stored task, streams end (a client that resubscribes sees the
// stored task), the context moves on and the host's turn is stopped.
// lt.mu must be held.
func (m *Manager) dropTakenOverLocked(ctx context.Context, lt *liveTask) {
	m.log.Warn("another replica finished this task; dropping this replica's copy", lt.logArgs()...)
	if rec, err := m.store.GetTask(context.WithoutCancel(ctx), lt.rec.Task.ID, ""); err == nil {
		lt.rec = *rec
	}
	lt.saves++ // the record changed under this replica's follows
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

// persistCluster saves rec through the Cluster, publishing events to the
// replicas that follow the task.
func (m *Manager) persistCluster(ctx context.Context, rec *store.TaskRecord, deliveries []store.Delivery, events []Event) error {
	bodies := make([][]byte, 0, len(events))
	for i := range events {
		b, err := events[i].encode()
		if err != nil {
			return fmt.Errorf("encoding an event of task %s: %w", rec.Task.ID, err)
		}
		bodies = append(bodies, b)
	}
	return m.opts.Cluster.Persist(ctx, rec, deliveries, bodies)
}

// followRemote starts a stream on a task that is not live here: the stored
// task, then the events any replica saves, until the task settles.
func (m *Manager) followRemote(ctx context.Context, id, scope string) (*Subscription, error) {
	r, err := m.opts.Cluster.Follow(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a2a.ErrTaskNotFound(id)
	}
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	snap := r.Snapshot()
	if scope != "" && snap.Owner != scope {
		r.Close()
		return nil, a2a.ErrTaskNotFound(id)
	}
	st := snap.Task.Status.State
	if st.Terminal() {
		r.Close()
		return nil, a2a.ErrUnsupportedOperation(fmt.Sprintf(
			"task %s is already %s; there is nothing to subscribe to (use GetTask for its result)", id, st))
	}
	sub := newSubscription(m, nil, nil, true)
	t := snap.Task
	sub.deliver([]Event{{Response: a2a.StreamResponse{Task: &t}}})
	sub.mu.Lock()
	sub.stop = r.Close
	sub.mu.Unlock()
	go pumpRemote(sub, follow{Remote: r})
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
// replica saved the task since (lt.saves counts only this replica's
// saves): such a follow is marked moved, and its stream gets the snapshot
// first. A follow that cannot be opened is logged and left out (its stream
// stays on lt). lt.mu must be held.
func (m *Manager) followOpenLocked(lt *liveTask, n int) (fs []follow, ok bool) {
	id, saves := lt.rec.Task.ID, lt.saves
	args := lt.logArgs()
	args = args[:len(args):len(args)]
	lt.mu.Unlock()
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		r, err := m.opts.Cluster.Follow(ctx, id)
		cancel()
		if err != nil {
			m.log.Warn("a stream of a task waiting for its client cannot follow the task across replicas; it stays on this one", append(args, "error", err)...)
			continue
		}
		fs = append(fs, follow{Remote: r})
	}
	lt.mu.Lock()
	if lt.saves != saves {
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
// of lt that stays open at st (into lt.ahead), for applyLocked to move the
// streams to as it saves the update (see followElsewhereLocked). It may
// release lt.mu (see followOpenLocked): the caller checks lt afterwards as
// if it had just locked it, and closes unused follows with
// dropAheadLocked.
func (m *Manager) followAheadLocked(lt *liveTask, st a2a.TaskState) {
	for range followAttempts {
		if lt.aheadAt != lt.saves {
			closeRemotes(lt.ahead)
			lt.ahead = nil
		}
		need := lt.staying(st) - len(lt.ahead)
		if m.opts.Cluster == nil || need <= 0 || !lt.revealed || !lt.turnRunning || lt.rec.Task.Status.State.Terminal() {
			return
		}
		fs, ok := m.followOpenLocked(lt, need)
		if !ok {
			continue // saved meanwhile: open them again, from the new save
		}
		lt.ahead, lt.aheadAt = append(lt.ahead, fs...), lt.saves
		if len(fs) < need {
			return // the Cluster failed; the other streams stay on lt
		}
	}
}

// dropAheadLocked closes the follows followAheadLocked opened that no
// stream took.
func (m *Manager) dropAheadLocked(lt *liveTask) {
	closeRemotes(lt.ahead)
	lt.ahead = nil
}

// followElsewhereLocked moves lt's streams that stay open while the task
// waits for its client (every stream at AUTH_REQUIRED, subscribers at
// INPUT_REQUIRED; see Subscription.endsAt), from lt to following the task
// through the Cluster: the message that resumes the task may reach any
// replica, and
// whichever runs it publishes its events to them. Each stream takes one of
// the follows opened beforehand (lt.ahead, valid only if lt was not saved
// since), so it gets the events saved after those follows were opened;
// nothing here waits on the database (a stream whose follow saw the task
// saved by another replica gets the task as stored first, see
// followOpenLocked). A stream left without one stays on lt. lt.mu must be
// held.
func (m *Manager) followElsewhereLocked(lt *liveTask) {
	if lt.aheadAt != lt.saves {
		closeRemotes(lt.ahead)
		lt.ahead = nil
	}
	st := lt.rec.Task.Status.State
	kept := lt.subs[:0]
	for _, sub := range lt.subs {
		if len(lt.ahead) == 0 || sub.endsAt(st) {
			kept = append(kept, sub)
			continue
		}
		f := lt.ahead[0]
		lt.ahead = lt.ahead[1:]
		sub.mu.Lock()
		sub.lt, sub.stop = nil, f.Close
		sub.mu.Unlock()
		go pumpRemote(sub, f)
	}
	clear(lt.subs[len(kept):])
	lt.subs = kept
	closeRemotes(lt.ahead)
	lt.ahead = nil
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
func (m *Manager) followSettledLocked(lt *liveTask) {
	for range followAttempts {
		if !m.followSettledNowLocked(lt) {
			return
		}
		n := lt.staying(lt.rec.Task.Status.State)
		fs, ok := m.followOpenLocked(lt, n)
		if !ok {
			continue
		}
		if !m.followSettledNowLocked(lt) {
			closeRemotes(fs)
			return
		}
		closeRemotes(lt.ahead)
		lt.ahead, lt.aheadAt = fs, lt.saves
		m.followElsewhereLocked(lt)
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
func (m *Manager) followSettledNowLocked(lt *liveTask) bool {
	st := lt.rec.Task.Status.State
	return m.opts.Cluster != nil && lt.turn == nil && st.Interrupted() && lt.staying(st) > 0
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
func pumpRemote(sub *Subscription, r follow) {
	defer r.Close()
	if r.moved {
		snap := r.Snapshot()
		t := snap.Task
		if !sub.deliver([]Event{{Response: a2a.StreamResponse{Task: &t}}}) {
			return
		}
		if sub.endsAt(t.Status.State) {
			sub.finish(nil)
			return
		}
	}
	for body := range r.Events() {
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
	err := r.Err()
	if err == nil {
		err = ErrClosed
	}
	sub.finish(err)
}
