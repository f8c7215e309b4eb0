package tools

import (
	"context"
	"errors"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/hashicorp/go-hclog"
)

// peerRequest is one outbound request to a peer (an "exchange" in the
// audit log's sense: one request and its answer), for the audit log: what was
// asked, about which task, how big the request and the answer were. Sizes
// are those of the A2A payloads (params, result, stream events) as JSON;
// no content is kept.
type peerRequest struct {
	method             string
	start              time.Time
	taskID, contextID  string
	reqBytes, resBytes int64
}

// payloadSize is the size of v encoded as the wire JSON (0 if it cannot be
// encoded).
func payloadSize(v any) int64 {
	if v == nil {
		return 0
	}
	b, err := a2a.Marshal(v)
	if err != nil {
		return 0
	}
	return int64(len(b))
}

// auditRecorder writes one outbound record per request to a peer
// (Deps.Audit): peer, method, ids, outcome, code, sizes and duration; the
// log redacts the error text. A record that cannot be written is logged.
type auditRecorder struct {
	recordsNothing
	log      hclog.Logger
	auditLog *security.AuditLog
	now      func() time.Time
}

func (r *auditRecorder) exchanged(_ *callRecord, target *resolved, x peerRequest, err error) {
	rec := security.AuditRecord{
		Time: x.start, Direction: security.AuditOutbound, Method: x.method, Peer: target.name,
		TaskID: x.taskID, ContextID: x.contextID, Outcome: auditOutcome(err), Code: auditCode(err),
		RequestBytes: x.reqBytes, ResponseBytes: x.resBytes,
		DurationMS: float64(r.now().Sub(x.start).Microseconds()) / 1000,
	}
	if err != nil {
		rec.Error = err.Error()
	}
	if lerr := r.auditLog.Log(rec); lerr != nil {
		r.log.Warn("could not write the audit log", "peer", target.name, "task_id", x.taskID, "error", lerr)
	}
}

// auditOutcome is the audit log's word for how a request ended.
func auditOutcome(err error) string {
	switch {
	case err == nil, errors.Is(err, errStreamDone), errors.Is(err, errStopWaiting):
		return "ok"
	case errors.Is(err, client.ErrAuthRefused):
		return "refused"
	case errors.Is(err, client.ErrRateLimited):
		return "rate-limited"
	case errors.Is(err, client.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled), errors.Is(err, errCallerGone):
		return "cancelled"
	}
	return "error"
}

// auditCode is the JSON-RPC error code, else the HTTP status, of a failed
// request (0 for none).
func auditCode(err error) int {
	if re, ok := client.RPCError(err); ok {
		return re.Code
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.HTTPStatus
	}
	return 0
}
