package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// SendParams is one SendMessage or SendStreamingMessage call.
type SendParams struct {
	// Caller is the authenticated identity; it owns the tasks it creates.
	Caller security.Identity
	// Scope restricts which existing tasks and contexts the caller may use:
	// its own identity, or "" for a caller allowed to see every task.
	Scope string
	// Request is the validated request.
	Request *a2a.SendMessageRequest
	Trace   tracing.Context
	// PushConfig is the validated inline push config, if any (its TaskID
	// and ID are filled in by the manager).
	PushConfig *a2a.TaskPushNotificationConfig
	// Reject, when set, refuses the work without involving the host: the
	// task is created REJECTED with this reason (loop guards use it).
	Reject string
	// NewContextID, when set, is the context id to give a message that
	// names neither a context nor a task (instead of a fresh one), so the
	// caller can account for the new conversation before it starts.
	NewContextID string
}

// Send handles a blocking or non-blocking SendMessage.
func (m *Manager) Send(ctx context.Context, p SendParams) (*a2a.SendMessageResponse, error) {
	lt, err := m.prepare(ctx, p)
	if err != nil {
		return nil, err
	}
	cfg := p.Request.Configuration
	var hl *int32
	if cfg != nil {
		hl = cfg.HistoryLength
	}
	if p.Reject != "" {
		return m.reject(ctx, lt, p.Reject, hl)
	}
	lt.mu.Lock()
	webhook := lt.pushUnsaved
	lt.mu.Unlock()
	if !cfg.Blocking() && !webhook {
		// The answer names the task, so it is stored before the answer
		// goes out: as its turn starts, WORKING, in one write, when its
		// context is free (as a stream's, see Stream), else here while it
		// waits. The answer is the task as it was submitted.
		lt.mu.Lock()
		lt.revealAtStart = true
		snap := lt.snapshot()
		lt.mu.Unlock()
		if err := m.enqueue(lt); err != nil {
			return nil, m.failUnstarted(lt, err)
		}
		lt.mu.Lock()
		err := m.revealLocked(ctx, lt, false)
		lt.mu.Unlock()
		if err != nil {
			return nil, a2a.ErrInternal(err.Error())
		}
		t := snap.WithHistoryLength(hl)
		return &a2a.SendMessageResponse{Task: &t}, nil
	}
	if !cfg.Blocking() || p.PushConfig != nil {
		// A task with a new webhook is stored before its turn starts:
		// its push config can only be stored after it, and the webhook
		// must hear every update of the turn, its first WORKING too.
		lt.mu.Lock()
		err := m.revealLocked(ctx, lt, false)
		snap := lt.snapshot()
		lt.mu.Unlock()
		if err != nil {
			return nil, a2a.ErrInternal(err.Error())
		}
		if !cfg.Blocking() {
			if err := m.enqueue(lt); err != nil {
				return nil, m.failUnstarted(lt, err)
			}
			t := snap.WithHistoryLength(hl)
			return &a2a.SendMessageResponse{Task: &t}, nil
		}
	}
	settled := lt.settledChan()
	if err := m.enqueue(lt); err != nil {
		return nil, m.failUnstarted(lt, err)
	}
	timer := time.NewTimer(m.opts.RequestTimeout)
	defer timer.Stop()
	select {
	case <-settled:
	case <-timer.C:
	case <-ctx.Done():
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.direct != nil {
		msg := *lt.direct
		return &a2a.SendMessageResponse{Message: &msg}, nil
	}
	if !lt.revealed {
		// The wait ended before the task settled: the client is about to
		// learn the task id, so the task must exist from now on.
		if err := m.revealLocked(context.WithoutCancel(ctx), lt, false); err != nil {
			return nil, a2a.ErrInternal(err.Error())
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, &AbandonedError{TaskID: lt.rec.Task.ID, ContextID: lt.rec.Task.ContextID, Err: err}
	}
	t := lt.snapshot().WithHistoryLength(hl)
	return &a2a.SendMessageResponse{Task: &t}, nil
}

// AbandonedError is Send's error when its caller's context ended (the
// client hung up, or the server is stopping) before the task settled. The
// task exists and carries on; TaskID and ContextID say which it is. It
// unwraps to the context's error.
type AbandonedError struct {
	TaskID, ContextID string
	Err               error
}

func (e *AbandonedError) Error() string {
	return fmt.Sprintf("the caller stopped waiting for task %s: %v", e.TaskID, e.Err)
}

func (e *AbandonedError) Unwrap() error { return e.Err }

// Stream handles SendStreamingMessage. The first event of the subscription
// is the task, revealed (stored) before the agent has the turn: a stream's
// client must get its first event without waiting for the agent, and only
// the agent's first output could tell a message-only answer from a task.
// A new task whose context is free is stored as its turn starts, WORKING,
// in one write with the start (startTurn); one that waits behind another
// turn of its context, or comes with a webhook to store, is stored here,
// SUBMITTED. A direct reply
// therefore completes a streamed task like a final answer. The stream ends
// when the task reaches a terminal state or asks for input (the request it
// answers has its answer then); at AUTH_REQUIRED it stays open.
func (m *Manager) Stream(ctx context.Context, p SendParams) (*Subscription, error) {
	lt, err := m.prepare(ctx, p)
	if err != nil {
		return nil, err
	}
	var hl *int32
	if p.Request.Configuration != nil {
		hl = p.Request.Configuration.HistoryLength
	}
	lt.mu.Lock()
	sub := newSubscription(m, lt, hl, false)
	lt.subs = append(lt.subs, sub)
	if p.Reject != "" {
		lt.mu.Unlock()
		if _, err := m.reject(ctx, lt, p.Reject, hl); err != nil {
			sub.Close()
			return nil, err
		}
		return sub, nil
	}
	if lt.revealed {
		// A continuation: the stream starts from the current snapshot.
		snap := lt.snapshot()
		sub.deliver([]Event{{Response: a2a.StreamResponse{Task: &snap}}})
	} else if lt.pushUnsaved {
		// With a new webhook: stored before the turn starts (see Send).
		if err := m.revealLocked(ctx, lt, false); err != nil {
			lt.subs = nil
			lt.mu.Unlock()
			return nil, a2a.ErrInternal(err.Error())
		}
	} else {
		lt.revealAtStart = true
	}
	lt.mu.Unlock()
	if err := m.enqueue(lt); err != nil {
		sub.Close()
		return nil, m.failUnstarted(lt, err)
	}
	// Still unstored: the turn waits behind another of its context (or
	// its start could not store it). The client learns the task's id
	// from the first event, so the task must exist from now on.
	lt.mu.Lock()
	err = m.revealLocked(ctx, lt, false)
	lt.mu.Unlock()
	if err != nil {
		sub.Close()
		return nil, a2a.ErrInternal(err.Error())
	}
	return sub, nil
}

// reject settles a prepared task as REJECTED without starting a turn.
func (m *Manager) reject(ctx context.Context, lt *liveTask, reason string, hl *int32) (*a2a.SendMessageResponse, error) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.turn = nil
	err := m.applyLocked(context.WithoutCancel(ctx), lt, []change{{state: a2a.TaskStateRejected, history: true, msg: agentText(lt, reason)}})
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	t := lt.snapshot().WithHistoryLength(hl)
	return &a2a.SendMessageResponse{Task: &t}, nil
}

// settledChan returns the channel closed when the current turn settles.
func (lt *liveTask) settledChan() chan struct{} {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.settled
}

// failUnstarted fails a task whose turn could not even be queued, so a
// revealed task never stays SUBMITTED forever, and returns err.
func (m *Manager) failUnstarted(lt *liveTask, err error) error {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if t := lt.turn; t != nil && t.Continuation {
		// An answer to a waiting task that could not be queued: the task
		// keeps waiting, as if the message never came.
		if h := lt.rec.Task.History; len(h) > 0 && h[len(h)-1].MessageID == t.Message.MessageID {
			lt.rec.Task.History = h[:len(h)-1]
		}
		lt.turn = nil
		m.forgetIdleLocked(lt)
	} else if lt.revealed && !lt.rec.Task.Status.State.Terminal() {
		_ = m.applyLocked(context.Background(), lt, []change{{state: a2a.TaskStateFailed, history: true,
			msg: agentText(lt, "The message could not be queued: "+err.Error())}})
	}
	var aerr *a2a.Error
	if errors.As(err, &aerr) {
		return aerr
	}
	return a2a.ErrInternal(err.Error())
}

// prepare validates the message's ids and returns the live task the message
// starts or continues, with its turn set (not yet queued).
func (m *Manager) prepare(ctx context.Context, p SendParams) (*liveTask, error) {
	msg := p.Request.Message
	if msg.Role == "" || msg.Role == a2a.RoleUnspecified {
		msg.Role = a2a.RoleUser
	}
	turn := &Turn{Sender: p.Caller, Trace: p.Trace, RequestMetadata: p.Request.Metadata}
	if msg.TaskID != "" {
		return m.prepareContinuation(ctx, p, msg, turn)
	}
	cid := msg.ContextID
	if cid == "" {
		cid = p.NewContextID
		if cid == "" {
			cid = a2a.NewID()
		}
		// A conversation opened here: its caller may name it from now on
		// (a direct reply, which stores no task, too).
		m.rememberContext(p.Caller.ID, cid)
	} else if err := m.claimContext(ctx, cid, p); err != nil {
		return nil, err
	}
	msg.ContextID = cid
	msg.TaskID = a2a.NewID()
	now := m.now()
	chain := newTaskChain(msg)
	lt := &liveTask{
		rec: store.TaskRecord{
			Task: a2a.Task{
				ID: msg.TaskID, ContextID: cid,
				Status:   a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &a2a.Timestamp{Time: now}},
				History:  []a2a.Message{msg},
				Metadata: map[string]any{security.MetaChainID: chain.ID},
			},
			Owner: p.Caller.ID, CreatedAt: now, UpdatedAt: now,
		},
		settled:    make(chan struct{}),
		lastActive: now,
	}
	if p.PushConfig != nil {
		pc := *p.PushConfig
		pc.TaskID = lt.rec.Task.ID
		if pc.ID == "" {
			pc.ID = a2a.NewID()
		}
		// Stored right after the task itself, when it is revealed.
		lt.push = append(lt.push, pc)
		lt.pushUnsaved = true
	}
	snap := lt.snapshot()
	// Room for what a turn usually adds before the task is revealed: its
	// WORKING update, an answer's artifact and its final status.
	lt.pending = make([]Event, 1, pendingRoom)
	lt.pending[0] = Event{Response: a2a.StreamResponse{Task: &snap}}
	turn.TaskID, turn.ContextID, turn.Message, turn.Chain = msg.TaskID, cid, msg, chain
	lt.turn = turn
	lt.trace = turn.Trace
	if m.opts.Observer != nil {
		m.opts.Observer.TaskTransition("", a2a.TaskStateSubmitted)
	}
	return lt, nil
}

