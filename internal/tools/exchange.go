package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// maxAnswerChars bounds the answer text put into a tool result.
const maxAnswerChars = 12000

// sendSpec is one message to deliver to one peer.
type sendSpec struct {
	target  *resolved
	msg     a2a.Message
	wait    bool
	waitFor time.Duration
	// progress reports intermediate events; it returns false when the
	// caller went away. May be nil.
	progress func(string) bool
	// onTask is called once the peer's task id is known (orchestrate uses
	// it to cancel losers). May be nil.
	onTask func(taskID string)
}

// outcome is what came of a sendSpec (or of following a task).
type outcome struct {
	peer string
	tr   tracker
	// receipt: we stopped waiting before the task finished; why says why.
	receipt bool
	why     string
	err     error
	elapsed time.Duration
}

// done reports whether the task reached a terminal or interrupted state or
// the peer replied with a message.
func (o *outcome) done() bool { return o.err == nil && o.tr.done() }

// success reports a completed task or a direct message reply.
func (o *outcome) success() bool {
	return o.err == nil && (o.tr.message != nil || o.tr.state == a2a.TaskStateCompleted)
}

// tracker accumulates what a peer told us about one task.
type tracker struct {
	taskID, contextID string
	state             a2a.TaskState
	statusMsg         *a2a.Message
	message           *a2a.Message // a direct reply (no task)
	artifacts         []a2a.Artifact
	lastAgentMsg      *a2a.Message // from history
}

func (tr *tracker) done() bool {
	return tr.message != nil || tr.state.Terminal() || tr.state.Interrupted()
}

// applyTask takes a full task snapshot.
func (tr *tracker) applyTask(t *a2a.Task) {
	tr.taskID = t.ID
	if t.ContextID != "" {
		tr.contextID = t.ContextID
	}
	tr.state = t.Status.State
	if t.Status.Message != nil {
		tr.statusMsg = t.Status.Message
	}
	if len(t.Artifacts) > 0 {
		tr.artifacts = append([]a2a.Artifact(nil), t.Artifacts...)
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == a2a.RoleAgent {
			m := t.History[i]
			tr.lastAgentMsg = &m
			break
		}
	}
}

// applyMessage takes a direct reply.
func (tr *tracker) applyMessage(m *a2a.Message) {
	tr.message = m
	if m.ContextID != "" {
		tr.contextID = m.ContextID
	}
	if m.TaskID != "" {
		tr.taskID = m.TaskID
	}
}

// apply folds one stream event in and returns a progress line ("" for
// none).
func (tr *tracker) apply(ev client.Event) string {
	r := ev.Response
	switch {
	case r.Task != nil:
		tr.applyTask(r.Task)
		return fmt.Sprintf("task %s: %s", r.Task.ID, stateName(r.Task.Status.State))
	case r.Message != nil:
		tr.applyMessage(r.Message)
		return ""
	case r.StatusUpdate != nil:
		u := r.StatusUpdate
		tr.taskID = u.TaskID
		if u.ContextID != "" {
			tr.contextID = u.ContextID
		}
		tr.state = u.Status.State
		line := stateName(u.Status.State)
		if u.Status.Message != nil {
			tr.statusMsg = u.Status.Message
			if txt := strings.TrimSpace(partsText(u.Status.Message.Parts)); txt != "" {
				line += ": " + txt
			}
		}
		return line
	case r.ArtifactUpdate != nil:
		u := r.ArtifactUpdate
		tr.taskID = u.TaskID
		tr.mergeArtifact(u.Artifact, u.Append)
		name := u.Artifact.Name
		if name == "" {
			name = u.Artifact.ArtifactID
		}
		return "received artifact " + name
	}
	return ""
}

// mergeArtifact adds an artifact or appends a chunk to an earlier one.
func (tr *tracker) mergeArtifact(a a2a.Artifact, appendParts bool) {
	for i := range tr.artifacts {
		if tr.artifacts[i].ArtifactID == a.ArtifactID {
			if appendParts {
				tr.artifacts[i].Parts = append(tr.artifacts[i].Parts, a.Parts...)
			} else {
				tr.artifacts[i] = a
			}
			return
		}
	}
	tr.artifacts = append(tr.artifacts, a)
}

