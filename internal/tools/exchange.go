package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// maxAnswerChars bounds the answer text put into a tool result.
const maxAnswerChars = 12000

// maxProgressChars bounds a peer's text in one progress message.
const maxProgressChars = 300

// sendSpec is one message to deliver to one peer.
type sendSpec struct {
	target  *resolved
	msg     a2a.Message
	wait    bool
	waitFor time.Duration
	// progress reports intermediate events; it returns false when the
	// caller went away. May be nil.
	progress func(string) bool
	// stop, when closed, ends the wait early, as its end does: the call
	// returns (a receipt) as soon as the task id is known. Orchestrate
	// closes it for the peers that lost. May be nil.
	stop <-chan struct{}
}

// outcome is what came of a sendSpec (or of following a task).
type outcome struct {
	peer string
	// trusted: the peer is configured with trust: trusted, so its texts
	// reach the model defanged but not framed (see untrusted.go).
	trusted bool
	tr      tracker
	// receipt: we stopped waiting before the task finished; why says why.
	receipt bool
	why     string
	err     error
	elapsed time.Duration
	// refreshable: the peer's token comes from token_file or
	// token_command, so AUTH_REQUIRED can be answered by the plugin.
	refreshable bool
	// authResumed: the task asked for credentials, they were refreshed
	// and the task resumed; authNote says so (or why that failed).
	authResumed bool
	authNote    string
}

// newOutcome is the empty outcome of an exchange with target.
func (t *Toolset) newOutcome(target *resolved) *outcome {
	o := &outcome{peer: target.name, trusted: voiceOf(target).trusted,
		refreshable: target.conf != nil && target.conf.tokens != nil}
	o.tr.limit = t.maxCallBytes
	return o
}

// checkOver turns a tracker that had to drop artifacts (see maxCallBytes)
// into the outcome's error; it reports whether it did.
func (o *outcome) checkOver() bool {
	if !o.tr.over {
		return false
	}
	if o.err == nil {
		o.err = overError(o.peer, &o.tr)
	}
	return true
}

// overError says that a peer sent more artifact content than one call
// keeps.
func overError(peer string, tr *tracker) error {
	limit := tr.limit
	if limit <= 0 {
		limit = maxCallBytes
	}
	what := "the task"
	if tr.taskID != "" {
		what = "task " + peerID(tr.taskID)
	}
	return fmt.Errorf("%s sent more than %s of artifacts for %s, more than one call keeps; stopped reading them. "+
		"The task may still be running on the peer: ask for a shorter answer, or stop it with a2a_task action=\"cancel\"", peer, sizeText(limit), what)
}

// sizeText formats a byte count for a model.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// voice is how the outcome's peer texts reach the model.
func (o *outcome) voice() peerVoice { return peerVoice{name: o.peer, trusted: o.trusted} }

// failed reports an outcome that is a failure: an error, or a task the
// peer ended FAILED, REJECTED or CANCELED.
func (o *outcome) failed() bool {
	if o.err != nil {
		return true
	}
	switch o.tr.state {
	case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled:
		return o.tr.message == nil
	}
	return false
}

// success reports a completed task or a direct message reply.
func (o *outcome) success() bool {
	return o.err == nil && (o.tr.message != nil || o.tr.state == a2a.TaskStateCompleted)
}

// maxCallBytes bounds the artifact content one call keeps in memory (every
// chunk of every artifact a peer streams), so that a peer streaming without
// end cannot grow the plugin's memory for as long as the call may wait
// (up to MaxWait). Past it the call stops reading and says so.
const maxCallBytes = 8 << 20 // Toolset.maxCallBytes; tests lower it

// partOverhead is what an empty part counts against maxCallBytes, so that
// a stream of empty chunks is bounded too.
const partOverhead = 64

