package server

import (
	"net/http"

	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// traceContext reads the W3C trace context headers; malformed values are
// dropped rather than forwarded to the host, and so is a traceparent of a
// later version than 00 (its extra fields would reach the host unread).
func traceContext(r *http.Request) tracing.Context {
	tp := headerValue(r.Header, "Traceparent")
	if len(tp) != 55 {
		return tracing.Context{}
	}
	return tracing.Received(tp, headerValue(r.Header, "Tracestate"))
}

// turnTrace is the trace of the turn a send starts: the span recording the
// request when export is on, else the caller's trace, else a new trace, so
// that the host call, the agent's tool calls and the task's webhooks share
// one trace id.
func (s *Server) turnTrace(r *http.Request) tracing.Context {
	if s.opts.Tracer.Enabled() {
		if sp := tracing.SpanFromContext(r.Context()); sp.Traceparent() != "" {
			return sp.Context()
		}
	}
	tc := traceContext(r)
	if tc.Traceparent == "" {
		tc.Traceparent = tracing.NewRoot()
	}
	return tc
}

// traceRequests makes every request a server span, a child of the caller's
// trace. With export off it returns h itself: no wrapper, no cost.
func (s *Server) traceRequests(h http.Handler) http.Handler {
	if !s.opts.Tracer.Enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc := traceContext(r)
		ctx, span := s.opts.Tracer.Start(r.Context(), r.Method+" "+r.URL.Path, tracing.KindServer, tc)
		span.SetString("http.request.method", r.Method)
		span.SetString("url.path", r.URL.Path)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if sw.status == 0 {
				sw.status = http.StatusOK
			}
			span.SetInt("http.response.status_code", sw.status)
			if sw.status >= 500 {
				span.Fail(http.StatusText(sw.status))
			}
			span.End(nil)
		}()
		h.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// annotateSpan names the request's span after the A2A method and records
// what the exchange was about; a refused exchange marks it failed.
func annotateSpan(r *http.Request, ex *exchange) {
	span := tracing.SpanFromContext(r.Context())
	if !span.Recording() {
		return
	}
	if ex.method != "" {
		span.SetName("a2a " + ex.method)
		span.SetString("rpc.method", ex.method)
	}
	span.SetString("a2a.task_id", ex.taskID)
	span.SetString("a2a.context_id", ex.contextID)
	span.SetString("a2a.peer", ex.ident.ID)
	if ex.code != 0 {
		span.SetInt("rpc.jsonrpc.error_code", ex.code)
		span.Fail(ex.reason)
	}
}

// statusWriter records the response status for the span.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush keeps the writer an http.Flusher.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		f.Flush()
	}
}
