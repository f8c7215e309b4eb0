package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
)

// restResult is one HTTP+JSON answer.
type restResult struct {
	status int
	header http.Header
	body   []byte
	err    *a2a.Error // decoded from the google.rpc.Status body
}

// restDo sends one HTTP+JSON request and checks the answer's envelope: a
// success is HTTP 200 with a JSON media type; an error is the
// google.rpc.Status form whose code is the HTTP status and whose first
// detail is an a2a-protocol.org ErrorInfo.
func (e *testEnv) restDo(token, method, path string, body []byte, hdr map[string]string) restResult {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/a2a+json")
	}
	status, header, b := e.do(req, token, hdr)
	out := restResult{status: status, header: header, body: b}
	if ct := header.Get("Content-Type"); ct != "application/a2a+json" && ct != "application/json" {
		e.t.Errorf("%s %s: Content-Type %q, want application/a2a+json", method, path, ct)
	}
	if status != http.StatusOK {
		out.err = checkStatusBody(e.t, status, b)
	}
	return out
}

// checkStatusBody checks a google.rpc.Status error body answered with
// HTTP status and decodes it.
func checkStatusBody(t testing.TB, status int, b []byte) *a2a.Error {
	t.Helper()
	code, e := parseStatusBody(t, b)
	if code != status {
		t.Errorf("HTTP %d: status body code %d", status, code)
	}
	return e
}

