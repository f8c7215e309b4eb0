package testharness

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Behavior decides what a turn does. Play runs in the conversation's worker
// goroutine; it sends output through t and returns when the turn is over:
//
//   - nil ends the turn with ProcessingComplete SUCCESS (or without it,
//     when the turn's last output went with Turn.EndWith and the plugin
//     knows protocol 1.1: that Send ended the turn);
//   - an error made by Failed or Rejected ends it with FAILURE or REJECTED;
//   - ErrNoComplete ends it without ProcessingComplete;
//   - any error after ctx was cancelled (CancelTurn, Agent.Close) ends it
//     with CANCELLED;
//   - any other error ends it with FAILURE and the error's text.
type Behavior interface {
	Play(ctx context.Context, t *Turn) error
}

// BehaviorFunc adapts a function to Behavior.
type BehaviorFunc func(ctx context.Context, t *Turn) error

// Play calls f.
func (f BehaviorFunc) Play(ctx context.Context, t *Turn) error { return f(ctx, t) }

// ToolLister is implemented by behaviors that bring the host's tool
// registry (Scenario does).
type ToolLister interface {
	HostTools() []*pb.ToolDefinition
}

// Completer is implemented by behaviors that answer the host's one-shot
// model call (Scenario does, when it has completion rules).
type Completer interface {
	Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error)
}

// ToolCaller calls a tool on the host's toolsets (the plugins' tools). The
// harness Host provides one; call_tool actions use it.
type ToolCaller func(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error)

// TurnError ends a turn with a given outcome and message.
type TurnError struct {
	Outcome pb.Outcome
	Message string
}

// Error returns the message with the outcome.
func (e *TurnError) Error() string {
	return fmt.Sprintf("turn %s: %s", e.Outcome, e.Message)
}

// Failed returns an error that ends the turn with FAILURE and message.
func Failed(message string) error {
	return &TurnError{Outcome: pb.Outcome_OUTCOME_FAILURE, Message: message}
}

// Rejected returns an error that ends the turn with REJECTED and reason.
func Rejected(reason string) error {
	return &TurnError{Outcome: pb.Outcome_OUTCOME_REJECTED, Message: reason}
}

// ErrNoComplete ends a turn without ProcessingComplete, like a host that
// went silent.
var ErrNoComplete = errors.New("testharness: turn ends without ProcessingComplete")

// AgentOptions configure an Agent. The zero value is usable.
type AgentOptions struct {
	// Tools overrides the tool registry the behavior brings.
	Tools []*pb.ToolDefinition
	// Recorder receives every call; nil means a new one (see
	// Agent.Recorder).
	Recorder *Recorder
	// Logger receives one line per turn and every failed platform call.
	Logger Logger
	// CallTool serves call_tool actions; the harness Host sets it.
	CallTool ToolCaller
	// CallTimeout bounds each platform call (Send, ProcessingComplete);
	// default 30s.
	CallTimeout time.Duration
	// CannotCancel plays a host whose CancelTurn cannot stop a running turn
	// (contract 1.3), like OpenClaw: the agent is then a
	// plugin.HostWithoutRunningCancel that says so.
	CannotCancel bool
}

// Agent is a simulated agent host session: it implements plugin.HostHandler
// and plays each inbound message as a turn of its Behavior.
//
// HandleMessage returns at once with a turn id; the turn then plays in a
// worker per conversation (agent_id and chat_id): turns of one chat of
// one agent run one after the other in arrival order, other chats and
// other agents' chats run in parallel. Output goes to the platform
// the agent is attached to (Attach), so the same agent works with an
// in-process platform or with a launched plugin's handle.
type Agent struct {
	behavior Behavior
	opts     AgentOptions
	rec      *Recorder
	log      Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	platforms map[string]plugin.Platform
	fallback  plugin.Platform
	caller    ToolCaller
	convs     map[convKey]*conversation
	idle      chan *conversation // hands a conversation to a lingering worker
	seq       int
	pending   int
	closed    bool
}

var _ plugin.HostHandler = (*Agent)(nil)

// convKey names a conversation: a chat of one host agent. Two agents
// may well see the same chat id (a context id is the peer's to choose),
// and one agent's turn must not wait behind another's.
type convKey struct{ agent, chat string }

// conversation is the queue and state of one chat of one agent.
type conversation struct {
	queue   []*turnState
	running *turnState
	count   int  // messages received, for {{turn}}
	working bool // a worker goroutine owns the queue
}

