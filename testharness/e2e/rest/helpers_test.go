// Package rest_test proves the HTTP+JSON binding end to end through the
// real cmd/a2a-plugin binary, launched by the test harness exactly as a
// host launches it: both bindings are served by the one binary, declared
// on its card, and give the same results and the same errors for the same
// scenario (bindings_test.go); the official Go and JS SDKs' REST clients
// work against it (interop_test.go); and the binary's own tools call a
// peer that offers only HTTP+JSON (outbound_test.go). Every JSON body and
// SSE event received is validated against the A2A v1.0.1 JSON Schema.
package rest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// waitTimeout bounds every wait for the plugin or the agent; generous on
// purpose (it decides how long a broken build takes to fail, never
// whether a working one passes).
const waitTimeout = 30 * time.Second

// Tokens of the peers: alice and bob are trusted, carol is public.
const (
	tokAlice = "alice-token-rest-0123456789abcdef"
	tokBob   = "bob-token-rest-0123456789abcdef"
	tokCarol = "carol-token-rest-0123456789abcdef"
)

// agent is the host's agent, chosen by the first word of the sender's
// words:
//
//	direct …    answers with a message (no task)
//	ask …       asks "Which colour?"; the answer completes with "got: <answer>"
//	progress …  a progress update, an artifact in two chunks, then "done: …"
//	slow …      a progress update, then waits until release(taskID) or
//	            cancel, then "slow done"
//	fail …      fails the turn
//	else        "echo: <text>"
type agent struct {
	gates e2etest.Gates
}

func newAgent() *agent { return &agent{} }

// release lets the slow turn of task id finish (now or when it starts).
func (a *agent) release(id string) { a.gates.Release(id) }

// Play implements testharness.Behavior.
func (a *agent) Play(ctx context.Context, t *testharness.Turn) error {
	text := testharness.PartsText(t.Request)
	send := func(kind pb.SendKind, s string) error { return t.SendText(ctx, kind, s) }
	if t.Request.GetContinuation() {
		return send(pb.SendKind_SEND_KIND_FINAL, "got: "+text)
	}
	verb, rest, _ := strings.Cut(text, " ")
	switch verb {
	case "direct":
		return send(pb.SendKind_SEND_KIND_DIRECT_REPLY, "direct: "+rest)
	case "ask":
		return send(pb.SendKind_SEND_KIND_INPUT_REQUIRED, "Which colour?")
	case "fail":
		return testharness.Failed("boom: " + rest)
	case "progress":
		if err := send(pb.SendKind_SEND_KIND_PROGRESS, "working on it"); err != nil {
			return err
		}
		for i, chunk := range []string{"part one; ", "part two"} {
			if _, err := t.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_ARTIFACT, Artifact: &pb.Artifact{
				ArtifactId: "report", Name: "report", Append: i > 0, LastChunk: i == 1,
				Parts: []*pb.Part{{Content: &pb.Part_Text{Text: chunk}}},
			}}); err != nil {
				return err
			}
		}
		return send(pb.SendKind_SEND_KIND_FINAL, "done: "+rest)
	case "slow":
		if err := send(pb.SendKind_SEND_KIND_PROGRESS, "thinking"); err != nil {
			return err
		}
		select {
		case <-a.gates.Gate(t.Request.GetTaskId()):
		case <-ctx.Done():
			return ctx.Err()
		}
		return send(pb.SendKind_SEND_KIND_FINAL, "slow done")
	}
	return send(pb.SendKind_SEND_KIND_FINAL, "echo: "+text)
}

// host is a harness host running the real plugin binary.
type host struct {
	*testharness.Host
	agent *agent
	url   string // the A2A base URL, no trailing slash
}

// startHost launches the plugin with three peers (alice and bob trusted,
// carol public, only trusted peers may run tasks), no local tier for
// loopback callers, the memory store and no rate limit unless extra says
// otherwise.
func startHost(t *testing.T, extra map[string]any) *host {
	t.Helper()
	cfg := map[string]any{
		"port":                 0,
		"store":                "memory",
		"rate_limit":           0,
		"max_pingpong_turns":   50,
		"max_streams_per_peer": 64,
		"audit_log":            "off",
		"loopback_is_local":    false,
		"allow_loopback_urls":  true,
	}
	for k, v := range extra {
		cfg[k] = v
	}
	a := newAgent()
	h := testharness.Start(t, testharness.Options{
		Agent:        a,
		PluginConfig: cfg,
		Env: map[string]string{
			"A2A_PEER_TOKENS":   "alice:" + tokAlice + ",bob:" + tokBob + ",carol:" + tokCarol,
			"A2A_TRUSTED_PEERS": "alice,bob",
		},
		LogLevel: "info",
	})
	ep := h.Endpoint(testharness.A2APluginName)
	if ep == "" {
		t.Fatalf("the a2a plugin has no endpoint (endpoints %v)", h.Endpoints(testharness.A2APluginName))
	}
	t.Cleanup(func() {
		a.gates.ReleaseAll() // let held turns end so the host drains quickly
	})
	return &host{Host: h, agent: a, url: strings.TrimRight(ep, "/")}
}

