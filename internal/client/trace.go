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

// WithTrace returns a context whose outbound calls continue the W3C trace
// tc: each request carries a child of it (the same trace id, a new span
// id) and its tracestate. An invalid tc is ignored, so a bad value from a
// host never breaks a call. A call whose context has no trace at all
// starts a new one.
func WithTrace(ctx context.Context, tc tracing.Context) context.Context {
	if !tc.Valid() {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, tc)
}

// WithSpan returns a context whose outbound calls carry tc as it is: it
// names a span the plugin records (OpenTelemetry export), which is the
// parent of the peer's work. It takes precedence over WithTrace. An
// invalid tc is ignored.
func WithSpan(ctx context.Context, tc tracing.Context) context.Context {
	if !tc.Valid() {
		return ctx
	}
	return context.WithValue(ctx, spanKey{}, tc)
}

// setTraceHeaders sets the W3C trace headers of one outbound request: the
// span of WithSpan as it is, else a child of WithTrace's trace, else a new
// trace, so a chain of agents is one trace from its first call on.
func setTraceHeaders(ctx context.Context, h http.Header) {
	var tc tracing.Context
	if sc, ok := ctx.Value(spanKey{}).(tracing.Context); ok {
		tc = sc
	} else if parent, ok := ctx.Value(traceKey{}).(tracing.Context); ok {
		tc = parent.Child()
	} else {
		tc = tracing.Context{Traceparent: tracing.NewRoot()}
	}
	tc.SetHeaders(h)
}
