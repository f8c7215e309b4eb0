package server

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// eventPool recycles the buffers SSE events are assembled in.
var eventPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

var keepAliveComment = []byte(": keep-alive\n\n")

func (s *Server) sendStreamingMessage(w http.ResponseWriter, r *http.Request, ex *exchange, req *a2a.SendMessageRequest) {
	// The stream slot first: a refused stream must not count a turn.
	release, ok := s.acquireStream(w, ex)
	if !ok {
		return
	}
	sp, e := s.prepareSend(r, ex, req)
	if e != nil {
		release()
		s.refuse(w, ex, http.StatusOK, e)
		return
	}
	sub, err := s.opts.Tasks.Stream(r.Context(), sp)
	if err != nil {
		s.releaseTurn(ex)
		release()
		s.refuse(w, ex, http.StatusOK, s.taskError(ex, err))
		return
	}
	s.stream(w, r, ex, sub, release)
}

func (s *Server) subscribeToTask(w http.ResponseWriter, r *http.Request, ex *exchange, req *a2a.SubscribeToTaskRequest) {
	ex.taskID = req.ID
	release, ok := s.acquireStream(w, ex)
	if !ok {
		return
	}
	sub, err := s.opts.Tasks.Subscribe(r.Context(), scope(ex.ident), req)
	if err != nil {
		release()
		s.refuse(w, ex, http.StatusOK, s.taskError(ex, err))
		return
	}
	s.stream(w, r, ex, sub, release)
}

// acquireStream takes one of the caller's stream slots (or refuses the
// request with HTTP 429 and -32051) and a place under the server's global
// cap, Limits.MaxStreams (or refuses it with HTTP 503).
func (s *Server) acquireStream(w http.ResponseWriter, ex *exchange) (func(), bool) {
	release := func() {}
	if s.opts.Streams != nil {
		r, ok := s.opts.Streams.Acquire(ex.ident.ID)
		if !ok {
			s.refuse(w, ex, http.StatusTooManyRequests, errTooManyStreams())
			return nil, false
		}
		release = r
	}
	max := int64(s.opts.Limits.MaxStreams)
	if s.streamSlots.Add(1) > max {
		s.streamSlots.Add(-1)
		release()
		w.Header().Set("Retry-After", busyRetryAfter)
		s.refuse(w, ex, http.StatusServiceUnavailable, errStreamsFull(int(max)))
		return nil, false
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.streamSlots.Add(-1)
			release()
		})
	}, true
}

// stream writes a subscription as server-sent events until it ends, the
// client goes away, a write times out, or the server shuts down. Each
// event is one JSON-RPC response wrapping a StreamResponse (0.3 methods:
// the bare 0.3 object; HTTP+JSON: the bare StreamResponse); pre-encoded
// event JSON is spliced in as it is.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, ex *exchange, sub *tasks.Subscription, release func()) {
	s.streams.add()
	settled := false
	rc := http.NewResponseController(w)
	defer func() {
		ex.cut = !settled
		sub.Close()
		release()
		_ = rc.SetWriteDeadline(time.Time{})
		s.streams.done()
	}()
	ex.stream = true
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !s.writeSSE(w, rc, ex, nil) {
		return
	}
	keepAlive := time.NewTicker(s.opts.Limits.KeepAlive)
	defer keepAlive.Stop()
	events := sub.Events()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				err := sub.Err()
				settled = err == nil
				s.endStream(w, rc, ex, err)
				return
			}
			if !s.writeEvent(w, rc, ex, &ev) {
				return
			}
		case <-keepAlive.C:
			if !s.writeSSE(w, rc, ex, keepAliveComment) {
				return
			}
		case <-r.Context().Done():
			s.log.Debug("stream client went away", ex.logArgs()...)
			return
		case <-s.stopStreams:
			e := errUnavailable()
			e.Message = "The agent is shutting down and closed this stream; the task goes on: resubscribe with SubscribeToTask or poll GetTask later"
			s.writeErrorEvent(w, rc, ex, e)
			return
		}
	}
}

