package client

import (
	"net/http"

	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// Call is what the requests of one call to a peer carry beyond their
// arguments, given to the peer's handle explicitly (Peer.For), never as a
// context value.
type Call struct {
	// Trace is the W3C trace the requests continue: each carries a child
	// of it (the same trace id, a new span id) and its tracestate. An
	// invalid Trace is ignored, so a bad value from a host never breaks a
	// call: the requests then start a new trace.
	Trace tracing.Context
	// Span says that Trace names a span the plugin records (OpenTelemetry
	// export), the parent of the peer's work: the requests carry it as it
	// is rather than a child of it.
	Span bool
}

// setTraceHeaders sets the W3C trace headers of one outbound request of
// call: its span as it is, else a child of its trace, else a new trace, so
// a chain of agents is one trace from its first call on.
func (call Call) setTraceHeaders(h http.Header) {
	var tc tracing.Context
	switch {
	case !call.Trace.Valid():
		tc = tracing.Context{Traceparent: tracing.NewRoot()}
	case call.Span:
		tc = call.Trace
	default:
		tc = call.Trace.Child()
	}
	tc.SetHeaders(h)
}
