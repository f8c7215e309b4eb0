package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// Event is one event of an SSE stream (SendStreamingMessage or
// SubscribeToTask), in the v1.0 shape whatever the peer's version.
type Event struct {
	// Response is the event: exactly one of Task, Message, StatusUpdate and
	// ArtifactUpdate is set (0.3 `kind` events are converted).
	Response *a2a.StreamResponse
	// Final is true on the last event the peer will send: a 0.3 status
	// update with `final: true`, or (v1.0, which has no flag) an event
	// carrying a message or a terminal or interrupted state.
	Final bool
}

// State returns the task state the event carries, or "" when it carries
// none (a message or an artifact update).
func (e Event) State() a2a.TaskState {
	switch {
	case e.Response == nil:
		return ""
	case e.Response.Task != nil:
		return e.Response.Task.Status.State
	case e.Response.StatusUpdate != nil:
		return e.Response.StatusUpdate.Status.State
	}
	return ""
}

// errStopStream ends a stream early on the caller's request.
var errStopStream = errors.New("stream stopped by the caller")

// SendStreamingMessage sends a message and delivers the peer's events to
// fn as they arrive, in order. It returns nil when the stream ended
// normally (a message, or a terminal or interrupted state, or a 0.3 final
// event), ErrStreamCut when it ended before that, and fn's error if fn
// fails (which stops the stream). The stream's start is bounded by the
// peer's timeout; afterwards it lives until ctx ends or the stream is idle
// for longer than Options.StreamIdleTimeout.
func (p *Peer) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, fn func(Event) error) error {
	if req.Message.Role == "" {
		req.Message.Role = a2a.RoleUser
	}
	if req.Message.MessageID == "" {
		req.Message.MessageID = a2a.NewID()
	}
	cn, tr, err := p.openStream(ctx, a2a.OpSendStreamingMessage)
	if err != nil {
		return err
	}
	cn.setTenant(&req.Tenant)
	return tr.sendStreamingMessage(ctx, req, fn)
}

// SubscribeToTask (re)subscribes to a running task's events: the first is
// the current task, then live updates until a terminal state. Semantics as
// SendStreamingMessage.
func (p *Peer) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, fn func(Event) error) error {
	cn, tr, err := p.openStream(ctx, a2a.OpSubscribeToTask)
	if err != nil {
		return err
	}
	cn.setTenant(&req.Tenant)
	return tr.subscribeToTask(ctx, req, fn)
}

// StreamMessage is SendStreamingMessage as an iterator: it yields each
// event, then at most one error (never io.EOF). Breaking out of the loop
// closes the stream.
func (p *Peer) StreamMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[Event, error] {
	return asIter(func(fn func(Event) error) error { return p.SendStreamingMessage(ctx, req, fn) })
}