// parseStatusBody checks the shape of a google.rpc.Status error body
// (code, status, message, an a2a-protocol.org ErrorInfo first among the
// details) and decodes it.
func parseStatusBody(t testing.TB, b []byte) (int, *a2a.Error) {
	t.Helper()
	var w struct {
		Error *struct {
			Code    *int              `json:"code"`
			Status  string            `json:"status"`
			Message string            `json:"message"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &w); err != nil || w.Error == nil || w.Error.Code == nil {
		t.Fatalf("not a google.rpc.Status body: %s", b)
	}
	if w.Error.Status == "" || w.Error.Message == "" {
		t.Errorf("status body without status or message: %s", b)
	}
	var info a2a.ErrorInfo
	if len(w.Error.Details) == 0 || json.Unmarshal(w.Error.Details[0], &info) != nil ||
		info.Type != a2a.TypeErrorInfo || info.Domain != a2a.ErrorDomain || info.Reason == "" {
		t.Errorf("first detail is not an a2a-protocol.org ErrorInfo: %s", b)
	}
	e, err := a2a.ErrorFromStatusJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return *w.Error.Code, e
}

// restRequest is the HTTP+JSON request of an operation with v1.0 params
// (a2a.RESTRequest, the client's; the routes themselves are pinned by
// a2a's TestRESTRequestFollowsTheSpecificationsRoutes).
func restRequest(t testing.TB, op a2a.Operation, params any) (method, path string, body []byte) {
	t.Helper()
	call, err := a2a.RESTRequest(op, params)
	if err != nil {
		t.Fatal(err)
	}
	return call.Method, call.URL(""), call.Body
}

// bindingClient calls one server through one binding, so that a scenario
// can run through both.
type bindingClient struct {
	name string
	e    *testEnv
	rest bool
	grpc bool
	hdr  map[string]string
}

func bindings(e *testEnv) []bindingClient {
	return []bindingClient{{name: "JSONRPC", e: e}, {name: "HTTP+JSON", e: e, rest: true}, {name: "GRPC", e: e, grpc: true}}
}

// call runs a unary operation and returns its result (validated against
// the schema) or its error. For HTTP+JSON it also checks that the HTTP
// status and status name follow the specification's mapping of the code.
func (b bindingClient) call(token string, op a2a.Operation, params any) (json.RawMessage, *a2a.Error) {
	t := b.e.t
	t.Helper()
	if b.grpc {
		return b.grpcCall(token, op, params)
	}
	if !b.rest {
		r := b.e.rpc(token, op.String(), params, b.hdr)
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	}
	method, path, body := restRequest(t, op, params)
	r := b.e.restDo(token, method, path, body, b.hdr)
	if r.err != nil {
		checkRESTMapping(t, r.status, r.body, r.err)
		return nil, r.err
	}
	if def := resultDefs[op.String()]; def != "" {
		a2atest.ValidateJSON(t, def, r.body)
	}
	return r.body, nil
}

// checkRESTMapping checks the HTTP status and google.rpc.Code name of an
// HTTP+JSON error against the specification's table (§4.1 of the digest)
// and this project's codes.
func checkRESTMapping(t testing.TB, status int, body []byte, e *a2a.Error) {
	t.Helper()
	wantStatus, wantName := a2a.HTTPStatus(e.Code), a2a.GRPCStatusName(e.Code)
	switch {
	case e.Reason == "UNAUTHORIZED":
		wantStatus, wantName = 403, "PERMISSION_DENIED"
	case e.Code == a2a.CodeRateLimited:
		wantStatus = 429
	}
	var w struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &w)
	if status != wantStatus || w.Error.Status != wantName {
		t.Errorf("code %d (%s): HTTP %d %s, want %d %s", e.Code, e.Reason, status, w.Error.Status, wantStatus, wantName)
	}
}

// stream runs a streaming operation and returns its events and the error
// that ended it, if any (before the stream or as its last event).
func (b bindingClient) stream(token string, op a2a.Operation, params any) ([]a2a.StreamResponse, *a2a.Error) {
	b.e.t.Helper()
	return drain(b.e.t, b.open(token, op, params))
}

// drain reads events from next to the end of the stream and returns them
// and the error event that ended it, if any.
func drain(t testing.TB, next func() (*a2a.StreamResponse, *a2a.Error)) ([]a2a.StreamResponse, *a2a.Error) {
	t.Helper()
	var out []a2a.StreamResponse
	for {
		ev, e := next()
		if e != nil {
			if ev2, e2 := next(); ev2 != nil || e2 != nil {
				t.Errorf("events after an error event")
			}
			return out, e
		}
		if ev == nil {
			return out, nil
		}
		out = append(out, *ev)
	}
}

// all reads the stream to its end.
func (s *restStream) all() ([]a2a.StreamResponse, *a2a.Error) {
	s.t.Helper()
	return drain(s.t, s.next)
}

// open starts a streaming operation and returns a function yielding its
// events one by one: an event, or the error that ended the stream (before
// it or as its last event), or (nil, nil) at its end.
func (b bindingClient) open(token string, op a2a.Operation, params any) func() (*a2a.StreamResponse, *a2a.Error) {
	t := b.e.t
	t.Helper()
	if b.grpc {
		return b.grpcOpen(token, op, params)
	}
	done := false
	if !b.rest {
		s := b.e.openStream(token, op.String(), params, b.hdr)
		if s.r == nil {
			r, err := a2a.ParseResponse(s.errBody)
			if err != nil || r.Error == nil {
				t.Fatalf("HTTP %d, not a stream nor an error: %s", s.status, s.errBody)
			}
			return func() (*a2a.StreamResponse, *a2a.Error) {
				if done {
					return nil, nil
				}
				done = true
				return nil, r.Error
			}
		}
		return func() (*a2a.StreamResponse, *a2a.Error) {
			r := s.next()
			if r == nil {
				return nil, nil
			}
			if r.Error != nil {
				return nil, r.Error
			}
			var ev a2a.StreamResponse
			if err := r.DecodeResult(&ev); err != nil {
				t.Fatal(err)
			}
			return &ev, nil
		}
	}
	method, path, body := restRequest(t, op, params)
	s := b.e.openRESTStream(token, method, path, body, b.hdr)
	if s.r == nil {
		e := checkStatusBody(t, s.status, s.errBody)
		checkRESTMapping(t, s.status, s.errBody, e)
		return func() (*a2a.StreamResponse, *a2a.Error) {
			if done {
				return nil, nil
			}
			done = true
			return nil, e
		}
	}
	return s.next
}

// restStream reads an HTTP+JSON SSE response.
type restStream struct {
	t       testing.TB
	resp    *http.Response
	r       *a2a.SSEReader
	status  int
	errBody []byte
}

// openRESTStream starts a streaming route; a non-SSE answer (an error
// before the stream started) is returned in errBody.
func (e *testEnv) openRESTStream(token, method, path string, body []byte, hdr map[string]string) *restStream {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	s := &restStream{t: e.t, resp: resp, status: resp.StatusCode}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		s.errBody, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return s
	}
	s.r = a2a.NewSSEReader(bufio.NewReader(resp.Body), 0)
	e.t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next returns the next event (validated as a bare Stream Response), or
// the error event, or (nil, nil) at the end of the stream.
func (s *restStream) next() (*a2a.StreamResponse, *a2a.Error) {
	s.t.Helper()
	data, err := s.r.Next()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		s.t.Fatalf("reading stream: %v", err)
	}
	if s.r.Event() == "error" {
		code, e := parseStatusBody(s.t, data)
		if want := restStatus(http.StatusOK, e).Code; code != want {
			s.t.Errorf("error event code %d, want %d: %s", code, want, data)
		}
		return nil, e
	}
	a2atest.ValidateJSON(s.t, "Stream Response", data)
	var ev a2a.StreamResponse
	if err := a2a.Unmarshal(data, &ev); err != nil {
		s.t.Fatal(err)
	}
	return &ev, nil
}

// errorSummary is what must agree between bindings about an error: the
// A2A code, the ErrorInfo reason, the metadata keys and the message (ids
// replaced).
func errorSummary(e *a2a.Error) string {
	if e == nil {
		return "<no error>"
	}
	keys := make([]string, 0, len(e.Metadata))
	for k := range e.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("%d %s %v %q", e.Code, e.Reason, keys, a2atest.ReplaceIDs(e.Message))
}
