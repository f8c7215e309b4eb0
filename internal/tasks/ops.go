package tasks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// visibleLive returns the live task with id if the caller may see it.
// Holds reports whether the task is live in this manager (running, queued
// or waiting for its client), revealed or not: the host's output for it
// belongs here. With several host agents the platform asks each agent's
// manager when the host does not name the agent.
func (m *Manager) Holds(taskID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[taskID] != nil
}

func (m *Manager) visibleLive(id, scope string) *liveTask {
	m.mu.Lock()
	lt := m.live[id]
	m.mu.Unlock()
	if lt == nil {
		return nil
	}
	lt.mu.Lock()
	ok := lt.revealed && (scope == "" || lt.rec.Owner == scope)
	lt.mu.Unlock()
	if !ok {
		return nil
	}
	return lt
}

// lookup returns a snapshot of a task the caller may see, from memory when
// it is live, else from the store. Another client's task answers exactly
// like a missing one.
func (m *Manager) lookup(ctx context.Context, id, scope string) (*store.TaskRecord, error) {
	if lt := m.visibleLive(id, scope); lt != nil {
		lt.mu.Lock()
		rec := lt.rec
		rec.Task = lt.snapshot()
		lt.mu.Unlock()
		return &rec, nil
	}
	rec, err := m.store.GetTask(ctx, id, scope)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a2a.ErrTaskNotFound(id)
	}
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	return rec, nil
}

// Get handles GetTask.
func (m *Manager) Get(ctx context.Context, scope string, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, a2a.ErrInvalidParams("historyLength", "must not be negative")
	}
	rec, err := m.lookup(ctx, req.ID, scope)
	if err != nil {
		return nil, err
	}
	t := rec.Task.WithHistoryLength(req.HistoryLength)
	return &t, nil
}

// List handles ListTasks for the caller's scope.
func (m *Manager) List(ctx context.Context, scope string, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	size := int32(50)
	if req.PageSize != nil && *req.PageSize != 0 { // 0: the default, as proto3 reads it
		size = *req.PageSize
		if size < 1 || size > 100 {
			return nil, a2a.ErrInvalidParams("pageSize", fmt.Sprintf("is %d; it must be between 1 and 100 (default 50)", size))
		}
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, a2a.ErrInvalidParams("historyLength", "must not be negative")
	}
	if req.Status != "" && req.Status != a2a.TaskStateUnspecified && !req.Status.Known() {
		return nil, a2a.ErrInvalidParams("status", fmt.Sprintf("%q is not a task state", req.Status))
	}
	q := store.TaskQuery{Owner: scope, ContextID: req.ContextID, PageSize: int(size), PageToken: req.PageToken}
	if req.Status != a2a.TaskStateUnspecified {
		q.State = req.Status
	}
	if req.StatusTimestampAfter != nil {
		q.StatusAfter = req.StatusTimestampAfter.Time
	}
	page, err := m.store.ListTasks(ctx, q)
	if errors.Is(err, store.ErrInvalidPageToken) {
		return nil, a2a.ErrInvalidParams("pageToken", "is not a token from a previous ListTasks answer; omit it to start from the first page")
	}
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	out := &a2a.ListTasksResponse{Tasks: make([]a2a.Task, 0, len(page.Tasks)), NextPageToken: page.NextPageToken,
		PageSize: size, TotalSize: int32(page.TotalSize)}
	for _, rec := range page.Tasks {
		t := rec.Task.WithHistoryLength(req.HistoryLength)
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out, nil
}

// Cancel handles CancelTask: the task becomes CANCELED at once and the host
// is asked to stop the turn. With a Cluster, a task another replica runs is
// canceled there, so that replica's host stops the turn.
func (m *Manager) Cancel(ctx context.Context, scope string, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return m.cancel(ctx, scope, req, true)
}

// cancel is Cancel; forward says a task not live here may be handed to the
// replica running it (with replicas; a forwarded cancel is not forwarded
// again).
func (m *Manager) cancel(ctx context.Context, scope string, req *a2a.CancelTaskRequest, forward bool) (*a2a.Task, error) {
	lt := m.visibleLive(req.ID, scope)
	if lt == nil {
		rec, err := m.lookup(ctx, req.ID, scope)
		if err != nil {
			return nil, err
		}
		if st := rec.Task.Status.State; st.Terminal() {
			return nil, a2a.ErrTaskNotCancelable(req.ID, st)
		}
		if err := checkCancelChain(req, &rec.Task); err != nil {
			return nil, err
		}
		if forward {
			done, err := m.rep.forward(ctx, ForwardCancel, req.ID)
			if done {
				if err != nil {
					var aerr *a2a.Error
					if errors.As(err, &aerr) {
						return nil, aerr
					}
					return nil, a2a.ErrInternal(err.Error())
				}
				rec, err := m.lookup(ctx, req.ID, scope)
				if err != nil {
					return nil, err
				}
				return &rec.Task, nil
			}
		}
		if lt, err = m.loadLive(ctx, rec); err != nil {
			return nil, a2a.ErrInternal(err.Error())
		}
	}
	lt.mu.Lock()
	st := lt.rec.Task.Status.State
	if st.Terminal() {
		lt.mu.Unlock()
		return nil, a2a.ErrTaskNotCancelable(req.ID, st)
	}
	if err := checkCancelChain(req, &lt.rec.Task); err != nil {
		lt.mu.Unlock()
		return nil, err
	}
	if lt.turnRunning && m.opts.HostCannotCancel {
		lt.mu.Unlock()
		return nil, a2a.ErrTaskRunNotCancelable(req.ID, st)
	}
	turn := lt.turn
	if turn == nil {
		// An interrupted task: tell the host too, so it can drop the
		// question it is waiting on.
		turn = &Turn{TaskID: lt.rec.Task.ID, ContextID: lt.rec.Task.ContextID, Sender: security.Identity{ID: lt.rec.Owner}, Trace: lt.trace}
	}
	// Settling frees the context; a turn still waiting in the queue is
	// dropped there.
	err := m.applyLocked(ctx, lt, []change{{state: a2a.TaskStateCanceled,
		msg: agentText(lt, cancelNotice(req))}})
	t := lt.snapshot()
	lt.mu.Unlock()
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	m.cancelOnHost(turn, "canceled by the client")
	return &t, nil
}

// cancelOnHost tells the host to stop a turn without making the caller wait
// for it.
func (m *Manager) cancelOnHost(turn *Turn, reason string) {
	m.mu.Lock()
	closed := m.closed
	if !closed {
		m.wg.Add(1) // under m.mu: Close waits for it only after closing
	}
	m.mu.Unlock()
	if closed {
		return
	}
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		if err := m.exec.CancelTurn(ctx, turn, reason); err != nil {
			m.log.Warn("host did not confirm the cancellation", turn.logArgs("error", err)...)
		}
	}()
}