// pendingRoom is the room prepare reserves for a new task's pending events.
const pendingRoom = 4

// prepareContinuation handles a message that names an existing task: it
// must be visible to the caller, in the same context, and waiting for input.
func (m *Manager) prepareContinuation(ctx context.Context, p SendParams, msg a2a.Message, turn *Turn) (*liveTask, error) {
	m.mu.Lock()
	lt := m.live[msg.TaskID]
	m.mu.Unlock()
	if lt == nil {
		rec, err := m.store.GetTask(ctx, msg.TaskID, p.Scope)
		if errors.Is(err, store.ErrNotFound) {
			return nil, a2a.ErrTaskNotFound(msg.TaskID)
		}
		if err != nil {
			return nil, a2a.ErrInternal(err.Error())
		}
		if lt, err = m.loadLive(ctx, rec); err != nil {
			return nil, a2a.ErrInternal(err.Error())
		}
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	accepted := false
	defer func() {
		if !accepted {
			m.forgetIdleLocked(lt)
		}
	}()
	t := &lt.rec.Task
	if !lt.revealed || (p.Scope != "" && lt.rec.Owner != p.Scope) {
		return nil, a2a.ErrTaskNotFound(msg.TaskID)
	}
	if msg.ContextID != "" && msg.ContextID != t.ContextID {
		return nil, a2a.ErrInvalidParams("message.contextId",
			fmt.Sprintf("context %q does not match task %s's context; omit contextId or use %q", msg.ContextID, t.ID, t.ContextID))
	}
	st := t.Status.State
	switch {
	case st.Terminal():
		return nil, a2a.ErrUnsupportedOperation(fmt.Sprintf(
			"task %s is already %s and cannot take more messages; send a new message without taskId in context %s (list the old task in referenceTaskIds)",
			t.ID, st, t.ContextID))
	case !st.Interrupted() || lt.turn != nil:
		return nil, a2a.ErrUnsupportedOperation(fmt.Sprintf(
			"task %s is still working; wait until it asks for input (or finishes), or cancel it", t.ID))
	}
	if p.PushConfig != nil {
		// The task is stored already, so its new webhook can be too.
		pc := *p.PushConfig
		pc.TaskID = t.ID
		if pc.ID == "" {
			pc.ID = a2a.NewID()
		}
		if err := m.putPushConfig(ctx, &store.PushConfig{Config: pc, Owner: p.Caller.ID, CreatedAt: m.now()}, "configuration.taskPushNotificationConfig"); err != nil {
			return nil, err
		}
		replaced := false
		for i := range lt.push {
			if lt.push[i].ID == pc.ID {
				lt.push[i], replaced = pc, true
			}
		}
		if !replaced {
			lt.push = append(lt.push, pc)
		}
	}
	msg.ContextID = t.ContextID
	t.History = append(t.History, msg)
	lt.settled = make(chan struct{})
	lt.output = false
	turn.TaskID, turn.ContextID, turn.Message, turn.Continuation = t.ID, t.ContextID, msg, true
	turn.Chain = continuedChain(t, msg)
	lt.turn = turn
	lt.trace = turn.Trace
	accepted = true
	return lt, nil
}

// forgetIdleLocked takes lt out of memory when nothing keeps it there: no
// turn, no stream. A refused message to a stored task must not pin it.
// lt.mu must be held.
func (m *Manager) forgetIdleLocked(lt *liveTask) {
	if lt.turn != nil || len(lt.subs) > 0 {
		return
	}
	m.mu.Lock()
	if m.live[lt.rec.Task.ID] == lt {
		delete(m.live, lt.rec.Task.ID)
	}
	m.mu.Unlock()
}

// loadLive returns the live task for rec, creating it (with its push
// configs) when it is not in memory.
func (m *Manager) loadLive(ctx context.Context, rec *store.TaskRecord) (*liveTask, error) {
	pcs, err := m.store.ListPushConfigs(ctx, rec.Task.ID)
	if err != nil {
		return nil, fmt.Errorf("loading push configs of task %s: %w", rec.Task.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if lt := m.live[rec.Task.ID]; lt != nil {
		return lt, nil
	}
	lt := &liveTask{rec: *rec, revealed: true, settled: make(chan struct{}), lastActive: m.now()}
	for _, pc := range pcs {
		lt.push = append(lt.push, pc.Config)
	}
	m.live[rec.Task.ID] = lt
	return lt, nil
}

// maxOwnedContexts bounds the memory of conversations opened here; past
// it the memory restarts and conversations with tasks are looked up in
// the store again.
const maxOwnedContexts = 100_000

// ownedContext is a conversation and the identity it belongs to.
type ownedContext struct{ owner, contextID string }

// claimContext checks a client-chosen context id. A caller with a scope (a
// peer) may name only a conversation this agent opened for it: one that
// holds a task of its own, or one it was answered in. Any other id —
// another peer's conversation and an id nobody has used alike — is
// refused with the same error, after the same lookup, so a peer can
// neither learn that a conversation exists nor talk into it, and naming
// an unused id claims nothing. The Local operator (no scope) may use any
// id, a new one too.
func (m *Manager) claimContext(ctx context.Context, cid string, p SendParams) error {
	if len(cid) > 256 {
		return a2a.ErrInvalidParams("message.contextId", "is longer than 256 characters; use a shorter id or omit it")
	}
	key := ownedContext{p.Caller.ID, cid}
	m.mu.Lock()
	_, known := m.contexts[key]
	m.mu.Unlock()
	if known || p.Scope == "" {
		m.rememberContext(p.Caller.ID, cid)
		return nil
	}
	page, err := m.store.ListTasks(ctx, store.TaskQuery{Owner: p.Scope, ContextID: cid, PageSize: 1})
	if err != nil {
		return a2a.ErrInternal(err.Error())
	}
	if len(page.Tasks) == 0 {
		return a2a.ErrInvalidParams("message.contextId", fmt.Sprintf(
			"context %q is not one of your conversations with this agent; omit contextId to start a new conversation (the answer carries its contextId), or reuse a contextId this agent returned to you", cid))
	}
	m.rememberContext(p.Caller.ID, cid)
	return nil
}

// rememberContext records that the conversation cid belongs to owner: it
// was opened here for owner (a new task or a direct reply in it), or
// owner's task in it was found in the store.
func (m *Manager) rememberContext(owner, cid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.contexts) >= maxOwnedContexts {
		clear(m.contexts)
	}
	m.contexts[ownedContext{owner, cid}] = struct{}{}
}
