package tasks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// liveTask is a task that has a queued or running turn (or is being
// canceled). Everything in it is guarded by mu; the lock order is
// liveTask.mu before Manager.mu.
//
// mu is held across the store write of every update (persistLocked, which
// applyLocked calls): an update is saved, then broadcast to the streams and
// queued for webhooks, then the next update of the task may start. Holding
// it is what keeps the promise "persist first, then tell anyone" in order —
// no stream or webhook can see update n+1 before update n is durable, and
// a failed save can put the record back (applyLocked's before) without
// another update having been built on it. The cost is that one task's
// updates wait for each other's writes, which they would anyway (the store
// serialises writes); other tasks have their own mu. Nothing slow but that
// write happens under mu: host calls (StartTurn, CancelTurn) are made with
// it released, and the replica code releases it while it waits for the
// Cluster (followOpenLocked).
type liveTask struct {
	mu  sync.Mutex
	rec store.TaskRecord

	// revealed: persisted and observable. Until then events collect in
	// pending, starting with the creation snapshot.
	revealed bool
	pending  []Event
	// revealAtStart: a new task of a stream or a non-blocking send (with
	// no webhook to store), stored when its turn starts (already WORKING,
	// in one write) unless Stream or Send stores it first because the
	// turn has to wait behind another of its context.
	revealAtStart bool

	subs []*Subscription
	// settled is closed when the current turn settles: the task became
	// terminal or interrupted, or the agent answered with a direct reply.
	settled chan struct{}
	// direct is the agent's direct reply when the task was never revealed.
	direct *a2a.Message

	turn        *Turn // the current (queued or running) turn
	turnRunning bool  // the host has the turn
	output      bool  // the host produced output in the current task
	lastActive  time.Time
	artifactSeq int

	// trace is the W3C trace context of the latest turn. It outlives the
	// turn, so notifications the task sends after it (a cancellation, a
	// failure at shutdown) continue the same trace.
	trace tracing.Context

	push []a2a.TaskPushNotificationConfig
	// pushUnsaved: push holds an inline config not yet stored (it can only
	// be stored once the task is).
	pushUnsaved bool

	// repl is the task's bookkeeping for replicas (replicas.go).
	repl liveReplica
}

// logArgs returns the key/value pairs every log line about lt carries
// (task_id, context_id, peer), followed by kv. lt.mu must be held.
func (lt *liveTask) logArgs(kv ...any) []any {
	peer := lt.rec.Owner
	if lt.turn != nil && lt.turn.Sender.ID != "" {
		peer = lt.turn.Sender.ID
	}
	return append([]any{"task_id", lt.rec.Task.ID, "context_id", lt.rec.Task.ContextID, "peer", peer}, kv...)
}

// logArgs returns the key/value pairs every log line about the turn
// carries (task_id, context_id, peer), followed by kv.
func (t *Turn) logArgs(kv ...any) []any {
	return append([]any{"task_id", t.TaskID, "context_id", t.ContextID, "peer", t.Sender.ID}, kv...)
}

// change is one mutation of a task.
type change struct {
	// state is the new state ("" keeps the current one).
	state a2a.TaskState
	// msg becomes status.message (and is appended to history when history
	// is set).
	msg     *a2a.Message
	history bool
	// artifact, when set, is added or merged.
	artifact  *a2a.Artifact
	appendArt bool
	lastChunk bool
}

// snapshot returns a copy of the task safe to hand out while the live task
// goes on changing. Messages and parts are never mutated after they are
// stored, so slices are shared up to their current length; artifacts are
// copied because chunks are merged into them.
func (lt *liveTask) snapshot() a2a.Task {
	t := lt.rec.Task
	if len(t.Artifacts) > 0 {
		t.Artifacts = append([]a2a.Artifact(nil), t.Artifacts...)
	}
	t.History = t.History[:len(t.History):len(t.History)]
	return t
}

