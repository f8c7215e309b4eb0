package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The HTTP+JSON (REST) transport. A peer whose card offers no JSON-RPC
// interface but an HTTP+JSON one for protocol 1.0 is called over it: the
// same operations and the same *Error kinds, with requests mapped to the
// binding's routes and google.rpc.Status error bodies decoded into the
// same *a2a.Error (ErrRPC) a JSON-RPC error would give. Only the encoding
// differs: restTransport is the httpWire conn.call and conn.httpStream use.

// restTransport calls an HTTP+JSON interface at protocol 1.0.
type restTransport struct{ cn *conn }

// Media types of the HTTP+JSON binding.
const (
	mediaA2AJSON = "application/a2a+json"
	restAccept   = "application/a2a+json, application/json"
)

func (t *restTransport) sendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return callSendV1(ctx, t.cn, t, req)
}

func (t *restTransport) getTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return callTaskV1(ctx, t.cn, t, a2a.OpGetTask, req)
}

func (t *restTransport) cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return callTaskV1(ctx, t.cn, t, a2a.OpCancelTask, req)
}

func (t *restTransport) listTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return callListV1(ctx, t.cn, t, req)
}

func (t *restTransport) sendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, deliver func(Event) error) error {
	return t.cn.httpStream(ctx, t, a2a.OpSendStreamingMessage, req, deliver)
}

func (t *restTransport) subscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, deliver func(Event) error) error {
	return t.cn.httpStream(ctx, t, a2a.OpSubscribeToTask, req, deliver)
}

// request builds the HTTP request of one HTTP+JSON call: the route under
// the interface URL (and the interface's tenant, as a path prefix).
func (t *restTransport) request(ctx context.Context, op a2a.Operation, params any, stream bool) (*http.Request, func([]byte, func(json.RawMessage) error) error, error) {
	cn := t.cn
	call, err := a2a.RESTRequest(op, params)
	if err != nil {
		return nil, nil, cn.fail(ErrUnsupported, op, 0, err)
	}
	// The interface's tenant is in the request (conn.setTenant), so the
	// route is under /{tenant}.
	req, err := cn.newHTTPRequest(ctx, op, call.Method, call.URL(cn.info.Interface.URL), call.Body)
	if err != nil {
		return nil, nil, err
	}
	if call.Body != nil {
		req.Header.Set("Content-Type", mediaA2AJSON)
	}
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", restAccept)
	}
	return req, func(body []byte, decode func(json.RawMessage) error) error {
		return t.decodeBare(op, body, decode)
	}, nil
}

// errorBody reads the google.rpc.Status error body of a non-2xx answer.
func (t *restTransport) errorBody(body []byte) *a2a.Error { return statusError(body) }

// event decodes one SSE data payload: the bare StreamResponse, or a
// google.rpc.Status error.
func (t *restTransport) event(op a2a.Operation, data []byte) (Event, error) {
	if e := statusError(data); e != nil {
		return Event{}, t.cn.fail(ErrRPC, op, 0, e)
	}
	var sr a2a.StreamResponse
	if err := a2a.Unmarshal(data, &sr); err != nil {
		return Event{}, t.cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("stream event: %w", err))
	}
	return Event{Response: &sr}, nil
}

// statusError decodes a google.rpc.Status error body ({"error": {...}}),
// or returns nil when b is not one.
func statusError(b []byte) *a2a.Error {
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return nil
	}
	if p := bytes.TrimSpace(probe.Error); len(p) == 0 || p[0] != '{' {
		return nil
	}
	e, err := a2a.ErrorFromStatusJSON(b)
	if err != nil {
		return nil
	}
	return e
}

// decodeBare hands an HTTP+JSON success body (the bare result) to decode.
func (t *restTransport) decodeBare(op a2a.Operation, body []byte, decode func(json.RawMessage) error) error {
	cn := t.cn
	if e := statusError(body); e != nil {
		return cn.fail(ErrRPC, op, 0, e) // an error sent with 2xx
	}
	if !json.Valid(body) {
		return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("the answer is not JSON (body starts %q)", snippet(body)))
	}
	if err := decode(body); err != nil {
		return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("result: %w", err))
	}
	return nil
}