// tracker accumulates what a peer told us about one task.
type tracker struct {
	taskID, contextID string
	state             a2a.TaskState
	statusMsg         *a2a.Message
	message           *a2a.Message // a direct reply (no task)
	artifacts         []a2a.Artifact
	lastAgentMsg      *a2a.Message // from history
	// size is the artifact content held (partsSize of every artifact);
	// limit bounds it (0: maxCallBytes). over is set once an artifact or
	// chunk would have taken it past limit; that one was dropped.
	size, limit int
	over        bool
}

// partsSize is what parts count against maxCallBytes.
func partsSize(ps []a2a.Part) int {
	n := 0
	for i := range ps {
		p := &ps[i]
		n += partOverhead + len(p.TextValue()) + len(p.Raw) + len(p.URLValue()) + len(p.Data) + len(p.Filename) + len(p.MediaType)
	}
	return n
}

// artifactsSize is partsSize over artifacts.
func artifactsSize(as []a2a.Artifact) int {
	n := 0
	for i := range as {
		n += partsSize(as[i].Parts)
	}
	return n
}

// fits reports whether holding n more bytes stays within the limit, and
// marks the tracker over it when not.
func (tr *tracker) fits(n int) bool {
	limit := tr.limit
	if limit <= 0 {
		limit = maxCallBytes
	}
	if tr.size+n > limit {
		tr.over = true
		return false
	}
	return true
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
		// A snapshot replaces what was held (one event is bounded by the
		// client's MaxResponseBytes).
		tr.size = 0
		if n := artifactsSize(t.Artifacts); tr.fits(n) {
			tr.artifacts, tr.size = append([]a2a.Artifact(nil), t.Artifacts...), n
		} else {
			tr.artifacts = nil
		}
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
		return fmt.Sprintf("task %s: %s", peerID(r.Task.ID), stateName(r.Task.Status.State))
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
				line += ": " + peerLine(txt, maxProgressChars)
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
		return "received artifact " + strconv.Quote(peerLine(name, 100))
	}
	return ""
}