// answer is the text of what the peer produced: its direct reply, else its
// artifacts, else its status message, else its last message in history.
func (tr *tracker) answer() string {
	if tr.message != nil {
		return partsText(tr.message.Parts)
	}
	var parts []string
	for _, a := range tr.artifacts {
		if s := strings.TrimSpace(partsText(a.Parts)); s != "" {
			parts = append(parts, s)
		}
	}
	status := ""
	if tr.statusMsg != nil {
		status = strings.TrimSpace(partsText(tr.statusMsg.Parts))
	}
	if status != "" && !contains(parts, status) {
		parts = append(parts, status)
	}
	if len(parts) == 0 && tr.lastAgentMsg != nil {
		parts = append(parts, strings.TrimSpace(partsText(tr.lastAgentMsg.Parts)))
	}
	return strings.Join(parts, "\n")
}

// question is the text of an input-required status.
func (tr *tracker) question() string {
	if tr.statusMsg != nil {
		return strings.TrimSpace(partsText(tr.statusMsg.Parts))
	}
	return ""
}

// partsText flattens parts for a model: text as is, files and data
// described.
func partsText(ps []a2a.Part) string {
	var out []string
	for i := range ps {
		p := &ps[i]
		switch p.Kind() {
		case a2a.PartText:
			out = append(out, p.TextValue())
		case a2a.PartRaw:
			out = append(out, fmt.Sprintf("[file %s, %s, %d bytes]", orDash(p.Filename), orDash(p.MediaType), len(p.Raw)))
		case a2a.PartURL:
			out = append(out, fmt.Sprintf("[file %s at %s]", orDash(p.Filename), p.URLValue()))
		case a2a.PartData:
			d := string(p.Data)
			if len(d) > 2000 {
				d = d[:2000] + "…"
			}
			out = append(out, "[data "+d+"]")
		}
	}
	return strings.Join(out, "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// stateName shortens TASK_STATE_INPUT_REQUIRED to INPUT_REQUIRED.
func stateName(s a2a.TaskState) string {
	return strings.TrimPrefix(s.String(), "TASK_STATE_")
}

// deliver sends spec.msg to the peer and follows the task as spec asks.
func (t *Toolset) deliver(ctx context.Context, spec sendSpec) *outcome {
	start := t.now()
	o := &outcome{peer: spec.target.name}
	defer func() {
		o.elapsed = t.now().Sub(start)
		t.metrics.Outbound(spec.target.name, "SendMessage", o.elapsed, o.err)
	}()
	p := spec.target.peer
	info, err := p.Card(ctx)
	if err != nil {
		o.err = err
		return o
	}
	waitCtx, cancel := context.WithTimeout(ctx, spec.waitFor)
	defer cancel()
	req := &a2a.SendMessageRequest{Message: spec.msg}
	noteTask := func() {
		if spec.onTask != nil && o.tr.taskID != "" {
			spec.onTask(o.tr.taskID)
			spec.onTask = nil
		}
	}

	if spec.wait && info.Card.Capabilities.SupportsStreaming() {
		err := p.SendStreamingMessage(waitCtx, req, func(ev client.Event) error {
			line := o.tr.apply(ev)
			noteTask()
			if line != "" && spec.progress != nil && !spec.progress(spec.target.name+": "+line) {
				return errCallerGone
			}
			return nil
		})
		switch {
		case err == nil:
			return o
		case errors.Is(err, errCallerGone):
			o.err = fmt.Errorf("the caller went away; stopped following the task")
			return o
		case waitCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
			if o.tr.taskID == "" {
				o.err = fmt.Errorf("%s did not create a task within %s: %w", spec.target.name, spec.waitFor, err)
				return o
			}
			o.receipt, o.why = true, fmt.Sprintf("stopped waiting after %s", roundDur(spec.waitFor))
			return o
		case client.KindOf(err) == client.ErrStreamCut && o.tr.taskID != "":
			// The stream broke; the task may well go on. Look at it.
			return t.follow(ctx, spec.target, o, waitCtx, spec.progress, false)
		}
		o.err = err
		return o
	}

	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	resp, err := p.SendMessage(waitCtx, req)
	if err != nil {
		if waitCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			o.err = fmt.Errorf("%s did not answer within %s (no task id was returned, so there is nothing to follow up): %w", spec.target.name, roundDur(spec.waitFor), err)
		} else {
			o.err = err
		}
		return o
	}
	if resp.Message != nil {
		o.tr.applyMessage(resp.Message)
		return o
	}
	o.tr.applyTask(resp.Task)
	noteTask()
	if o.tr.done() {
		return o
	}
	if !spec.wait {
		o.receipt, o.why = true, "not waiting (wait=false)"
		return o
	}
	return t.follow(ctx, spec.target, o, waitCtx, spec.progress, false)
}

// errCallerGone stops a stream whose tool caller went away.
var errCallerGone = errors.New("caller went away")

// follow waits for a known task to finish or be interrupted: by
// subscribing when the peer streams (and subscribe is true), else by
// polling GetTask with backoff, until waitCtx ends (then a receipt).
func (t *Toolset) follow(ctx context.Context, target *resolved, o *outcome, waitCtx context.Context, progress func(string) bool, subscribe bool) *outcome {
	p := target.peer
	if subscribe {
		info, err := p.Card(ctx)
		if err == nil && info.Card.Capabilities.SupportsStreaming() {
			err = p.SubscribeToTask(waitCtx, &a2a.SubscribeToTaskRequest{ID: o.tr.taskID}, func(ev client.Event) error {
				line := o.tr.apply(ev)
				if line != "" && progress != nil && !progress(target.name+": "+line) {
					return errCallerGone
				}
				return nil
			})
			switch {
			case err == nil && o.tr.done():
				return o
			case errors.Is(err, errCallerGone):
				o.err = fmt.Errorf("the caller went away; stopped following the task")
				return o
			case waitCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
				o.receipt, o.why = true, "stopped waiting (timeout reached)"
				return o
			}
			// Subscribing failed (e.g. the task is already terminal, which
			// peers answer with -32004) or the stream broke: poll instead.
		}
	}
	delay := 200 * time.Millisecond
	for {
		task, err := p.GetTask(waitCtx, &a2a.GetTaskRequest{ID: o.tr.taskID})
		if err == nil {
			prev := o.tr.state
			o.tr.applyTask(task)
			if o.tr.state != prev && progress != nil {
				line := target.name + ": " + stateName(o.tr.state)
				if q := o.tr.question(); q != "" {
					line += ": " + q
				}
				if !progress(line) {
					o.err = fmt.Errorf("the caller went away; stopped following the task")
					return o
				}
			}
			if o.tr.done() {
				return o
			}
		} else if waitCtx.Err() == nil {
			// A failed poll is not fatal unless it is an answer about the
			// task itself (not found, auth): report those.
			if _, ok := client.RPCError(err); ok || client.KindOf(err) == client.ErrAuthRefused {
				o.err = err
				return o
			}
		}
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				o.err = ctx.Err()
				return o
			}
			o.receipt, o.why = true, "stopped waiting (timeout reached)"
			return o
		case <-time.After(delay):
		}
		if delay = delay * 3 / 2; delay > 3*time.Second {
			delay = 3 * time.Second
		}
	}
}