type turnState struct {
	turn   *Turn
	ctx    context.Context
	cancel context.CancelFunc
	// finished is set (under Agent.mu) once the behavior returned: from
	// then on the outcome is decided and CancelTurn no longer applies.
	finished bool
}

// NewAgent returns an agent playing b. A behavior with a Validate() error
// method (Scenario) is validated first.
func NewAgent(b Behavior, opts AgentOptions) (*Agent, error) {
	if b == nil {
		return nil, errors.New("testharness: NewAgent needs a Behavior (e.g. EchoScenario())")
	}
	if v, ok := b.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	rec := opts.Recorder
	if rec == nil {
		rec = NewRecorder()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{
		behavior:  b,
		opts:      opts,
		rec:       rec,
		log:       orNop(opts.Logger),
		ctx:       ctx,
		cancel:    cancel,
		platforms: map[string]plugin.Platform{},
		caller:    opts.CallTool,
		convs:     map[convKey]*conversation{},
		idle:      make(chan *conversation),
	}, nil
}

// Recorder returns the recorder the agent writes to.
func (a *Agent) Recorder() *Recorder { return a.rec }

// Attach sets the platform that receives the output of every turn whose
// platform has no platform attached by name (AttachAs). Attaching again
// replaces it (e.g. after a plugin restart).
func (a *Agent) Attach(p plugin.Platform) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fallback = p
}

// AttachAs sets the platform that receives the output of turns whose
// HandleMessageRequest.platform is name. nil detaches it.
func (a *Agent) AttachAs(name string, p plugin.Platform) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p == nil {
		delete(a.platforms, name)
		return
	}
	a.platforms[name] = p
}

// SetToolCaller sets what serves call_tool actions.
func (a *Agent) SetToolCaller(c ToolCaller) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.caller = c
}

func (a *Agent) platformFor(name string) plugin.Platform {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.platforms[name]; ok {
		return p
	}
	return a.fallback
}

// Handler is the agent as a host's callback service handler, with exactly
// the optional RPCs it supports: RecordDelegation always, Complete only
// when its behavior has a model (a Completer; a Scenario with
// completions). A host serves it (host-sdk's Options.Host), and HostInfo
// is derived from it (plugin.HostInfoOf), so the host never claims an RPC
// it cannot answer.
func (a *Agent) Handler() plugin.HostHandler {
	if a.hasModel() {
		return a
	}
	return agentWithoutModel{a}
}

// hasModel reports whether the behavior answers Complete.
func (a *Agent) hasModel() bool {
	if s, ok := a.behavior.(*Scenario); ok && s.Completions == nil {
		return false
	}
	_, ok := a.behavior.(Completer)
	return ok
}

// OptionalRPCs lists the optional host RPCs this agent answers
// (HostInfo.optional_rpcs, as host-sdk derives it from Handler).
func (a *Agent) OptionalRPCs() []string {
	return plugin.HostInfoOf(a.Handler(), nil).GetOptionalRpcs()
}

// CancelTurnUnsupported reports AgentOptions.CannotCancel: the agent is a
// plugin.HostWithoutRunningCancel.
func (a *Agent) CancelTurnUnsupported() bool { return a.opts.CannotCancel }

// agentWithoutModel is an Agent whose behavior has no model: every method
// of Agent's handler but Complete.
type agentWithoutModel struct{ a *Agent }

func (w agentWithoutModel) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	return w.a.HandleMessage(ctx, req)
}

func (w agentWithoutModel) CancelTurn(ctx context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	return w.a.CancelTurn(ctx, req)
}

func (w agentWithoutModel) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return w.a.ListTools(ctx)
}

func (w agentWithoutModel) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	return w.a.RecordDelegation(ctx, req)
}

func (w agentWithoutModel) CancelTurnUnsupported() bool { return w.a.CancelTurnUnsupported() }

var (
	_ plugin.HostWithComplete         = (*Agent)(nil)
	_ plugin.HostWithRecordDelegation = agentWithoutModel{}
	_ plugin.HostWithoutRunningCancel = agentWithoutModel{}
)