// answer is one HTTP answer of either binding.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request with A2A-Version 1.0 and the token (if any).
func (h *host) do(t *testing.T, token, method, path string, body []byte, hdr map[string]string) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, h.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

// resultDefs names the schema definition of each operation's result.
var resultDefs = map[a2a.Operation]string{
	a2a.OpSendMessage:      "Send Message Response",
	a2a.OpGetTask:          "Task",
	a2a.OpCancelTask:       "Task",
	a2a.OpListTasks:        "List Tasks Response",
	a2a.OpCreatePushConfig: "Task Push Notification Config",
	a2a.OpGetPushConfig:    "Task Push Notification Config",
	a2a.OpListPushConfigs:  "List Task Push Notification Configs Response",
	a2a.OpGetExtendedCard:  "Agent Card",
}

// binding calls the binary through one binding.
type binding struct {
	name string
	h    *host
	rest bool
	hdr  map[string]string
}

// call runs a unary operation: its result (schema-validated) or its error.
// HTTP+JSON errors must be google.rpc.Status bodies whose HTTP status and
// status name follow the specification's mapping of their code.
func (b binding) call(t *testing.T, token string, op a2a.Operation, params any) (json.RawMessage, *a2a.Error) {
	t.Helper()
	if !b.rest {
		body, err := a2a.MarshalRequest(1, op.String(), params)
		if err != nil {
			t.Fatal(err)
		}
		a := b.h.do(t, token, http.MethodPost, "/", body, b.hdr)
		res := a2atest.ValidateJSONRPCResponse(t, a.body, resultDefs[op])
		r, err := a2a.ParseResponse(a.body)
		if err != nil {
			t.Fatalf("%s: %v\n%s", op, err, a.body)
		}
		if r.Error != nil {
			return nil, r.Error
		}
		return res, nil
	}
	method, path, body := restRequest(t, op, params)
	a := b.h.do(t, token, method, path, body, b.hdr)
	if ct := a.header.Get("Content-Type"); ct != "application/a2a+json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if a.status != http.StatusOK {
		e := statusError(t, a.status, a.body)
		checkMapping(t, a.status, a.body, e)
		return nil, e
	}
	if def := resultDefs[op]; def != "" {
		a2atest.ValidateJSON(t, def, a.body)
	}
	return a.body, nil
}

