// Package tasks owns the lifecycle of inbound A2A tasks: the state machine,
// one FIFO of turns per context, waiters for blocking sends, subscribers of
// streams, the watchdog that fails tasks whose host went silent, and the
// order "persist first, then tell anyone".
//
// The manager does not know how a turn is run: an Executor (the bridge to the
// host) starts and cancels turns, and reports what the agent produced through
// Manager.Apply and Manager.EndTurn.
//
// # Visibility
//
// A new task is "revealed" — persisted and observable through GetTask,
// ListTasks, streams and push notifications — the first time anyone could
// learn its id: when a non-blocking send returns, when a stream starts (its
// first event is the task, sent at once), when a push config is attached,
// or when the task settles (terminal or interrupted) or the blocking wait
// times out. Until then its events are kept in memory. That keeps a
// blocking request to one store write and still honours the rule that
// nothing a client was told is ever lost: after a reveal every update is
// durable before it is broadcast.
//
// A turn whose first output is a direct reply answers with a Message and its
// provisional task is dropped unless it was already revealed (then the
// reply completes the task like a final answer; so it does on a stream).
//
// # Answers
//
// A final answer goes out once: as the task's "answer" artifact, with a
// COMPLETED status that carries no message and no history entry for it.
// Questions (INPUT_REQUIRED, AUTH_REQUIRED) and the notices of other ends
// (failed, canceled, rejected, finished without a reply) are status
// messages, kept in history too. Progress is a WORKING status message and
// is never kept as anything else.
//
// # Replicas
//
// With Options.Cluster set, several managers — one per replica, each with
// its own host — share one store. Saves go through the Cluster (which
// publishes their events to other replicas), a stream on a task not live
// here follows it through the Cluster, a cancel or push-config change is
// forwarded to the replica running the task, and the Cluster fails the
// running tasks of replicas that died (FailOrphan). See Cluster.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// Turn is one run of the host's agent on a task: from the message that
// started it to ProcessingComplete.
type Turn struct {
	TaskID    string
	ContextID string
	// Message is the inbound message, with its ids filled in.
	Message a2a.Message
	// RequestMetadata is the metadata of the SendMessage request.
	RequestMetadata map[string]any
	// Sender is the authenticated caller.
	Sender security.Identity
	// Continuation is true when the message answers an interrupted task.
	Continuation bool
	// Chain is the task's delegation chain (its id is the task's, see
	// TaskChainID) at the depth the message came with: the outbound calls
	// the turn makes continue it.
	Chain security.Chain
	// Trace is the W3C trace context of the request that started the turn.
	Trace tracing.Context
}

// Executor runs turns on the host. StartTurn must return once the host
// accepted the turn (not when it finished); the agent's output arrives later
// through Manager.Apply and Manager.EndTurn.
type Executor interface {
	StartTurn(ctx context.Context, t *Turn) error
	// CancelTurn asks the host to stop the turn. The manager has already
	// marked the task canceled.
	CancelTurn(ctx context.Context, t *Turn, reason string) error
}

// Notifier is told when push deliveries were added to the store's outbox.
type Notifier interface {
	Notify()
}

// Observer is told about state transitions, for metrics: from "" for a new
// task, to "" for a provisional task dropped after a direct reply. Calls
// must be fast and must not call back into the Manager.
type Observer interface {
	TaskTransition(from, to a2a.TaskState)
}

// Store is the part of the store a Manager uses: the tasks and their push
// configs (an agent's view of them, store.ForAgent, when the host declares
// agents).
type Store interface {
	store.Tasks
	store.PushConfigs
}