// HandleMessage accepts an inbound message and queues its turn.
func (a *Agent) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	start := time.Now()
	if req.GetChatId() == "" {
		err := status.Error(codes.InvalidArgument, "HandleMessage: chat_id is required")
		a.rec.Record(Call{Time: start, Kind: KindHandleMessage, Request: req, Err: err})
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		err := status.Error(codes.Unavailable, "HandleMessage: the agent is shutting down")
		a.rec.Record(Call{Time: start, Kind: KindHandleMessage, Request: req, Err: err})
		return nil, err
	}
	key := convKey{req.GetAgentId(), req.GetChatId()}
	c := a.convs[key]
	if c == nil {
		c = &conversation{}
		a.convs[key] = c
	}
	c.count++
	a.seq++
	t := &Turn{Request: req, ID: fmt.Sprintf("turn-%d", a.seq), N: c.count, agent: a}
	tctx, cancel := context.WithCancel(a.ctx)
	c.queue = append(c.queue, &turnState{turn: t, ctx: tctx, cancel: cancel})
	a.pending++
	resp := &pb.HandleMessageResponse{TurnId: t.ID}
	a.rec.Record(Call{Time: start, Duration: time.Since(start), Kind: KindHandleMessage, TurnID: t.ID, Request: req, Response: resp})
	if !c.working {
		c.working = true
		select {
		case a.idle <- c: // a worker between conversations takes it
		default:
			a.wg.Add(1)
			go a.worker(c)
		}
	}
	return resp, nil
}

// workerLinger is how long a worker that ran out of turns waits for
// another conversation before it exits. Reusing a worker spares a busy
// host a new goroutine per conversation, whose stack would grow again
// through every Send.
const workerLinger = time.Second

// worker plays conversation c, then others handed to it while it
// lingers. Each conversation has at most one worker at a time.
func (a *Agent) worker(c *conversation) {
	defer a.wg.Done()
	linger := time.NewTimer(workerLinger)
	defer linger.Stop()
	for {
		a.work(c)
		linger.Reset(workerLinger)
		select {
		case c = <-a.idle:
		case <-linger.C:
			return
		case <-a.ctx.Done():
			return
		}
	}
}

// work plays the queued turns of one conversation until its queue is
// empty.
func (a *Agent) work(c *conversation) {
	for {
		a.mu.Lock()
		if len(c.queue) == 0 {
			c.working = false
			a.mu.Unlock()
			return
		}
		ts := c.queue[0]
		// Let the played turn (and its request) go: a conversation
		// outlives its turns, and a drained queue slice would otherwise
		// keep the last one reachable.
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if len(c.queue) == 0 {
			c.queue = nil
		}
		c.running = ts
		a.mu.Unlock()

		a.play(ts)
		ts.cancel()

		a.mu.Lock()
		c.running = nil
		a.pending--
		a.mu.Unlock()
	}
}

func (a *Agent) play(ts *turnState) {
	t := ts.turn
	req := t.Request
	a.log.Logf("agent: %s chat=%s task=%s: %q", t.ID, req.GetChatId(), req.GetTaskId(), truncate(SenderText(req), 80))
	var err error
	if err = ts.ctx.Err(); err == nil {
		err = a.safePlay(ts.ctx, t)
	}
	a.mu.Lock()
	ts.finished = true
	a.mu.Unlock()
	outcome, msg := pb.Outcome_OUTCOME_SUCCESS, ""
	var te *TurnError
	switch {
	case err == nil && t.ended:
		return // the last Send carried ends_turn
	case err == nil:
	case errors.Is(err, ErrNoComplete):
		a.log.Logf("agent: %s ends without ProcessingComplete", t.ID)
		return
	case ts.ctx.Err() != nil:
		outcome = pb.Outcome_OUTCOME_CANCELLED
	case errors.As(err, &te):
		outcome, msg = te.Outcome, te.Message
	default:
		outcome, msg = pb.Outcome_OUTCOME_FAILURE, err.Error()
	}
	if outcome != pb.Outcome_OUTCOME_SUCCESS {
		a.log.Logf("agent: %s ends %s %s", t.ID, outcome, msg)
	}
	// The turn's context may be cancelled; the platform must still hear
	// that the turn ended.
	ctx := context.WithoutCancel(ts.ctx)
	_ = t.complete(ctx, outcome, msg)
}

func (a *Agent) safePlay(ctx context.Context, t *Turn) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("behavior panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return a.behavior.Play(ctx, t)
}

