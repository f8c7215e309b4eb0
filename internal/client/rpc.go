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

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// conn is what one call needs: the peer, its card and the chosen interface.
type conn struct {
	p    *Peer
	info *CardInfo
}

// open fetches (or reuses) the card and returns the connection and the
// transport of the interface chosen for it.
func (p *Peer) open(ctx context.Context) (*conn, transport, error) {
	info, err := p.Card(ctx)
	if err != nil {
		return nil, nil, err
	}
	cn := &conn{p: p, info: info}
	return cn, newTransport(cn), nil
}

// setTenant copies the interface's tenant into a v1.0 request's tenant
// field (spec §8.3.2) when the interface has one.
func (cn *conn) setTenant(tenant *string) {
	if t := cn.info.Interface.Tenant; t != "" {
		*tenant = t
	}
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

// httpWire is how one HTTP binding (JSON-RPC 1.0 or 0.3, HTTP+JSON)
// encodes a call and decodes its answers; conn.call and conn.httpStream
// do the rest, the same for all of them.
type httpWire interface {
	// request builds the HTTP request of one call and returns how to
	// read the body of its 2xx answer: the check of the envelope, if
	// any, handing the raw result to decode.
	request(ctx context.Context, op a2a.Operation, params any, stream bool) (*http.Request, func(body []byte, decode func(json.RawMessage) error) error, error)
	// errorBody reads the error a peer sent in a non-2xx answer, or
	// returns nil when the body holds none.
	errorBody(body []byte) *a2a.Error
	// event decodes one stream event's data; conn.httpStream checks the
	// event's kind.
	event(op a2a.Operation, data []byte) (Event, error)
}

// newHTTPRequest builds an HTTP request to u for op on this connection,
// after the checks every binding makes (credential origin, guard), with
// the headers every request carries.
func (cn *conn) newHTTPRequest(ctx context.Context, op a2a.Operation, method, u string, body []byte) (*http.Request, error) {
	if err := cn.prepare(op); err != nil {
		return nil, err
	}
	ctx = cn.p.c.scoped(ctx, cn.p)
	if err := cn.p.c.checkURL(ctx, u); err != nil {
		return nil, cn.fail(ErrBlocked, op, 0, err)
	}
	var (
		req *http.Request
		err error
	)
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	} else {
		req, err = http.NewRequestWithContext(ctx, method, u, nil)
	}
	if err != nil {
		return nil, cn.fail(ErrBadCard, op, 0, err)
	}
	versionHeader(req.Header, cn.info.Interface)
	cn.p.c.decorate(req, cn.p, cn.info.Verified != nil)
	return req, nil
}

// do sends req and turns transport failures and non-2xx answers into
// *Error. A non-2xx answer whose body is a JSON-RPC error (or, HTTP+JSON,
// a google.rpc.Status error) is reported as that error (ErrRPC), since
// some servers send their errors with 4xx/5xx.
func (cn *conn) do(ctx context.Context, w httpWire, req *http.Request, op a2a.Operation) (*http.Response, error) {
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
		if re := w.errorBody(body); re != nil {
			if kind == ErrInvalidResponse || kind == ErrUnreachable {
				e.Kind = ErrRPC
			}
			e.Err = re
		}
	}
	return nil, e
}

// call performs one unary call over an HTTP binding and decodes the raw
// result with decode.
func (cn *conn) call(ctx context.Context, w httpWire, op a2a.Operation, params any, decode func(json.RawMessage) error) error {
	ctx, cancel := context.WithTimeout(ctx, cn.p.timeout(cn.p.c.opts.Timeout))
	defer cancel()
	req, answer, err := w.request(ctx, op, params, false)
	if err != nil {
		return err
	}
	resp, err := cn.do(ctx, w, req, op)
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
	return answer(body, decode)
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
