package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The HTTP+JSON (REST) transport. A peer whose card offers no JSON-RPC
// interface but an HTTP+JSON one for protocol 1.0 is called over it: the
// same operations and the same *Error kinds, with requests mapped to the
// binding's routes and google.rpc.Status error bodies decoded into the
// same *a2a.Error (ErrRPC) a JSON-RPC error would give. Only the encoding
// differs; conn.newRequest, conn.do, conn.call and conn.decodeEvent switch
// to the functions here when conn.rest() is true.

// rest reports whether the chosen interface is HTTP+JSON.
func (cn *conn) rest() bool {
	return strings.EqualFold(cn.info.Interface.ProtocolBinding, a2a.BindingHTTPJSON)
}

// Media types of the HTTP+JSON binding.
const (
	mediaA2AJSON = "application/a2a+json"
	restAccept   = "application/a2a+json, application/json"
)

// newRESTRequest builds the HTTP request of one HTTP+JSON call: the route
// under the interface URL (and the interface's tenant, as a path prefix).
func (cn *conn) newRESTRequest(ctx context.Context, op a2a.Operation, params any, stream bool) (*http.Request, error) {
	call, err := a2a.RESTRequest(op, params)
	if err != nil {
		return nil, cn.fail(ErrUnsupported, op, 0, err)
	}
	// The interface's tenant is in the request (conn.params), so the
	// route is under /{tenant}.
	u := call.URL(cn.info.Interface.URL)
	if err := cn.prepare(op); err != nil {
		return nil, err
	}
	ctx = cn.p.c.scoped(ctx, cn.p)
	if err := cn.p.c.checkURL(ctx, u); err != nil {
		return nil, cn.fail(ErrBlocked, op, 0, err)
	}
	var req *http.Request
	if call.Body != nil {
		req, err = http.NewRequestWithContext(ctx, call.Method, u, bytes.NewReader(call.Body))
	} else {
		req, err = http.NewRequestWithContext(ctx, call.Method, u, nil)
	}
	if err != nil {
		return nil, cn.fail(ErrBadCard, op, 0, err)
	}
	if call.Body != nil {
		req.Header.Set("Content-Type", mediaA2AJSON)
	}
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", restAccept)
	}
	versionHeader(req.Header, cn.info.Interface)
	cn.p.c.decorate(ctx, req, cn.p, cn.info.Verified != nil)
	return req, nil
}

// errorBody reads the error a peer sent in a non-2xx answer: a
// google.rpc.Status body from an HTTP+JSON peer, a JSON-RPC error response
// from a JSON-RPC one. It returns nil when the body holds neither.
func (cn *conn) errorBody(body []byte) *a2a.Error {
	if cn.rest() {
		return statusError(body)
	}
	if r, err := a2a.ParseResponse(body); err == nil && r.Error != nil {
		return r.Error
	}
	return nil
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
func (cn *conn) decodeBare(op a2a.Operation, body []byte, decode func(json.RawMessage) error) error {
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