// mergeArtifact adds an artifact or appends a chunk to an earlier one,
// unless that would take what the call holds past its limit: then the
// artifact or chunk is dropped and tr.over is set.
func (tr *tracker) mergeArtifact(a a2a.Artifact, appendParts bool) {
	n := partsSize(a.Parts)
	for i := range tr.artifacts {
		if tr.artifacts[i].ArtifactID == a.ArtifactID {
			if appendParts {
				if tr.fits(n) {
					tr.artifacts[i].Parts = append(tr.artifacts[i].Parts, a.Parts...)
					tr.size += n
				}
			} else {
				old := partsSize(tr.artifacts[i].Parts)
				if tr.fits(n - old) {
					tr.artifacts[i] = a
					tr.size += n - old
				}
			}
			return
		}
	}
	if tr.fits(n) {
		tr.artifacts = append(tr.artifacts, a)
		tr.size += n
	}
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

// ackGrace is how long past the end of its wait (or past being told to
// stop) a call keeps waiting for the peer to name the task it created. A
// task exists once the peer accepted the message, but over a stream some
// peers name it only with their first event, which some send only with
// the agent's first output (this plugin's own server sends the task at
// once), and a call that gave up before would leave the task running with
// an id nobody knows.
const ackGrace = 10 * time.Second // Toolset.ackGrace; tests shorten it

// deliver sends spec.msg to the peer and follows the task as spec asks:
// over a stream when the peer streams and spec waits, else by a send that
// returns the task at once (returnImmediately) and polling. Either way the
// result carries the task id whenever the peer created a task, so a wait
// that ends early is a receipt the model can follow up, never a lost task.
func (t *Toolset) deliver(ctx context.Context, spec sendSpec) *outcome {
	start := t.now()
	o := t.newOutcome(spec.target)
	defer func() {
		o.elapsed = t.now().Sub(start)
		t.metrics.Outbound(spec.target.name, "SendMessage", o.elapsed, o.err)
	}()
	if err := t.ensureToken(ctx, spec.target); err != nil {
		o.err = err
		return o
	}
	info, err := t.card(ctx, spec.target)
	if err != nil {
		o.err = err
		return o
	}
	deadline := time.Now().Add(spec.waitFor)
	if spec.wait && info.Card.Capabilities.SupportsStreaming() {
		return t.deliverStreamed(ctx, &spec, o, deadline)
	}
	return t.deliverSent(ctx, &spec, o, deadline)
}

// deliverSent sends with returnImmediately: the peer answers at once with
// the task it created (or with a direct message), and the task is then
// polled until it is done or the wait ends. The send itself may take up
// to ackGrace even when the wait is shorter, so that a short wait does not
// lose the task id; being stopped (spec.stop) abandons it at once.
//
// A message on an existing task (an answer to a question, credentials)
// that waits is sent blocking instead: the task id is known already, and a
// task returned at once would show the state from before the message — the
// question just answered.
func (t *Toolset) deliverSent(ctx context.Context, spec *sendSpec, o *outcome, deadline time.Time) *outcome {
	name := spec.target.name
	base, cancelBase := context.WithCancel(ctx)
	defer cancelBase()
	var stopped atomic.Bool
	if spec.stop != nil {
		go func() {
			select {
			case <-spec.stop:
				stopped.Store(true)
				cancelBase()
			case <-base.Done():
			}
		}()
	}
	continuing := spec.wait && spec.msg.TaskID != ""
	sendDeadline := later(deadline, time.Now().Add(t.ackGrace))
	if continuing {
		sendDeadline = deadline
	}
	sendCtx, cancelSend := context.WithDeadline(base, sendDeadline)
	defer cancelSend()
	req := &a2a.SendMessageRequest{Message: spec.msg, Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: !continuing}}
	sendStart := time.Now()
	resp, err := t.sendMessage(sendCtx, spec.target, req)
	if err != nil && continuing && ctx.Err() == nil && (sendCtx.Err() != nil || errors.Is(err, client.ErrTimeout)) {
		// No answer to the message yet; the task is known: follow it.
		o.tr.taskID, o.tr.contextID, o.tr.state = spec.msg.TaskID, spec.msg.ContextID, a2a.TaskStateWorking
		switch {
		case stopped.Load():
			o.receipt, o.why = true, "stopped waiting"
			return o
		case !time.Now().Before(deadline):
			o.receipt, o.why = true, fmt.Sprintf("stopped waiting after %s (no answer to the message yet)", roundDur(spec.waitFor))
			return o
		}
		waitCtx, cancelWait := context.WithDeadline(base, deadline)
		defer cancelWait()
		return t.follow(ctx, spec.target, o, waitCtx, spec.progress, false)
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			o.err = err
		case stopped.Load():
			o.err = fmt.Errorf("request cancelled before %s returned a task", name)
		case sendCtx.Err() == context.DeadlineExceeded:
			o.err = fmt.Errorf("%s did not answer within %s (no task id was returned, so there is nothing to follow up): %w", name, roundDur(time.Since(sendStart)), err)
		default:
			o.err = err
		}
		return o
	}
	if resp.Message != nil {
		o.tr.applyMessage(resp.Message)
		return o
	}
	o.tr.applyTask(resp.Task)
	switch {
	case o.checkOver(), o.tr.done():
		return o
	case !spec.wait:
		o.receipt, o.why = true, "not waiting (wait=false)"
		return o
	case stopped.Load():
		o.receipt, o.why = true, "stopped waiting"
		return o
	case !time.Now().Before(deadline):
		o.receipt, o.why = true, fmt.Sprintf("stopped waiting after %s", roundDur(spec.waitFor))
		return o
	}
	waitCtx, cancelWait := context.WithDeadline(base, deadline)
	defer cancelWait()
	return t.follow(ctx, spec.target, o, waitCtx, spec.progress, false)
}

