package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
)

// The JSON-RPC transport at protocol 0.3: the 0.3 method names
// (message/send, tasks/get, ...), the 0.3 params, and results and stream
// events in the 0.3 `kind` shapes, converted to the v1.0 types. 0.3 has
// no ListTasks. Requests carry no A2A-Version header (versionHeader),
// which the specification reads as 0.3.

// v03Transport calls a JSON-RPC interface at protocol 0.3.
type v03Transport struct {
	cn *conn
	w  *jsonrpcWire
}

// newV03Transport returns the JSON-RPC 0.3 transport of cn.
func newV03Transport(cn *conn) *v03Transport {
	return &v03Transport{cn: cn, w: &jsonrpcWire{
		cn: cn,
		method: func(op a2a.Operation) (string, error) {
			if m := a2av03.Method(op); m != "" {
				return m, nil
			}
			return "", cn.fail(ErrUnsupported, op, 0, fmt.Errorf("%s does not exist in protocol 0.3, which this peer speaks", op))
		},
		streamEvent: func(raw json.RawMessage) (Event, error) {
			sr, final, err := a2av03.ParseStreamEvent(raw)
			if err != nil {
				return Event{}, err
			}
			return Event{Response: sr, Final: final}, nil
		},
	}}
}

func (t *v03Transport) sendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	var out *a2a.SendMessageResponse
	err := t.cn.call(ctx, t.w, a2a.OpSendMessage, a2av03.FromSendRequest(req), func(raw json.RawMessage) error {
		r, err := a2av03.ParseSendResult(raw)
		if err != nil {
			return err
		}
		out = r
		return checkSendResponse(out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (t *v03Transport) getTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return t.taskCall(ctx, a2a.OpGetTask, a2av03.FromGetTaskRequest(req))
}

func (t *v03Transport) cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return t.taskCall(ctx, a2a.OpCancelTask, a2av03.FromCancelTaskRequest(req))
}

// taskCall is a call whose 0.3 result is a task.
func (t *v03Transport) taskCall(ctx context.Context, op a2a.Operation, params any) (*a2a.Task, error) {
	var out a2a.Task
	err := t.cn.call(ctx, t.w, op, params, func(raw json.RawMessage) error {
		if err := a2a.Unmarshal(raw, &out); err != nil {
			return fmt.Errorf("decode 0.3 task: %w", err)
		}
		return checkTask(&out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func (t *v03Transport) listTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, t.cn.fail(ErrUnsupported, a2a.OpListTasks, 0, errors.New("ListTasks does not exist in protocol 0.3, which this peer speaks"))
}

func (t *v03Transport) sendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, deliver func(Event) error) error {
	return t.cn.httpStream(ctx, t.w, a2a.OpSendStreamingMessage, a2av03.FromSendRequest(req), deliver)
}

func (t *v03Transport) subscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, deliver func(Event) error) error {
	return t.cn.httpStream(ctx, t.w, a2a.OpSubscribeToTask, a2av03.FromSubscribeToTaskRequest(req), deliver)
}