// Subscribe is SubscribeToTask as an iterator, like StreamMessage.
func (p *Peer) Subscribe(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[Event, error] {
	return asIter(func(fn func(Event) error) error { return p.SubscribeToTask(ctx, req, fn) })
}

// asIter turns a callback stream into an iterator.
func asIter(run func(func(Event) error) error) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		err := run(func(ev Event) error {
			if !yield(ev, nil) {
				return errStopStream
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopStream) {
			yield(Event{}, err)
		}
	}
}

// streamState follows a stream to tell a normal end from a cut one.
type streamState struct {
	taskID string
	state  a2a.TaskState
	done   bool // a message, final flag, terminal or interrupted state
	events int
}

func (s *streamState) observe(ev Event) {
	s.events++
	if id := ev.Response.TaskID(); id != "" {
		s.taskID = id
	}
	if ev.Response.Message != nil && ev.Response.Message.TaskID == "" && s.taskID == "" {
		s.done = true // message-only stream: exactly one message, then close
	}
	if st := ev.State(); st != "" {
		s.state = st
		s.done = s.done || st.Terminal() || st.Interrupted()
	}
	if ev.Final {
		s.done = true
	}
}

// openStream opens the peer for a streaming call, refusing it when the
// card does not declare streaming.
func (p *Peer) openStream(ctx context.Context, op a2a.Operation) (*conn, transport, error) {
	cn, tr, err := p.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !cn.info.Card.Capabilities.SupportsStreaming() {
		return nil, nil, cn.fail(ErrUnsupported, op, 0, errors.New("the peer's card does not declare capabilities.streaming"))
	}
	return cn, tr, nil
}

// httpStream runs one streaming call over an HTTP binding: SSE events (or
// one plain JSON answer) decoded by w, each handed to fn.
func (cn *conn) httpStream(ctx context.Context, w httpWire, op a2a.Operation, params any, fn func(Event) error) error {
	p := cn.p
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The start (connect + response headers) is bounded by the call
	// timeout; afterwards an idle timer ends a silent stream.
	var startTimedOut, idleTimedOut atomic.Bool
	startTimer := time.AfterFunc(p.timeout(p.c.opts.Timeout), func() { startTimedOut.Store(true); cancel() })
	hreq, _, err := w.request(ctx, op, params, true)
	if err != nil {
		startTimer.Stop()
		return err
	}
	resp, err := cn.do(ctx, w, hreq, op)
	startTimer.Stop()
	if err != nil {
		if startTimedOut.Load() {
			return cn.fail(ErrTimeout, op, 0, fmt.Errorf("no response within %s", p.timeout(p.c.opts.Timeout)))
		}
		return err
	}
	defer resp.Body.Close()

	idle := p.c.opts.StreamIdleTimeout
	idleTimer := time.AfterFunc(idle, func() { idleTimedOut.Store(true); cancel() })
	defer idleTimer.Stop()
	body := &activityReader{r: resp.Body, touch: func() { idleTimer.Reset(idle) }}

	st := &streamState{}
	deliver := func(ev Event) error {
		st.observe(ev)
		if err := fn(ev); err != nil {
			return err
		}
		return nil
	}

	limit := int(p.c.opts.MaxResponseBytes)
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream":
	case "application/json", "application/a2a+json":
		// An error (or, leniently, a single result) sent as plain JSON.
		data, err := io.ReadAll(io.LimitReader(body, int64(limit)+1))
		if err != nil {
			return cn.streamReadError(ctx, op, st, err, &idleTimedOut)
		}
		ev, err := cn.decodeEvent(w, op, data)
		if err != nil {
			return err
		}
		if err := deliver(ev); err != nil {
			return err
		}
		return cn.streamEnd(op, st)
	default:
		return cn.fail(ErrInvalidResponse, op, resp.StatusCode,
			fmt.Errorf("expected Content-Type text/event-stream, got %q", resp.Header.Get("Content-Type")))
	}

	r := a2a.NewSSEReader(body, limit)
	for {
		data, err := r.Next()
		if errors.Is(err, io.EOF) {
			return cn.streamEnd(op, st)
		}
		if err != nil {
			if errors.Is(err, a2a.ErrSSEEventTooLarge) {
				return cn.fail(ErrInvalidResponse, op, 0, err)
			}
			return cn.streamReadError(ctx, op, st, err, &idleTimedOut)
		}
		ev, err := cn.decodeEvent(w, op, data)
		if err != nil {
			return err
		}
		if err := deliver(ev); err != nil {
			return err
		}
	}
}

// decodeEvent decodes one SSE data payload with w and checks it carries
// exactly one kind of event.
func (cn *conn) decodeEvent(w httpWire, op a2a.Operation, data []byte) (Event, error) {
	ev, err := w.event(op, data)
	if err != nil {
		return Event{}, err
	}
	if ev.Response == nil || ev.Response.Kind() == "" {
		return Event{}, cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("stream event has not exactly one of task, message, statusUpdate, artifactUpdate (data starts %q)", snippet(data)))
	}
	ev.settle()
	return ev, nil
}

// settle marks the event that ends a stream, whatever the transport: a
// terminal or interrupted state, or a message outside any task.
func (ev *Event) settle() {
	if st := ev.State(); st.Terminal() || st.Interrupted() || (ev.Response.Message != nil && ev.Response.Message.TaskID == "") {
		ev.Final = true
	}
}

// streamEnd reports the end of a stream: nil when it ended normally, else
// ErrStreamCut with what is known about the task.
func (cn *conn) streamEnd(op a2a.Operation, st *streamState) error {
	if st.done {
		return nil
	}
	return cn.fail(ErrStreamCut, op, 0, st.cutError("the peer closed the stream"))
}

// streamReadError reports a failure while reading a stream.
func (cn *conn) streamReadError(ctx context.Context, op a2a.Operation, st *streamState, err error, idle *atomic.Bool) error {
	switch {
	case idle.Load():
		return cn.fail(ErrTimeout, op, 0, st.cutError(fmt.Sprintf("nothing arrived for %s", cn.p.c.opts.StreamIdleTimeout)))
	case ctx.Err() != nil:
		return fmt.Errorf("%s to %s: %w", op, cn.p.name(), ctx.Err())
	}
	return cn.fail(ErrStreamCut, op, 0, st.cutError(err.Error()))
}

// cutError describes how far a cut stream got.
func (s *streamState) cutError(why string) error {
	if s.taskID == "" {
		return fmt.Errorf("%s after %d event(s), before any task was reported", why, s.events)
	}
	return fmt.Errorf("%s after %d event(s); task %s was last %s", why, s.events, s.taskID, s.state)
}

// activityReader calls touch whenever bytes arrive, to keep an idle timer
// from firing while the stream is alive (SSE comments count).
type activityReader struct {
	r     io.Reader
	touch func()
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.touch()
	}
	return n, err
}
