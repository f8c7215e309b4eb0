package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// rpcIDs numbers JSON-RPC requests across the process; the id only has to
// match between a request and its response.
var rpcIDs atomic.Int64

// conn is what one call needs: the peer, its card and the chosen interface.
type conn struct {
	p    *Peer
	info *CardInfo
}

// open fetches (or reuses) the card and returns the connection to call.
func (p *Peer) open(ctx context.Context) (*conn, error) {
	info, err := p.Card(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{p: p, info: info}, nil
}

// v03 reports whether the chosen interface is protocol 0.3.
func (cn *conn) v03() bool { return cn.info.V03() }

// method returns the JSON-RPC method name of op for the interface's
// version, or an ErrUnsupported error when 0.3 has no such method.
func (cn *conn) method(op a2a.Operation) (string, error) {
	if !cn.v03() {
		return op.String(), nil
	}
	if m := a2a.MethodV03(op); m != "" {
		return m, nil
	}
	return "", cn.fail(ErrUnsupported, op, 0, fmt.Errorf("%s does not exist in protocol 0.3, which this peer speaks", op))
}

// fail builds an *Error for op on this connection.
func (cn *conn) fail(kind Kind, op a2a.Operation, status int, err error) *Error {
	return &Error{Kind: kind, Peer: cn.p.name(), URL: cn.info.Interface.URL, Op: op.String(), HTTPStatus: status, Err: err}
}

// prepare refuses a call whose credentials could not go to the card's
// interface URL (see Peer.checkCredentialOrigin).
func (cn *conn) prepare(op a2a.Operation) error {
	if err := cn.p.checkCredentialOrigin(cn.info.Interface, cn.info.Verified != nil); err != nil {
		return cn.fail(ErrCrossOrigin, op, 0, err)
	}
	return nil
}

// newRequest builds the HTTP request of one JSON-RPC call (or, for an
// HTTP+JSON interface, of the call on its route; the id is then 0).
func (cn *conn) newRequest(ctx context.Context, op a2a.Operation, params any, stream bool) (*http.Request, int64, error) {
	if cn.rest() {
		req, err := cn.newRESTRequest(ctx, op, params, stream)
		return req, 0, err
	}
	method, err := cn.method(op)
	if err != nil {
		return nil, 0, err
	}
	id := rpcIDs.Add(1)
	body, err := a2a.MarshalRequest(id, method, params)
	if err != nil {
		return nil, 0, cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("encoding the request: %w", err))
	}
	if err := cn.prepare(op); err != nil {
		return nil, 0, err
	}
	ctx = cn.p.c.scoped(ctx, cn.p)
	url := cn.info.Interface.URL
	if err := cn.p.c.checkURL(ctx, url); err != nil {
		return nil, 0, cn.fail(ErrBlocked, op, 0, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, cn.fail(ErrBadCard, op, 0, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	versionHeader(req.Header, cn.info.Interface)
	cn.p.c.decorate(ctx, req, cn.p, cn.info.Verified != nil)
	return req, id, nil
}

// do sends req and turns transport failures and non-2xx answers into
// *Error. A non-2xx answer whose body is a JSON-RPC error (or, HTTP+JSON,
// a google.rpc.Status error) is reported as that error (ErrRPC), since
// some servers send their errors with 4xx/5xx.
func (cn *conn) do(ctx context.Context, req *http.Request, op a2a.Operation) (*http.Response, error) {
	resp, err := cn.p.c.hc.Do(req)
	if err != nil {
		if pe := ctx.Err(); pe == context.Canceled {
			return nil, fmt.Errorf("%s to %s: %w", op, cn.p.name(), pe)
		}
		return nil, cn.fail(classifyTransport(err, ctx), op, 0, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer drainClose(resp.Body)
	kind := statusKind(resp.StatusCode)
	e := cn.fail(kind, op, resp.StatusCode, fmt.Errorf("HTTP %s", resp.Status))
	if kind == ErrRateLimited || resp.StatusCode == http.StatusServiceUnavailable {
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), cn.p.c.now())
	}
	if kind == ErrAuthRefused {
		if wa := resp.Header.Get("WWW-Authenticate"); wa != "" {
			e.Err = fmt.Errorf("HTTP %s (WWW-Authenticate: %s)", resp.Status, wa)
		}
	}
	if kind == ErrInvalidResponse && resp.StatusCode == http.StatusNotFound {
		e.Err = fmt.Errorf("HTTP %s: no A2A endpoint at this URL", resp.Status)
	}
	// Prefer a JSON-RPC error in the body, but keep auth and rate-limit
	// kinds: they tell the caller more than a generic error object.
	if body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10)); err == nil && len(body) > 0 {
		if re := cn.errorBody(body); re != nil {
			if kind == ErrInvalidResponse || kind == ErrUnreachable {
				e.Kind = ErrRPC
			}
			e.Err = re
		}
	}
	return nil, e
}

// call performs one unary call (JSON-RPC, or HTTP+JSON) and decodes the
// raw result with decode.
func (cn *conn) call(ctx context.Context, op a2a.Operation, params any, decode func(json.RawMessage) error) error {
	ctx, cancel := context.WithTimeout(ctx, cn.p.timeout(cn.p.c.opts.Timeout))
	defer cancel()
	req, id, err := cn.newRequest(ctx, op, params, false)
	if err != nil {
		return err
	}
	resp, err := cn.do(ctx, req, op)
	if err != nil {
		return err
	}
	defer drainClose(resp.Body)
	if ct := mediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		return cn.fail(ErrInvalidResponse, op, resp.StatusCode, errors.New("the peer answered a unary call with an event stream"))
	}
	limit := cn.p.c.opts.MaxResponseBytes
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if pe := ctx.Err(); pe == context.Canceled {
			return fmt.Errorf("%s to %s: %w", op, cn.p.name(), pe)
		}
		return cn.fail(classifyTransport(err, ctx), op, 0, fmt.Errorf("reading the response: %w", err))
	}
	if int64(len(body)) > limit {
		return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("response is larger than %d bytes", limit))
	}
	if cn.rest() {
		return cn.decodeBare(op, body, decode)
	}
	return cn.decodeEnvelope(op, id, body, decode)
}

// decodeEnvelope checks a JSON-RPC response envelope (id, result/error)
// and hands the result to decode.
func (cn *conn) decodeEnvelope(op a2a.Operation, id int64, body []byte, decode func(json.RawMessage) error) error {
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

// mediaType returns the media type of a Content-Type header, lowercased.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// snippet returns the start of a body for an error message.
func snippet(b []byte) string {
	const n = 80
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