// roundDur formats a duration for a model.
func roundDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Second).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}

// record writes a conversation entry, logging (not failing) on error.
func (t *Toolset) record(ctx context.Context, e store.ConversationEntry) {
	if t.deps.Store == nil || e.ContextID == "" {
		return
	}
	if e.Time.IsZero() {
		e.Time = t.now()
	}
	if _, err := t.deps.Store.AppendConversation(context.WithoutCancel(ctx), &e); err != nil {
		t.log.Warn("could not record conversation entry", "task_id", e.TaskID, "context_id", e.ContextID, "peer", e.Peer, "error", err)
	}
}

// recordReceived writes what came back once per task and state.
func (t *Toolset) recordReceived(ctx context.Context, peer string, o *outcome) {
	if o.err != nil || o.tr.contextID == "" {
		return
	}
	key := o.tr.taskID + "|" + o.tr.state.String()
	if o.tr.message != nil {
		key = "msg|" + o.tr.message.MessageID
	}
	if o.receipt && !o.tr.done() {
		return // nothing final came back yet
	}
	t.mu.Lock()
	seen := t.recorded[key]
	t.recorded[key] = true
	t.mu.Unlock()
	if seen {
		return
	}
	text := o.tr.answer()
	if o.tr.state == a2a.TaskStateInputRequired {
		text = o.tr.question()
	}
	e := store.ConversationEntry{ContextID: o.tr.contextID, Peer: peer, Direction: store.DirectionReceived, TaskID: o.tr.taskID, Text: text}
	if o.tr.message != nil {
		e.MessageID = o.tr.message.MessageID
		e.Parts = o.tr.message.Parts
	} else {
		e.State = o.tr.state.String()
		for _, a := range o.tr.artifacts {
			e.Parts = append(e.Parts, a.Parts...)
		}
	}
	t.record(ctx, e)
}
