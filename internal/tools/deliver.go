package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// Delivering a message to a peer: over a stream when the peer streams,
// else by a send that returns at once and polling; either way a wait that
// ends early returns a receipt with the task id.

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
func (eng *outbound) deliver(ctx context.Context, spec sendSpec) *outcome {
	start := eng.now()
	o := eng.newOutcome(spec.target)
	defer func() {
		o.elapsed = eng.now().Sub(start)
		spec.target.rec.ended(spec.target, "SendMessage", o.elapsed, o.err)
	}()
	if err := eng.ensureToken(ctx, spec.target); err != nil {
		o.err = err
		return o
	}
	info, err := eng.card(ctx, spec.target)
	if err != nil {
		o.err = err
		return o
	}
	deadline := eng.now().Add(spec.waitFor)
	if spec.msg.TaskID != "" {
		// A message on a task the peer already has: it is this turn's
		// delegation now.
		spec.target.rec.named(ctx, spec.target, &spec.msg, spec.msg.TaskID, spec.msg.ContextID)
	}
	if spec.wait && info.Card.Capabilities.SupportsStreaming() {
		return eng.deliverStreamed(ctx, &spec, o, deadline)
	}
	return eng.deliverSent(ctx, &spec, o, deadline)
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
func (eng *outbound) deliverSent(ctx context.Context, spec *sendSpec, o *outcome, deadline time.Time) *outcome {
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
	sendDeadline := later(deadline, eng.now().Add(eng.ackGrace))
	if continuing {
		sendDeadline = deadline
	}
	sendCtx, cancelSend := context.WithDeadline(base, sendDeadline)
	defer cancelSend()
	req := &a2a.SendMessageRequest{Message: spec.msg, Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: !continuing}}
	sendStart := eng.now()
	resp, err := eng.sendMessage(sendCtx, spec.target, req)
	if err != nil && continuing && ctx.Err() == nil && (sendCtx.Err() != nil || errors.Is(err, client.ErrTimeout)) {
		// No answer to the message yet; the task is known: follow it.
		o.tr.taskID, o.tr.contextID, o.tr.state = spec.msg.TaskID, spec.msg.ContextID, a2a.TaskStateWorking
		switch {
		case stopped.Load():
			o.receipt, o.why = true, "stopped waiting"
			return o
		case !eng.now().Before(deadline):
			o.receipt, o.why = true, fmt.Sprintf("stopped waiting after %s (no answer to the message yet)", roundDur(spec.waitFor))
			return o
		}
		waitCtx, cancelWait := context.WithDeadline(base, deadline)
		defer cancelWait()
		return eng.follow(ctx, spec.target, o, waitCtx, spec.progress, false)
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			o.err = err
		case stopped.Load():
			o.err = fmt.Errorf("request cancelled before %s returned a task", name)
		case sendCtx.Err() == context.DeadlineExceeded:
			o.err = fmt.Errorf("%s did not answer within %s (no task id was returned, so there is nothing to follow up): %w", name, roundDur(eng.now().Sub(sendStart)), err)
		default:
			o.err = err
		}
		return o
	}
	if resp.Message != nil {
		o.tr.applyMessage(resp.Message)
		return o
	}
	if spec.msg.TaskID == "" {
		spec.target.rec.named(ctx, spec.target, &spec.msg, resp.Task.ID, resp.Task.ContextID)
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
	case !eng.now().Before(deadline):
		o.receipt, o.why = true, fmt.Sprintf("stopped waiting after %s", roundDur(spec.waitFor))
		return o
	}
	waitCtx, cancelWait := context.WithDeadline(base, deadline)
	defer cancelWait()
	return eng.follow(ctx, spec.target, o, waitCtx, spec.progress, false)
}

// deliverStreamed sends over a stream and relays its events as progress.
// When the wait ends (or spec.stop is closed) the call returns a receipt
// as soon as the task id is known — at once if it is, else when the peer
// names it, within ackGrace.
func (eng *outbound) deliverStreamed(ctx context.Context, spec *sendSpec, o *outcome, deadline time.Time) *outcome {
	name := spec.target.name
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &waitWatch{cancel: cancel, grace: eng.ackGrace}
	defer w.close()
	w.expireAfter(deadline.Sub(eng.now()))
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
	first, answered, noted := true, false, spec.msg.TaskID != ""
	end := &finishLine{cancel: cancel}
	defer end.close()
	err := eng.streamMessage(streamCtx, spec.target, req, func(ev client.Event) error {
		// A message on an existing task may start with a snapshot of the
		// task as it was (still waiting for input or credentials); only
		// what follows is the answer, and the snapshot is no news.
		snapshot := first && spec.msg.TaskID != "" && ev.Response.Task != nil
		first = false
		line := o.tr.apply(ev)
		if !noted && o.tr.taskID != "" {
			noted = true
			spec.target.rec.named(ctx, spec.target, &spec.msg, o.tr.taskID, o.tr.contextID)
		}
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
		if waited := eng.now().Sub(deadline.Add(-spec.waitFor)); waited > spec.waitFor+500*time.Millisecond && eng.now().After(deadline) {
			o.why = fmt.Sprintf("stopped waiting after %s (%s named its task only then)", roundDur(waited), name)
		} else if eng.now().Before(deadline) {
			o.why = "stopped waiting"
		} else {
			o.why = fmt.Sprintf("stopped waiting after %s", roundDur(spec.waitFor))
		}
		return o
	case abandoned:
		o.err = fmt.Errorf("%s did not name a task within %s of the end of the wait (%s), so there is nothing to follow up: %w", name, roundDur(eng.ackGrace), roundDur(spec.waitFor), err)
		return o
	case client.KindOf(err) == client.ErrStreamCut && o.tr.taskID != "":
		// The stream broke; the task may well go on. Follow it.
		waitCtx, cancelWait := context.WithDeadline(ctx, deadline)
		defer cancelWait()
		return eng.follow(ctx, spec.target, o, waitCtx, spec.progress, true)
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
