package server

import (
	"time"
)

// AuditRecord describes one exchange for the audit log: who asked for
// what, about which task, and how it ended. It never holds message
// content, tokens or other secrets.
type AuditRecord struct {
	// Time is when the request arrived.
	Time time.Time
	// Identity is the caller's identity ("peer:alice", "anon:203.0.113.7",
	// "unauthenticated:<address>" when authentication failed).
	Identity string
	// Tier is the caller's trust tier.
	Tier string
	// Authenticated reports whether the caller presented a valid token.
	Authenticated bool
	// Remote is the caller's network address.
	Remote string
	// Method is the JSON-RPC method as sent ("" when the body was not a
	// readable request).
	Method string
	// TaskID and ContextID name the task the exchange was about, when known.
	TaskID, ContextID string
	// Outcome is "ok", "error" (a JSON-RPC error) or "refused" (an HTTP
	// level refusal: 401, 413, 429, …).
	Outcome string
	// Code is the JSON-RPC error code (0 on success) and Reason its
	// ErrorInfo reason.
	Code   int
	Reason string
	// Status is the HTTP status.
	Status int
	// Stream reports an SSE answer; Events counts the events written.
	Stream bool
	Events int
	// BytesIn and BytesOut are the body sizes.
	BytesIn, BytesOut int64
	// Duration is how long the exchange took (for streams: until closed).
	Duration time.Duration
}

// record builds the audit record of an exchange.
func (ex *exchange) record(d time.Duration) AuditRecord {
	outcome := "ok"
	switch {
	case ex.status != 200 && ex.status != 204:
		outcome = "refused"
	case ex.code != 0:
		outcome = "error"
	}
	return AuditRecord{
		Time:          ex.start,
		Identity:      ex.ident.ID,
		Tier:          ex.ident.Tier.String(),
		Authenticated: ex.ident.Authenticated,
		Remote:        ex.ident.Remote,
		Method:        ex.method,
		TaskID:        ex.taskID,
		ContextID:     ex.contextID,
		Outcome:       outcome,
		Code:          ex.code,
		Reason:        ex.reason,
		Status:        ex.status,
		Stream:        ex.stream,
		Events:        ex.events,
		BytesIn:       ex.bytesIn,
		BytesOut:      ex.bytesOut,
		Duration:      d,
	}
}
