package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// Tokens of the test peers. alice and bob are trusted; carol is a public
// (untrusted) peer.
const (
	tokAlice = "alice-token-0123456789"
	tokBob   = "bob-token-0123456789"
	tokCarol = "carol-token-0123456789"
)

// scriptExec is a scripted host agent. It plays a behaviour chosen by the
// first word of the message text:
//
//	echo / anything else  completes with "echo: <text>"
//	progress              a progress status, an artifact in two chunks, then the answer
//	ask                   asks a question; the answer completes with "got: <text>"
//	auth                  asks for credentials (AUTH_REQUIRED)
//	direct                answers with a plain message (no task)
//	fail                  fails the task
//	reject                the host rejects the task
//	slow                  works until released with release(taskID) or canceled
//	chunks N SIZE         N artifact updates of SIZE bytes each, then the answer
//	slowchunks N SIZE     like chunks, once released
type scriptExec struct {
	m *tasks.Manager
	// sync makes StartTurn play synchronously (benchmarks).
	sync bool

	mu        sync.Mutex
	turns     []*tasks.Turn
	cancelled []string
	gates     map[string]chan struct{}
	started   chan *tasks.Turn
}

func newScriptExec() *scriptExec {
	return &scriptExec{gates: map[string]chan struct{}{}, started: make(chan *tasks.Turn, 4096)}
}

func (x *scriptExec) StartTurn(ctx context.Context, t *tasks.Turn) error {
	x.mu.Lock()
	x.turns = append(x.turns, t)
	gate := make(chan struct{})
	x.gates[t.TaskID] = gate
	x.mu.Unlock()
	select {
	case x.started <- t:
	default:
	}
	if x.sync {
		x.play(t, gate)
		return nil
	}
	go x.play(t, gate)
	return nil
}

func (x *scriptExec) CancelTurn(ctx context.Context, t *tasks.Turn, reason string) error {
	x.mu.Lock()
	x.cancelled = append(x.cancelled, t.TaskID)
	x.mu.Unlock()
	x.release(t.TaskID)
	return nil
}

// release lets a "slow" turn finish.
func (x *scriptExec) release(taskID string) {
	x.mu.Lock()
	g := x.gates[taskID]
	delete(x.gates, taskID)
	x.mu.Unlock()
	if g != nil {
		close(g)
	}
}

func (x *scriptExec) cancelledIDs() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.cancelled...)
}

// turnTexts returns the text of every turn the host was given.
func (x *scriptExec) turnTexts() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]string, len(x.turns))
	for i, t := range x.turns {
		out[i] = t.Message.Text()
	}
	return out
}

func (x *scriptExec) lastTurn() *tasks.Turn {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.turns) == 0 {
		return nil
	}
	return x.turns[len(x.turns)-1]
}

func agentMsg(text string) *a2a.Message {
	m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart(text))
	return &m
}

