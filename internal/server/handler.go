package server

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// Handler is the transport-neutral A2A request handler: what the three
// bindings (JSON-RPC, HTTP+JSON, gRPC) adapt to. A binding turns its wire
// form into a Peer and a typed request, and its answer back into bytes;
// everything between — authentication, the rate limit, version and
// extension negotiation, capabilities, permissions and scopes, the stream
// caps, the operation itself, the audit record, metrics and the trace
// span — happens once, here, in the same order for every binding:
//
//	Admit      shutdown, browser checks, authentication, rate limit
//	Authorize  version, extensions, capability, permission, trust gate
//	operation  stream caps; the operation on the task manager (message
//	           limits, loop guards, scoping)
//	Finish     audit record, metrics, log line, span
//
// Between Admit and Authorize the binding finds the operation (JSON-RPC:
// reads the body and its envelope, within its size limit), and between
// Authorize and the operation it decodes the request: nothing is read
// from a caller before it is admitted, nor decoded before it may use the
// operation. *pipeline implements it over *service;
// binding tests can use a fake.
//
// With several agents (AgentOptions) the handler is a router: the agent a
// path names travels in Peer.Tenant, the one a request's tenant field
// names reaches it through the operation (or routeTenant, as soon as a
// binding reads it), and each exchange runs in its agent's pipeline.
type Handler interface {
	// Admit starts the exchange of one request: it refuses requests while
	// the server shuts down, browser requests from other origins,
	// credentials that name no caller and callers over their rate, and
	// returns the exchange (with its caller) and the context the rest of
	// the request runs in (it carries the request's span). The exchange is
	// returned on refusal too: the binding answers the refusal and then
	// calls Finish.
	Admit(ctx context.Context, p Peer) (context.Context, *Call, error)
	// Authorize runs the checks that need the operation (c.Op) but not its
	// request: the version, the extensions (c.Activated), the capability,
	// the caller's permission. A binding calls it before it decodes the
	// request; an operation runs it when the binding did not.
	Authorize(ctx context.Context, c *Call) error
	// Operations run the exchange's operation. They set c.Op if the
	// binding has not.
	Operations
	// Finish ends the exchange once its answer (or its stream) is written:
	// the audit record, the metrics observer, the log line, the span.
	Finish(c *Call)
}

// Operations are the A2A operations with the typed requests and answers
// of package a2a (v1.0 shapes; a binding serving 0.3 converts). Every
// error is a *Refusal (see RefusalOf).
type Operations interface {
	SendMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error)
	// SendStreamingMessage opens the stream of a send: its first event is
	// the task.
	SendStreamingMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*Stream, error)
	GetTask(ctx context.Context, c *Call, req *a2a.GetTaskRequest) (*a2a.Task, error)
	ListTasks(ctx context.Context, c *Call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error)
	CancelTask(ctx context.Context, c *Call, req *a2a.CancelTaskRequest) (*a2a.Task, error)
	// SubscribeToTask opens a stream on a task: its first event is the
	// task as it is now.
	SubscribeToTask(ctx context.Context, c *Call, req *a2a.SubscribeToTaskRequest) (*Stream, error)
	CreateTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error)
	GetTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error)
	ListTaskPushNotificationConfigs(ctx context.Context, c *Call, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error)
	DeleteTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.DeleteTaskPushNotificationConfigRequest) error
	GetExtendedAgentCard(ctx context.Context, c *Call, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error)
}

// Peer is what a binding knows of a request before it reads it: the
// binding, who connects and with which credentials, where to, and the
// service parameters it sent.
type Peer struct {
	// Binding is a2a.BindingJSONRPC, a2a.BindingHTTPJSON or
	// a2a.BindingGRPC.
	Binding string
	// RemoteAddr is the TCP peer ("host:port").
	RemoteAddr string
	// Authorization holds the Authorization header's values (gRPC: the
	// `authorization` metadata).
	Authorization []string
	// Host is the Host header (gRPC: :authority).
	Host string
	// Origin and FetchSite are the browser headers Origin and
	// Sec-Fetch-Site ("" from anything that is not a browser).
	Origin, FetchSite string
	// TLS says the request came over TLS this server terminates.
	TLS bool
	// LocalAddr is the address the connection came in on (nil when not
	// known), for the endpoint URL of the extended card.
	LocalAddr net.Addr
	// Trace is the caller's W3C trace context (already checked).
	Trace tracing.Context
	// Version is the requested A2A-Version ("" when none was sent).
	Version string
	// Extensions are the requested extension URIs (A2A-Extensions).
	Extensions []string
	// Tenant is the agent the request's path named (/agents/{id}/…, the
	// HTTP+JSON /{tenant}/ prefix); "" at the root URL.
	Tenant string
}

