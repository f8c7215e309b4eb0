package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// service is the core of the handler: the A2A operations on the task
// manager for an admitted, authorized caller, with the checks that belong
// to one operation — a message's limits, the trust gate and the loop
// guards of a send, the SSRF guard of a webhook, the caller's scope. It
// answers in v1.0 shapes; errors are *Refusal.
type service struct {
	opts *Options
	log  hclog.Logger
	card *cardHandler
	// inputModes is CardConfig.InputModes, parsed once.
	inputModes mediaMatcher
}

var _ Operations = (*service)(nil)

// prepareSend checks a send and turns it into task-manager parameters:
// message limits, inline push config, trace context and the loop guards
// (the trust gate is pipeline.Authorize's, before the message is
// decoded).
func (s *service) prepareSend(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (tasks.SendParams, *Refusal) {
	msg := &req.Message
	c.TaskID, c.ContextID = msg.TaskID, msg.ContextID
	if e := s.checkMessage(msg); e != nil {
		return tasks.SendParams{}, refusal(e)
	}
	sp := tasks.SendParams{Caller: c.Caller, Scope: c.scope(), Request: req, Trace: s.turnTrace(ctx, c)}
	if cfg := req.Configuration; cfg != nil && cfg.TaskPushNotificationConfig != nil {
		if !s.opts.Push.Enabled {
			e := a2a.ErrPushNotSupported()
			e.Message = "configuration.taskPushNotificationConfig: " + e.Message + "; send the message without a push config"
			return sp, refusal(e)
		}
		if r := permit(s.opts, c.Method+" with configuration.taskPushNotificationConfig", c.Op, security.PermPushConfig, c.Caller); r != nil {
			return sp, r
		}
		pc := cfg.TaskPushNotificationConfig
		if e := s.checkPushURL(ctx, "configuration.taskPushNotificationConfig.url", pc.URL); e != nil {
			return sp, refusal(e)
		}
		sp.PushConfig = pc
	}
	if msg.ContextID == "" && msg.TaskID == "" && s.opts.Turns != nil {
		// A new conversation: name it now so its first turn counts.
		sp.NewContextID = a2a.NewID()
	}
	reject, e := s.loopGuard(ctx, c, msg, sp.NewContextID)
	if e != nil {
		return sp, refusal(e)
	}
	sp.Reject = reject
	return sp, nil
}

// turnTrace is the trace of the turn a send starts: the span recording the
// request when export is on, else the caller's trace, else a new trace, so
// that the host call, the agent's tool calls and the task's webhooks share
// one trace id.
func (s *service) turnTrace(ctx context.Context, c *Call) tracing.Context {
	if s.opts.Tracer.Enabled() {
		if sp := tracing.SpanFromContext(ctx); sp.Traceparent() != "" {
			return sp.Context()
		}
	}
	tc := c.Trace
	if tc.Traceparent == "" {
		tc.Traceparent = tracing.NewRoot()
	}
	return tc
}

// loopGuard returns why a message must be rejected to stop an
// agent↔agent loop, or "". Malformed chain metadata is an invalid-params
// error: a peer must not be able to slip past the depth limit with it.
func (s *service) loopGuard(ctx context.Context, c *Call, msg *a2a.Message, newContextID string) (string, *a2a.Error) {
	if max := s.opts.MaxDelegationDepth; max >= 0 {
		chain, err := security.ChainFromMetadata(msg.Metadata)
		if err != nil {
			return "", a2a.ErrInvalidParams("message.metadata", err.Error())
		}
		if err := security.CheckDepth(chain, max); err != nil {
			s.log.Warn("rejected a message whose delegation chain is too deep", c.logArgs("chain_id", chain.ID, "depth", chain.Depth)...)
			return fmt.Sprintf("Rejected to stop a delegation loop: delegation chain %s is %d hops deep, over this agent's limit. "+
				"Answer from what you have instead of delegating further.", chain.ID, chain.Depth), nil
		}
	}
	g := s.opts.Turns
	if g == nil {
		return "", nil
	}
	cid := msg.ContextID
	if cid == "" {
		cid = newContextID
	}
	if cid == "" && msg.TaskID != "" {
		// A continuation names only its task: count the turn in the task's
		// context. An unknown task is left for the task manager to refuse.
		if t, err := s.opts.Tasks.Get(ctx, c.scope(), &a2a.GetTaskRequest{ID: msg.TaskID, HistoryLength: a2a.Int32(0)}); err == nil {
			cid = t.ContextID
		}
	}
	if cid == "" {
		return "", nil
	}
	turn, ok := g.Admit(cid)
	if ok {
		c.turnContext = cid
	}
	if !ok {
		s.log.Warn("rejected a message over the per-conversation turn cap", c.logArgs("turn_context_id", cid, "turn", turn)...)
		return fmt.Sprintf("Rejected to stop an agent-to-agent loop: conversation %s reached its cap of %d turns (this would be turn %d). "+
			"Start a new conversation (omit contextId), or ask the agent's operator to raise A2A_MAX_PINGPONG_TURNS.",
			cid, g.Max(), turn), nil
	}
	return "", nil
}

// releaseTurn gives back the turn counted for a send the task manager then
// refused, so refused messages (e.g. another client's contextId) cannot use
// up a conversation's turns.
func (s *service) releaseTurn(c *Call) {
	if s.opts.Turns != nil && c.turnContext != "" {
		s.opts.Turns.Release(c.turnContext)
	}
}

// checkPushURL runs a webhook URL through the SSRF guard.
func (s *service) checkPushURL(ctx context.Context, field, url string) *a2a.Error {
	if s.opts.Push.CheckURL == nil {
		return nil
	}
	if err := s.opts.Push.CheckURL(ctx, url); err != nil {
		return a2a.ErrInvalidParams(field, fmt.Sprintf(
			"webhook URL %q is refused: %v; use a public http(s) URL, or ask the agent's operator to allow loopback or private addresses (A2A_ALLOW_LOOPBACK_URLS, A2A_ALLOW_PRIVATE_URLS)",
			url, err))
	}
	return nil
}

func (s *service) SendMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	sp, r := s.prepareSend(ctx, c, req)
	if r != nil {
		return nil, r
	}
	resp, err := s.opts.Tasks.Send(ctx, sp)
	if err != nil {
		s.releaseTurn(c)
		return nil, s.taskError(c, err)
	}
	if t := resp.Task; t != nil {
		c.TaskID, c.ContextID = t.ID, t.ContextID
	} else if m := resp.Message; m != nil {
		c.ContextID = m.ContextID
	}
	return resp, nil
}