// Options configure a Manager. Zero values get the documented defaults.
type Options struct {
	// Store persists tasks and push configs. Required.
	Store Store
	// Executor runs turns on the host. Required.
	Executor Executor
	Logger   hclog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// RequestTimeout bounds how long a blocking SendMessage waits for the
	// task to settle before returning it as it is (default 60 s). It does
	// not limit how long the task may run.
	RequestTimeout time.Duration
	// SilenceTimeout fails a running turn when the host sent nothing for
	// that long (default 10 min). Any progress resets the clock.
	SilenceTimeout time.Duration
	// SubscriberBuffer is how many events a stream may lag behind before it
	// is dropped (default 256). A slow client never blocks a task.
	SubscriberBuffer int
	// MaxQueuedPerContext bounds the turns waiting in one context (default
	// 64); beyond it a send is refused.
	MaxQueuedPerContext int
	// Notifier, when set, is told after push deliveries were enqueued.
	Notifier Notifier
	// Observer, when set, sees every state transition.
	Observer Observer
	// Cluster, when set, connects this manager to other replicas sharing
	// the store (see Cluster). Nil: one process, the default.
	Cluster Cluster
	// MaxPushConfigsPerTask bounds the push notification configs one task
	// may have (default DefaultMaxPushConfigsPerTask); one more is refused
	// with -32602. Replacing a config by its id does not count.
	MaxPushConfigsPerTask int
	// HostCannotCancel says the host cannot stop a turn it is running
	// (contract 1.3, HostInfo.cancel_turn_unsupported). CancelTask of a task
	// whose turn the host has is then refused with -32002 and changes
	// nothing, because the run goes on; a task whose turn is still queued,
	// or that waits for input, is canceled as usual.
	HostCannotCancel bool
}

// DefaultMaxPushConfigsPerTask is Options.MaxPushConfigsPerTask's default.
const DefaultMaxPushConfigsPerTask = 10

// Manager runs the lifecycle of every inbound task.
//
// It has many methods (49 at this writing) on purpose: the operations of the A2A
// task API (send, get, list, cancel, subscribe, push configs), the host's
// side (Apply, EndTurn) and the steps of a task's life (queue, reveal,
// apply, persist, settle), which all take the same two locks in one order
// (liveTask.mu before Manager.mu) and keep one promise (persist first,
// then tell anyone). They are grouped by file — send.go, queue.go, ops.go,
// live.go, push.go, watch.go — and what only replicas need is on the
// replicas type (replicas.go); splitting the rest into types would spread
// the lock order over them.
type Manager struct {
	opts  Options
	store Store
	log   hclog.Logger
	now   func() time.Time

	exec Executor
	// rep is the manager's part in a cluster of replicas; without
	// Options.Cluster its methods give the single-process answers.
	rep replicas

	mu     sync.Mutex
	live   map[string]*liveTask // tasks with a queued or running turn
	queues map[string]*ctxQueue // context id → FIFO of turns
	// contexts remembers conversations and their owners (see
	// claimContext).
	contexts map[ownedContext]struct{}
	// hostTurns counts, per task, host turns started and not yet ended by
	// ProcessingComplete. A task can have two: the one that asked a
	// question and has not reported its end yet, and the continuation
	// that answers it. ProcessingComplete names only the task, and a
	// host ends a chat's turns in order, so an end that leaves a count
	// above zero belongs to an earlier turn and must not settle the task.
	hostTurns map[string]int
	closed    bool
	// pushMu serialises counting a task's push configs with storing a new
	// one (see putPushConfig), so concurrent creations cannot pass the
	// limit together. It is never held while taking a liveTask's lock.
	pushMu sync.Mutex
	// watch holds the functions Watch registered (see watch.go).
	watch watchers

	stop chan struct{}
	wg   sync.WaitGroup
}

// Errors returned by the manager besides A2A protocol errors.
var (
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("tasks: manager is shutting down")
	// ErrDropped ends a subscription whose client fell too far behind.
	ErrDropped = errors.New("stream dropped: the client read events too slowly")
)

// NewManager returns a manager; call Start to recover tasks from the store
// and run the watchdog.
func NewManager(opts Options) (*Manager, error) {
	if opts.Store == nil {
		return nil, errors.New("tasks: Options.Store is required")
	}
	if opts.Executor == nil {
		return nil, errors.New("tasks: Options.Executor is required (the bridge to the host)")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 60 * time.Second
	}
	if opts.SilenceTimeout <= 0 {
		opts.SilenceTimeout = 10 * time.Minute
	}
	if opts.SubscriberBuffer <= 0 {
		opts.SubscriberBuffer = 256
	}
	if opts.MaxQueuedPerContext <= 0 {
		opts.MaxQueuedPerContext = 64
	}
	if opts.MaxPushConfigsPerTask <= 0 {
		opts.MaxPushConfigsPerTask = DefaultMaxPushConfigsPerTask
	}
	m := &Manager{
		opts:     opts,
		store:    opts.Store,
		log:      opts.Logger,
		now:      opts.Now,
		exec:     opts.Executor,
		live:     make(map[string]*liveTask),
		queues:   make(map[string]*ctxQueue),
		contexts: make(map[ownedContext]struct{}),
		stop:     make(chan struct{}),

		hostTurns: make(map[string]int),
	}
	m.rep = replicas{m: m, c: opts.Cluster}
	return m, nil
}