// endStream finishes a stream whose subscription ended: silently when the
// task settled, with an error event when the stream was dropped.
func (s *Server) endStream(w http.ResponseWriter, rc *http.ResponseController, ex *exchange, err error) {
	switch {
	case err == nil:
	case errors.Is(err, tasks.ErrDropped):
		s.log.Warn("stream dropped: the client read too slowly", ex.logArgs()...)
		e := a2a.NewError(a2a.CodeInternalError, reasonStreamDropped,
			"This stream was closed because the client read events too slowly; the task goes on: resubscribe with SubscribeToTask or poll GetTask")
		if ex.taskID != "" {
			e.WithMetadata("taskId", ex.taskID)
		}
		s.writeErrorEvent(w, rc, ex, e)
	default:
		s.writeErrorEvent(w, rc, ex, toA2AError(err))
	}
}

// writeEvent writes one stream event.
func (s *Server) writeEvent(w http.ResponseWriter, rc *http.ResponseController, ex *exchange, ev *tasks.Event) bool {
	resp := &ev.Response
	if ex.taskID == "" {
		ex.taskID = resp.TaskID()
	}
	if ex.contextID == "" {
		ex.contextID = resp.ContextID()
	}
	var result []byte
	switch {
	case ex.v03:
		final := false
		if u := resp.StatusUpdate; u != nil {
			// The last event of the stream (see tasks.Subscription): a
			// terminal state; INPUT_REQUIRED too, except for a
			// subscription (tasks/resubscribe), which follows the task to
			// its end. Streams stay open at AUTH_REQUIRED.
			st := u.Status.State
			final = st.Terminal() || (st == a2a.TaskStateInputRequired && ex.op != a2a.OpSubscribeToTask)
		}
		b, err := a2a.Marshal(a2a.ToV03StreamEvent(resp, final))
		if err != nil {
			s.log.Error("encoding a 0.3 stream event failed", ex.logArgs("error", err)...)
			s.writeErrorEvent(w, rc, ex, errInternal())
			return false
		}
		result = b
	case ev.JSON != nil:
		result = ev.JSON
	default:
		b, err := a2a.Marshal(resp)
		if err != nil {
			s.log.Error("encoding a stream event failed", ex.logArgs("error", err)...)
			s.writeErrorEvent(w, rc, ex, errInternal())
			return false
		}
		result = b
	}
	bp := eventPool.Get().(*[]byte)
	var b []byte
	if ex.rest {
		// HTTP+JSON: the bare StreamResponse.
		b = append((*bp)[:0], "data: "...)
		b = append(b, result...)
		b = append(b, "\n\n"...)
	} else {
		b = append((*bp)[:0], `data: {"jsonrpc":"2.0","id":`...)
		b = append(b, ex.id...)
		b = append(b, `,"result":`...)
		b = append(b, result...)
		b = append(b, "}\n\n"...)
	}
	ok := s.writeSSE(w, rc, ex, b)
	ex.events++
	if cap(b) <= 64<<10 {
		*bp = b
		eventPool.Put(bp)
	}
	return ok
}

// writeErrorEvent writes an error as the last event of a stream: a
// JSON-RPC error response, or (HTTP+JSON) an "error" event whose data is
// the google.rpc.Status form.
func (s *Server) writeErrorEvent(w http.ResponseWriter, rc *http.ResponseController, ex *exchange, e *a2a.Error) {
	ex.code, ex.reason, ex.errMsg = e.Code, e.Reason, errMessage(e)
	var body []byte
	switch {
	case ex.rest:
		body = statusBody(restStatus(http.StatusOK, e))
	case ex.v03:
		body = a2a.EncodeError(ex.id, e.AsV03())
	default:
		body = a2a.EncodeError(ex.id, e)
	}
	b := make([]byte, 0, len(body)+22)
	if ex.rest {
		b = append(b, "event: error\n"...)
	}
	b = append(b, "data: "...)
	b = append(b, body...)
	b = append(b, "\n\n"...)
	s.writeSSE(w, rc, ex, b)
}

// writeSSE writes and flushes b under the write deadline, so a peer that
// stopped reading is cut instead of holding the handler (the task itself
// never waits for a stream). It reports false when the stream is dead.
func (s *Server) writeSSE(w http.ResponseWriter, rc *http.ResponseController, ex *exchange, b []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(s.opts.Limits.WriteTimeout))
	if len(b) > 0 {
		n, err := w.Write(b)
		ex.bytesOut += int64(n)
		if err != nil {
			s.log.Debug("stream write failed; closing it", ex.logArgs("error", err)...)
			return false
		}
	}
	if err := rc.Flush(); err != nil {
		s.log.Debug("stream flush failed; closing it", ex.logArgs("error", err)...)
		return false
	}
	return true
}
