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
)

// record builds the audit record of an exchange: who asked for what, about
// which task, and how it ended. It never holds message content or tokens;
// Error carries the refusal's message (the audit log redacts it).
func (ex *exchange) record(d time.Duration) security.AuditRecord {
	outcome := "ok"
	code := ex.code
	switch {
	case ex.status == 429:
		outcome = outcomeRateLimited
	case ex.status != 200 && ex.status != 204:
		outcome = outcomeRefused
		if code == 0 {
			code = ex.status
		}
	case ex.cut:
		outcome = outcomeCut
	case ex.code != 0:
		outcome = "error"
	}
	return security.AuditRecord{
		Time:          ex.start,
		Direction:     security.AuditInbound,
		Identity:      ex.ident.ID,
		Tier:          ex.ident.Tier.String(),
		Method:        ex.method,
		TaskID:        ex.taskID,
		ContextID:     ex.contextID,
		Outcome:       outcome,
		Code:          code,
		RequestBytes:  ex.bytesIn,
		ResponseBytes: ex.bytesOut,
		DurationMS:    float64(d) / float64(time.Millisecond),
		Error:         ex.errMsg,
	}
}

// audit hands the record of ex to the audit log (and the test hook).
func (s *Server) audit(ex *exchange, d time.Duration) {
	if s.opts.Audit == nil && s.auditHook == nil && s.opts.Observer == nil {
		return
	}
	rec := ex.record(d)
	if s.opts.Observer != nil {
		s.opts.Observer(rec)
	}
	if s.auditHook != nil {
		s.auditHook(rec, ex.events)
	}
	if err := s.opts.Audit.Log(rec); err != nil {
		s.log.Warn("could not write the audit record", ex.logArgs("error", err)...)
	}
}

// errMessage is the text of an error for the audit record.
func errMessage(e *a2a.Error) string {
	if e.Reason != "" {
		return e.Reason + ": " + e.Message
	}
	return e.Message
}
