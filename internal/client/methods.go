package client

import (
	"context"
	"errors"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// SendMessage sends a message and returns the peer's Task or Message. With
// req.Configuration.ReturnImmediately the peer answers at once with the
// task it created; otherwise it answers when the task is terminal or
// interrupted (input or auth required). The call is bounded by the peer's
// timeout.
func (p *Peer) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	cn, tr, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	if req.Message.Role == "" {
		req.Message.Role = a2a.RoleUser
	}
	if req.Message.MessageID == "" {
		req.Message.MessageID = a2a.NewID()
	}
	cn.setTenant(&req.Tenant)
	return tr.sendMessage(ctx, req)
}

// checkSendResponse verifies that exactly one of task and message is set
// and that a task has an id.
func checkSendResponse(r *a2a.SendMessageResponse) error {
	switch {
	case r == nil || (r.Task == nil) == (r.Message == nil):
		return errors.New("expected exactly one of task and message")
	case r.Task != nil && r.Task.ID == "":
		return errors.New("the task has no id")
	}
	return nil
}

// GetTask fetches a task's current state, artifacts and (up to
// req.HistoryLength) history.
func (p *Peer) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	cn, tr, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	cn.setTenant(&req.Tenant)
	return tr.getTask(ctx, req)
}

// CancelTask asks the peer to cancel a task and returns the updated task.
func (p *Peer) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	cn, tr, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	cn.setTenant(&req.Tenant)
	return tr.cancelTask(ctx, req)
}

// ListTasks lists the peer's tasks visible to this client. 0.3 peers have
// no such method: the error is ErrUnsupported.
func (p *Peer) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	cn, tr, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	cn.setTenant(&req.Tenant)
	return tr.listTasks(ctx, req)
}
