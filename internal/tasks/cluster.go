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
// process, the default) none of this runs and nothing changes: the
// manager's side of the cluster is the replicas type (replicas.go), whose
// methods answer for one process when there is no Cluster.
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
	// Run starts the Cluster's background work — its lease, the sweep for
	// orphaned tasks, forwarded requests — with local answering for this
	// replica. Manager.Start calls it once it has recovered this
	// replica's tasks; it returns at once. The Cluster stops it when it is
	// closed, after the manager.
	Run(local Local)
}

// Local is what a Cluster asks of this replica's task manager (a
// *Manager): to fail a task whose replica died, and to do what another
// replica forwarded.
type Local interface {
	FailOrphan(ctx context.Context, taskID string) error
	HandleForwarded(ctx context.Context, op ForwardOp, taskID string) error
}

var _ Local = (*Manager)(nil)

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
