// Package tracing carries W3C trace context (the `traceparent` and
// `tracestate` headers) through the plugin, so that a chain of agents —
// caller, this plugin, its host, the agents the host delegates to, the
// webhooks it notifies — is one trace, and optionally exports
// OpenTelemetry spans for the plugin's own work.
//
// Propagation needs no OpenTelemetry and is always on:
//
//   - an inbound SendMessage keeps the caller's trace (the turn's trace);
//     one that arrives without a valid traceparent starts a new trace
//     ([NewRoot]), so everything the turn causes shares one trace id;
//   - the host gets the turn's traceparent with the message;
//   - outbound calls and webhook deliveries send a child of the trace they
//     belong to ([Child]): the same trace id, a new span id.
//
// Export is off by default. A [Tracer] built by [New] (the operator set
// A2A_OTEL_ENDPOINT) records spans for inbound requests, host round trips,
// tool calls and webhook deliveries and exports them over OTLP/HTTP; the
// traceparents it sends then name those spans. A nil *Tracer is valid and
// does nothing, without allocating.
package tracing

import (
	"math/rand/v2"
	"net/http"
)

// Context is a W3C trace context: the traceparent and tracestate headers
// of one request. It is the one shape of a trace context in the plugin —
// a turn's (tasks.Turn.Trace), a webhook delivery's (store.Delivery.Trace),
// the one an outbound call continues (client.Call.Trace), a span's — and
// the contract's pb.TraceContext is converted to and from it at the seams
// (the bridge, the tool call in app).
type Context struct {
	Traceparent string
	Tracestate  string
}

// Valid reports whether c has a valid traceparent.
func (c Context) Valid() bool { return Valid(c.Traceparent) }

// Child is the context of a new span in c's trace (see Child): the same
// trace id and tracestate, a new span id. An invalid c yields a new trace.
func (c Context) Child() Context {
	if !c.Valid() {
		return Context{Traceparent: NewRoot()}
	}
	return Context{Traceparent: Child(c.Traceparent), Tracestate: c.Tracestate}
}

// Received is the trace context of a request as it came: a traceparent
// that is not valid is dropped with its tracestate, a tracestate that is
// not valid (ValidState) alone.
func Received(traceparent, tracestate string) Context {
	if !Valid(traceparent) {
		return Context{}
	}
	c := Context{Traceparent: traceparent}
	if ValidState(tracestate) {
		c.Tracestate = tracestate
	}
	return c
}

// SetHeaders sets the traceparent and tracestate headers of an outbound
// request to c (tracestate only when it is valid and not empty).
func (c Context) SetHeaders(h http.Header) {
	h.Set("traceparent", c.Traceparent)
	if c.Tracestate != "" && ValidState(c.Tracestate) {
		h.Set("tracestate", c.Tracestate)
	}
}

// traceparentLen is the length of a version 00 traceparent:
// 2 + 1 + 32 + 1 + 16 + 1 + 2.
const traceparentLen = 55

// Valid reports whether tp is a W3C traceparent this plugin accepts:
// version-traceid-parentid-flags with 2, 32, 16 and 2 lowercase hex digits,
// neither id all zeros, version not ff. Version 00 must be exactly that
// long; a later version may carry more fields after a "-", which are
// ignored (the W3C rule for versions a parser does not know).
func Valid(tp string) bool {
	if len(tp) < traceparentLen || (len(tp) > traceparentLen && tp[traceparentLen] != '-') {
		return false
	}
	if tp[2] != '-' || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	if !lowerHex(tp[0:2]) || !lowerHex(tp[3:35]) || !lowerHex(tp[36:52]) || !lowerHex(tp[53:55]) {
		return false
	}
	switch tp[0:2] {
	case "ff":
		return false
	case "00":
		if len(tp) != traceparentLen {
			return false
		}
	}
	return !zeros(tp[3:35]) && !zeros(tp[36:52])
}

// TraceID returns the 32 hex digits of a valid traceparent's trace id, or
// "".
func TraceID(tp string) string {
	if !Valid(tp) {
		return ""
	}
	return tp[3:35]
}

// SpanID returns the 16 hex digits of a valid traceparent's parent id (the
// span of the caller), or "".
func SpanID(tp string) string {
	if !Valid(tp) {
		return ""
	}
	return tp[36:52]
}

// Child returns the traceparent of a new span in tp's trace: version 00,
// the same trace id and sampled flag, a new random span id. An invalid tp
// yields a new trace ([NewRoot]), so a request always belongs to a trace.
func Child(tp string) string {
	if !Valid(tp) {
		return NewRoot()
	}
	var b [traceparentLen]byte
	copy(b[:], tp[:traceparentLen])
	b[0], b[1] = '0', '0'
	putHex(b[36:52], nonZero())
	b[53] = '0'
	if sampled(tp) {
		b[54] = '1'
	} else {
		b[54] = '0'
	}
	return string(b[:])
}

// NewRoot returns the traceparent of a new trace: random trace and span
// ids, sampled (so agents downstream that record traces record this one;
// the plugin itself records nothing unless export is on).
func NewRoot() string {
	var b [traceparentLen]byte
	b[0], b[1], b[2] = '0', '0', '-'
	putHex(b[3:19], nonZero())
	putHex(b[19:35], rand.Uint64())
	b[35] = '-'
	putHex(b[36:52], nonZero())
	b[52], b[53], b[54] = '-', '0', '1'
	return string(b[:])
}

// sampled reports the sampled bit of a valid traceparent's flags.
func sampled(tp string) bool {
	return fromHex(tp[54])&1 == 1
}

// ValidState reports whether ts may be passed on as a tracestate header:
// at most 512 printable ASCII characters (the W3C limit; list members are
// not parsed, a peer's vendor data is passed on as it came).
func ValidState(ts string) bool {
	if len(ts) > 512 {
		return false
	}
	for i := 0; i < len(ts); i++ {
		if ts[i] < 0x20 || ts[i] > 0x7e {
			return false
		}
	}
	return true
}

// nonZero returns a random non-zero 64-bit number (ids must not be zero).
func nonZero() uint64 {
	for {
		if v := rand.Uint64(); v != 0 {
			return v
		}
	}
}

const hexDigits = "0123456789abcdef"

// putHex writes v as 16 lowercase hex digits into dst.
func putHex(dst []byte, v uint64) {
	for i := 15; i >= 0; i-- {
		dst[i] = hexDigits[v&0xf]
		v >>= 4
	}
}

func fromHex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func zeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
