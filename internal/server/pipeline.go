package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// pipeline is the Handler every binding uses: the admission and
// authorization steps, the stream caps and the exchange's record, around
// the operations of next (the service). Its steps run in the order the
// Handler documents, cheapest first; the first refusal answers.
type pipeline struct {
	opts *Options
	log  hclog.Logger
	now  func() time.Time
	next Operations

	// extensions indexes CardConfig.Extensions by URI; required lists the
	// ones a request must name.
	extensions map[string]bool
	required   []string
	// localHosts are the DNS names (besides localhost) a loopback caller
	// may use in Host and still be Local: the public URL's host.
	localHosts map[string]bool

	// The server's lifecycle and stream counts, shared by the pipelines
	// of all its agents.
	*lifecycle

	// auditHook, set by tests, sees every audit record and the number of
	// stream events of the exchange.
	auditHook func(rec security.AuditRecord, events int)
}

// lifecycle is what every agent's pipeline of one server shares: whether
// the server shuts down, the signal that cuts open streams, and the
// stream counts the limits and Shutdown use.
type lifecycle struct {
	closing     atomic.Bool
	stopStreams chan struct{}
	stopOnce    sync.Once
	streams     streamCount // open streams
	// streamSlots counts the streams holding a place under
	// Limits.MaxStreams.
	streamSlots atomic.Int64
	// refusalLog bounds the log lines of refused exchanges.
	refusalLog logLimiter
}

// newPipeline builds the pipeline of one agent; lc is the server's
// lifecycle (nil: a new one, for the first agent).
func newPipeline(o *Options, log hclog.Logger, next Operations, lc *lifecycle) *pipeline {
	if lc == nil {
		lc = &lifecycle{stopStreams: make(chan struct{})}
	}
	p := &pipeline{
		opts: o, log: log, now: o.Now, next: next,
		extensions: make(map[string]bool, len(o.Card.Extensions)),
		localHosts: map[string]bool{},
		lifecycle:  lc,
	}
	for _, e := range o.Card.Extensions {
		p.extensions[e.URI] = true
		if e.Required {
			p.required = append(p.required, e.URI)
		}
	}
	if u, err := url.Parse(o.Card.PublicURL); err == nil && u.Hostname() != "" {
		p.localHosts[strings.ToLower(u.Hostname())] = true
	}
	return p
}

// opPerms maps each operation to the permission it needs.
var opPerms = [...]security.Permission{
	a2a.OpSendMessage:          security.PermSend,
	a2a.OpSendStreamingMessage: security.PermSend,
	a2a.OpGetTask:              security.PermGet,
	a2a.OpListTasks:            security.PermList,
	a2a.OpCancelTask:           security.PermCancel,
	a2a.OpSubscribeToTask:      security.PermSubscribe,
	a2a.OpCreatePushConfig:     security.PermPushConfig,
	a2a.OpGetPushConfig:        security.PermPushConfig,
	a2a.OpListPushConfigs:      security.PermPushConfig,
	a2a.OpDeletePushConfig:     security.PermPushConfig,
	a2a.OpGetExtendedCard:      security.PermExtendedCard,
}

// Admit implements Handler: refuse while shutting down, refuse browser
// requests from other origins, authenticate, refuse a loopback caller that
// is Local only by its connection but names a DNS host (a rebinding web
// page), apply the rate limit.
func (p *pipeline) Admit(ctx context.Context, peer Peer) (context.Context, *Call, error) {
	ctx, c := p.begin(ctx, peer)
	if r := p.admit(ctx, c); r != nil {
		c.Refused(r)
		return ctx, c, r
	}
	return ctx, c, nil
}

// begin starts the record (and, for a transport without spans, the
// span) of an exchange.
func (p *pipeline) begin(ctx context.Context, peer Peer) (context.Context, *Call) {
	c := &Call{Peer: peer, start: p.now(), status: 200}
	if t := p.opts.Tracer; t.Enabled() {
		c.annotate = tracing.SpanFromContext(ctx)
		if !c.annotate.Recording() {
			// A transport without spans of its own (gRPC): the exchange is
			// the span.
			ctx, c.span = t.Start(ctx, "a2a", tracing.KindServer, peer.Trace)
			c.annotate = c.span
		}
	}
	return ctx, c
}

