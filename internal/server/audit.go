package server

import (
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// Audit outcomes besides "ok" and "error" (a JSON-RPC error answer).
const (
	outcomeRefused     = "refused"      // refused at HTTP level: 401, 413, 408, 503
	outcomeRateLimited = "rate-limited" // HTTP 429: request rate or stream cap
	outcomeCut         = "cut"          // a stream ended early: dropped, write timeout, shutdown
	outcomeCancelled   = "cancelled"    // the client canceled the call before its answer (statusCancelled)
)

// statusCancelled is the status class of an exchange the client canceled
// before it was answered (nginx's 499, "client closed request"): not a
// timeout, and nobody reads the answer. gRPC: CANCELLED.
const statusCancelled = 499

// record builds the audit record of an exchange: who asked for what, about
// which task, and how it ended. It never holds message content or tokens;
// Error carries the refusal's message (the audit log redacts it).
func (c *Call) record(d time.Duration) security.AuditRecord {
	outcome := "ok"
	code := c.code
	switch {
	case c.status == 429:
		outcome = outcomeRateLimited
	case c.status == statusCancelled:
		outcome = outcomeCancelled
		code = statusCancelled
	case c.status != 200 && c.status != 204:
		outcome = outcomeRefused
		if code == 0 {
			code = c.status
		}
	case c.cut:
		outcome = outcomeCut
	case c.code != 0:
		outcome = "error"
	}
	return security.AuditRecord{
		Time:          c.start,
		Direction:     security.AuditInbound,
		Identity:      c.Caller.ID,
		Tier:          c.Caller.Tier.String(),
		Method:        c.Method,
		TaskID:        c.TaskID,
		ContextID:     c.ContextID,
		Outcome:       outcome,
		Code:          code,
		RequestBytes:  c.BytesIn,
		ResponseBytes: c.BytesOut,
		DurationMS:    float64(d) / float64(time.Millisecond),
		Error:         c.errMsg,
	}
}

// errMessage is the text of an error for the audit record.
func errMessage(e *a2a.Error) string {
	if e.Reason != "" {
		return e.Reason + ": " + e.Message
	}
	return e.Message
}