// deliverStreamed sends over a stream and relays its events as progress.
// When the wait ends (or spec.stop is closed) the call returns a receipt
// as soon as the task id is known — at once if it is, else when the peer
// names it, within ackGrace.
func (t *Toolset) deliverStreamed(ctx context.Context, spec *sendSpec, o *outcome, deadline time.Time) *outcome {
	name := spec.target.name
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &waitWatch{cancel: cancel, grace: t.ackGrace}
	defer w.close()
	w.expireAfter(time.Until(deadline))
	if spec.stop != nil {
		go func() {
			select {
			case <-spec.stop:
				w.expire()
			case <-streamCtx.Done():
			}
		}()
	}
	req := &a2a.SendMessageRequest{Message: spec.msg}
	first, answered := true, false
	end := &finishLine{cancel: cancel}
	defer end.close()
	err := t.streamMessage(streamCtx, spec.target, req, func(ev client.Event) error {
		// A message on an existing task may start with a snapshot of the
		// task as it was (still waiting for input or credentials); only
		// what follows is the answer, and the snapshot is no news.
		snapshot := first && spec.msg.TaskID != "" && ev.Response.Task != nil
		first = false
		line := o.tr.apply(ev)
		if o.tr.over {
			return errTooMuchOutput
		}
		if line != "" && !snapshot && spec.progress != nil && !spec.progress(name+": "+line) {
			return errCallerGone
		}
		if ev.Final && !snapshot {
			answered = true
			return end.final(ev)
		}
		if o.tr.taskID != "" && w.named() {
			return errStopWaiting
		}
		return nil
	})
	expired, abandoned := w.state()
	switch {
	case errors.Is(err, errTooMuchOutput):
		o.checkOver()
		return o
	case err == nil || errors.Is(err, errStreamDone), answered && ctx.Err() == nil:
		return o
	case errors.Is(err, errCallerGone):
		o.err = fmt.Errorf("the caller went away; stopped following the task")
		return o
	case ctx.Err() != nil:
		o.err = err
		return o
	case expired && o.tr.taskID != "":
		o.receipt = true
		if waited := time.Since(deadline.Add(-spec.waitFor)); waited > spec.waitFor+500*time.Millisecond && time.Now().After(deadline) {
			o.why = fmt.Sprintf("stopped waiting after %s (%s named its task only then)", roundDur(waited), name)
		} else if time.Now().Before(deadline) {
			o.why = "stopped waiting"
		} else {
			o.why = fmt.Sprintf("stopped waiting after %s", roundDur(spec.waitFor))
		}
		return o
	case abandoned:
		o.err = fmt.Errorf("%s did not name a task within %s of the end of the wait (%s), so there is nothing to follow up: %w", name, roundDur(t.ackGrace), roundDur(spec.waitFor), err)
		return o
	case client.KindOf(err) == client.ErrStreamCut && o.tr.taskID != "":
		// The stream broke; the task may well go on. Follow it.
		waitCtx, cancelWait := context.WithDeadline(ctx, deadline)
		defer cancelWait()
		return t.follow(ctx, spec.target, o, waitCtx, spec.progress, true)
	}
	o.err = err
	return o
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// waitWatch ends a streamed call: when its wait is over (expire) the call
// stops as soon as the task id is known, and gives up (abandon) if the
// peer has not named it ackGrace later.
type waitWatch struct {
	cancel context.CancelFunc
	grace  time.Duration

	mu                        sync.Mutex
	expired, abandoned, known bool
	timers                    []*time.Timer
	closed                    bool
}

// expireAfter expires the watch after d.
func (w *waitWatch) expireAfter(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timers = append(w.timers, time.AfterFunc(max(d, 0), w.expire))
}

// expire ends the wait: at once when the task is known, else at the
// peer's first word about it, or ackGrace from now.
func (w *waitWatch) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.expired || w.closed {
		return
	}
	w.expired = true
	if w.known {
		w.cancel()
		return
	}
	w.timers = append(w.timers, time.AfterFunc(w.grace, w.abandon))
}

// abandon gives up on learning the task id.
func (w *waitWatch) abandon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.known && !w.closed {
		w.abandoned = true
		w.cancel()
	}
}

