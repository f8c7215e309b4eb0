package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

func TestRESTRoutesServeEveryOperation(t *testing.T) {
	e := newEnv(t)
	task := e.send(tokAlice, "hello routes", nil)
	slow := e.startGated(tokAlice, "slow routes")
	defer e.exec.release(slow.ID)
	cfg := mustJSON(map[string]any{"id": "c1", "url": "https://client.example/cb"})
	cases := []struct {
		name, method, path string
		body               []byte
		def                string // schema definition of the result
	}{
		{"send", "POST", "/message:send", mustJSON(sendParams("hi", nil)), "Send Message Response"},
		{"get", "GET", "/tasks/" + task.ID + "?historyLength=1", nil, "Task"},
		{"get with a trailing slash", "GET", "/tasks/" + task.ID + "/", nil, "Task"},
		{"list", "GET", "/tasks?pageSize=5&includeArtifacts=true", nil, "List Tasks Response"},
		{"list, snake_case query", "GET", "/tasks?page_size=5&history_length=0&context_id=" + task.ContextID, nil, "List Tasks Response"},
		{"create push config", "POST", "/tasks/" + task.ID + "/pushNotificationConfigs", cfg, "Task Push Notification Config"},
		{"get push config", "GET", "/tasks/" + task.ID + "/pushNotificationConfigs/c1", nil, "Task Push Notification Config"},
		{"list push configs", "GET", "/tasks/" + task.ID + "/pushNotificationConfigs?pageSize=10", nil, "List Task Push Notification Configs Response"},
		{"delete push config", "DELETE", "/tasks/" + task.ID + "/pushNotificationConfigs/c1", nil, ""},
		{"cancel without a body", "POST", "/tasks/" + slow.ID + ":cancel", nil, "Task"},
		{"tenant prefix", "GET", "/acme/tasks/" + task.ID, nil, "Task"},
		{"tenant prefix, list", "GET", "/acme/tasks", nil, "List Tasks Response"},
		{"tenant prefix, send", "POST", "/acme/message:send", mustJSON(sendParams("hi tenant", nil)), "Send Message Response"},
		{"escaped tenant", "GET", "/a%2Fb/tasks", nil, "List Tasks Response"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := *e
			env.t = t
			r := env.restDo(tokAlice, c.method, c.path, c.body, nil)
			if r.status != 200 {
				t.Fatalf("HTTP %d %s", r.status, r.body)
			}
			if c.def != "" {
				a2atest.ValidateJSON(t, c.def, r.body)
			} else if string(r.body) != "{}" {
				t.Errorf("body %s, want {}", r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/a2a+json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestRESTSubscribeAcceptsGetAndPost(t *testing.T) {
	e := newEnv(t)
	for _, method := range []string{"GET", "POST"} {
		task := e.startGated(tokAlice, "slow "+method)
		s := e.openRESTStream(tokAlice, method, "/tasks/"+task.ID+":subscribe", nil, nil)
		if s.r == nil {
			t.Fatalf("%s: HTTP %d %s", method, s.status, s.errBody)
		}
		first, _ := s.next()
		e.exec.release(task.ID)
		rest, errEv := s.all()
		if first == nil || first.Task == nil || errEv != nil || kinds(rest) != "artifactUpdate,statusUpdate:COMPLETED" {
			t.Errorf("%s: first %+v, then %s, %v", method, first, kinds(rest), errEv)
		}
	}
}

func TestRESTUnknownRoutesAndMethods(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/nope", 404, ""},
		{"GET", "/tasks/a/b", 404, ""},
		{"POST", "/tasks/t1:explode", 405, "GET"}, // GET would read task "t1:explode"
		{"GET", "/tasks/t1/pushNotificationConfigs/c1/x", 404, ""},
		{"DELETE", "/tasks/t1", 405, "GET"},
		{"POST", "/tasks", 405, "GET"},
		{"GET", "/message:send", 405, "POST"},
		{"GET", "/tasks/t1:cancel", 405, "POST"},
		{"PUT", "/tasks/t1:subscribe", 405, "GET, POST"},
		{"PUT", "/tasks/t1/pushNotificationConfigs", 405, "POST, GET"},
		{"POST", "/tasks/t1/pushNotificationConfigs/c1", 405, "GET, DELETE"},
		{"GET", "/", 405, "POST"}, // the JSON-RPC endpoint
		{"GET", "/rpc", 405, "POST"},
	}
	for _, c := range cases {
		// No token: route misses are answered before authentication, as
		// unknown paths always were.
		r := e.restDo("", c.method, c.path, nil, nil)
		if r.status != c.status || r.header.Get("Allow") != c.allow || r.err == nil || r.err.Code != a2a.CodeMethodNotFound {
			t.Errorf("%s %s: HTTP %d Allow %q error %v", c.method, c.path, r.status, r.header.Get("Allow"), r.err)
		}
	}
	// The other routes are untouched.
	if status, _, b := e.post(tokAlice, []byte(`{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`), nil); status != 200 {
		t.Errorf("JSON-RPC: HTTP %d %s", status, b)
	}
	if resp, _ := fetchCard(t, e, "/.well-known/agent-card.json", nil); resp.StatusCode != 200 {
		t.Errorf("card: HTTP %d", resp.StatusCode)
	}
}

func TestRESTMediaTypes(t *testing.T) {
	e := newEnv(t)
	body := mustJSON(sendParams("hi", nil))
	cases := []struct {
		name    string
		hdr     map[string]string
		status  int
		ctype   string
		errCode int
	}{
		{"a2a+json", map[string]string{"Content-Type": "application/a2a+json"}, 200, "application/a2a+json", 0},
		{"json", map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200, "application/a2a+json", 0},
		{"accepts only json", map[string]string{"Accept": "application/json"}, 200, "application/json", 0},
		{"accepts both", map[string]string{"Accept": "application/a2a+json, application/json"}, 200, "application/a2a+json", 0},
		{"accepts anything", map[string]string{"Accept": "*/*"}, 200, "application/a2a+json", 0},
		{"text body", map[string]string{"Content-Type": "text/plain"}, 400, "application/a2a+json", a2a.CodeContentTypeNotSupported},
		{"text body, json answer", map[string]string{"Content-Type": "text/plain", "Accept": "application/json"}, 400, "application/json", a2a.CodeContentTypeNotSupported},
	}
	for _, c := range cases {
		r := e.restDo(tokAlice, "POST", "/message:send", body, c.hdr)
		code := 0
		if r.err != nil {
			code = r.err.Code
		}
		if r.status != c.status || r.header.Get("Content-Type") != c.ctype || code != c.errCode {
			t.Errorf("%s: HTTP %d %s code %d: %s", c.name, r.status, r.header.Get("Content-Type"), code, r.body)
		}
	}
}

func TestRESTRefusesMalformedRequests(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxBodyBytes = 4096; o.Limits.MaxJSONDepth = 8 })
	task := e.send(tokAlice, "hello", nil)
	deep := `{"message":` + strings.Repeat(`{"a":`, 10) + `1` + strings.Repeat(`}`, 10) + `}`
	cases := []struct {
		name, method, path, body string
		status, code             int
		field                    string
	}{
		{"not JSON", "POST", "/message:send", `{"message":`, 400, a2a.CodeParseError, ""},
		{"not an object", "POST", "/message:send", `[1,2]`, 400, a2a.CodeInvalidRequest, ""},
		{"not UTF-8", "POST", "/message:send", "{\"x\":\"\xff\"}", 400, a2a.CodeParseError, ""},
		{"too deep", "POST", "/message:send", deep, 400, a2a.CodeInvalidRequest, ""},
		{"too large", "POST", "/message:send", `{"x":"` + strings.Repeat("a", 5000) + `"}`, 413, a2a.CodeInvalidRequest, ""},
		{"empty send", "POST", "/message:send", ``, 400, a2a.CodeInvalidParams, "message.messageId"},
		{"bad boolean", "GET", "/tasks?includeArtifacts=perhaps", "", 400, a2a.CodeInvalidParams, "includeArtifacts"},
		{"bad number", "GET", "/tasks?pageSize=ten", "", 400, a2a.CodeInvalidParams, "pageSize"},
		{"bad state", "GET", "/tasks?status=TASK_STATE_NAPPING", "", 400, a2a.CodeInvalidParams, "status"},
		{"bad timestamp", "GET", "/tasks?statusTimestampAfter=yesterday", "", 400, a2a.CodeInvalidParams, "statusTimestampAfter"},
		{"body disagrees with the path", "POST", "/tasks/" + task.ID + "/pushNotificationConfigs", `{"taskId":"other","url":"https://client.example/cb"}`, 400, a2a.CodeInvalidParams, "taskId"},
		{"snake_case body disagrees with the path", "POST", "/tasks/" + task.ID + ":cancel", `{"id":"other"}`, 400, a2a.CodeInvalidParams, "id"},
		{"version 0.3", "GET", "/tasks/" + task.ID + "?A2A-Version=0.3", "", 400, a2a.CodeVersionNotSupported, ""},
	}
	for _, c := range cases {
		var body []byte
		if c.body != "" || c.method == "POST" {
			body = []byte(c.body)
		}
		hdr := map[string]string{}
		if strings.Contains(c.path, "A2A-Version") {
			hdr["A2A-Version"] = ""
		}
		r := e.restDo(tokAlice, c.method, c.path, body, hdr)
		if r.status != c.status || r.err == nil || r.err.Code != c.code || (c.field != "" && r.err.Metadata["field"] != c.field) {
			t.Errorf("%s: HTTP %d %s", c.name, r.status, r.body)
		}
	}
	// A body that agrees with the path is fine, in either spelling.
	r := e.restDo(tokAlice, "POST", "/tasks/"+task.ID+"/pushNotificationConfigs", []byte(`{"task_id":"`+task.ID+`","url":"https://client.example/cb"}`), nil)
	if r.status != 200 {
		t.Errorf("agreeing body: HTTP %d %s", r.status, r.body)
	}
}

func TestRESTStatusTimestampAfterAcceptsTheGoSDKName(t *testing.T) {
	e := newEnv(t)
	task := e.send(tokAlice, "hello", nil)
	future := queryTime(task.Status.Timestamp.Add(time.Hour))
	for _, key := range []string{"statusTimestampAfter", "lastUpdatedAfter"} {
		r := e.restDo(tokAlice, "GET", "/tasks?"+key+"="+future, nil, nil)
		if l := decode[a2a.ListTasksResponse](t, r.body); r.status != 200 || len(l.Tasks) != 0 {
			t.Errorf("%s: HTTP %d %s", key, r.status, r.body)
		}
	}
}

// queryTime renders a time as an RFC 3339 query value.
func queryTime(ts time.Time) string { return ts.UTC().Format("2006-01-02T15:04:05.000Z") }

func TestRESTSharesThePipeline(t *testing.T) {
	t.Run("rate limit", func(t *testing.T) {
		var mu sync.Mutex
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		e := newEnv(t, func(o *Options) { o.RateLimit = security.NewRateLimiter(3, clock) })
		// One budget for both bindings.
		e.ok(tokAlice, "ListTasks", &a2a.ListTasksRequest{})
		e.restDo(tokAlice, "GET", "/tasks", nil, nil)
		e.ok(tokAlice, "ListTasks", &a2a.ListTasksRequest{})
		r := e.restDo(tokAlice, "GET", "/tasks", nil, nil)
		if r.status != 429 || r.header.Get("Retry-After") != "60" || r.err == nil || r.err.Code != a2a.CodeRateLimited {
			t.Errorf("HTTP %d %v %s", r.status, r.header, r.body)
		}
	})
	t.Run("authentication", func(t *testing.T) {
		e := newEnv(t)
		r := e.restDo("", "GET", "/tasks", nil, nil)
		if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") || r.err.Reason != reasonUnauthenticated {
			t.Errorf("HTTP %d %v %s", r.status, r.header, r.body)
		}
	})
	t.Run("trust gate", func(t *testing.T) {
		gate, err := security.NewTrustGate([]string{"peer:alice"})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, func(o *Options) { o.Gate = gate })
		r := e.restDo(tokBob, "POST", "/message:send", mustJSON(sendParams("not allowed", nil)), nil)
		if r.status != 403 || r.err.Code != a2a.CodeUntrusted {
			t.Errorf("HTTP %d %s", r.status, r.body)
		}
	})
	t.Run("turn guard", func(t *testing.T) {
		e := newEnv(t, func(o *Options) { o.Turns = security.NewTurnGuard(2) })
		first := e.send(tokAlice, "hello", nil)
		in := func(q *a2a.SendMessageRequest) { q.Message.ContextID = first.ContextID }
		e.send(tokAlice, "again", in) // turn 1 of the context
		e.restDo(tokAlice, "POST", "/message:send", mustJSON(sendParams("and again", in)), nil)
		r := e.restDo(tokAlice, "POST", "/message:send", mustJSON(sendParams("once more", in)), nil)
		sr := decode[a2a.SendMessageResponse](t, r.body)
		if r.status != 200 || sr.Task == nil || sr.Task.Status.State != a2a.TaskStateRejected {
			t.Errorf("HTTP %d %s", r.status, r.body)
		}
	})
	t.Run("audit", func(t *testing.T) {
		dir := t.TempDir()
		log, err := security.NewAuditLog(dir+"/audit.jsonl", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, func(o *Options) { o.Audit = log })
		task := e.send(tokAlice, "secret words", nil)
		r := e.restDo(tokAlice, "POST", "/message:send", mustJSON(sendParams("secret words", nil)), nil)
		restTask := decode[a2a.SendMessageResponse](t, r.body).Task
		e.fails(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: "nope"})
		e.restDo(tokAlice, "GET", "/tasks/nope", nil, nil)
		e.rpc("wrong-token", "GetTask", &a2a.GetTaskRequest{ID: "nope"})
		e.restDo("wrong-token", "GET", "/tasks/nope", nil, nil)
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(dir + "/audit.jsonl")
		if strings.Contains(string(b), "secret words") {
			t.Errorf("the audit log holds content:\n%s", b)
		}
		var recs []security.AuditRecord
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var rec security.AuditRecord
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatal(err)
			}
			rec.Time, rec.DurationMS, rec.RequestBytes, rec.ResponseBytes = time.Time{}, 0, 0, 0
			recs = append(recs, rec)
		}
		if len(recs) != 6 {
			t.Fatalf("%d records:\n%s", len(recs), b)
		}
		if recs[1].TaskID != restTask.ID || recs[0].TaskID != task.ID {
			t.Errorf("task ids %q %q", recs[0].TaskID, recs[1].TaskID)
		}
		recs[1].TaskID, recs[1].ContextID = recs[0].TaskID, recs[0].ContextID
		for i := 0; i < 6; i += 2 {
			if recs[i] != recs[i+1] {
				t.Errorf("JSON-RPC and HTTP+JSON records differ:\n%+v\n%+v", recs[i], recs[i+1])
			}
		}
	})
}

