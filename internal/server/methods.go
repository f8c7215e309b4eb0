package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// emptyObject is the v1.0 result of DeleteTaskPushNotificationConfig
// (google.protobuf.Empty).
var emptyObject = json.RawMessage("{}")

// dispatch runs one decoded, authorised request.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, ex *exchange, params any) {
	ctx := r.Context()
	if s.opts.Tracer.Enabled() {
		defer annotateSpan(r, ex)
	}
	var (
		res any
		e   *a2a.Error
	)
	switch ex.op {
	case a2a.OpSendMessage:
		res, e = s.sendMessage(r, ex, params.(*a2a.SendMessageRequest))
	case a2a.OpSendStreamingMessage:
		s.sendStreamingMessage(w, r, ex, params.(*a2a.SendMessageRequest))
		return
	case a2a.OpSubscribeToTask:
		s.subscribeToTask(w, r, ex, params.(*a2a.SubscribeToTaskRequest))
		return
	case a2a.OpGetTask:
		res, e = s.getTask(ctx, ex, params.(*a2a.GetTaskRequest))
	case a2a.OpListTasks:
		res, e = s.listTasks(ctx, ex, params.(*a2a.ListTasksRequest))
	case a2a.OpCancelTask:
		res, e = s.cancelTask(ctx, ex, params.(*a2a.CancelTaskRequest))
	case a2a.OpCreatePushConfig:
		res, e = s.createPushConfig(ctx, ex, params.(*a2a.TaskPushNotificationConfig))
	case a2a.OpGetPushConfig:
		res, e = s.getPushConfig(ctx, ex, params.(*a2a.GetTaskPushNotificationConfigRequest))
	case a2a.OpListPushConfigs:
		res, e = s.listPushConfigs(ctx, ex, params.(*a2a.ListTaskPushNotificationConfigsRequest))
	case a2a.OpDeletePushConfig:
		res, e = s.deletePushConfig(ctx, ex, params.(*a2a.DeleteTaskPushNotificationConfigRequest))
	case a2a.OpGetExtendedCard:
		res, e = s.extendedCard(r, ex)
	default:
		e = a2a.ErrMethodNotFound(ex.method)
	}
	if e != nil {
		s.refuse(w, ex, http.StatusOK, e)
		return
	}
	s.writeResult(w, rc, ex, res)
}

// prepareSend checks a send and turns it into task-manager parameters:
// message limits, trust gate, inline push config, trace context and the
// loop guards.
func (s *Server) prepareSend(r *http.Request, ex *exchange, req *a2a.SendMessageRequest) (tasks.SendParams, *a2a.Error) {
	msg := &req.Message
	ex.taskID, ex.contextID = msg.TaskID, msg.ContextID
	if e := s.checkMessage(msg); e != nil {
		return tasks.SendParams{}, e
	}
	if !s.opts.Gate.Allows(ex.ident) {
		return tasks.SendParams{}, errUntrusted(ex.ident)
	}
	sp := tasks.SendParams{Caller: ex.ident, Scope: scope(ex.ident), Request: req, Trace: s.turnTrace(r)}
	if c := req.Configuration; c != nil && c.TaskPushNotificationConfig != nil {
		if !s.opts.Push.Enabled {
			e := a2a.ErrPushNotSupported()
			e.Message = "configuration.taskPushNotificationConfig: " + e.Message + "; send the message without a push config"
			return sp, e
		}
		if e := s.permit(ex.method+" with configuration.taskPushNotificationConfig", ex.op, security.PermPushConfig, ex.ident); e != nil {
			return sp, e
		}
		pc := c.TaskPushNotificationConfig
		if e := s.checkPushURL(r.Context(), "configuration.taskPushNotificationConfig.url", pc.URL); e != nil {
			return sp, e
		}
		sp.PushConfig = pc
	}
	if msg.ContextID == "" && msg.TaskID == "" && s.opts.Turns != nil {
		// A new conversation: name it now so its first turn counts.
		sp.NewContextID = a2a.NewID()
	}
	reject, e := s.loopGuard(r.Context(), ex, msg, sp.NewContextID)
	if e != nil {
		return sp, e
	}
	sp.Reject = reject
	return sp, nil
}