// Call is one exchange from Admit to Finish, whatever its binding: what
// was asked, by whom, about which task, and how it ended. The binding
// sets Op, Method and V03 once it knows them and counts the bytes and
// events it wrote; the handler records everything else.
type Call struct {
	Peer
	// Op is the operation (0 until the binding or the operation sets it).
	Op a2a.Operation
	// Method is the name the caller used: the JSON-RPC method, or the
	// operation's v1.0 name for the other bindings.
	Method string
	// V03 marks a 0.3 JSON-RPC method (0.3 shapes on the wire).
	V03 bool
	// Caller is who made the request (set by Admit).
	Caller security.Identity
	// Activated are the requested extensions this agent supports, for the
	// binding to echo (set before the operation runs).
	Activated []string
	// BytesIn and BytesOut count the request and answer bytes on the wire;
	// Events the stream events written.
	BytesIn, BytesOut int64
	Events            int
	// TaskID and ContextID are what the exchange is about, as far as
	// known.
	TaskID, ContextID string

	start time.Time
	// status is the refusal's class (Refusal.Status), 200 otherwise.
	status     int
	code       int
	reason     string
	errMsg     string
	stream     bool // answered with a stream
	cut        bool // the stream ended before its task settled
	authorized bool // Authorize ran
	// turnContext is the context whose turn the loop guard counted for
	// this send ("" when none was).
	turnContext string
	// span is the span the handler started for the exchange (when the
	// binding's transport did not start one); Finish ends it.
	span tracing.Span
	// annotate is the span Finish names and annotates.
	annotate tracing.Span
	// site is the agent the exchange runs in (set by the router); routed
	// says it is settled: a path named it, the request's tenant did, or
	// the server has one agent. deferred is the default agent's refusal
	// of a credential another agent accepts, answered unless the tenant
	// names that agent. uncharged says no agent's rate limit has counted
	// the exchange yet (admitted at the root, its agent not settled).
	site      *site
	routed    bool
	deferred  *Refusal
	uncharged bool
}

// Refused records a refusal of the exchange (the handler records its
// own; a binding calls it for the refusals it makes while reading the
// request).
func (c *Call) Refused(r *Refusal) {
	c.status, c.code, c.reason, c.errMsg = r.Status, r.Err.Code, r.Err.Reason, errMessage(r.Err)
}

// scope is the task scope of the exchange's caller: its own tasks, or
// every task for a local caller.
func (c *Call) scope() string { return scope(c.Caller) }

// logArgs returns the key/value pairs every log line about the exchange
// carries (task_id, context_id, peer, method; the binding when it is not
// JSON-RPC), followed by kv.
func (c *Call) logArgs(kv ...any) []any {
	args := []any{"task_id", c.TaskID, "context_id", c.ContextID, "peer", c.Caller.ID, "method", c.Method}
	if c.Binding != "" && c.Binding != a2a.BindingJSONRPC {
		args = append(args, "binding", c.Binding)
	}
	return append(args, kv...)
}