// Subscribe handles SubscribeToTask: the stream starts with the current
// task and follows it until it is terminal — also through INPUT_REQUIRED
// and AUTH_REQUIRED, while the client answers the task from elsewhere.
func (m *Manager) Subscribe(ctx context.Context, scope string, req *a2a.SubscribeToTaskRequest) (*Subscription, error) {
	lt := m.visibleLive(req.ID, scope)
	if lt == nil {
		rec, err := m.lookup(ctx, req.ID, scope)
		if err != nil {
			return nil, err
		}
		st := rec.Task.Status.State
		if st.Terminal() {
			return nil, a2a.ErrUnsupportedOperation(fmt.Sprintf(
				"task %s is already %s; there is nothing to subscribe to (use GetTask for its result)", req.ID, st))
		}
		// With replicas, another replica runs it, or will resume it (the
		// answer or the credentials may reach any replica): follow what
		// is saved.
		if sub, ok, err := m.rep.subscribe(ctx, req.ID, scope); ok {
			return sub, err
		}
		// Waiting for its client: follow it until it resumes and ends.
		if lt, err = m.loadLive(ctx, rec); err != nil {
			return nil, a2a.ErrInternal(err.Error())
		}
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	st := lt.rec.Task.Status.State
	if st.Terminal() {
		return nil, a2a.ErrUnsupportedOperation(fmt.Sprintf(
			"task %s is already %s; there is nothing to subscribe to (use GetTask for its result)", req.ID, st))
	}
	sub := newSubscription(m, lt, nil, true)
	snap := lt.snapshot()
	sub.deliver([]Event{{Response: a2a.StreamResponse{Task: &snap}}})
	lt.subs = append(lt.subs, sub)
	return sub, nil
}

// UpdateKind says what the agent produced.
type UpdateKind int

// Kinds of agent output.
const (
	// UpdateProgress: intermediate output; the task stays WORKING.
	UpdateProgress UpdateKind = iota + 1
	// UpdateArtifact: an artifact or a chunk of one.
	UpdateArtifact
	// UpdateInputRequired: a question; the task waits for the client.
	UpdateInputRequired
	// UpdateAuthRequired: the task waits for credentials.
	UpdateAuthRequired
	// UpdateFinal: the answer; the task completes.
	UpdateFinal
	// UpdateDirectReply: a plain message answer that needs no task.
	UpdateDirectReply
)

// Update is one piece of agent output for a task.
type Update struct {
	Kind UpdateKind
	// Message is the agent's message (all kinds but UpdateArtifact).
	Message *a2a.Message
	// Artifact is the artifact (UpdateArtifact).
	Artifact  *a2a.Artifact
	Append    bool
	LastChunk bool
}

// ErrTaskNotRunning is returned to the host when it sends output for a task
// that has no turn (unknown, finished, or waiting for its client).
var ErrTaskNotRunning = errors.New("the task has no running turn")

// Apply records agent output for a task.
func (m *Manager) Apply(ctx context.Context, taskID string, u Update) error {
	m.mu.Lock()
	lt := m.live[taskID]
	m.mu.Unlock()
	if lt == nil {
		return fmt.Errorf("task %s: %w", taskID, ErrTaskNotRunning)
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	// The state the update puts the task in, when it interrupts it.
	var interrupt a2a.TaskState
	switch u.Kind {
	case UpdateAuthRequired:
		interrupt = a2a.TaskStateAuthRequired
	case UpdateInputRequired:
		interrupt = a2a.TaskStateInputRequired
	}
	// With replicas, the streams that stay open at the interruption follow
	// the task elsewhere; this may release lt.mu, so everything below
	// reads lt afresh.
	moving := m.rep.beforeInterruptLocked(lt, interrupt)
	if moving {
		defer m.rep.dropAheadLocked(lt)
	}
	if lt.rec.Task.Status.State.Terminal() {
		return fmt.Errorf("task %s is already %s: %w", taskID, lt.rec.Task.Status.State, ErrTaskNotRunning)
	}
	if !lt.turnRunning {
		// In memory for another reason (a stream following a task that
		// waits for its client): the host has no turn on it.
		return fmt.Errorf("task %s is %s and has no turn: %w", taskID, lt.rec.Task.Status.State, ErrTaskNotRunning)
	}
	lt.lastActive = m.now()
	first := !lt.output
	lt.output = true
	if u.Message != nil {
		u.Message.TaskID = lt.rec.Task.ID
		u.Message.ContextID = lt.rec.Task.ContextID
		u.Message.Role = a2a.RoleAgent
		if u.Message.MessageID == "" {
			u.Message.MessageID = a2a.NewID()
		}
	}
	var changes []change
	switch u.Kind {
	case UpdateProgress:
		changes = []change{{state: a2a.TaskStateWorking, msg: u.Message}}
	case UpdateArtifact:
		if u.Artifact == nil {
			return errors.New("artifact update without an artifact")
		}
		art := *u.Artifact
		if art.ArtifactID == "" {
			art.ArtifactID = a2a.NewID()
		}
		changes = []change{{artifact: &art, appendArt: u.Append, lastChunk: u.LastChunk}}
	case UpdateInputRequired:
		changes = []change{{state: a2a.TaskStateInputRequired, msg: u.Message, history: true}}
	case UpdateAuthRequired:
		changes = []change{{state: a2a.TaskStateAuthRequired, msg: u.Message, history: true}}
	case UpdateDirectReply:
		if first && !lt.revealed && len(lt.push) == 0 {
			m.directReplyLocked(lt, u.Message)
			return nil
		}
		fallthrough
	case UpdateFinal:
		// The answer goes out once: as the task's answer artifact (results
		// are artifacts, specification §3.7), not also as the COMPLETED
		// status message or a history entry.
		if u.Message != nil && len(u.Message.Parts) > 0 {
			lt.artifactSeq++
			art := a2a.Artifact{ArtifactID: lt.rec.Task.ID + "-answer-" + strconv.Itoa(lt.artifactSeq), Name: "answer",
				Parts: u.Message.Parts, Metadata: u.Message.Metadata, Extensions: u.Message.Extensions}
			changes = append(changes, change{artifact: &art, lastChunk: true}, change{state: a2a.TaskStateCompleted})
		} else {
			changes = append(changes, completedWithoutReply(lt, len(lt.rec.Task.Artifacts) > 0))
		}
	default:
		return fmt.Errorf("unknown update kind %d", u.Kind)
	}
	if err := m.applyLocked(ctx, lt, changes); err != nil {
		return err
	}
	if moving {
		m.rep.followSettledLocked(lt)
	}
	return nil
}

// directReplyLocked answers an unrevealed task's request with a plain
// message: blocking sends and streams get the message; the provisional task
// is never stored.
func (m *Manager) directReplyLocked(lt *liveTask, msg *a2a.Message) {
	msg.TaskID = ""
	lt.direct = msg
	for _, s := range lt.subs {
		s.deliver([]Event{{Response: a2a.StreamResponse{Message: msg}}})
		s.finish(nil)
	}
	lt.subs = nil
	lt.pending = nil
	if m.opts.Observer != nil {
		// The provisional task never existed for anyone: it leaves the
		// counts instead of completing.
		m.opts.Observer.TaskTransition(lt.rec.Task.Status.State, "")
	}
	lt.rec.Task.Status.State = a2a.TaskStateCompleted
	close(lt.settled)
	m.turnDoneLocked(lt)
}

// Outcome is how the host says a turn ended.
type Outcome int

// Turn outcomes.
const (
	OutcomeSuccess Outcome = iota + 1
	OutcomeFailure
	OutcomeCancelled
	OutcomeRejected
)

// EndTurn records the end of a turn (the host's ProcessingComplete). A task
// still running is settled by the outcome; one already settled is left as
// it is.
func (m *Manager) EndTurn(ctx context.Context, taskID string, outcome Outcome, errText string) error {
	m.mu.Lock()
	lt := m.live[taskID]
	m.mu.Unlock()
	if lt == nil {
		m.hostTurnStarted(taskID, -1)
		return nil
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	// Counted down under lt.mu, where startTurn counts a turn up: either
	// the continuation of this task has started and been counted (then
	// this is the end of an earlier turn, one that asked a question, and
	// leaves the continuation alone), or it has not started and the task
	// still shows the question (nothing to settle below).
	if m.hostTurnStarted(taskID, -1) > 0 {
		return nil
	}
	st := lt.rec.Task.Status.State
	if st.Terminal() || st.Interrupted() || !lt.turnRunning {
		return nil
	}
	var c change
	switch outcome {
	case OutcomeSuccess:
		// The turn ended without a final answer: whatever the status says
		// now is progress, which never becomes the final status.
		c = completedWithoutReply(lt, len(lt.rec.Task.Artifacts) > 0)
	case OutcomeFailure:
		if errText == "" {
			errText = "The agent failed without giving a reason."
		}
		c = change{state: a2a.TaskStateFailed, msg: agentText(lt, errText), history: true}
	case OutcomeCancelled:
		c = change{state: a2a.TaskStateCanceled, msg: agentText(lt, "The agent canceled the task."), history: true}
	case OutcomeRejected:
		if errText == "" {
			errText = "The agent declined the task."
		}
		c = change{state: a2a.TaskStateRejected, msg: agentText(lt, errText), history: true}
	default:
		return fmt.Errorf("unknown turn outcome %d", outcome)
	}
	return m.applyLocked(ctx, lt, []change{c})
}

// completedWithoutReply completes a task whose turn ended with no final
// answer. A task with artifacts has its result in them and completes with
// a bare status; one without says so in a message of its own (never the
// last progress message, which was not an answer).
func completedWithoutReply(lt *liveTask, hasArtifacts bool) change {
	if hasArtifacts {
		return change{state: a2a.TaskStateCompleted}
	}
	return change{state: a2a.TaskStateCompleted, msg: agentText(lt, "The agent finished without a reply."), history: true}
}

// watchdog fails turns whose host went silent for longer than the silence
// timeout. Progress resets the clock, so long work stays alive as long as
// the host keeps reporting.
func (m *Manager) watchdog() {
	defer m.wg.Done()
	every := min(max(m.opts.SilenceTimeout/10, 10*time.Millisecond), 5*time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
		m.mu.Lock()
		lts := make([]*liveTask, 0, len(m.live))
		for _, lt := range m.live {
			lts = append(lts, lt)
		}
		m.mu.Unlock()
		now := m.now()
		for _, lt := range lts {
			lt.mu.Lock()
			if !lt.turnRunning || now.Sub(lt.lastActive) < m.opts.SilenceTimeout || lt.rec.Task.Status.State.Terminal() {
				lt.mu.Unlock()
				continue
			}
			turn := lt.turn
			silent := now.Sub(lt.lastActive).Round(time.Second)
			err := m.applyLocked(context.Background(), lt, []change{{state: a2a.TaskStateFailed, history: true,
				msg: agentText(lt, fmt.Sprintf("The agent went silent for %s without progress, so the task was stopped. Try again, or ask the operator to raise A2A_TASK_SILENCE_TIMEOUT.", silent))}})
			lt.mu.Unlock()
			if err != nil {
				m.log.Error("watchdog could not fail a silent task", turn.logArgs("error", err)...)
			}
			m.log.Warn("failed a task whose agent went silent", turn.logArgs("silent_for", silent)...)
			m.cancelOnHost(turn, "no progress for "+silent.String())
		}
	}
}