func (p *pipeline) admit(ctx context.Context, c *Call) *Refusal {
	return p.charge(c, p.authenticate(ctx, c))
}

// authenticate runs the admission steps before the rate limit: shutdown,
// browser checks, authentication, the rebinding check. A credential it
// refuses leaves c.Caller "unauthenticated:<address>" and answers 401.
func (p *pipeline) authenticate(ctx context.Context, c *Call) *Refusal {
	if p.closing.Load() {
		return refusedWith(503, errUnavailable())
	}
	remote := hostOf(c.RemoteAddr)
	if crossSite(c.Peer) {
		// A web page in the operator's browser must not drive the local
		// agent (loopback callers are the Local tier): A2A clients are not
		// browsers, and the inspector is same-origin.
		c.Caller = security.Identity{ID: "cross-site:" + remote, Remote: remote}
		return refusedWith(403, errCrossSite(c.Origin))
	}
	auth := p.opts.Auth
	ident, err := auth.AuthenticateCredentials(ctx, c.RemoteAddr, c.Authorization)
	if err == nil {
		err = auth.Admit(ident)
	}
	if err != nil {
		c.Caller = security.Identity{ID: "unauthenticated:" + remote, Remote: remote}
		challenge := `Bearer realm="a2a"`
		if len(c.Authorization) > 0 {
			challenge += `, error="invalid_token"`
		}
		return &Refusal{Err: errUnauthenticated(err), Status: 401, Challenge: challenge}
	}
	c.Caller = ident
	if ident.Tier == security.TierLocal && !ident.Authenticated && !security.SafeLocalHost(c.Host, p.localHosts) {
		// Local by virtue of the loopback connection alone, but addressed
		// by a DNS name: a rebinding web page in the operator's browser
		// would look exactly like this.
		return refusedWith(421, errMisdirected(c.Host))
	}
	return nil
}

// charge applies the rate limit to an exchange authenticate answered with
// r: an admitted caller counts against its identity, a refused credential
// (401) against the caller's address, which slows down token guessing.
// Over the limit, the answer is 429 instead.
func (p *pipeline) charge(c *Call, r *Refusal) *Refusal {
	switch {
	case r == nil:
		if ok, wait := p.allowRate(c.Caller); !ok {
			return &Refusal{Err: errRateLimited(wait), Status: 429, RetryAfter: wait}
		}
	case r.Status == 401:
		if rl := p.opts.RateLimit; rl != nil {
			if ok, wait := rl.Allow(c.Caller.ID); !ok {
				return &Refusal{Err: errRateLimited(wait), Status: 429, RetryAfter: wait}
			}
		}
	}
	return r
}

// crossSite reports whether a browser sent the request from a page of
// another origin: an Origin naming another host (or "null"), or
// Sec-Fetch-Site "cross-site". Non-browser clients send neither.
func crossSite(p Peer) bool {
	if p.FetchSite == "cross-site" {
		return true
	}
	if p.Origin == "" {
		return false
	}
	u, err := url.Parse(p.Origin)
	if err != nil || u.Host == "" {
		return true // "null" and malformed origins
	}
	return !strings.EqualFold(u.Host, p.Host)
}

// allowRate applies the rate limit to one request of ident. Local callers
// are exempt unless Options.RateLimitLocal is set.
func (p *pipeline) allowRate(ident security.Identity) (bool, time.Duration) {
	rl := p.opts.RateLimit
	if rl == nil || (ident.Tier == security.TierLocal && !p.opts.RateLimitLocal) {
		return true, 0
	}
	return rl.Allow(ident.ID)
}

// Authorize implements Handler: the checks that need the operation but
// not its request — version, extensions, capability (answered the same to
// every caller, so before permissions), the caller's permission. A
// binding calls it once it knows the operation, before it decodes the
// request; an operation calls it itself when the binding did not.
func (p *pipeline) Authorize(ctx context.Context, c *Call) error {
	if c.authorized {
		return nil
	}
	c.authorized = true
	if c.Method == "" {
		c.Method = c.Op.String()
	}
	r := p.negotiateVersion(c)
	if r == nil {
		r = p.negotiateExtensions(c)
	}
	if r == nil {
		r = p.capability(c.Op)
	}
	if r == nil {
		r = permit(p.opts, c.Method, c.Op, opPerms[c.Op], c.Caller)
	}
	if r == nil && (c.Op == a2a.OpSendMessage || c.Op == a2a.OpSendStreamingMessage) && !p.opts.Gate.Allows(c.Caller) {
		// The trust gate needs only the caller: refused here, before the
		// message is decoded, an untrusted caller costs no more than its
		// headers (and, over JSON, the scan of its body).
		r = refusal(errUntrusted(c.Caller))
	}
	if r != nil {
		c.Refused(r)
		return r
	}
	return nil
}