// named records that the task id is known and reports whether the wait is
// already over.
func (w *waitWatch) named() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.known = true
	return w.expired
}

// state reports whether the wait ended and whether the call gave up on
// the task id.
func (w *waitWatch) state() (expired, abandoned bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.expired, w.abandoned
}

// close stops the timers.
func (w *waitWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, tm := range w.timers {
		tm.Stop()
	}
}

// streamLinger is how long a stream is read past its last event for the
// peer to close it.
const streamLinger = 2 * time.Second

// finishLine ends a stream after its last event (a terminal or interrupted
// state, or a message): at once at AUTH_REQUIRED, where peers keep the
// stream open waiting for credentials, else after streamLinger unless the
// peer closes it first — as it should, and closing first would make the
// peer record a cut stream.
type finishLine struct {
	cancel context.CancelFunc

	mu    sync.Mutex
	timer *time.Timer
}

// final is the stream callback's answer to a last event.
func (f *finishLine) final(ev client.Event) error {
	if ev.State() == a2a.TaskStateAuthRequired {
		return errStreamDone
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer == nil {
		f.timer = time.AfterFunc(streamLinger, f.cancel)
	}
	return nil
}

// close stops the linger timer.
func (f *finishLine) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer != nil {
		f.timer.Stop()
	}
}

// Sentinels that end a stream from its callback.
var (
	// errCallerGone: the tool's caller went away.
	errCallerGone = errors.New("caller went away")
	// errStreamDone: the task is done (terminal or interrupted); some
	// peers keep the stream open at AUTH_REQUIRED.
	errStreamDone = errors.New("task done")
	// errStopWaiting: the wait ended and the task id is known.
	errStopWaiting = errors.New("stopped waiting")
	// errTooMuchOutput: the peer sent more artifact content than one
	// call keeps (maxCallBytes).
	errTooMuchOutput = errors.New("too much output")
)

// follow waits for a known task to finish or be interrupted: by
// subscribing when the peer streams (and subscribe is true), else by
// polling GetTask with backoff, until waitCtx ends (then a receipt).
func (t *Toolset) follow(ctx context.Context, target *resolved, o *outcome, waitCtx context.Context, progress func(string) bool, subscribe bool) *outcome {
	if subscribe {
		info, err := t.card(ctx, target)
		if err == nil && info.Card.Capabilities.SupportsStreaming() {
			subCtx, cancelSub := context.WithCancel(waitCtx)
			end := &finishLine{cancel: cancelSub}
			answered := false
			err = t.subscribe(subCtx, target, o.tr.taskID, func(ev client.Event) error {
				line := o.tr.apply(ev)
				if o.tr.over {
					return errTooMuchOutput
				}
				if line != "" && progress != nil && !progress(target.name+": "+line) {
					return errCallerGone
				}
				if ev.Final {
					answered = true
					return end.final(ev)
				}
				return nil
			})
			end.close()
			cancelSub()
			switch {
			case o.checkOver():
				return o
			case (err == nil || errors.Is(err, errStreamDone) || (answered && waitCtx.Err() == nil)) && o.tr.done():
				return o
			case errors.Is(err, errCallerGone):
				o.err = fmt.Errorf("the caller went away; stopped following the task")
				return o
			case waitCtx.Err() != nil && ctx.Err() == nil:
				o.receipt, o.why = true, "stopped waiting (timeout reached)"
				return o
			}
			// Subscribing failed (e.g. the task is already terminal, which
			// peers answer with -32004) or the stream broke: poll instead.
		}
	}
	delay := 200 * time.Millisecond
	for {
		task, err := t.getTask(waitCtx, target, o.tr.taskID)
		if err == nil {
			prev := o.tr.state
			o.tr.applyTask(task)
			if o.checkOver() {
				return o
			}
			if o.tr.state != prev && progress != nil {
				line := target.name + ": " + stateName(o.tr.state)
				if q := o.tr.question(); q != "" {
					line += ": " + peerLine(q, maxProgressChars)
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
	seen := t.recorded.add(key)
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
