package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
)

// TestTheCardDeclaresHTTPJSONBesideJSONRPC: the binary's card lists the
// two JSON-RPC interfaces, then HTTP+JSON 1.0 on the same base URL, and
// that URL serves the routes.
func TestTheCardDeclaresHTTPJSONBesideJSONRPC(t *testing.T) {
	h := startHost(t, nil)
	a := h.do(t, "", http.MethodGet, "/.well-known/agent-card.json", nil, nil)
	if a.status != 200 {
		t.Fatalf("card: HTTP %d", a.status)
	}
	card, err := a2a.ParseAgentCard(a.body)
	if err != nil {
		t.Fatal(err)
	}
	// The served card also carries the 0.3 keys; its v1.0 reading must
	// validate.
	v1, err := a2a.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	a2atest.ValidateJSON(t, "Agent Card", v1)
	want := []a2a.AgentInterface{
		{URL: h.url + "/", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: h.url + "/", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		{URL: h.url, ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"},
		{URL: strings.TrimPrefix(h.url, "http://"), ProtocolBinding: "GRPC", ProtocolVersion: "1.0"},
	}
	if fmt.Sprint(card.SupportedInterfaces) != fmt.Sprint(want) {
		t.Fatalf("supportedInterfaces = %+v\nwant %+v", card.SupportedInterfaces, want)
	}
	in, _ := card.PreferredInterface(a2a.BindingHTTPJSON)
	r, err := http.NewRequest(http.MethodGet, in.URL+"/tasks", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+tokAlice)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/a2a+json" {
		t.Errorf("GET %s/tasks: HTTP %d %s", in.URL, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// run records one binding's answers for comparison.
type run struct {
	t     *testing.T
	b     binding
	steps []string
}

func (r *run) record(label, what string) { r.steps = append(r.steps, label+": "+what) }

func (r *run) call(label, token string, op a2a.Operation, params any) json.RawMessage {
	r.t.Helper()
	res, e := r.b.call(r.t, token, op, params)
	if e != nil {
		r.record(label, "error "+summary(e))
		return nil
	}
	r.record(label, a2atest.Normalize(r.t, res))
	return res
}

func (r *run) fails(label, token string, op a2a.Operation, params any, code int) {
	r.t.Helper()
	_, e := r.b.call(r.t, token, op, params)
	r.record(label, "error "+summary(e))
	if e == nil || e.Code != code {
		r.t.Errorf("%s %s: %v, want code %d", r.b.name, label, e, code)
	}
}

func (r *run) task(label, token string, req *a2a.SendMessageRequest) *a2a.Task {
	r.t.Helper()
	res := r.call(label, token, a2a.OpSendMessage, req)
	var sr a2a.SendMessageResponse
	if res == nil || a2a.Unmarshal(res, &sr) != nil || sr.Task == nil {
		r.t.Fatalf("%s %s: no task: %s", r.b.name, label, res)
	}
	return sr.Task
}

func (r *run) stream(label, token string, op a2a.Operation, params any) {
	r.t.Helper()
	evs, e := r.b.open(r.t, token, op, params).all()
	for i, ev := range evs {
		b, _ := a2a.Marshal(ev)
		r.record(fmt.Sprintf("%s[%d]", label, i), a2atest.Normalize(r.t, b))
	}
	r.record(label+" end", summary(e))
}

// waitSlow waits until a slow task reported its progress (the turn now
// waits for its release).
func (r *run) waitSlow(id string) {
	r.t.Helper()
	waitFor(r.t, "task "+id+" to work", func() bool {
		res, e := r.b.call(r.t, tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: id, HistoryLength: a2a.Int32(0)})
		if e != nil {
			return false
		}
		var tk a2a.Task
		return a2a.Unmarshal(res, &tk) == nil && tk.Status.State == a2a.TaskStateWorking && tk.Status.Message != nil
	})
}

func msg(text string, mod func(*a2a.SendMessageRequest)) *a2a.SendMessageRequest {
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart(text))}
	if mod != nil {
		mod(req)
	}
	return req
}

func nonBlocking(q *a2a.SendMessageRequest) {
	q.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
}

// scenarios run through both bindings of one binary.
var scenarios = []struct {
	name string
	run  func(r *run)
}{
	{"blocking send and get", func(r *run) {
		tk := r.task("send", tokAlice, msg("hello binary", nil))
		r.call("get", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: tk.ID, HistoryLength: a2a.Int32(1)})
		r.call("get without history", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: tk.ID, HistoryLength: a2a.Int32(0)})
	}},
	{"direct reply", func(r *run) {
		r.call("send", tokAlice, a2a.OpSendMessage, msg("direct hi", nil))
	}},
	{"question, answer, then terminal", func(r *run) {
		tk := r.task("ask", tokAlice, msg("ask me", nil))
		r.task("answer", tokAlice, msg("blue", func(q *a2a.SendMessageRequest) { q.Message.TaskID = tk.ID }))
		r.fails("again", tokAlice, a2a.OpSendMessage, msg("again", func(q *a2a.SendMessageRequest) { q.Message.TaskID = tk.ID }), a2a.CodeUnsupportedOperation)
		r.fails("cancel", tokAlice, a2a.OpCancelTask, &a2a.CancelTaskRequest{ID: tk.ID}, a2a.CodeTaskNotCancelable)
		r.fails("subscribe", tokAlice, a2a.OpSubscribeToTask, &a2a.SubscribeToTaskRequest{ID: tk.ID}, a2a.CodeUnsupportedOperation)
	}},
	{"failed turn", func(r *run) {
		r.task("send", tokAlice, msg("fail now", nil))
	}},
	{"stream with progress and chunks", func(r *run) {
		r.stream("stream", tokAlice, a2a.OpSendStreamingMessage, msg("progress report", nil))
	}},
	{"stream answered by a message", func(r *run) {
		r.stream("stream", tokAlice, a2a.OpSendStreamingMessage, msg("direct streamed", nil))
	}},
	{"cancel and subscribe", func(r *run) {
		res, e := r.b.call(r.t, tokAlice, a2a.OpSendMessage, msg("slow cancel", nonBlocking))
		if e != nil {
			r.t.Fatal(e)
		}
		var sr a2a.SendMessageResponse
		_ = a2a.Unmarshal(res, &sr)
		r.waitSlow(sr.Task.ID)
		cancelled := r.call("cancel", tokAlice, a2a.OpCancelTask, &a2a.CancelTaskRequest{ID: sr.Task.ID})
		if !strings.Contains(string(cancelled), "TASK_STATE_CANCELED") {
			r.t.Errorf("%s: cancel answered %s", r.b.name, cancelled)
		}

		res, e = r.b.call(r.t, tokAlice, a2a.OpSendMessage, msg("slow subscribe", nonBlocking))
		if e != nil {
			r.t.Fatal(e)
		}
		_ = a2a.Unmarshal(res, &sr)
		r.waitSlow(sr.Task.ID)
		s := r.b.open(r.t, tokAlice, a2a.OpSubscribeToTask, &a2a.SubscribeToTaskRequest{ID: sr.Task.ID})
		first, e := s.next()
		if e != nil || first == nil {
			r.t.Fatalf("%s: subscribe: %v", r.b.name, e)
		}
		r.b.h.agent.release(sr.Task.ID)
		rest, e := s.all()
		evs := append([]a2a.StreamResponse{*first}, rest...)
		for i, ev := range evs {
			b, _ := a2a.Marshal(ev)
			r.record(fmt.Sprintf("subscribe[%d]", i), a2atest.Normalize(r.t, b))
		}
		r.record("subscribe end", summary(e))
		if got := labels(evs); got != "task:TASK_STATE_WORKING,artifactUpdate,status:TASK_STATE_COMPLETED" {
			r.t.Errorf("%s: subscribe events %s", r.b.name, got)
		}
	}},
	{"list a context", func(r *run) {
		first := r.task("send 1", tokAlice, msg("progress one", nil))
		in := func(q *a2a.SendMessageRequest) { q.Message.ContextID = first.ContextID }
		time.Sleep(3 * time.Millisecond) // distinct status timestamps: a stable order
		r.task("send 2", tokAlice, msg("echo two", in))
		r.call("list", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: first.ContextID})
		r.call("list with artifacts", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: first.ContextID,
			IncludeArtifacts: true, HistoryLength: a2a.Int32(0), Status: a2a.TaskStateCompleted, PageSize: a2a.Int32(1)})
		r.call("bob's view", tokBob, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: first.ContextID})
	}},
	{"push configs", func(r *run) {
		tk := r.task("send", tokAlice, msg("hello push", nil))
		r.call("create", tokAlice, a2a.OpCreatePushConfig, &a2a.TaskPushNotificationConfig{TaskID: tk.ID, ID: "c1", URL: "http://127.0.0.1:9/hook", Token: "tok",
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"}})
		r.call("get", tokAlice, a2a.OpGetPushConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskID: tk.ID, ID: "c1"})
		r.call("list", tokAlice, a2a.OpListPushConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: tk.ID})
		r.call("delete", tokAlice, a2a.OpDeletePushConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: tk.ID, ID: "c1"})
		r.call("delete again", tokAlice, a2a.OpDeletePushConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: tk.ID, ID: "c1"})
		r.fails("get deleted", tokAlice, a2a.OpGetPushConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskID: tk.ID, ID: "c1"}, a2a.CodeTaskNotFound)
		r.fails("private webhook", tokAlice, a2a.OpCreatePushConfig, &a2a.TaskPushNotificationConfig{TaskID: tk.ID, URL: "http://10.1.2.3/hook"}, a2a.CodeInvalidParams)
	}},
	{"unknown and foreign tasks", func(r *run) {
		tk := r.task("alice's", tokAlice, msg("mine", nil))
		for _, c := range []struct{ who, tok, id string }{{"unknown", tokAlice, "no-such-task"}, {"foreign", tokBob, tk.ID}} {
			r.fails(c.who+" get", c.tok, a2a.OpGetTask, &a2a.GetTaskRequest{ID: c.id}, a2a.CodeTaskNotFound)
			r.fails(c.who+" cancel", c.tok, a2a.OpCancelTask, &a2a.CancelTaskRequest{ID: c.id}, a2a.CodeTaskNotFound)
			r.fails(c.who+" subscribe", c.tok, a2a.OpSubscribeToTask, &a2a.SubscribeToTaskRequest{ID: c.id}, a2a.CodeTaskNotFound)
			r.fails(c.who+" push list", c.tok, a2a.OpListPushConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: c.id}, a2a.CodeTaskNotFound)
		}
	}},
	{"invalid requests", func(r *run) {
		r.fails("page size", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{PageSize: a2a.Int32(500)}, a2a.CodeInvalidParams)
		r.fails("state", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{Status: "TASK_STATE_NAPPING"}, a2a.CodeInvalidParams)
		r.fails("history", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x", HistoryLength: a2a.Int32(-2)}, a2a.CodeInvalidParams)
		r.fails("no parts", tokAlice, a2a.OpSendMessage, &a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser}}, a2a.CodeInvalidParams)
		r.fails("media type", tokAlice, a2a.OpSendMessage,
			&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.URLPart("https://example.com/v.mp4", "video/mp4", "v.mp4"))}, a2a.CodeContentTypeNotSupported)
		r.fails("extended card without a token", "", a2a.OpGetExtendedCard, &a2a.GetExtendedAgentCardRequest{}, a2a.CodeUnauthorized)
	}},
	{"who may do what", func(r *run) {
		r.fails("no token", "", a2a.OpListTasks, &a2a.ListTasksRequest{}, a2a.CodeUnauthorized)
		r.fails("bad token", "not-a-token-0123456789", a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x"}, a2a.CodeUnauthorized)
		r.fails("public list", tokCarol, a2a.OpListTasks, &a2a.ListTasksRequest{}, a2a.CodeUnauthorized)
		r.fails("public send (trust gate)", tokCarol, a2a.OpSendMessage, msg("let me in", nil), a2a.CodeUntrusted)
		r.stream("public stream (trust gate)", tokCarol, a2a.OpSendStreamingMessage, msg("let me in", nil))
	}},
	{"version", func(r *run) {
		b := r.b
		r.b.hdr = map[string]string{"A2A-Version": "9.9"}
		r.fails("unsupported", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x"}, a2a.CodeVersionNotSupported)
		r.b = b
	}},
}

// TestBothBindingsGiveTheSameAnswers runs every scenario through the
// binary's JSON-RPC and HTTP+JSON bindings and requires the same record:
// results modulo ids and timestamps, errors by code, reason, metadata
// keys and message (and, over HTTP+JSON, the HTTP status and status name
// of the specification's mapping).
func TestBothBindingsGiveTheSameAnswers(t *testing.T) {
	h := startHost(t, nil)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var recs [2][]string
			for i, b := range []binding{{name: "JSONRPC", h: h}, {name: "HTTP+JSON", h: h, rest: true}} {
				r := &run{t: t, b: b}
				sc.run(r)
				recs[i] = r.steps
			}
			if len(recs[0]) == 0 || len(recs[0]) != len(recs[1]) {
				t.Fatalf("JSON-RPC recorded %d steps, HTTP+JSON %d", len(recs[0]), len(recs[1]))
			}
			for i := range recs[0] {
				if recs[0][i] != recs[1][i] {
					t.Errorf("step %d differs:\n  JSONRPC:   %s\n  HTTP+JSON: %s", i, recs[0][i], recs[1][i])
				}
			}
		})
	}
}

