package client

import (
	"context"
	"net/http"
	"strings"
)

// traceKey is the context key of the W3C trace context to pass on.
type traceKey struct{}

// traceContext is a W3C trace context (traceparent and tracestate headers).
type traceContext struct {
	parent string
	state  string
}

// WithTraceparent returns a context whose outbound calls carry the W3C
// `traceparent` (and, when non-empty, `tracestate`) headers. An invalid
// traceparent is ignored, so a bad value from a host never breaks a call.
func WithTraceparent(ctx context.Context, traceparent, tracestate string) context.Context {
	if !validTraceparent(traceparent) {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, traceContext{parent: traceparent, state: tracestate})
}

// Traceparent returns the traceparent carried by ctx, if any.
func Traceparent(ctx context.Context) (string, bool) {
	tc, ok := ctx.Value(traceKey{}).(traceContext)
	return tc.parent, ok
}

// setTraceHeaders copies the trace context of ctx onto req.
func setTraceHeaders(ctx context.Context, h http.Header) {
	tc, ok := ctx.Value(traceKey{}).(traceContext)
	if !ok {
		return
	}
	h.Set("traceparent", tc.parent)
	if tc.state != "" && len(tc.state) <= 512 && !strings.ContainsAny(tc.state, "\r\n") {
		h.Set("tracestate", tc.state)
	}
}

// validTraceparent checks the W3C form version-traceid-parentid-flags:
// 2, 32, 16 and 2 lowercase hex digits, with all-zero ids invalid.
func validTraceparent(s string) bool {
	parts := strings.Split(s, "-")
	if len(parts) < 4 {
		return false
	}
	want := []int{2, 32, 16, 2}
	for i, n := range want {
		if len(parts[i]) != n || !isLowerHex(parts[i]) {
			return false
		}
	}
	if parts[0] == "ff" || (parts[0] == "00" && len(parts) != 4) {
		return false
	}
	return strings.Trim(parts[1], "0") != "" && strings.Trim(parts[2], "0") != ""
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
