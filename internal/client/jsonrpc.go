package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The JSON-RPC transport at protocol 1.0: every call a JSON-RPC 2.0
// request POSTed to the interface URL, its result the v1.0 shape.

// rpcIDs numbers JSON-RPC requests across the process; the id only has to
// match between a request and its response.
var rpcIDs atomic.Int64

// jsonrpcWire is the JSON-RPC 2.0 envelope over HTTP, shared by the 1.0
// and the 0.3 transports: they differ in the method names and in the
// shape of a stream event's result.
type jsonrpcWire struct {
	cn *conn
	// method is the JSON-RPC method of op, or an *Error when the
	// protocol has none.
	method func(op a2a.Operation) (string, error)
	// streamEvent decodes the result of one stream event.
	streamEvent func(raw json.RawMessage) (Event, error)
}

// request builds the HTTP request of one JSON-RPC call.
func (w *jsonrpcWire) request(ctx context.Context, op a2a.Operation, params any, stream bool) (*http.Request, func([]byte, func(json.RawMessage) error) error, error) {
	cn := w.cn
	method, err := w.method(op)
	if err != nil {
		return nil, nil, err
	}
	id := rpcIDs.Add(1)
	body, err := a2a.MarshalRequest(id, method, params)
	if err != nil {
		return nil, nil, cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("encoding the request: %w", err))
	}
	req, err := cn.newHTTPRequest(ctx, op, http.MethodPost, cn.info.Interface.URL, body)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	return req, func(body []byte, decode func(json.RawMessage) error) error {
		return w.decodeEnvelope(op, id, body, decode)
	}, nil
}

// errorBody reads a JSON-RPC error response sent with a non-2xx status.
func (w *jsonrpcWire) errorBody(body []byte) *a2a.Error {
	if r, err := a2a.ParseResponse(body); err == nil && r.Error != nil {
		return r.Error
	}
	return nil
}

// event decodes one SSE data payload: a JSON-RPC response whose result
// is the event.
func (w *jsonrpcWire) event(op a2a.Operation, data []byte) (Event, error) {
	r, err := a2a.ParseResponse(data)
	if err != nil {
		return Event{}, w.cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("stream event: %w (data starts %q)", err, snippet(data)))
	}
	if r.Error != nil {
		return Event{}, w.cn.fail(ErrRPC, op, 0, r.Error)
	}
	raw, _ := r.Result.(json.RawMessage)
	ev, err := w.streamEvent(raw)
	if err != nil {
		return Event{}, w.cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("stream event: %w", err))
	}
	return ev, nil
}

// decodeEnvelope checks a JSON-RPC response envelope (id, result/error)
// and hands the result to decode.
func (w *jsonrpcWire) decodeEnvelope(op a2a.Operation, id int64, body []byte, decode func(json.RawMessage) error) error {
	cn := w.cn
	r, err := a2a.ParseResponse(body)
	if err != nil {
		return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("%w (body starts %q)", err, snippet(body)))
	}
	if !idMatches(r.ID, id) && r.Error == nil {
		return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("response id %s does not match request id %d", r.ID, id))
	}
	if r.Error != nil {
		return cn.fail(ErrRPC, op, 0, r.Error)
	}
	raw, _ := r.Result.(json.RawMessage)
	if err := decode(raw); err != nil {
		return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("result: %w", err))
	}
	return nil
}

// idMatches compares a response id with the numeric request id; servers
// may echo it as a number or (wrongly but harmlessly) as a string.
func idMatches(raw json.RawMessage, id int64) bool {
	s := string(bytes.TrimSpace(raw))
	if s == strconv.FormatInt(id, 10) {
		return true
	}
	var str string
	if json.Unmarshal(raw, &str) == nil && str == strconv.FormatInt(id, 10) {
		return true
	}
	var f float64
	return json.Unmarshal(raw, &f) == nil && f == float64(id)
}

// jsonrpcTransport calls a JSON-RPC interface at protocol 1.0.
type jsonrpcTransport struct {
	cn *conn
	w  *jsonrpcWire
}

// newJSONRPCTransport returns the JSON-RPC 1.0 transport of cn.
func newJSONRPCTransport(cn *conn) *jsonrpcTransport {
	return &jsonrpcTransport{cn: cn, w: &jsonrpcWire{
		cn:     cn,
		method: func(op a2a.Operation) (string, error) { return op.String(), nil },
		streamEvent: func(raw json.RawMessage) (Event, error) {
			var sr a2a.StreamResponse
			if err := a2a.Unmarshal(raw, &sr); err != nil {
				return Event{}, err
			}
			return Event{Response: &sr}, nil
		},
	}}
}

func (t *jsonrpcTransport) sendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return callSendV1(ctx, t.cn, t.w, req)
}

func (t *jsonrpcTransport) getTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return callTaskV1(ctx, t.cn, t.w, a2a.OpGetTask, req)
}

func (t *jsonrpcTransport) cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return callTaskV1(ctx, t.cn, t.w, a2a.OpCancelTask, req)
}

func (t *jsonrpcTransport) listTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return callListV1(ctx, t.cn, t.w, req)
}

func (t *jsonrpcTransport) sendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, deliver func(Event) error) error {
	return t.cn.httpStream(ctx, t.w, a2a.OpSendStreamingMessage, req, deliver)
}

func (t *jsonrpcTransport) subscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, deliver func(Event) error) error {
	return t.cn.httpStream(ctx, t.w, a2a.OpSubscribeToTask, req, deliver)
}

// callSendV1 is SendMessage over an HTTP binding whose result is the
// v1.0 SendMessageResponse.
func callSendV1(ctx context.Context, cn *conn, w httpWire, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	var out a2a.SendMessageResponse
	err := cn.call(ctx, w, a2a.OpSendMessage, req, func(raw json.RawMessage) error {
		if err := a2a.Unmarshal(raw, &out); err != nil {
			return err
		}
		return checkSendResponse(&out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// callTaskV1 is a call over an HTTP binding whose result is a v1.0 Task.
func callTaskV1(ctx context.Context, cn *conn, w httpWire, op a2a.Operation, req any) (*a2a.Task, error) {
	var out a2a.Task
	err := cn.call(ctx, w, op, req, func(raw json.RawMessage) error {
		if err := a2a.Unmarshal(raw, &out); err != nil {
			return err
		}
		return checkTask(&out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// callListV1 is ListTasks over an HTTP binding.
func callListV1(ctx context.Context, cn *conn, w httpWire, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	var out a2a.ListTasksResponse
	err := cn.call(ctx, w, a2a.OpListTasks, req, func(raw json.RawMessage) error {
		return a2a.Unmarshal(raw, &out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// checkTask verifies that a task answer has an id.
func checkTask(t *a2a.Task) error {
	if t.ID == "" {
		return errors.New("the task has no id")
	}
	return nil
}