func (x *scriptExec) play(t *tasks.Turn, gate chan struct{}) {
	ctx := context.Background()
	text := t.Message.Text()
	word, rest, _ := strings.Cut(text, " ")
	apply := func(u tasks.Update) { _ = x.m.Apply(ctx, t.TaskID, u) }
	if t.Continuation {
		apply(tasks.Update{Kind: tasks.UpdateFinal, Message: agentMsg("got: " + text)})
		return
	}
	switch word {
	case "progress":
		apply(tasks.Update{Kind: tasks.UpdateProgress, Message: agentMsg("working on it")})
		apply(tasks.Update{Kind: tasks.UpdateArtifact, Artifact: &a2a.Artifact{ArtifactID: "report", Name: "report", Parts: []a2a.Part{a2a.TextPart("part one; ")}}})
		apply(tasks.Update{Kind: tasks.UpdateArtifact, Append: true, LastChunk: true, Artifact: &a2a.Artifact{ArtifactID: "report", Parts: []a2a.Part{a2a.TextPart("part two")}}})
		apply(tasks.Update{Kind: tasks.UpdateFinal, Message: agentMsg("done: " + rest)})
	case "ask":
		apply(tasks.Update{Kind: tasks.UpdateInputRequired, Message: agentMsg("which colour?")})
	case "auth":
		apply(tasks.Update{Kind: tasks.UpdateAuthRequired, Message: agentMsg("please sign in")})
	case "direct":
		apply(tasks.Update{Kind: tasks.UpdateDirectReply, Message: agentMsg("direct: " + rest)})
	case "fail":
		_ = x.m.EndTurn(ctx, t.TaskID, tasks.OutcomeFailure, "boom: "+rest)
	case "reject":
		_ = x.m.EndTurn(ctx, t.TaskID, tasks.OutcomeRejected, "not my job")
	case "silent":
		<-gate
		apply(tasks.Update{Kind: tasks.UpdateFinal, Message: agentMsg("silent done")})
	case "slow":
		apply(tasks.Update{Kind: tasks.UpdateProgress, Message: agentMsg("thinking")})
		<-gate
		apply(tasks.Update{Kind: tasks.UpdateFinal, Message: agentMsg("slow done")})
	case "chunks", "slowchunks":
		if word == "slowchunks" {
			apply(tasks.Update{Kind: tasks.UpdateProgress, Message: agentMsg("thinking")})
			<-gate
		}
		f := strings.Fields(rest)
		n, _ := strconv.Atoi(f[0])
		size, _ := strconv.Atoi(f[1])
		payload := strings.Repeat("x", size)
		for i := 0; i < n; i++ {
			// Each chunk replaces the artifact, so the task stays small
			// while the stream carries every chunk.
			apply(tasks.Update{Kind: tasks.UpdateArtifact, LastChunk: i == n-1,
				Artifact: &a2a.Artifact{ArtifactID: "big", Parts: []a2a.Part{a2a.TextPart(payload)}}})
			if i%16 == 15 {
				time.Sleep(time.Millisecond)
			}
		}
		apply(tasks.Update{Kind: tasks.UpdateFinal, Message: agentMsg("chunks done")})
	default:
		apply(tasks.Update{Kind: tasks.UpdateFinal, Message: agentMsg("echo: " + text)})
	}
}

// auditEntry is one audit record and the SSE events of its exchange.
type auditEntry struct {
	security.AuditRecord
	events int
}

// auditSink collects audit records through the server's test hook.
type auditSink struct {
	mu   sync.Mutex
	recs []auditEntry
}

func (a *auditSink) record(r security.AuditRecord, events int) {
	a.mu.Lock()
	a.recs = append(a.recs, auditEntry{r, events})
	a.mu.Unlock()
}

func (a *auditSink) all() []auditEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]auditEntry(nil), a.recs...)
}

// testEnv is a server over a real task manager and memory store, served by
// httptest.
type testEnv struct {
	t     testing.TB
	srv   *Server
	ts    *httptest.Server
	mgr   *tasks.Manager
	exec  *scriptExec
	store store.Store
	audit *auditSink
	url   string
	// grpc reaches the server's gRPC binding.
	grpc *grpcTestConn
}