// negotiateVersion gates the requested A2A-Version: JSON-RPC serves 1.0
// and 0.3 (the method name selects the shapes), HTTP+JSON and gRPC only
// 1.0. A missing version is 1.0 for v1.0 methods.
func (p *pipeline) negotiateVersion(c *Call) *Refusal {
	version, e := a2a.NegotiateVersion(c.Version, c.V03)
	if e != nil {
		return refusal(e)
	}
	if c.Binding == a2a.BindingJSONRPC || c.Binding == "" || version == a2a.ProtocolVersion {
		return nil
	}
	e = a2a.ErrVersionNotSupported(version)
	how := "the header A2A-Version: 1.0"
	over := "HTTP+JSON"
	if c.Binding == a2a.BindingGRPC {
		how, over = "the metadata a2a-version: 1.0", "gRPC"
	}
	e.Message = fmt.Sprintf("A2A protocol version %q is not served over %s here: send %s (protocol 0.3 is served by the JSON-RPC interface)", version, over, how)
	e.Metadata["supportedVersions"] = a2a.ProtocolVersion
	return refusal(e)
}

// negotiateExtensions records the requested extensions this agent
// supports as activated (the binding echoes them) and refuses a request
// that omits a required one. Unknown extensions are ignored, as the
// specification asks.
func (p *pipeline) negotiateExtensions(c *Call) *Refusal {
	if len(p.extensions) == 0 {
		return nil
	}
	requested := make(map[string]bool, len(c.Extensions))
	for _, uri := range c.Extensions {
		requested[uri] = true
	}
	for _, uri := range p.required {
		if !requested[uri] {
			return refusal(a2a.ErrExtensionSupportRequired(uri))
		}
	}
	for _, e := range p.opts.Card.Extensions {
		if requested[e.URI] {
			c.Activated = append(c.Activated, e.URI)
		}
	}
	return nil
}

// capability refuses operations the agent card does not offer.
func (p *pipeline) capability(op a2a.Operation) *Refusal {
	switch op {
	case a2a.OpCreatePushConfig, a2a.OpGetPushConfig, a2a.OpListPushConfigs, a2a.OpDeletePushConfig:
		if !p.opts.Push.Enabled {
			return refusal(a2a.ErrPushNotSupported())
		}
	case a2a.OpGetExtendedCard:
		if !extendedCardOffered(p.opts) {
			return refusal(a2a.ErrUnsupportedOperation("GetExtendedAgentCard is not supported: this agent does not offer an extended agent card (capabilities.extendedAgentCard is not set); use the public card at /.well-known/agent-card.json"))
		}
	}
	return nil
}

// permit checks that the caller may use perm: its tier's policy must
// allow it and, for an OAuth caller, its token must carry the scope.
func permit(o *Options, method string, op a2a.Operation, perm security.Permission, ident security.Identity) *Refusal {
	if !o.Policy.Allows(ident.Tier, perm) {
		return refusal(errForbidden(method, op, perm, ident.Tier))
	}
	if !ident.Permits(perm) {
		scope := perm.String()
		if v := o.Auth.OAuth(); v != nil {
			scope = v.ScopeFor(ident, perm)
		}
		return refusal(errMissingScope(method, op, perm, scope))
	}
	return nil
}

// operate is the step every operation takes: set the operation, authorize
// (when the binding did not), run next's operation, record a refusal.
func operate[Req, Res any](ctx context.Context, p *pipeline, c *Call, op a2a.Operation, req Req, next func(context.Context, *Call, Req) (Res, error)) (Res, error) {
	var zero Res
	if c.Op == 0 {
		c.Op = op
	}
	if err := p.Authorize(ctx, c); err != nil {
		return zero, err
	}
	res, err := next(ctx, c, req)
	if err != nil {
		r := RefusalOf(err)
		c.Refused(r)
		return zero, r
	}
	return res, nil
}

