package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// startTimeout bounds Executor.StartTurn, which only hands the turn over.
const startTimeout = 30 * time.Second

// ctxQueue is the FIFO of turns of one context. One turn runs at a time per
// context, so the host's conversation sees messages in order and answers
// never cross; different contexts run in parallel.
type ctxQueue struct {
	running *liveTask
	waiting []*liveTask
}

// enqueue schedules lt's turn (lt.turn) in its context and starts it at once
// when the context is idle. It must be called without lt.mu held.
func (m *Manager) enqueue(lt *liveTask) error {
	cid := lt.rec.Task.ContextID
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	q := m.queues[cid]
	if q == nil {
		q = &ctxQueue{}
		m.queues[cid] = q
	}
	if q.running != nil {
		if len(q.waiting) >= m.opts.MaxQueuedPerContext {
			m.mu.Unlock()
			return a2a.NewError(-32603, "CONTEXT_QUEUE_FULL",
				fmt.Sprintf("context %s already has %d messages waiting for the agent; wait for them to finish or use another context", cid, len(q.waiting)))
		}
		q.waiting = append(q.waiting, lt)
		m.live[lt.rec.Task.ID] = lt
		m.mu.Unlock()
		return nil
	}
	q.running = lt
	m.live[lt.rec.Task.ID] = lt
	m.mu.Unlock()
	m.startTurn(lt)
	return nil
}

// startTurn hands lt's turn to the host. The task goes WORKING first, so the
// host's first output can never precede it.
func (m *Manager) startTurn(lt *liveTask) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	lt.mu.Lock()
	if lt.rec.Task.Status.State.Terminal() || lt.turn == nil {
		// Canceled while it waited in the queue.
		lt.mu.Unlock()
		m.mu.Lock()
		m.advanceLocked(lt)
		m.mu.Unlock()
		return
	}
	// Count the host turn before the task can be seen running, so that a
	// late ProcessingComplete of an earlier turn of this task (one that
	// asked a question) is never taken for this turn's end.
	m.hostTurnStarted(lt.rec.Task.ID, 1)
	lt.turnRunning = true
	lt.lastActive = m.now()
	turn := lt.turn
	err := m.applyLocked(ctx, lt, []change{{state: a2a.TaskStateWorking}})
	if err == nil && lt.revealAtStart {
		// A new task of a stream or a non-blocking send whose context
		// was free: stored once, WORKING, instead of SUBMITTED and then
		// WORKING. Its stream gets the same events (the task, then the
		// status update) from this one write, and the send its answer
		// after it, before the host has the turn.
		err = m.revealLocked(ctx, lt, false)
	}
	lt.mu.Unlock()
	if err != nil {
		m.log.Error("could not start turn", turn.logArgs("error", err)...)
	}
	if err == nil {
		err = m.exec.StartTurn(ctx, turn)
	}
	if err != nil {
		m.hostTurnStarted(turn.TaskID, -1)
	}
	if err == nil {
		return
	}
	m.log.Warn("host did not accept the message", turn.logArgs("error", err)...)
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.rec.Task.Status.State.Terminal() {
		return
	}
	if aerr := m.applyLocked(ctx, lt, []change{{state: a2a.TaskStateFailed, history: true,
		msg: agentText(lt, "The agent could not take the message: "+err.Error())}}); aerr != nil {
		m.log.Error("failing task after a refused turn", turn.logArgs("error", aerr)...)
	}
}

// hostTurnStarted adds delta to the task's open host turns and returns the
// new count; the entry goes when it reaches zero.
func (m *Manager) hostTurnStarted(taskID string, delta int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := max(m.hostTurns[taskID]+delta, 0)
	if n == 0 {
		delete(m.hostTurns, taskID)
	} else {
		m.hostTurns[taskID] = n
	}
	return n
}

// turnDoneLocked ends lt's turn: the task leaves memory unless it still has
// work queued, and the next turn of its context starts. lt.mu must be held.
func (m *Manager) turnDoneLocked(lt *liveTask) {
	lt.turnRunning = false
	lt.turn = nil
	m.mu.Lock()
	m.advanceLocked(lt)
	m.mu.Unlock()
}

// advanceLocked removes lt from its context's queue and from memory and
// starts the next turn of the context. m.mu must be held.
func (m *Manager) advanceLocked(lt *liveTask) {
	if m.live[lt.rec.Task.ID] == lt {
		delete(m.live, lt.rec.Task.ID)
	}
	m.releaseContextLocked(lt)
}

// releaseContextLocked removes lt from its context's queue and starts the
// context's next turn, leaving lt in memory. m.mu must be held.
func (m *Manager) releaseContextLocked(lt *liveTask) {
	cid := lt.rec.Task.ContextID
	q := m.queues[cid]
	if q == nil {
		return
	}
	if q.running != lt {
		for i, w := range q.waiting {
			if w == lt {
				q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
				break
			}
		}
		return
	}
	q.running = nil
	if len(q.waiting) == 0 {
		delete(m.queues, cid)
		return
	}
	next := q.waiting[0]
	q.waiting = q.waiting[1:]
	q.running = next
	if m.closed {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.startTurn(next)
	}()
}