// applyLocked applies changes to lt, then persists and broadcasts the
// resulting events (or keeps them pending while lt is unrevealed). It
// handles settling: waking blocking waiters, ending streams, freeing the
// context for the next turn. lt.mu must be held.
func (m *Manager) applyLocked(ctx context.Context, lt *liveTask, changes []change) error {
	if lt.rec.Task.Status.State.Terminal() {
		return fmt.Errorf("task %s is already %s", lt.rec.Task.ID, lt.rec.Task.Status.State)
	}
	// Keep the record as it was: if the update cannot be saved, memory must
	// not run ahead of the store (clients read memory first).
	before := lt.rec
	before.Task = lt.snapshot()
	type transition struct{ from, to a2a.TaskState }
	var transitions []transition
	t := &lt.rec.Task
	// An unrevealed task's events go straight onto its pending ones (whose
	// room prepare reserved); a revealed task's are this update's alone.
	var events []Event
	if lt.revealed {
		events = make([]Event, 0, len(changes))
	} else {
		events = lt.pending
	}
	now := m.now()
	for _, c := range changes {
		if c.artifact != nil {
			mergeArtifact(t, *c.artifact, c.appendArt)
			events = append(events, Event{Response: a2a.StreamResponse{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
				TaskID: t.ID, ContextID: t.ContextID, Artifact: *c.artifact,
				Append: c.appendArt, LastChunk: c.lastChunk,
			}}})
		}
		if c.state == "" && c.msg == nil {
			continue
		}
		from := t.Status.State
		st := c.state
		if st == "" {
			st = from
		}
		if c.msg != nil && c.history {
			t.History = append(t.History, *c.msg)
		}
		t.Status = a2a.TaskStatus{State: st, Message: c.msg, Timestamp: &a2a.Timestamp{Time: now}}
		lt.rec.UpdatedAt = now
		events = append(events, Event{Response: a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskID: t.ID, ContextID: t.ContextID, Status: t.Status,
		}}})
		if from != st {
			transitions = append(transitions, transition{from, st})
		}
	}
	observe := func() {
		if m.opts.Observer != nil {
			for _, tr := range transitions {
				m.opts.Observer.TaskTransition(tr.from, tr.to)
			}
		}
	}
	state := t.Status.State
	settled := state.Terminal() || state.Interrupted()
	if settled && !lt.revealed {
		lt.pending = events
		observe()
		return m.revealLocked(ctx, lt, true)
	}
	if !lt.revealed {
		lt.pending = events
		observe()
		return nil
	}
	// With replicas, the streams that stay open while the task waits for
	// its client follow it through the Cluster from this save on.
	m.rep.moveStreamsLocked(lt)
	if err := m.persistLocked(ctx, lt, events); err != nil {
		if errors.Is(err, ErrTakenOver) { // only with replicas
			m.rep.dropTakenOverLocked(ctx, lt)
			return err
		}
		lt.rec = before
		return err
	}
	observe()
	m.broadcastLocked(lt, events)
	if settled {
		m.settleLocked(lt)
	}
	return nil
}

// revealLocked persists lt with everything that happened so far, queues push
// deliveries for it, and hands the pending events to waiting streams.
func (m *Manager) revealLocked(ctx context.Context, lt *liveTask, settleAfter bool) error {
	if lt.revealed {
		return nil
	}
	events := lt.pending
	lt.pending = nil
	lt.revealed = true
	// The creation snapshot is for streams only; webhooks get the updates.
	pushEvents := withoutSnapshots(events)
	if err := m.persistLocked(ctx, lt, pushEvents); err != nil {
		lt.revealed = false
		lt.pending = events
		return err
	}
	if lt.pushUnsaved {
		for _, pc := range lt.push {
			if err := m.store.PutPushConfig(ctx, &store.PushConfig{Config: pc, Owner: lt.rec.Owner, CreatedAt: lt.rec.CreatedAt}); err != nil {
				return fmt.Errorf("storing the push notification config of task %s: %w", lt.rec.Task.ID, err)
			}
		}
		lt.pushUnsaved = false
	}
	m.broadcastLocked(lt, events)
	st := lt.rec.Task.Status.State
	if settleAfter && (st.Terminal() || st.Interrupted()) {
		m.settleLocked(lt)
	}
	return nil
}