func (p *pipeline) SendMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return operate(ctx, p, c, a2a.OpSendMessage, req, p.next.SendMessage)
}

func (p *pipeline) GetTask(ctx context.Context, c *Call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return operate(ctx, p, c, a2a.OpGetTask, req, p.next.GetTask)
}

func (p *pipeline) ListTasks(ctx context.Context, c *Call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return operate(ctx, p, c, a2a.OpListTasks, req, p.next.ListTasks)
}

func (p *pipeline) CancelTask(ctx context.Context, c *Call, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return operate(ctx, p, c, a2a.OpCancelTask, req, p.next.CancelTask)
}

func (p *pipeline) CreateTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	return operate(ctx, p, c, a2a.OpCreatePushConfig, req, p.next.CreateTaskPushNotificationConfig)
}

func (p *pipeline) GetTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	return operate(ctx, p, c, a2a.OpGetPushConfig, req, p.next.GetTaskPushNotificationConfig)
}

func (p *pipeline) ListTaskPushNotificationConfigs(ctx context.Context, c *Call, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	return operate(ctx, p, c, a2a.OpListPushConfigs, req, p.next.ListTaskPushNotificationConfigs)
}

func (p *pipeline) DeleteTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	_, err := operate(ctx, p, c, a2a.OpDeletePushConfig, req, func(ctx context.Context, c *Call, req *a2a.DeleteTaskPushNotificationConfigRequest) (struct{}, error) {
		return struct{}{}, p.next.DeleteTaskPushNotificationConfig(ctx, c, req)
	})
	return err
}

func (p *pipeline) GetExtendedAgentCard(ctx context.Context, c *Call, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return operate(ctx, p, c, a2a.OpGetExtendedCard, req, p.next.GetExtendedAgentCard)
}

// SendStreamingMessage takes the stream's slots first (a refused stream
// must not count a turn), then opens the stream.
func (p *pipeline) SendStreamingMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*Stream, error) {
	return operate(ctx, p, c, a2a.OpSendStreamingMessage, req, func(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*Stream, error) {
		return p.openStream(c, func() (*Stream, error) { return p.next.SendStreamingMessage(ctx, c, req) })
	})
}

func (p *pipeline) SubscribeToTask(ctx context.Context, c *Call, req *a2a.SubscribeToTaskRequest) (*Stream, error) {
	c.TaskID = req.ID
	return operate(ctx, p, c, a2a.OpSubscribeToTask, req, func(ctx context.Context, c *Call, req *a2a.SubscribeToTaskRequest) (*Stream, error) {
		return p.openStream(c, func() (*Stream, error) { return p.next.SubscribeToTask(ctx, c, req) })
	})
}

// openStream takes one of the caller's stream slots (or refuses with 429
// and -32051) and a place under the server's global cap,
// Limits.MaxStreams (or refuses with 503), then opens the stream; the
// places are given back when the stream closes.
func (p *pipeline) openStream(c *Call, open func() (*Stream, error)) (*Stream, error) {
	release := func() {}
	if l := p.opts.Streams; l != nil {
		r, ok := l.Acquire(c.Caller.ID)
		if !ok {
			return nil, refusedWith(429, errTooManyStreams())
		}
		release = r
	}
	limit := int64(p.opts.Limits.MaxStreams)
	if p.streamSlots.Add(1) > limit {
		p.streamSlots.Add(-1)
		release()
		return nil, &Refusal{Err: errStreamsFull(int(limit)), Status: 503, RetryAfter: busyRetryAfter}
	}
	st, err := open()
	if err != nil {
		p.streamSlots.Add(-1)
		release()
		return nil, err
	}
	p.streams.add()
	c.stream = true
	st.c, st.stop, st.log = c, p.stopStreams, p.log
	st.release = func() {
		p.streamSlots.Add(-1)
		release()
		p.streams.done()
	}
	return st, nil
}