func (s *service) SendStreamingMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*Stream, error) {
	sp, r := s.prepareSend(ctx, c, req)
	if r != nil {
		return nil, r
	}
	sub, err := s.opts.Tasks.Stream(ctx, sp)
	if err != nil {
		s.releaseTurn(c)
		return nil, s.taskError(c, err)
	}
	return &Stream{sub: sub}, nil
}

func (s *service) SubscribeToTask(ctx context.Context, c *Call, req *a2a.SubscribeToTaskRequest) (*Stream, error) {
	c.TaskID = req.ID
	sub, err := s.opts.Tasks.Subscribe(ctx, c.scope(), req)
	if err != nil {
		return nil, s.taskError(c, err)
	}
	return &Stream{sub: sub}, nil
}

func (s *service) GetTask(ctx context.Context, c *Call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	c.TaskID = req.ID
	t, err := s.opts.Tasks.Get(ctx, c.scope(), req)
	if err != nil {
		return nil, s.taskError(c, err)
	}
	c.ContextID = t.ContextID
	return t, nil
}

func (s *service) ListTasks(ctx context.Context, c *Call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c.ContextID = req.ContextID
	res, err := s.opts.Tasks.List(ctx, c.scope(), req)
	if err != nil {
		return nil, s.taskError(c, err)
	}
	return res, nil
}

func (s *service) CancelTask(ctx context.Context, c *Call, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	c.TaskID = req.ID
	t, err := s.opts.Tasks.Cancel(ctx, c.scope(), req)
	if err != nil {
		return nil, s.taskError(c, err)
	}
	c.ContextID = t.ContextID
	if g := s.opts.Turns; g != nil && t.ContextID != "" {
		// A human or agent that cancels has broken the loop, if any.
		g.Reset(t.ContextID)
	}
	s.log.Info("task canceled by its client", c.logArgs()...)
	return t, nil
}

func (s *service) CreateTaskPushNotificationConfig(ctx context.Context, c *Call, cfg *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	c.TaskID = cfg.TaskID
	if e := s.checkPushURL(ctx, "url", cfg.URL); e != nil {
		return nil, refusal(e)
	}
	res, err := s.opts.Tasks.CreatePushConfig(ctx, c.scope(), c.Caller.ID, *cfg)
	if err != nil {
		return nil, s.taskError(c, err)
	}
	return res, nil
}

func (s *service) GetTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	c.TaskID = req.TaskID
	res, err := s.opts.Tasks.GetPushConfig(ctx, c.scope(), req)
	if err != nil {
		return nil, s.taskError(c, err)
	}
	return res, nil
}

func (s *service) ListTaskPushNotificationConfigs(ctx context.Context, c *Call, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	c.TaskID = req.TaskID
	res, err := s.opts.Tasks.ListPushConfigs(ctx, c.scope(), req)
	if err != nil {
		return nil, s.taskError(c, err)
	}
	return res, nil
}

func (s *service) DeleteTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	c.TaskID = req.TaskID
	if err := s.opts.Tasks.DeletePushConfig(ctx, c.scope(), req); err != nil {
		return s.taskError(c, err)
	}
	return nil
}

// GetExtendedAgentCard answers authenticated callers (and local ones, by
// the policy's extended-card permission) with the extended card for the
// endpoint the request came in on.
func (s *service) GetExtendedAgentCard(ctx context.Context, c *Call, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if !c.Caller.Authenticated && c.Caller.Tier != security.TierLocal {
		return nil, refusal(a2a.NewError(a2a.CodeUnauthorized, reasonUnauthenticated,
			"The extended agent card is only shown to authenticated callers: send \"Authorization: Bearer <token>\""))
	}
	return s.card.buildCard(s.card.endpointURL(c.Host, c.TLS, c.LocalAddr), s.card.skills(ctx, s.log), true), nil
}

// taskError converts a task-manager error. Internal failures are logged
// with their detail and answered with a generic message: store and host
// errors are not the peer's business.
func (s *service) taskError(c *Call, err error) *Refusal {
	e := toA2AError(err)
	var gone *tasks.AbandonedError
	if errors.As(err, &gone) {
		// The caller hung up (or the server is stopping) before the answer:
		// not a failure of ours, and the task carries on without it.
		c.TaskID, c.ContextID = gone.TaskID, gone.ContextID
		s.log.Info("the caller went away before the answer; the task carries on", c.logArgs("error", gone.Err)...)
	} else if e.Code == a2a.CodeInternalError {
		s.log.Error("task manager failed", c.logArgs("error", err)...)
		if e.Reason == "INTERNAL_ERROR" && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return refusal(errInternal())
		}
	}
	return refusal(e)
}