// withoutSnapshots returns the events that are not task snapshots. The
// snapshots usually lead (a new task's creation snapshot is its first
// pending event): then the rest is a subslice of events, nothing copied.
func withoutSnapshots(events []Event) []Event {
	lead := 0
	for lead < len(events) && events[lead].Response.Task != nil {
		lead++
	}
	rest := events[lead:]
	for i := range rest {
		if rest[i].Response.Task != nil {
			out := make([]Event, 0, len(rest))
			for _, ev := range rest {
				if ev.Response.Task == nil {
					out = append(out, ev)
				}
			}
			return out
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return rest
}

// persistLocked writes lt's record and, atomically with it, one push delivery
// per event and registered webhook.
func (m *Manager) persistLocked(ctx context.Context, lt *liveTask, events []Event) error {
	// An update is saved even when the request that caused it goes away
	// (a client that cancels and hangs up): the task has changed.
	ctx = context.WithoutCancel(ctx)
	var deliveries []store.Delivery
	if len(lt.push) > 0 && len(events) > 0 {
		now := m.now()
		for i := range events {
			body, err := events[i].encode()
			if err != nil {
				return fmt.Errorf("encoding push notification for task %s: %w", lt.rec.Task.ID, err)
			}
			for _, pc := range lt.push {
				deliveries = append(deliveries, store.Delivery{
					TaskID: lt.rec.Task.ID, ContextID: lt.rec.Task.ContextID, ConfigID: pc.ID, Body: body, NextTry: now, CreatedAt: now,
					Trace: lt.trace,
				})
			}
		}
	}
	rec := lt.rec
	rec.Task = lt.snapshot()
	if err := m.rep.save(ctx, &rec, deliveries, events); err != nil {
		m.log.Error("saving task failed; its update is not announced", lt.logArgs("error", err)...)
		return fmt.Errorf("saving task %s: %w", lt.rec.Task.ID, err)
	}
	lt.repl.saves++
	if len(deliveries) > 0 && m.opts.Notifier != nil {
		m.opts.Notifier.Notify()
	}
	m.notifyLocked(lt)
	return nil
}

// broadcastLocked hands events to every stream of lt. A stream that cannot
// keep up is dropped rather than allowed to block the task.
func (m *Manager) broadcastLocked(lt *liveTask, events []Event) {
	if len(lt.subs) == 0 || len(events) == 0 {
		return
	}
	for i := range events {
		if events[i].Response.Task == nil {
			_, _ = events[i].encode() // once, shared by all streams
		}
	}
	kept := lt.subs[:0]
	for _, s := range lt.subs {
		if s.deliver(events) {
			kept = append(kept, s)
		}
	}
	clear(lt.subs[len(kept):])
	lt.subs = kept
}

// settleLocked ends the current turn's waits: blocking sends return, the
// context may run its next turn, and a task that needs nothing more from the
// host leaves memory. Streams end too, each as its kind says (see
// Subscription.endsAt): at an interrupted state some stay open — every
// stream at AUTH_REQUIRED (the task resumes once the peer brings
// credentials), subscribers at INPUT_REQUIRED — and the task stays in
// memory for as long as a stream follows it (with a Cluster, Apply then
// moves them to following the task through it; see followSettledLocked).
func (m *Manager) settleLocked(lt *liveTask) {
	select {
	case <-lt.settled:
	default:
		close(lt.settled)
	}
	st := lt.rec.Task.Status.State
	kept := lt.subs[:0]
	for _, s := range lt.subs {
		if s.endsAt(st) {
			s.finish(nil)
		} else {
			kept = append(kept, s)
		}
	}
	clear(lt.subs[len(kept):])
	lt.subs = kept
	keepStreams := len(kept) > 0
	lt.turnRunning = false
	lt.turn = nil
	m.mu.Lock()
	if lt.rec.Task.Status.State.Terminal() {
		// No turn can follow a terminal task, so late ends need no count.
		delete(m.hostTurns, lt.rec.Task.ID)
	}
	if keepStreams {
		m.releaseContextLocked(lt)
	} else {
		m.advanceLocked(lt)
	}
	m.mu.Unlock()
}

// staying counts lt's streams that stay open when the task reaches st.
// lt.mu must be held.
func (lt *liveTask) staying(st a2a.TaskState) int {
	n := 0
	for _, s := range lt.subs {
		if !s.endsAt(st) {
			n++
		}
	}
	return n
}

// mergeArtifact adds art to t, appending its parts to an earlier artifact
// with the same id when appendParts is set.
func mergeArtifact(t *a2a.Task, art a2a.Artifact, appendParts bool) {
	for i := range t.Artifacts {
		if t.Artifacts[i].ArtifactID != art.ArtifactID {
			continue
		}
		if appendParts {
			merged := t.Artifacts[i]
			merged.Parts = append(merged.Parts[:len(merged.Parts):len(merged.Parts)], art.Parts...)
			if art.Name != "" {
				merged.Name = art.Name
			}
			if art.Description != "" {
				merged.Description = art.Description
			}
			t.Artifacts[i] = merged
		} else {
			t.Artifacts[i] = art
		}
		return
	}
	t.Artifacts = append(t.Artifacts, art)
}