// Finish implements Handler: it names and annotates the exchange's span,
// ends the span the handler started, hands the audit record to the audit
// log and the observer, and logs the exchange.
func (p *pipeline) Finish(c *Call) {
	d := p.now().Sub(c.start)
	if c.annotate.Recording() {
		annotateSpan(c.annotate, c)
	}
	if c.span.Recording() {
		c.span.End(nil)
	}
	p.audit(c, d)
	switch {
	case c.code == 0 && p.log.IsDebug():
		p.log.Debug("a2a request", c.logArgs("tier", c.Caller.Tier.String(), "status", c.status, "events", c.Events, "duration", d)...)
	case c.status == statusCancelled:
		// The client's own choice: nothing for the operator to act on.
		if ok, left := p.refusalLog.allow(c.reason, p.now()); ok && p.log.IsDebug() {
			p.log.Debug("a2a request cancelled by the client", c.logArgs("tier", c.Caller.Tier.String(), "status", c.status,
				"duration", d, "left_out", left)...)
		}
	case c.code != 0 && c.code != a2a.CodeRateLimited:
		if ok, left := p.refusalLog.allow(c.reason, p.now()); ok {
			args := c.logArgs("tier", c.Caller.Tier.String(), "status", c.status, "code", c.code, "reason", c.reason, "duration", d)
			if left > 0 {
				args = append(args, "left_out", left, "left_out_note", "refusals of this reason not logged in the previous "+refusalLogWindow.String()+" (each has its audit record)")
			}
			p.log.Info("a2a request refused", args...)
		}
	}
}

// audit hands the record of c to the audit log, the observer and the test
// hook.
func (p *pipeline) audit(c *Call, d time.Duration) {
	if p.opts.Audit == nil && p.auditHook == nil && p.opts.Observer == nil {
		return
	}
	rec := c.record(d)
	rec.Agent = p.opts.AgentID
	if p.opts.Observer != nil {
		p.opts.Observer(rec)
	}
	if p.auditHook != nil {
		p.auditHook(rec, c.Events)
	}
	if err := p.opts.Audit.Log(rec); err != nil {
		p.log.Warn("could not write the audit record", c.logArgs("error", err)...)
	}
}

// annotateSpan names a span after the A2A method and records what the
// exchange was about; a refused exchange marks it failed.
func annotateSpan(span tracing.Span, c *Call) {
	if c.Method != "" {
		span.SetName("a2a " + c.Method)
		span.SetString("rpc.method", c.Method)
	}
	if c.Binding == a2a.BindingGRPC {
		span.SetString("rpc.system", "grpc")
	}
	span.SetString("a2a.task_id", c.TaskID)
	span.SetString("a2a.context_id", c.ContextID)
	span.SetString("a2a.peer", c.Caller.ID)
	if c.code != 0 {
		span.SetInt("rpc.jsonrpc.error_code", c.code)
		span.Fail(c.reason)
	}
}

// Stream is an open event stream of one exchange (SendStreamingMessage,
// SubscribeToTask): a task subscription with the exchange's stream slots,
// until Run returns.
type Stream struct {
	sub     *tasks.Subscription
	c       *Call
	stop    <-chan struct{}
	log     hclog.Logger
	release func()
	once    sync.Once
}

// Run writes the stream to sink until it ends: its task settles (or, on a
// send's stream, asks for input), the client goes away (ctx ends) or
// cannot keep up, a write fails, or the server shuts down (the client is
// told to resubscribe). keepAlive is the interval of sink.KeepAlive (0:
// none). Run closes the stream.
func (s *Stream) Run(ctx context.Context, sink Sink, keepAlive time.Duration) {
	settled := false
	defer func() {
		s.c.cut = !settled
		s.Close()
	}()
	var tick <-chan time.Time
	if keepAlive > 0 {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		tick = t.C
	}
	events := s.sub.Events()
	hs, canHold := sink.(heldSink)
	for {
		select {
		case ev, ok := <-events:
			// ev and whatever is already queued behind it, the end of the
			// stream included, leave together: an event is held (written
			// without a flush) when the next one, or the end, is already
			// there. The last event of a stream that then ends is sent by
			// net/http with the end of the response (its chunked
			// encoding's terminator) in one write, under the write
			// deadline (see httpBinding.stream). Nothing waits for an
			// event that is not already there.
			for {
				if !ok {
					err := s.sub.Err()
					settled = err == nil
					if err != nil {
						s.fail(sink, s.endError(err))
					}
					return
				}
				var next tasks.Event
				ready, nextOK := false, false
				if canHold {
					select {
					case next, nextOK = <-events:
						ready = true
					default:
					}
				}
				if !s.send(sink, hs, &ev, ready) {
					return
				}
				if !ready {
					break
				}
				// A client that went away, or a shutdown, ends the stream
				// between two queued events too, as the select below
				// would: a task that produces events faster than its
				// client reads them must not keep its stream open.
				if nextOK {
					select {
					case <-ctx.Done():
						s.clientGone()
						return
					case <-s.stop:
						s.shutDown(sink)
						return
					default:
					}
				}
				ev, ok = next, nextOK
			}
		case <-tick:
			if err := sink.KeepAlive(); err != nil {
				s.log.Debug("stream write failed; closing it", s.c.logArgs("error", err)...)
				return
			}
		case <-ctx.Done():
			s.clientGone()
			return
		case <-s.stop:
			s.shutDown(sink)
			return
		}
	}
}