// CancelTurn stops the running turn of the chat (when task_id is set, only
// if it is that task's turn) and drops a queued turn of that task. The
// stopped turns end with ProcessingComplete CANCELLED. It does not wait
// for them to end.
func (a *Agent) CancelTurn(ctx context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	start := time.Now()
	cancelled := false
	a.mu.Lock()
	if c := a.convs[convKey{req.GetAgentId(), req.GetChatId()}]; c != nil {
		try := func(ts *turnState) {
			if !ts.finished && ts.ctx.Err() == nil {
				ts.cancel()
				cancelled = true
			}
		}
		if r := c.running; r != nil && (req.GetTaskId() == "" || r.turn.Request.GetTaskId() == req.GetTaskId()) {
			try(r)
		}
		if req.GetTaskId() != "" {
			for _, q := range c.queue {
				if q.turn.Request.GetTaskId() == req.GetTaskId() {
					try(q)
				}
			}
		}
	}
	a.mu.Unlock()
	resp := &pb.CancelTurnResponse{Cancelled: cancelled}
	a.rec.Record(Call{Time: start, Duration: time.Since(start), Kind: KindCancelTurn, Request: req, Response: resp})
	a.log.Logf("agent: cancel chat=%s task=%s reason=%q: cancelled=%t", req.GetChatId(), req.GetTaskId(), req.GetReason(), cancelled)
	return resp, nil
}

// ListTools returns the host's tool registry: AgentOptions.Tools, else the
// behavior's (a Scenario's tools), else none.
func (a *Agent) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	start := time.Now()
	tools := a.opts.Tools
	if tools == nil {
		if l, ok := a.behavior.(ToolLister); ok {
			tools = l.HostTools()
		}
	}
	a.rec.Record(Call{Time: start, Duration: time.Since(start), Kind: KindListTools,
		Request: &pb.HostServiceListToolsRequest{}, Response: &pb.HostServiceListToolsResponse{Tools: tools}})
	return tools, nil
}

// Complete answers the one-shot model call through the behavior, or
// Unimplemented when the behavior has no model.
func (a *Agent) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	start := time.Now()
	var resp *pb.CompleteResponse
	var err error
	if c, ok := a.behavior.(Completer); ok {
		resp, err = c.Complete(ctx, req)
	} else {
		err = status.Error(codes.Unimplemented, "Complete: this host has no model")
	}
	call := Call{Time: start, Duration: time.Since(start), Kind: KindComplete, Request: req, Err: err}
	if err == nil {
		call.Response = resp
	}
	a.rec.Record(call)
	return resp, err
}

// RecordDelegation records the delegation and acknowledges it.
func (a *Agent) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	resp := &pb.RecordDelegationResponse{}
	a.rec.Record(Call{Kind: KindRecordDelegation, Request: req, Response: resp})
	return resp, nil
}

// Busy returns the number of turns running or queued.
func (a *Agent) Busy() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pending
}

// WaitIdle waits until no turn is running or queued.
func (a *Agent) WaitIdle(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for a.Busy() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("agent still has %d turns: %w", a.Busy(), ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// Close cancels every running and queued turn (they end CANCELLED), waits
// for the workers to finish and refuses new messages. It is idempotent.
func (a *Agent) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
}

// Turn is one inbound message being played. A Behavior uses it to send
// output and call tools; every Send it makes is recorded.
type Turn struct {
	// Request is the inbound message.
	Request *pb.HandleMessageRequest
	// ID is the host-assigned turn id returned by HandleMessage.
	ID string
	// N is the position of this message in its chat, from 1.
	N int

	agent *Agent
	calls int
	ended bool // a Send with ends_turn ended the turn
}

// Logf logs through the agent's logger, prefixed with the turn id.
func (t *Turn) Logf(format string, args ...any) {
	t.agent.log.Logf(t.ID+": "+format, args...)
}

// Send delivers output to the platform. Empty platform, chat_id, task_id
// and agent_id are filled from the inbound message.
func (t *Turn) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	if req.Platform == "" {
		req.Platform = t.Request.GetPlatform()
	}
	if req.AgentId == "" {
		req.AgentId = t.Request.GetAgentId()
	}
	if req.ChatId == "" {
		req.ChatId = t.Request.GetChatId()
	}
	if req.TaskId == "" {
		req.TaskId = t.Request.GetTaskId()
	}
	start := time.Now()
	p := t.agent.platformFor(t.Request.GetPlatform())
	var resp *pb.SendResponse
	var err error
	if p == nil {
		err = fmt.Errorf("no platform attached for %q (call Agent.Attach)", t.Request.GetPlatform())
	} else {
		cctx, cancel := context.WithTimeout(ctx, t.agent.opts.CallTimeout)
		resp, err = p.Send(cctx, req)
		cancel()
	}
	call := Call{Time: start, Duration: time.Since(start), Kind: KindSend, TurnID: t.ID, Request: req, Err: err}
	if err == nil {
		call.Response = resp
	} else {
		t.Logf("Send %s: %v", req.GetKind(), err)
	}
	t.agent.rec.Record(call)
	if err != nil {
		return nil, fmt.Errorf("send %s: %w", req.GetKind(), err)
	}
	return resp, nil
}

