package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// params copies the interface's tenant into a v1.0 request (spec §8.3.2)
// and converts it to 0.3 params for a 0.3 interface.
func (cn *conn) params(req any) (any, error) {
	if tenant := cn.info.Interface.Tenant; tenant != "" {
		switch r := req.(type) {
		case *a2a.SendMessageRequest:
			r.Tenant = tenant
		case *a2a.GetTaskRequest:
			r.Tenant = tenant
		case *a2a.ListTasksRequest:
			r.Tenant = tenant
		case *a2a.CancelTaskRequest:
			r.Tenant = tenant
		case *a2a.SubscribeToTaskRequest:
			r.Tenant = tenant
		}
	}
	if !cn.v03() {
		return req, nil
	}
	return a2a.ToV03Params(req)
}

// SendMessage sends a message and returns the peer's Task or Message. With
// req.Configuration.ReturnImmediately the peer answers at once with the
// task it created; otherwise it answers when the task is terminal or
// interrupted (input or auth required). The call is bounded by the peer's
// timeout.
func (p *Peer) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	cn, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	if req.Message.Role == "" {
		req.Message.Role = a2a.RoleUser
	}
	if req.Message.MessageID == "" {
		req.Message.MessageID = a2a.NewID()
	}
	params, err := cn.params(req)
	if err != nil {
		return nil, cn.fail(ErrUnsupported, a2a.OpSendMessage, 0, err)
	}
	if cn.grpcBinding() {
		v, err := cn.grpcUnary(ctx, a2a.OpSendMessage, params)
		if err != nil {
			return nil, err
		}
		return v.(*a2a.SendMessageResponse), nil
	}
	var out *a2a.SendMessageResponse
	err = cn.call(ctx, a2a.OpSendMessage, params, func(raw json.RawMessage) error {
		if cn.v03() {
			r, err := a2a.FromV03SendResult(raw)
			if err != nil {
				return err
			}
			out = r
		} else {
			var r a2a.SendMessageResponse
			if err := a2a.Unmarshal(raw, &r); err != nil {
				return err
			}
			out = &r
		}
		return checkSendResponse(out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
	return p.taskCall(ctx, a2a.OpGetTask, req)
}

// CancelTask asks the peer to cancel a task and returns the updated task.
func (p *Peer) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return p.taskCall(ctx, a2a.OpCancelTask, req)
}

// taskCall is a unary call whose result is a Task.
func (p *Peer) taskCall(ctx context.Context, op a2a.Operation, req any) (*a2a.Task, error) {
	cn, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	params, err := cn.params(req)
	if err != nil {
		return nil, cn.fail(ErrUnsupported, op, 0, err)
	}
	if cn.grpcBinding() {
		v, err := cn.grpcUnary(ctx, op, params)
		if err != nil {
			return nil, err
		}
		return v.(*a2a.Task), nil
	}
	var out *a2a.Task
	err = cn.call(ctx, op, params, func(raw json.RawMessage) error {
		if cn.v03() {
			v, err := a2a.FromV03Result(op, raw)
			if err != nil {
				return err
			}
			t, ok := v.(*a2a.Task)
			if !ok {
				return fmt.Errorf("expected a task, got %T", v)
			}
			out = t
		} else {
			var t a2a.Task
			if err := a2a.Unmarshal(raw, &t); err != nil {
				return err
			}
			out = &t
		}
		if out.ID == "" {
			return errors.New("the task has no id")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListTasks lists the peer's tasks visible to this client. 0.3 peers have
// no such method: the error is ErrUnsupported.
func (p *Peer) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	cn, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	if cn.v03() {
		return nil, cn.fail(ErrUnsupported, a2a.OpListTasks, 0, errors.New("ListTasks does not exist in protocol 0.3, which this peer speaks"))
	}
	params, err := cn.params(req)
	if err != nil {
		return nil, cn.fail(ErrUnsupported, a2a.OpListTasks, 0, err)
	}
	if cn.grpcBinding() {
		v, err := cn.grpcUnary(ctx, a2a.OpListTasks, params)
		if err != nil {
			return nil, err
		}
		return v.(*a2a.ListTasksResponse), nil
	}
	var out a2a.ListTasksResponse
	err = cn.call(ctx, a2a.OpListTasks, params, func(raw json.RawMessage) error {
		return a2a.Unmarshal(raw, &out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