func TestRESTStreamCutByShutdownEndsWithAnErrorEvent(t *testing.T) {
	e := newEnv(t)
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	e.url = base
	task := e.startGated(tokAlice, "slow long")
	s := e.openRESTStream(tokAlice, "GET", "/tasks/"+task.ID+":subscribe", nil, nil)
	if ev, _ := s.next(); ev == nil || ev.Task == nil {
		t.Fatalf("first event %+v", ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
	evs, errEv := s.all()
	if len(evs) != 0 || errEv == nil || errEv.Reason != reasonUnavailable {
		t.Errorf("events %s, error %v", kinds(evs), errEv)
	}
	e.exec.release(task.ID)
}

func TestRESTExtendedCard(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Card.ExtendedSkills = []a2a.AgentSkill{{ID: "secret", Name: "Secret", Description: "For friends", Tags: []string{"x"}}}
	})
	r := e.restDo(tokAlice, "GET", "/extendedAgentCard", nil, nil)
	if r.status != 200 {
		t.Fatalf("HTTP %d %s", r.status, r.body)
	}
	a2atest.ValidateJSON(t, "Agent Card", r.body)
	card := decode[a2a.AgentCard](t, r.body)
	if len(card.SupportedInterfaces) != 4 || card.SupportedInterfaces[2].ProtocolBinding != a2a.BindingHTTPJSON ||
		card.SupportedInterfaces[3].ProtocolBinding != a2a.BindingGRPC {
		t.Errorf("interfaces %+v", card.SupportedInterfaces)
	}
	if r := e.restDo("", "GET", "/extendedAgentCard", nil, nil); r.status != 401 {
		t.Errorf("anonymous: HTTP %d %s", r.status, r.body)
	}
}

// TestRESTCardInterfaceIsUsable follows the card: the HTTP+JSON interface
// URL plus a route reaches the server.
func TestRESTCardInterfaceIsUsable(t *testing.T) {
	e := newEnv(t)
	_, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	card, _ := splitCard(t, body)
	in, ok := card.PreferredInterface(a2a.BindingHTTPJSON)
	if !ok || in.ProtocolVersion != "1.0" {
		t.Fatalf("no HTTP+JSON interface: %+v", card.SupportedInterfaces)
	}
	req, _ := http.NewRequest("GET", in.URL+"/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET %s/tasks: HTTP %d", in.URL, resp.StatusCode)
	}
}
