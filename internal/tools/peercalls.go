package tools

import (
	"context"
	"errors"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// The tools reach peers only through these wrappers: each request is
// handed to the call's recorders (resolved.rec: exchanged; the audit log
// writes one record per request), a request refused with HTTP 401 by a
// peer whose token comes from token_file, token_command or oauth2 is tried
// once more after the token was read or fetched again, and a refusal by a
// peer whose card asks for OAuth 2.0 without oauth2 configured says what
// to set (explainAuth).

// sendMessage calls SendMessage.
func (eng *outbound) sendMessage(ctx context.Context, target *resolved, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	for retried := false; ; retried = true {
		x := peerRequest{method: "SendMessage", start: eng.now(), taskID: req.Message.TaskID, contextID: req.Message.ContextID, reqBytes: payloadSize(req)}
		resp, err := target.peer.SendMessage(ctx, req)
		if err == nil {
			x.resBytes = payloadSize(resp)
			switch {
			case resp.Task != nil:
				x.taskID, x.contextID = resp.Task.ID, resp.Task.ContextID
			case resp.Message != nil:
				x.taskID, x.contextID = firstNonEmpty(resp.Message.TaskID, x.taskID), firstNonEmpty(resp.Message.ContextID, x.contextID)
			}
		}
		target.rec.exchanged(target, x, err)
		if err != nil && !retried && eng.refreshOn401(ctx, target, err) {
			continue
		}
		return resp, eng.explainAuth(ctx, target, err)
	}
}

// taskCall calls GetTask or CancelTask; a cancel carries the delegation
// chain chainID, when given, in its metadata (so it reaches only tasks of
// that tree).
func (eng *outbound) taskCall(ctx context.Context, target *resolved, method, taskID, chainID string) (*a2a.Task, error) {
	for retried := false; ; retried = true {
		x := peerRequest{method: method, start: eng.now(), taskID: taskID}
		var task *a2a.Task
		var err error
		if method == "CancelTask" {
			req := &a2a.CancelTaskRequest{ID: taskID}
			if chainID != "" {
				req.Metadata = map[string]any{security.MetaChainID: chainID}
			}
			x.reqBytes = payloadSize(req)
			task, err = target.peer.CancelTask(ctx, req)
		} else {
			req := &a2a.GetTaskRequest{ID: taskID}
			x.reqBytes = payloadSize(req)
			task, err = target.peer.GetTask(ctx, req)
		}
		if err == nil {
			x.contextID, x.resBytes = task.ContextID, payloadSize(task)
		}
		target.rec.exchanged(target, x, err)
		if err != nil && !retried && eng.refreshOn401(ctx, target, err) {
			continue
		}
		return task, eng.explainAuth(ctx, target, err)
	}
}

// getTask calls GetTask.
func (eng *outbound) getTask(ctx context.Context, target *resolved, taskID string) (*a2a.Task, error) {
	return eng.taskCall(ctx, target, "GetTask", taskID, "")
}

// cancelTask calls CancelTask, for the delegation chain chainID ("" for
// none).
func (eng *outbound) cancelTask(ctx context.Context, target *resolved, taskID, chainID string) (*a2a.Task, error) {
	return eng.taskCall(ctx, target, "CancelTask", taskID, chainID)
}

// streamMessage calls SendStreamingMessage, handing every event to fn.
func (eng *outbound) streamMessage(ctx context.Context, target *resolved, req *a2a.SendMessageRequest, fn func(client.Event) error) error {
	return eng.streamCall(ctx, target, "SendStreamingMessage", req.Message.TaskID, req.Message.ContextID, payloadSize(req),
		func(fn func(client.Event) error) error { return target.peer.SendStreamingMessage(ctx, req, fn) }, fn)
}

// subscribe calls SubscribeToTask, handing every event to fn.
func (eng *outbound) subscribe(ctx context.Context, target *resolved, taskID string, fn func(client.Event) error) error {
	req := &a2a.SubscribeToTaskRequest{ID: taskID}
	return eng.streamCall(ctx, target, "SubscribeToTask", taskID, "", payloadSize(req),
		func(fn func(client.Event) error) error { return target.peer.SubscribeToTask(ctx, req, fn) }, fn)
}

// streamCall runs one streaming request. A 401 is retried only before any
// event arrived (the peer refused the request as a whole).
func (eng *outbound) streamCall(ctx context.Context, target *resolved, method, taskID, contextID string, reqBytes int64,
	run func(func(client.Event) error) error, fn func(client.Event) error) error {
	for retried := false; ; retried = true {
		x := peerRequest{method: method, start: eng.now(), taskID: taskID, contextID: contextID, reqBytes: reqBytes}
		events, final := 0, false
		err := run(func(ev client.Event) error {
			events++
			final = final || ev.Final
			x.resBytes += payloadSize(ev.Response)
			if id := ev.Response.TaskID(); id != "" {
				x.taskID = id
			}
			if id := ev.Response.ContextID(); id != "" {
				x.contextID = id
			}
			return fn(ev)
		})
		audited := err
		if final && errors.Is(err, context.Canceled) {
			audited = nil // we left after the last event (see finishLine)
		}
		target.rec.exchanged(target, x, audited)
		if err != nil && events == 0 && !retried && eng.refreshOn401(ctx, target, err) {
			continue
		}
		return eng.explainAuth(ctx, target, err)
	}
}

// card returns the peer's card (cached while fresh). It is not audited:
// a cached card makes no request; list and discover audit their own
// fetches.
func (eng *outbound) card(ctx context.Context, target *resolved) (*client.CardInfo, error) {
	info, err := target.peer.Card(ctx)
	if err != nil && eng.refreshOn401(ctx, target, err) {
		info, err = target.peer.Card(ctx)
	}
	return info, err
}

// fetchCard fetches the card now (a conditional request when a copy is
// cached) and audits the request.
func (eng *outbound) fetchCard(ctx context.Context, target *resolved) (*client.CardInfo, error) {
	x := peerRequest{method: "card", start: eng.now()}
	info, err := target.peer.Refresh(ctx)
	if err == nil && !info.Revalidated {
		x.resBytes = payloadSize(info.Card)
	}
	target.rec.exchanged(target, x, err)
	return info, err
}