// Refusal is an error the handler (or a binding) answers a request with:
// the A2A error, and what a binding needs beyond it to answer the way its
// transport should.
type Refusal struct {
	// Err is the A2A error (code, ErrorInfo reason and metadata, message).
	Err *a2a.Error
	// Status classes the refusal as the HTTP status the JSON-RPC binding
	// answers it with: 200 for a protocol error (the error travels in the
	// body); 401, 403, 408, 413, 421, 429 or 503 for a refusal at the
	// transport level. The other bindings map the class to their own
	// status (see restStatus and grpcCode).
	Status int
	// RetryAfter is how long the caller should wait (429, 503), 0 when
	// there is nothing to say.
	RetryAfter time.Duration
	// Challenge is the WWW-Authenticate value of a 401.
	Challenge string
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// refusal is a protocol error (class 200).
func refusal(e *a2a.Error) *Refusal { return &Refusal{Err: e, Status: 200} }

// refusedWith is a transport-level refusal of class status.
func refusedWith(status int, e *a2a.Error) *Refusal { return &Refusal{Err: e, Status: status} }

// RefusalOf returns the *Refusal err carries, or a generic internal error
// for any other error (whose detail is never shown to the caller).
func RefusalOf(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	var e *a2a.Error
	if errors.As(err, &e) {
		return refusal(e)
	}
	return refusal(errInternal())
}

// Sink is where a binding writes a stream: Stream.Run calls it from one
// goroutine. An error from Event or KeepAlive means the client is gone
// (or too slow: a write must not block longer than the write timeout);
// the stream then ends without another write.
type Sink interface {
	// Event writes one event; errEncoding when it cannot encode it (the
	// stream then ends with an internal error, through Fail).
	Event(ev *tasks.Event) error
	// KeepAlive writes a keep-alive (a binding whose transport keeps its
	// streams alive itself does nothing).
	KeepAlive() error
	// Fail writes the error that ends the stream (it started: the error
	// is an event of the stream, not an answer).
	Fail(r *Refusal)
}

// heldSink is a Sink that can write an event without sending it yet
// (sseSink): Stream.Run uses it while more events are already queued, so
// that events produced together (a task's snapshot and its WORKING
// update, an answer's artifact and its COMPLETED status) leave in one
// write instead of one system call each. The last queued event is
// written with Event, which sends everything, unless the stream's end is
// queued behind it: then the end of the response sends it (net/http
// flushes what is left with the terminator when the handler returns,
// under the write deadline the SSE handler leaves set for it) or Fail
// does; nothing waits for an event that is not already there.
type heldSink interface {
	EventHeld(ev *tasks.Event) error
}

// invoke runs the operation of c with decoded params, one of the request
// types a2a.DecodeParams returns: it is the dispatch of the bindings that
// decode requests generically (JSON-RPC and HTTP+JSON). A streaming
// operation returns its stream, any other its answer.
func invoke(ctx context.Context, h Operations, c *Call, params any) (any, *Stream, error) {
	switch r := params.(type) {
	case *a2a.SendMessageRequest:
		if c.Op == a2a.OpSendStreamingMessage {
			st, err := h.SendStreamingMessage(ctx, c, r)
			return nil, st, err
		}
		res, err := h.SendMessage(ctx, c, r)
		return res, nil, err
	case *a2a.SubscribeToTaskRequest:
		st, err := h.SubscribeToTask(ctx, c, r)
		return nil, st, err
	case *a2a.GetTaskRequest:
		res, err := h.GetTask(ctx, c, r)
		return res, nil, err
	case *a2a.ListTasksRequest:
		res, err := h.ListTasks(ctx, c, r)
		return res, nil, err
	case *a2a.CancelTaskRequest:
		res, err := h.CancelTask(ctx, c, r)
		return res, nil, err
	case *a2a.TaskPushNotificationConfig:
		res, err := h.CreateTaskPushNotificationConfig(ctx, c, r)
		return res, nil, err
	case *a2a.GetTaskPushNotificationConfigRequest:
		res, err := h.GetTaskPushNotificationConfig(ctx, c, r)
		return res, nil, err
	case *a2a.ListTaskPushNotificationConfigsRequest:
		res, err := h.ListTaskPushNotificationConfigs(ctx, c, r)
		return res, nil, err
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		return nil, nil, h.DeleteTaskPushNotificationConfig(ctx, c, r)
	case *a2a.GetExtendedAgentCardRequest:
		res, err := h.GetExtendedAgentCard(ctx, c, r)
		return res, nil, err
	}
	return nil, nil, refusal(a2a.ErrMethodNotFound(c.Method))
}