// clientGone records that the stream's client went away.
func (s *Stream) clientGone() { s.log.Debug("stream client went away", s.c.logArgs()...) }

// shutDown ends the stream because the server shuts down: the client is
// told to resubscribe.
func (s *Stream) shutDown(sink Sink) {
	e := errUnavailable()
	e.Message = "The agent is shutting down and closed this stream; the task goes on: resubscribe with SubscribeToTask or poll GetTask later"
	s.fail(sink, refusal(e))
}

// send writes one event of the stream, held (not flushed: see heldSink)
// when held is set; false when the stream must end (a write failed, or
// the event could not be encoded: the stream then ends with an error).
func (s *Stream) send(sink Sink, hs heldSink, ev *tasks.Event, held bool) bool {
	if s.c.TaskID == "" {
		s.c.TaskID = ev.Response.TaskID()
	}
	if s.c.ContextID == "" {
		s.c.ContextID = ev.Response.ContextID()
	}
	var err error
	if held {
		err = hs.EventHeld(ev)
	} else {
		err = sink.Event(ev)
	}
	s.c.Events++
	if errors.Is(err, errEncoding) {
		s.fail(sink, refusal(errInternal()))
		return false
	}
	if err != nil {
		s.log.Debug("stream write failed; closing it", s.c.logArgs("error", err)...)
		return false
	}
	return true
}

// endError is the error event of a stream whose subscription ended
// without its task settling.
func (s *Stream) endError(err error) *Refusal {
	if err == tasks.ErrDropped {
		s.log.Warn("stream dropped: the client read too slowly", s.c.logArgs()...)
		e := a2a.NewError(a2a.CodeInternalError, reasonStreamDropped,
			"This stream was closed because the client read events too slowly; the task goes on: resubscribe with SubscribeToTask or poll GetTask")
		if s.c.TaskID != "" {
			e.WithMetadata("taskId", s.c.TaskID)
		}
		return refusal(e)
	}
	return refusal(toA2AError(err))
}

// fail writes the error that ends the stream and records it.
func (s *Stream) fail(sink Sink, r *Refusal) {
	c := s.c
	c.code, c.reason, c.errMsg = r.Err.Code, r.Err.Reason, errMessage(r.Err)
	sink.Fail(r)
}

// Close ends the stream without writing anything more (a binding that
// never ran it, or a client gone): the subscription is detached (the task
// goes on) and the slots are given back. Run closes the stream itself.
func (s *Stream) Close() {
	s.once.Do(func() {
		s.sub.Close()
		if s.release != nil {
			s.release()
		}
	})
}

// shutdown refuses new requests from now on (Admit answers 503).
func (p *pipeline) shutdown() { p.closing.Store(true) }

// stopAllStreams ends every open stream with an error event telling its
// client to resubscribe.
func (p *pipeline) stopAllStreams() { p.stopOnce.Do(func() { close(p.stopStreams) }) }

// streamCount counts open streams and says when none is left. Unlike a
// sync.WaitGroup it may gain a stream while Shutdown waits for the others
// (a request admitted just before shutdown began).
type streamCount struct {
	mu   sync.Mutex
	n    int64
	zero chan struct{} // closed when n drops to 0; nil while n is 0
}

func (c *streamCount) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.zero = make(chan struct{})
	}
	c.n++
}

func (c *streamCount) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 {
		close(c.zero)
		c.zero = nil
	}
}

func (c *streamCount) open() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait returns once no stream is open — streams that start while it
// waits are waited for too — or with ctx's error when ctx ends first.
func (c *streamCount) wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		zero := c.zero
		c.mu.Unlock()
		if zero == nil {
			return nil
		}
		select {
		case <-zero:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