// Start fails the tasks that were running when the previous process died
// (their turns died with it; interrupted tasks keep waiting for their
// clients), starts the watchdog and, with replicas, the Cluster's
// background work (Cluster.Run). It returns how many tasks it failed.
func (m *Manager) Start(ctx context.Context) (int, error) {
	active, err := m.rep.recover(ctx)
	if err != nil {
		return 0, fmt.Errorf("tasks: reading tasks left by the previous run: %w", err)
	}
	failed := 0
	for _, rec := range active {
		st := rec.Task.Status.State
		if st.Terminal() || st.Interrupted() {
			continue
		}
		lt, err := m.loadLive(ctx, rec)
		if err != nil {
			return failed, err
		}
		lt.mu.Lock()
		err = m.applyLocked(ctx, lt, []change{{state: a2a.TaskStateFailed,
			msg: agentText(lt, "The agent stopped while working on this task (the A2A plugin restarted). Send the request again.")}})
		lt.mu.Unlock()
		if err != nil {
			return failed, err
		}
		// The host may still be working on the turn the old process
		// started: stop it, or its conversation stays busy.
		m.cancelOnHost(&Turn{TaskID: rec.Task.ID, ContextID: rec.Task.ContextID}, "the A2A plugin restarted")
		failed++
	}
	if failed > 0 {
		m.log.Warn("failed tasks interrupted by the previous shutdown", "count", failed)
	}
	m.wg.Add(1)
	go m.watchdog()
	m.rep.run()
	return failed, nil
}

// Close stops the watchdog, fails running turns with a clear reason and ends
// every stream. It does not close the store.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.stop)
	m.rep.stopPumpsLocked() // streams following tasks through the Cluster
	lts := make([]*liveTask, 0, len(m.live))
	for _, lt := range m.live {
		lts = append(lts, lt)
	}
	m.mu.Unlock()
	m.wg.Wait()
	var errs []error
	var running []*Turn
	for _, lt := range lts {
		lt.mu.Lock()
		st := lt.rec.Task.Status.State
		// A task waiting for its client (kept in memory only for its
		// streams) keeps waiting in the store.
		if !st.Terminal() && !(st.Interrupted() && lt.turn == nil) {
			if lt.turnRunning && lt.turn != nil {
				running = append(running, lt.turn)
			}
			errs = append(errs, m.applyLocked(ctx, lt, []change{{state: a2a.TaskStateFailed,
				msg: agentText(lt, "The agent is shutting down and could not finish this task. Send the request again later.")}}))
		}
		lt.mu.Unlock()
	}
	// Stop the host's work on turns nobody can receive any more, so its
	// conversations are free when the plugin comes back.
	if len(running) > 0 {
		var wg sync.WaitGroup
		for _, t := range running {
			wg.Add(1)
			go func(t *Turn) {
				defer wg.Done()
				if err := m.exec.CancelTurn(ctx, t, "the A2A plugin is shutting down"); err != nil {
					m.log.Warn("host did not confirm the cancellation at shutdown", "task_id", t.TaskID, "context_id", t.ContextID, "error", err)
				}
			}(t)
		}
		wg.Wait()
	}
	return errors.Join(errs...)
}

// ActiveCount returns the number of tasks with a queued or running turn.
func (m *Manager) ActiveCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// agentText returns an agent message for lt's context and task.
func agentText(lt *liveTask, text string) *a2a.Message {
	msg := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart(text))
	msg.TaskID = lt.rec.Task.ID
	msg.ContextID = lt.rec.Task.ContextID
	return &msg
}
