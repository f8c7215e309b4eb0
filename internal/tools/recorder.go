package tools

import (
	"context"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/metrics"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// What a call leaves behind outside the peer — its side effects — is one
// ordered chain of recorders, built once per call from the call's origin
// and the toolset's Deps (sinks.recording, from CallFrom), in this order:
//
//  1. the tool call's span (Deps.Span: the app's; it also decides the
//     trace the call continues),
//  2. the audit log, one record per request to a peer (audit.go),
//  3. the metrics, one observation per operation (metricsRecorder),
//  4. the cascade's record of the remote tasks started for an inbound
//     task (cascade.go; only in the chain of a call made for one),
//  5. the conversations a2a_history reads, once per task and state
//     (record.go),
//  6. the host's memory, told once per delegation that ended
//     (delegation.go: hostMemory).
//
// The engine and the tools call the chain (callRecord) at the points named
// by the hooks of recorder, never a sink by hand; at each point every
// recorder is called once, in chain order. A recorder acts on the points
// it cares about and ignores the others (recordsNothing). None can stop
// the call or the recorders after it: a sink that fails is logged, and the
// call goes on — as the inbound pipeline records an exchange.
type recorder interface {
	// exchanged: one request to the peer ended; x says what was asked and
	// answered, err how it ended.
	exchanged(c *callRecord, target *resolved, x peerRequest, err error)
	// ended: one operation of the call ended, after d: a delivery
	// ("SendMessage", with its wait and follow-up), a2a_task's get
	// ("GetTask"), wait ("SubscribeToTask") or cancel ("CancelTask"), a
	// cascade's cancel.
	ended(c *callRecord, target *resolved, method string, d time.Duration, err error)
	// named: the peer named taskID, the task msg started or continued.
	named(ctx context.Context, c *callRecord, target *resolved, msg *a2a.Message, taskID, contextID string)
	// sent: a message of the call went out (e, as the conversation keeps
	// it).
	sent(ctx context.Context, c *callRecord, e store.ConversationEntry)
	// received: o is what came back (a task's state, or a direct message).
	received(ctx context.Context, c *callRecord, target *resolved, o *outcome)
	// settled: the call is done with delegation d, which o left ended or
	// still running.
	settled(ctx context.Context, c *callRecord, target *resolved, d delegationInfo, o *outcome)
	// finished: the tool call answered res, or err (an unknown tool).
	finished(c *callRecord, res *pb.ToolResult, err error)
}

// recordsNothing is the recorder that ignores every point; a recorder
// embeds it and implements the points it acts on.
type recordsNothing struct{}

func (recordsNothing) exchanged(*callRecord, *resolved, peerRequest, error)                        {}
func (recordsNothing) ended(*callRecord, *resolved, string, time.Duration, error)                  {}
func (recordsNothing) named(context.Context, *callRecord, *resolved, *a2a.Message, string, string) {}
func (recordsNothing) sent(context.Context, *callRecord, store.ConversationEntry)                  {}
func (recordsNothing) received(context.Context, *callRecord, *resolved, *outcome)                  {}
func (recordsNothing) settled(context.Context, *callRecord, *resolved, delegationInfo, *outcome) {
}
func (recordsNothing) finished(*callRecord, *pb.ToolResult, error) {}

// maxRecorders is the length of the longest chain (the six above).
const maxRecorders = 6

// callRecord is one call's chain of recorders, with the origin they
// record for. Every peer handle of the call (resolved.rec) points to it.
// Its methods call the hooks of the chain in order; a nil callRecord
// records nothing.
type callRecord struct {
	org   Origin
	chain []recorder
	buf   [maxRecorders]recorder // chain's storage: no allocation per call
}

func (c *callRecord) exchanged(target *resolved, x peerRequest, err error) {
	if c == nil {
		return
	}
	for _, r := range c.chain {
		r.exchanged(c, target, x, err)
	}
}

func (c *callRecord) ended(target *resolved, method string, d time.Duration, err error) {
	if c == nil {
		return
	}
	for _, r := range c.chain {
		r.ended(c, target, method, d, err)
	}
}

func (c *callRecord) named(ctx context.Context, target *resolved, msg *a2a.Message, taskID, contextID string) {
	if c == nil || taskID == "" {
		return
	}
	for _, r := range c.chain {
		r.named(ctx, c, target, msg, taskID, contextID)
	}
}

func (c *callRecord) sent(ctx context.Context, e store.ConversationEntry) {
	if c == nil {
		return
	}
	for _, r := range c.chain {
		r.sent(ctx, c, e)
	}
}

func (c *callRecord) received(ctx context.Context, target *resolved, o *outcome) {
	if c == nil {
		return
	}
	for _, r := range c.chain {
		r.received(ctx, c, target, o)
	}
}

func (c *callRecord) settled(ctx context.Context, target *resolved, d delegationInfo, o *outcome) {
	if c == nil {
		return
	}
	for _, r := range c.chain {
		r.settled(ctx, c, target, d, o)
	}
}

func (c *callRecord) finished(res *pb.ToolResult, err error) {
	if c == nil {
		return
	}
	for _, r := range c.chain {
		r.finished(c, res, err)
	}
}

// sinks are the recorders the toolset shares between calls (New builds
// them from Deps); nil: the sink is off.
type sinks struct {
	audit   *auditRecorder
	metrics *metricsRecorder
	cascade *cascadeRecorder
	convs   *conversationLog
	host    *hostMemory
}

// recording builds c, the chain of the call org describes: span (the
// recorder Deps.Span started for it, or nil) first, then the sinks, in
// the order the chain's comment gives; the cascade's only for a call made
// for an inbound task (org.Task).
func (s *sinks) recording(c *callRecord, org Origin, span recorder) {
	c.org = org
	c.chain = c.buf[:0]
	if span != nil {
		c.chain = append(c.chain, span)
	}
	if s.audit != nil {
		c.chain = append(c.chain, s.audit)
	}
	if s.metrics != nil {
		c.chain = append(c.chain, s.metrics)
	}
	if s.cascade != nil && org.Task != "" {
		c.chain = append(c.chain, s.cascade)
	}
	if s.convs != nil {
		c.chain = append(c.chain, s.convs)
	}
	if s.host != nil {
		c.chain = append(c.chain, s.host)
	}
}

// record is a chain of recorders for work that is no tool call (a
// cascade's cancel, the inspector's check of the peers), made for org.
func (s *sinks) record(org Origin) *callRecord {
	c := &callRecord{}
	s.recording(c, org, nil)
	return c
}

// metricsRecorder counts every operation of a call in the shared metrics
// (a2a_list and /metrics show them).
type metricsRecorder struct {
	recordsNothing
	m *metrics.Metrics
}

func (r *metricsRecorder) ended(_ *callRecord, target *resolved, method string, d time.Duration, err error) {
	r.m.Outbound(target.name, method, d, err)
}

// SpanEnd ends the span of one tool call with its result (err: the call
// failed as a whole — an unknown tool). It is the span's recorder in the
// call's chain: the first, and the last to act, at its end.
type SpanEnd func(res *pb.ToolResult, err error)

func (SpanEnd) exchanged(*callRecord, *resolved, peerRequest, error)                        {}
func (SpanEnd) ended(*callRecord, *resolved, string, time.Duration, error)                  {}
func (SpanEnd) named(context.Context, *callRecord, *resolved, *a2a.Message, string, string) {}
func (SpanEnd) sent(context.Context, *callRecord, store.ConversationEntry)                  {}
func (SpanEnd) received(context.Context, *callRecord, *resolved, *outcome)                  {}
func (SpanEnd) settled(context.Context, *callRecord, *resolved, delegationInfo, *outcome)   {}
func (end SpanEnd) finished(_ *callRecord, res *pb.ToolResult, err error)                   { end(res, err) }

// StartSpan starts the span of one tool call (Deps.Span). It is given the
// call's origin and may change it: the trace the call continues
// (Origin.Trace, TraceIsSpan) is decided here when a span is recorded. It
// returns what ends the span, nil for none.
type StartSpan func(ctx context.Context, org *Origin, req *pb.CallToolRequest) SpanEnd