// statusError checks and decodes a google.rpc.Status body whose code must
// be status (0: not checked).
func statusError(t *testing.T, status int, b []byte) *a2a.Error {
	t.Helper()
	var w struct {
		Error *struct {
			Code    int               `json:"code"`
			Status  string            `json:"status"`
			Message string            `json:"message"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &w) != nil || w.Error == nil {
		t.Fatalf("HTTP %d: not a google.rpc.Status body: %s", status, b)
	}
	var info a2a.ErrorInfo
	if (status != 0 && w.Error.Code != status) || w.Error.Status == "" || w.Error.Message == "" || len(w.Error.Details) == 0 ||
		json.Unmarshal(w.Error.Details[0], &info) != nil || info.Type != a2a.TypeErrorInfo || info.Domain != a2a.ErrorDomain {
		t.Errorf("HTTP %d: malformed google.rpc.Status: %s", status, b)
	}
	e, err := a2a.ErrorFromStatusJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkMapping checks an HTTP+JSON error's HTTP status and google.rpc.Code
// name against the specification's table and this project's codes.
func checkMapping(t *testing.T, status int, body []byte, e *a2a.Error) {
	t.Helper()
	wantStatus, wantName := a2a.HTTPStatus(e.Code), a2a.GRPCStatusName(e.Code)
	if e.Reason == "UNAUTHORIZED" {
		wantStatus, wantName = 403, "PERMISSION_DENIED"
	}
	var w struct {
		Error struct{ Status string } `json:"error"`
	}
	_ = json.Unmarshal(body, &w)
	if status != wantStatus || w.Error.Status != wantName {
		t.Errorf("code %d %s: HTTP %d %s, want %d %s", e.Code, e.Reason, status, w.Error.Status, wantStatus, wantName)
	}
}

// restRequest is the HTTP+JSON request of an operation (a2a.RESTRequest,
// the one table of the binding's routes).
func restRequest(t *testing.T, op a2a.Operation, params any) (method, path string, body []byte) {
	t.Helper()
	call, err := a2a.RESTRequest(op, params)
	if err != nil {
		t.Fatal(err)
	}
	return call.Method, call.URL(""), call.Body
}

// events is an open SSE stream of either binding.
type events struct {
	t      *testing.T
	rest   bool
	r      *a2a.SSEReader
	cancel context.CancelFunc
	pre    *a2a.Error // an error answered before the stream started
}

// open starts a streaming operation.
func (b binding) open(t *testing.T, token string, op a2a.Operation, params any) *events {
	t.Helper()
	method, path, body := http.MethodPost, "/", []byte(nil)
	if b.rest {
		method, path, body = restRequest(t, op, params)
	} else {
		var err error
		if body, err = a2a.MarshalRequest(1, op.String(), params); err != nil {
			t.Fatal(err)
		}
	}
	return b.h.openStream(t, token, b.rest, method, path, body)
}

// openStream sends a streaming request of either binding.
func (h *host) openStream(t *testing.T, token string, rest bool, method, path string, body []byte) *events {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, h.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &events{t: t, rest: rest, cancel: cancel}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		if rest {
			s.pre = statusError(t, resp.StatusCode, data)
			checkMapping(t, resp.StatusCode, data, s.pre)
		} else {
			r, err := a2a.ParseResponse(data)
			if err != nil || r.Error == nil {
				t.Fatalf("HTTP %d: not a stream nor an error: %s", resp.StatusCode, data)
			}
			s.pre = r.Error
		}
		return s
	}
	s.r = a2a.NewSSEReader(bufio.NewReader(resp.Body), 0)
	return s
}

// next returns the next event, or the error that ended the stream, or
// (nil, nil) at its end. Events are validated against the schema.
func (s *events) next() (*a2a.StreamResponse, *a2a.Error) {
	s.t.Helper()
	if s.pre != nil {
		e := s.pre
		s.pre = nil
		s.r = nil
		return nil, e
	}
	if s.r == nil {
		return nil, nil
	}
	data, err := s.r.Next()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		s.t.Fatalf("reading the stream: %v", err)
	}
	var raw []byte
	if s.rest {
		if s.r.Event() == "error" {
			return nil, statusError(s.t, 0, data)
		}
		a2atest.ValidateJSON(s.t, "Stream Response", data)
		raw = data
	} else {
		res := a2atest.ValidateJSONRPCResponse(s.t, data, "Stream Response")
		r, err := a2a.ParseResponse(append([]byte(nil), data...))
		if err != nil {
			s.t.Fatal(err)
		}
		if r.Error != nil {
			return nil, r.Error
		}
		raw = res
	}
	var ev a2a.StreamResponse
	if err := a2a.Unmarshal(raw, &ev); err != nil {
		s.t.Fatal(err)
	}
	return &ev, nil
}

// all reads the stream to its end.
func (s *events) all() ([]a2a.StreamResponse, *a2a.Error) {
	var out []a2a.StreamResponse
	for {
		ev, e := s.next()
		if e != nil || ev == nil {
			return out, e
		}
		out = append(out, *ev)
	}
}

// label names an event: its kind and, for tasks and status updates, the
// state.
func label(ev a2a.StreamResponse) string {
	switch {
	case ev.Task != nil:
		return "task:" + string(ev.Task.Status.State)
	case ev.StatusUpdate != nil:
		return "status:" + string(ev.StatusUpdate.Status.State)
	}
	return ev.Kind()
}

func labels(evs []a2a.StreamResponse) string {
	var out []string
	for _, ev := range evs {
		out = append(out, label(ev))
	}
	return strings.Join(out, ",")
}

// summary is what must agree about an error across bindings.
func summary(e *a2a.Error) string {
	if e == nil {
		return "<none>"
	}
	keys := make([]string, 0, len(e.Metadata))
	for k := range e.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("%d %s %v %q", e.Code, e.Reason, keys, a2atest.ReplaceIDs(e.Message))
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