// EndWith sends req as the turn's last output. When the plugin behind the
// platform knows protocol 1.1 (its Describe said protocol_minor 1 or more),
// the Send carries ends_turn, and no ProcessingComplete follows once the
// behavior returns nil (return right after EndWith); otherwise it is a
// plain Send and ProcessingComplete follows as usual. req's kind must be
// FINAL, DIRECT_REPLY, INPUT_REQUIRED or AUTH_REQUIRED.
func (t *Turn) EndWith(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	req.EndsTurn = protocolMinor(t.agent.platformFor(t.Request.GetPlatform()), t.Request.GetPlatform()) >= 1
	resp, err := t.Send(ctx, req)
	if err == nil && req.EndsTurn {
		t.ended = true
	}
	return resp, err
}

// protocolMinor is the contract minor version of the plugin behind p for
// turns of platform name, for platforms that know it (host-sdk's handles
// and the harness Host's router do); 0 otherwise.
func protocolMinor(p plugin.Platform, name string) uint32 {
	switch v := p.(type) {
	case interface{ ProtocolMinorFor(string) uint32 }:
		return v.ProtocolMinorFor(name)
	case interface{ ProtocolMinor() uint32 }:
		return v.ProtocolMinor()
	}
	return 0
}

// SendText sends text of the given kind, with optional extra parts.
func (t *Turn) SendText(ctx context.Context, kind pb.SendKind, text string, parts ...*pb.Part) error {
	_, err := t.Send(ctx, &pb.SendRequest{Kind: kind, Text: text, Parts: parts})
	return err
}

// CallTool calls a tool on the host's toolsets through the agent's
// ToolCaller. An empty call id is filled in.
func (t *Turn) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	t.agent.mu.Lock()
	caller := t.agent.caller
	t.agent.mu.Unlock()
	if caller == nil {
		return nil, errors.New("no tool caller: run the agent under a harness Host or set AgentOptions.CallTool")
	}
	t.calls++
	if req.CallId == "" {
		req.CallId = fmt.Sprintf("%s-call-%d", t.ID, t.calls)
	}
	if req.Platform == "" {
		req.Platform = t.Request.GetPlatform()
	}
	if req.ChatId == "" {
		req.ChatId = t.Request.GetChatId()
	}
	if req.AgentId == "" {
		// The tools know which agent's turn calls them (contract 1.4).
		req.AgentId = t.Request.GetAgentId()
	}
	if progress == nil {
		progress = func(*pb.ToolProgress) error { return nil }
	}
	return caller(ctx, req, progress)
}

func (t *Turn) complete(ctx context.Context, outcome pb.Outcome, msg string) error {
	req := &pb.ProcessingCompleteRequest{
		Platform: t.Request.GetPlatform(), ChatId: t.Request.GetChatId(),
		TaskId: t.Request.GetTaskId(), Outcome: outcome, Error: msg, AgentId: t.Request.GetAgentId(),
	}
	start := time.Now()
	p := t.agent.platformFor(t.Request.GetPlatform())
	var resp *pb.ProcessingCompleteResponse
	var err error
	if p == nil {
		err = fmt.Errorf("no platform attached for %q (call Agent.Attach)", t.Request.GetPlatform())
	} else {
		cctx, cancel := context.WithTimeout(ctx, t.agent.opts.CallTimeout)
		resp, err = p.ProcessingComplete(cctx, req)
		cancel()
	}
	call := Call{Time: start, Duration: time.Since(start), Kind: KindProcessingComplete, TurnID: t.ID, Request: req, Err: err}
	if err == nil {
		call.Response = resp
	} else {
		t.Logf("ProcessingComplete %s: %v", outcome, err)
	}
	t.agent.rec.Record(call)
	return err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