// testAuth is the default authenticator of the tests: three peers, no
// local tier (so scoping applies to everyone).
func testAuth(t testing.TB, loopbackLocal bool) *security.Authenticator {
	a, err := security.NewAuthenticator(security.AuthConfig{
		PeerTokens:      map[string]string{"alice": tokAlice, "bob": tokBob, "carol": tokCarol},
		TrustedPeers:    []string{"alice", "bob"},
		LoopbackIsLocal: loopbackLocal,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newEnv(t testing.TB, mods ...func(*Options)) *testEnv {
	t.Helper()
	return newEnvTasks(t, nil, mods...)
}

// newEnvTasks is newEnv with a hook to tune the task manager.
func newEnvTasks(t testing.TB, taskMod func(*tasks.Options), mods ...func(*Options)) *testEnv {
	t.Helper()
	st := store.NewMemory(100_000)
	x := newScriptExec()
	topts := tasks.Options{Store: st, Executor: x, RequestTimeout: 10 * time.Second}
	if taskMod != nil {
		taskMod(&topts)
	}
	mgr, err := tasks.NewManager(topts)
	if err != nil {
		t.Fatal(err)
	}
	x.m = mgr
	if _, err := mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	audit := &auditSink{}
	opts := Options{
		Tasks: mgr,
		Auth:  testAuth(t, false),
		Card:  CardConfig{Name: "Test Agent", Description: "An agent for tests", Version: "9.9.9"},
		Push:  PushOptions{Enabled: true},
	}
	for _, m := range mods {
		m(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.pipe.auditHook = audit.record
	ts := httptest.NewServer(srv.Handler())
	e := &testEnv{t: t, srv: srv, ts: ts, mgr: mgr, exec: x, store: st, audit: audit, url: ts.URL, grpc: &grpcTestConn{srv: srv}}
	t.Cleanup(func() {
		defer e.grpc.close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
		_ = mgr.Close(context.Background())
	})
	return e
}

// rpcResult is one JSON-RPC response.
type rpcResult struct {
	status int
	header http.Header
	body   []byte
	result json.RawMessage
	err    *a2a.Error
}

// post sends a raw body to the JSON-RPC endpoint.
func (e *testEnv) post(token string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return e.do(req, token, hdr)
}

// do sends req as version 1.0 with token (when not empty) and hdr (an
// empty value removes a header) and returns the answer, read whole.
func (e *testEnv) do(req *http.Request, token string, hdr map[string]string) (int, http.Header, []byte) {
	e.t.Helper()
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

var reqSeq struct {
	sync.Mutex
	n int
}

func nextID() int {
	reqSeq.Lock()
	defer reqSeq.Unlock()
	reqSeq.n++
	return reqSeq.n
}

// resultDefs names the schema definition of each v1.0 method's result.
var resultDefs = map[string]string{
	"SendMessage":                      "Send Message Response",
	"GetTask":                          "Task",
	"CancelTask":                       "Task",
	"ListTasks":                        "List Tasks Response",
	"tasks/list":                       "List Tasks Response",
	"CreateTaskPushNotificationConfig": "Task Push Notification Config",
	"GetTaskPushNotificationConfig":    "Task Push Notification Config",
	"ListTaskPushNotificationConfigs":  "List Task Push Notification Configs Response",
	"GetExtendedAgentCard":             "Agent Card",
}

// rpc calls method with params and validates the response: envelope and
// error shape always, the result against the schema for v1.0 methods.
func (e *testEnv) rpc(token, method string, params any, hdr ...map[string]string) rpcResult {
	e.t.Helper()
	id := nextID()
	body, err := a2a.MarshalRequest(id, method, params)
	if err != nil {
		e.t.Fatal(err)
	}
	var h map[string]string
	if len(hdr) > 0 {
		h = hdr[0]
	}
	status, header, b := e.post(token, body, h)
	out := rpcResult{status: status, header: header, body: b}
	if status == http.StatusNoContent {
		return out
	}
	if _, v03 := a2av03.LookupMethod(method); v03 {
		out.result = a2atest.ValidateJSONRPCResponseV03(e.t, b)
	} else {
		out.result = a2atest.ValidateJSONRPCResponse(e.t, b, resultDefs[method])
	}
	resp, perr := a2a.ParseResponse(b)
	if perr != nil {
		e.t.Fatalf("%s: %v\n%s", method, perr, b)
	}
	if string(resp.ID) != strconv.Itoa(id) && string(resp.ID) != "null" {
		e.t.Errorf("%s: response id %s, want %d", method, resp.ID, id)
	}
	out.err = resp.Error
	return out
}

// ok calls method and fails the test on an error response.
func (e *testEnv) ok(token, method string, params any, hdr ...map[string]string) json.RawMessage {
	e.t.Helper()
	r := e.rpc(token, method, params, hdr...)
	if r.err != nil || r.status != http.StatusOK {
		e.t.Fatalf("%s: HTTP %d error %v\n%s", method, r.status, r.err, r.body)
	}
	return r.result
}

// fails calls method and returns its error, failing the test on success.
func (e *testEnv) fails(token, method string, params any, hdr ...map[string]string) *a2a.Error {
	e.t.Helper()
	r := e.rpc(token, method, params, hdr...)
	if r.err == nil {
		e.t.Fatalf("%s: want an error, got HTTP %d\n%s", method, r.status, r.body)
	}
	return r.err
}

func sendParams(text string, mod func(*a2a.SendMessageRequest)) *a2a.SendMessageRequest {
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart(text))}
	if mod != nil {
		mod(req)
	}
	return req
}

// send sends a blocking SendMessage and returns the task.
func (e *testEnv) send(token, text string, mod func(*a2a.SendMessageRequest)) *a2a.Task {
	e.t.Helper()
	raw := e.ok(token, "SendMessage", sendParams(text, mod))
	var r a2a.SendMessageResponse
	if err := a2a.Unmarshal(raw, &r); err != nil {
		e.t.Fatal(err)
	}
	if r.Task == nil {
		e.t.Fatalf("SendMessage %q: want a task, got %s", text, raw)
	}
	return r.Task
}

func decode[T any](t testing.TB, raw []byte) *T {
	t.Helper()
	var v T
	if err := a2a.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, raw)
	}
	return &v
}

// sseStream reads an SSE response event by event.
type sseStream struct {
	t      testing.TB
	resp   *http.Response
	r      *a2a.SSEReader
	v03    bool
	status int
	// errBody holds the JSON body of a non-SSE answer.
	errBody []byte
}

// openStream starts a streaming method. A non-SSE answer (an error before
// the stream started) is returned in errBody.
func (e *testEnv) openStream(token, method string, params any, hdr ...map[string]string) *sseStream {
	e.t.Helper()
	body, err := a2a.MarshalRequest(nextID(), method, params)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if len(hdr) > 0 {
		for k, v := range hdr[0] {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	s := &sseStream{t: e.t, resp: resp, status: resp.StatusCode, v03: strings.Contains(method, "/")}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		s.errBody, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return s
	}
	s.r = a2a.NewSSEReader(bufio.NewReader(resp.Body), 0)
	e.t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next returns the next event's JSON-RPC response, validated (v1.0: the
// result as a Stream Response), or nil at the end of the stream.
func (s *sseStream) next() *a2a.Response {
	s.t.Helper()
	if s.r == nil {
		s.t.Fatalf("not a stream: HTTP %d %s", s.status, s.errBody)
	}
	data, err := s.r.Next()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		s.t.Fatalf("reading stream: %v", err)
	}
	if s.v03 {
		a2atest.ValidateJSONRPCResponseV03(s.t, data)
	} else {
		a2atest.ValidateJSONRPCResponse(s.t, data, "Stream Response")
	}
	resp, perr := a2a.ParseResponse(append([]byte(nil), data...))
	if perr != nil {
		s.t.Fatalf("stream event: %v\n%s", perr, data)
	}
	return resp
}

// all reads the stream to its end and returns the v1.0 events (an error
// event ends the list and is returned separately).
func (s *sseStream) all() ([]a2a.StreamResponse, *a2a.Error) {
	s.t.Helper()
	var out []a2a.StreamResponse
	for {
		r := s.next()
		if r == nil {
			return out, nil
		}
		if r.Error != nil {
			if s.next() != nil {
				s.t.Errorf("events after an error event")
			}
			return out, r.Error
		}
		var ev a2a.StreamResponse
		if err := r.DecodeResult(&ev); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, ev)
	}
}

// raw03 reads a 0.3 stream to its end and returns the raw results.
func (s *sseStream) raw03() []map[string]any {
	s.t.Helper()
	var out []map[string]any
	for {
		r := s.next()
		if r == nil {
			return out
		}
		if r.Error != nil {
			s.t.Fatalf("0.3 stream error: %v", r.Error)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Result.(json.RawMessage), &m); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, m)
	}
}

func kinds(evs []a2a.StreamResponse) string {
	var b strings.Builder
	for i, ev := range evs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(ev.Kind())
		if ev.StatusUpdate != nil {
			b.WriteString(":" + strings.TrimPrefix(string(ev.StatusUpdate.Status.State), "TASK_STATE_"))
		}
		if ev.Task != nil {
			b.WriteString(":" + strings.TrimPrefix(string(ev.Task.Status.State), "TASK_STATE_"))
		}
	}
	return b.String()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return b
}

