package client

import (
	"context"
	"net/http"

	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// traceKey is the context key of the W3C trace context to continue, and
// spanKey that of the recorded span making the calls.
type (
	traceKey struct{}
	spanKey  struct{}
)

// traceContext is a W3C trace context (traceparent and tracestate headers).
type traceContext struct {
	parent string
	state  string
}

// WithTraceparent returns a context whose outbound calls continue the W3C
// trace traceparent: each request carries a `traceparent` with the same
// trace id and a new span id (a child of traceparent), and tracestate
// (when non-empty) as it is. An invalid traceparent is ignored, so a bad
// value from a host never breaks a call. A call whose context has no trace
// at all starts a new one.
func WithTraceparent(ctx context.Context, traceparent, tracestate string) context.Context {
	if !tracing.Valid(traceparent) {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, traceContext{parent: traceparent, state: tracestate})
}

// WithSpan returns a context whose outbound calls carry traceparent as it
// is: it names a span the plugin records (OpenTelemetry export), which is
// the parent of the peer's work. It takes precedence over WithTraceparent.
// An invalid traceparent is ignored.
func WithSpan(ctx context.Context, traceparent, tracestate string) context.Context {
	if !tracing.Valid(traceparent) {
		return ctx
	}
	return context.WithValue(ctx, spanKey{}, traceContext{parent: traceparent, state: tracestate})
}

// setTraceHeaders sets the W3C trace headers of one outbound request: the
// span of WithSpan as it is, else a child of WithTraceparent's trace, else
// a new trace, so a chain of agents is one trace from its first call on.
func setTraceHeaders(ctx context.Context, h http.Header) {
	var tp, ts string
	if tc, ok := ctx.Value(spanKey{}).(traceContext); ok {
		tp, ts = tc.parent, tc.state
	} else if tc, ok := ctx.Value(traceKey{}).(traceContext); ok {
		tp, ts = tracing.Child(tc.parent), tc.state
	} else {
		tp = tracing.NewRoot()
	}
	h.Set("traceparent", tp)
	if ts != "" && tracing.ValidState(ts) {
		h.Set("tracestate", ts)
	}
}
