package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// eventPool recycles the buffers SSE events are assembled in.
var eventPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

var keepAliveComment = []byte(": keep-alive\n\n")

// errEncoding is what a Sink's Event returns for an event it could not
// encode: Stream.Run then ends the stream with an internal error.
var errEncoding = errors.New("a stream event could not be encoded")

// stream answers with the server-sent events of st until it ends (see
// Stream.Run): 200, text/event-stream, keep-alive comments every
// Limits.KeepAlive.
func (b *httpBinding) stream(ctx context.Context, w http.ResponseWriter, st *Stream, sink *sseSink) {
	sink.w, sink.rc = w, http.NewResponseController(w)
	defer func() {
		// What net/http writes when the handler returns — the chunked
		// encoding's terminator, and what Run left held (the last event
		// of a stream whose end was queued behind it, or headers no event
		// followed), in one write — is written under a fresh deadline,
		// so a client that stopped reading cannot hold the connection;
		// net/http lifts it itself once the response is finished
		// (HTTP/1.1: conn.serve clears the write deadline after
		// finishRequest, before the next request; HTTP/2: the deadline is
		// the stream's own and ends with it).
		// TestStreamLeavesNoDeadlineToTheNextAnswer checks the first.
		_ = sink.rc.SetWriteDeadline(time.Now().Add(b.limits.WriteTimeout))
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The headers are sent now, unless an event is already queued: then
	// they leave with it, in one write.
	if len(st.sub.Events()) == 0 && sink.write(nil) != nil {
		st.Close()
		return
	}
	st.Run(ctx, sink, b.limits.KeepAlive)
}

// sseSink writes a stream as server-sent events: each event one JSON-RPC
// response wrapping a StreamResponse (0.3 methods: the bare 0.3 object;
// HTTP+JSON: the bare StreamResponse); pre-encoded event JSON is spliced
// in as it is.
type sseSink struct {
	b  *httpBinding
	w  http.ResponseWriter
	rc *http.ResponseController
	c  *Call
	// rpcID is the JSON-RPC request id; rest marks the HTTP+JSON binding.
	rpcID json.RawMessage
	rest  bool
}

// Event implements Sink.
func (s *sseSink) Event(ev *tasks.Event) error { return s.event(ev, true) }

// EventHeld implements heldSink: the event is written but not flushed,
// as another one is queued right behind it.
func (s *sseSink) EventHeld(ev *tasks.Event) error { return s.event(ev, false) }

func (s *sseSink) event(ev *tasks.Event, flush bool) error {
	c := s.c
	resp := &ev.Response
	var result []byte
	switch {
	case c.V03:
		final := false
		if u := resp.StatusUpdate; u != nil {
			// The last event of the stream (see tasks.Subscription): a
			// terminal state; INPUT_REQUIRED too, except for a
			// subscription (tasks/resubscribe), which follows the task to
			// its end. Streams stay open at AUTH_REQUIRED.
			st := u.Status.State
			final = st.Terminal() || (st == a2a.TaskStateInputRequired && c.Op != a2a.OpSubscribeToTask)
		}
		b, err := a2a.Marshal(a2av03.FromStreamEvent(resp, final))
		if err != nil {
			s.b.log.Error("encoding a 0.3 stream event failed", c.logArgs("error", err)...)
			return errEncoding
		}
		result = b
	case ev.JSON != nil:
		result = ev.JSON
	default:
		b, err := a2a.Marshal(resp)
		if err != nil {
			s.b.log.Error("encoding a stream event failed", c.logArgs("error", err)...)
			return errEncoding
		}
		result = b
	}
	bp := eventPool.Get().(*[]byte)
	var b []byte
	if s.rest {
		// HTTP+JSON: the bare StreamResponse.
		b = append((*bp)[:0], "data: "...)
		b = append(b, result...)
		b = append(b, "\n\n"...)
	} else {
		b = append((*bp)[:0], `data: {"jsonrpc":"2.0","id":`...)
		b = append(b, s.rpcID...)
		b = append(b, `,"result":`...)
		b = append(b, result...)
		b = append(b, "}\n\n"...)
	}
	err := s.writeThen(b, flush)
	if cap(b) <= 64<<10 {
		*bp = b
		eventPool.Put(bp)
	}
	return err
}

// KeepAlive implements Sink.
func (s *sseSink) KeepAlive() error { return s.write(keepAliveComment) }

// Fail implements Sink: an error as the last event of a stream, a
// JSON-RPC error response, or (HTTP+JSON) an "error" event whose data is
// the google.rpc.Status form.
func (s *sseSink) Fail(r *Refusal) {
	var body []byte
	switch {
	case s.rest:
		body = statusBody(restStatus(http.StatusOK, r.Err))
	case s.c.V03:
		body = a2av03.EncodeError(s.rpcID, r.Err)
	default:
		body = a2a.EncodeError(s.rpcID, r.Err)
	}
	b := make([]byte, 0, len(body)+22)
	if s.rest {
		b = append(b, "event: error\n"...)
	}
	b = append(b, "data: "...)
	b = append(b, body...)
	b = append(b, "\n\n"...)
	_ = s.write(b)
}

// write writes and flushes b under the write deadline, so a peer that
// stopped reading is cut instead of holding the handler (the task itself
// never waits for a stream).
func (s *sseSink) write(b []byte) error { return s.writeThen(b, true) }

// writeThen is write, flushing only when flush is set (the next write
// flushes what it leaves in the response's buffer).
func (s *sseSink) writeThen(b []byte, flush bool) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.b.limits.WriteTimeout))
	if len(b) > 0 {
		n, err := s.w.Write(b)
		s.c.BytesOut += int64(n)
		if err != nil {
			return err
		}
	}
	if !flush {
		return nil
	}
	return s.rc.Flush()
}
