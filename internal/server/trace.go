package server

import (
	"net/http"

	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// traceContext reads the W3C trace context headers (or metadata);
// malformed values are dropped rather than forwarded to the host, and so
// is a traceparent of a later version than 00 (its extra fields would
// reach the host unread).
func traceContext(tp, ts string) tracing.Context {
	if len(tp) != 55 {
		return tracing.Context{}
	}
	return tracing.Received(tp, ts)
}

// traceRequests makes every request a server span, a child of the caller's
// trace. With export off it returns h itself: no wrapper, no cost.
func (s *Server) traceRequests(h http.Handler) http.Handler {
	if !s.opts.Tracer.Enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc := traceContext(headerValue(r.Header, "Traceparent"), headerValue(r.Header, "Tracestate"))
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