// instantExec is a host agent that answers every turn at once, inside
// StartTurn: the cheapest possible agent, for benchmarks and fuzzing.
type instantExec struct {
	m     *tasks.Manager
	reply *a2a.Message
}

func (x *instantExec) StartTurn(ctx context.Context, t *tasks.Turn) error {
	msg := *x.reply
	msg.MessageID = a2a.NewID()
	return x.m.Apply(ctx, t.TaskID, tasks.Update{Kind: tasks.UpdateFinal, Message: &msg})
}

func (x *instantExec) CancelTurn(ctx context.Context, t *tasks.Turn, reason string) error { return nil }

// newInstantServer builds a server over a memory store and an instant
// agent, with no tokens (loopback callers are local).
func newInstantServer(tb testing.TB, mods ...func(*Options)) (*Server, *tasks.Manager) {
	tb.Helper()
	st := store.NewMemory(10_000)
	x := &instantExec{reply: agentMsg("done")}
	mgr, err := tasks.NewManager(tasks.Options{Store: st, Executor: x, RequestTimeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	x.m = mgr
	if _, err := mgr.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	opts := Options{Tasks: mgr, Push: PushOptions{Enabled: true}}
	for _, m := range mods {
		m(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = mgr.Close(context.Background()) })
	return srv, mgr
}