// loopGuard returns why a message must be rejected to stop an
// agent↔agent loop, or "". Malformed chain metadata is an invalid-params
// error: a peer must not be able to slip past the depth limit with it.
func (s *Server) loopGuard(ctx context.Context, ex *exchange, msg *a2a.Message, newContextID string) (string, *a2a.Error) {
	if max := s.opts.MaxDelegationDepth; max >= 0 {
		chain, err := security.ChainFromMetadata(msg.Metadata)
		if err != nil {
			return "", a2a.ErrInvalidParams("message.metadata", err.Error())
		}
		if err := security.CheckDepth(chain, max); err != nil {
			s.log.Warn("rejected a message whose delegation chain is too deep", ex.logArgs("chain_id", chain.ID, "depth", chain.Depth)...)
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
		if t, err := s.opts.Tasks.Get(ctx, scope(ex.ident), &a2a.GetTaskRequest{ID: msg.TaskID, HistoryLength: a2a.Int32(0)}); err == nil {
			cid = t.ContextID
		}
	}
	if cid == "" {
		return "", nil
	}
	turn, ok := g.Admit(cid)
	if ok {
		ex.turnContext = cid
	}
	if !ok {
		s.log.Warn("rejected a message over the per-conversation turn cap", ex.logArgs("turn_context_id", cid, "turn", turn)...)
		return fmt.Sprintf("Rejected to stop an agent-to-agent loop: conversation %s reached its cap of %d turns (this would be turn %d). "+
			"Start a new conversation (omit contextId), or ask the agent's operator to raise A2A_MAX_PINGPONG_TURNS.",
			cid, g.Max(), turn), nil
	}
	return "", nil
}

// releaseTurn gives back the turn counted for a send the task manager then
// refused, so refused messages (e.g. another client's contextId) cannot use
// up a conversation's turns.
func (s *Server) releaseTurn(ex *exchange) {
	if s.opts.Turns != nil && ex.turnContext != "" {
		s.opts.Turns.Release(ex.turnContext)
	}
}

// checkPushURL runs a webhook URL through the SSRF guard.
func (s *Server) checkPushURL(ctx context.Context, field, url string) *a2a.Error {
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

func (s *Server) sendMessage(r *http.Request, ex *exchange, req *a2a.SendMessageRequest) (any, *a2a.Error) {
	sp, e := s.prepareSend(r, ex, req)
	if e != nil {
		return nil, e
	}
	resp, err := s.opts.Tasks.Send(r.Context(), sp)
	if err != nil {
		s.releaseTurn(ex)
		return nil, s.taskError(ex, err)
	}
	if t := resp.Task; t != nil {
		ex.taskID, ex.contextID = t.ID, t.ContextID
		if ex.v03 {
			return a2a.ToV03Task(t), nil
		}
	} else if m := resp.Message; m != nil {
		ex.contextID = m.ContextID
		if ex.v03 {
			return a2a.ToV03Message(m), nil
		}
	}
	return resp, nil
}

func (s *Server) getTask(ctx context.Context, ex *exchange, req *a2a.GetTaskRequest) (any, *a2a.Error) {
	ex.taskID = req.ID
	t, err := s.opts.Tasks.Get(ctx, scope(ex.ident), req)
	if err != nil {
		return nil, s.taskError(ex, err)
	}
	ex.contextID = t.ContextID
	if ex.v03 {
		return a2a.ToV03Task(t), nil
	}
	return t, nil
}

func (s *Server) listTasks(ctx context.Context, ex *exchange, req *a2a.ListTasksRequest) (any, *a2a.Error) {
	ex.contextID = req.ContextID
	res, err := s.opts.Tasks.List(ctx, scope(ex.ident), req)
	if err != nil {
		return nil, s.taskError(ex, err)
	}
	return res, nil
}

func (s *Server) cancelTask(ctx context.Context, ex *exchange, req *a2a.CancelTaskRequest) (any, *a2a.Error) {
	ex.taskID = req.ID
	t, err := s.opts.Tasks.Cancel(ctx, scope(ex.ident), req)
	if err != nil {
		return nil, s.taskError(ex, err)
	}
	ex.contextID = t.ContextID
	if g := s.opts.Turns; g != nil && t.ContextID != "" {
		// A human or agent that cancels has broken the loop, if any.
		g.Reset(t.ContextID)
	}
	s.log.Info("task canceled by its client", ex.logArgs()...)
	if ex.v03 {
		return a2a.ToV03Task(t), nil
	}
	return t, nil
}

func (s *Server) createPushConfig(ctx context.Context, ex *exchange, cfg *a2a.TaskPushNotificationConfig) (any, *a2a.Error) {
	ex.taskID = cfg.TaskID
	if e := s.checkPushURL(ctx, "url", cfg.URL); e != nil {
		return nil, e
	}
	res, err := s.opts.Tasks.CreatePushConfig(ctx, scope(ex.ident), ex.ident.ID, *cfg)
	if err != nil {
		return nil, s.taskError(ex, err)
	}
	if ex.v03 {
		return a2a.ToV03PushConfig(res), nil
	}
	return res, nil
}

func (s *Server) getPushConfig(ctx context.Context, ex *exchange, req *a2a.GetTaskPushNotificationConfigRequest) (any, *a2a.Error) {
	ex.taskID = req.TaskID
	res, err := s.opts.Tasks.GetPushConfig(ctx, scope(ex.ident), req)
	if err != nil {
		return nil, s.taskError(ex, err)
	}
	if ex.v03 {
		return a2a.ToV03PushConfig(res), nil
	}
	return res, nil
}

func (s *Server) listPushConfigs(ctx context.Context, ex *exchange, req *a2a.ListTaskPushNotificationConfigsRequest) (any, *a2a.Error) {
	ex.taskID = req.TaskID
	res, err := s.opts.Tasks.ListPushConfigs(ctx, scope(ex.ident), req)
	if err != nil {
		return nil, s.taskError(ex, err)
	}
	if ex.v03 {
		return a2a.ToV03PushConfigList(res), nil
	}
	return res, nil
}

func (s *Server) deletePushConfig(ctx context.Context, ex *exchange, req *a2a.DeleteTaskPushNotificationConfigRequest) (any, *a2a.Error) {
	ex.taskID = req.TaskID
	if err := s.opts.Tasks.DeletePushConfig(ctx, scope(ex.ident), req); err != nil {
		return nil, s.taskError(ex, err)
	}
	if ex.v03 {
		return nil, nil // 0.3 answers null
	}
	return emptyObject, nil
}

func (s *Server) extendedCard(r *http.Request, ex *exchange) (any, *a2a.Error) {
	if !ex.ident.Authenticated && ex.ident.Tier != security.TierLocal {
		return nil, a2a.NewError(a2a.CodeUnauthorized, reasonUnauthenticated,
			"The extended agent card is only shown to authenticated callers: send \"Authorization: Bearer <token>\"")
	}
	card := s.buildCard(s.endpointURL(r), s.skills(r.Context(), s.log), true)
	if ex.v03 {
		return a2a.ToV03Card(card), nil
	}
	return card, nil
}

// taskError converts a task-manager error. Internal failures are logged
// with their detail and answered with a generic message: store and host
// errors are not the peer's business.
func (s *Server) taskError(ex *exchange, err error) *a2a.Error {
	e := toA2AError(err)
	var gone *tasks.AbandonedError
	if errors.As(err, &gone) {
		// The caller hung up (or the server is stopping) before the answer:
		// not a failure of ours, and the task carries on without it.
		ex.taskID, ex.contextID = gone.TaskID, gone.ContextID
		s.log.Info("the caller went away before the answer; the task carries on", ex.logArgs("error", gone.Err)...)
	} else if e.Code == a2a.CodeInternalError {
		s.log.Error("task manager failed", ex.logArgs("error", err)...)
		if e.Reason == "INTERNAL_ERROR" && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return errInternal()
		}
	}
	return e
}