// TestHTTPJSONSpecificsThroughTheBinary: what only the HTTP+JSON binding
// has — tenant prefixes, subscribe by POST, route errors, media types,
// query parameters — as the binary serves it.
func TestHTTPJSONSpecificsThroughTheBinary(t *testing.T) {
	h := startHost(t, nil)
	send := func(path, text string, hdr map[string]string) answer {
		b, _ := a2a.Marshal(msg(text, nil))
		return h.do(t, tokAlice, http.MethodPost, path, b, hdr)
	}
	a := send("/acme/message:send", "hello tenant", nil)
	var sr a2a.SendMessageResponse
	if a.status != 200 || a2a.Unmarshal(a.body, &sr) != nil || sr.Task == nil {
		t.Fatalf("tenant send: HTTP %d %s", a.status, a.body)
	}
	if a := h.do(t, tokAlice, http.MethodGet, "/acme/tasks/"+sr.Task.ID+"?history_length=0", nil, nil); a.status != 200 || strings.Contains(string(a.body), `"history"`) {
		t.Errorf("tenant get, snake_case query: HTTP %d %s", a.status, a.body)
	}
	if a := send("/message:send", "hello json", map[string]string{"Accept": "application/json"}); a.status != 200 || a.header.Get("Content-Type") != "application/json" {
		t.Errorf("Accept application/json: HTTP %d %s", a.status, a.header.Get("Content-Type"))
	}
	if a := send("/message:send", "hello text", map[string]string{"Content-Type": "text/plain"}); a.status != 400 ||
		statusError(t, 400, a.body).Code != a2a.CodeContentTypeNotSupported {
		t.Errorf("text/plain body: HTTP %d %s", a.status, a.body)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/no/such/route/here", 404}, {"DELETE", "/tasks/x", 405}, {"GET", "/", 405}} {
		a := h.do(t, "", c.method, c.path, nil, nil)
		if a.status != c.status || statusError(t, c.status, a.body).Code != a2a.CodeMethodNotFound {
			t.Errorf("%s %s: HTTP %d %s", c.method, c.path, a.status, a.body)
		}
	}
	// Subscribe by POST, as the specification text has it.
	b := binding{name: "HTTP+JSON", h: h, rest: true}
	res, e := b.call(t, tokAlice, a2a.OpSendMessage, msg("slow post", nonBlocking))
	if e != nil {
		t.Fatal(e)
	}
	_ = a2a.Unmarshal(res, &sr)
	r := &run{t: t, b: b}
	r.waitSlow(sr.Task.ID)
	s := h.openStream(t, tokAlice, true, http.MethodPost, "/tasks/"+sr.Task.ID+":subscribe", nil)
	first, e := s.next()
	if e != nil || first == nil || first.Task == nil {
		t.Fatalf("POST subscribe: first event %v, %v", first, e)
	}
	h.agent.release(sr.Task.ID)
	evs, e := s.all()
	if e != nil || labels(evs) != "artifactUpdate,status:TASK_STATE_COMPLETED" {
		t.Errorf("POST subscribe: %s, %v", labels(evs), e)
	}
}
