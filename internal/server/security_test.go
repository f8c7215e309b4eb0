package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// goodClient sends blocking echo messages as alice until stopped, counting
// answers and failures. It shows that hostile traffic does not starve a
// well-behaved peer.
type goodClient struct {
	ok, failed atomic.Int64
	firstErr   atomic.Value
	stop       chan struct{}
	done       chan struct{}
}

func startGoodClient(url string) *goodClient {
	g := &goodClient{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		for i := 0; ; i++ {
			select {
			case <-g.stop:
				return
			default:
			}
			body, _ := a2a.MarshalRequest(i, "SendMessage", sendParams(fmt.Sprintf("good %d", i), nil))
			req, _ := http.NewRequest(http.MethodPost, url+"/", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			req.Header.Set("Authorization", "Bearer "+tokAlice)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				g.fail(err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r, err := a2a.ParseResponse(b)
			if err != nil || r.Error != nil || !strings.Contains(string(b), "TASK_STATE_COMPLETED") {
				g.fail(fmt.Errorf("HTTP %d: %s", resp.StatusCode, b))
				continue
			}
			g.ok.Add(1)
		}
	}()
	return g
}

func (g *goodClient) fail(err error) {
	g.failed.Add(1)
	g.firstErr.CompareAndSwap(nil, err)
}

func (g *goodClient) finish(t *testing.T) {
	t.Helper()
	close(g.stop)
	<-g.done
	if n := g.failed.Load(); n > 0 {
		t.Errorf("the well-behaved client failed %d time(s): %v", n, g.firstErr.Load())
	}
	if g.ok.Load() == 0 {
		t.Error("the well-behaved client was never served")
	}
}

// expectRefusal checks an error response: HTTP status, JSON-RPC code and
// a well-formed body.
func expectRefusal(t *testing.T, status int, body []byte, wantStatus, wantCode int) *a2a.Error {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("HTTP %d, want %d: %s", status, wantStatus, body)
	}
	a2atest.ValidateJSONRPCResponse(t, body, "")
	r, err := a2a.ParseResponse(body)
	if err != nil || r.Error == nil {
		t.Fatalf("not an error response: %s", body)
	}
	if r.Error.Code != wantCode {
		t.Fatalf("code %d (%s), want %d: %s", r.Error.Code, r.Error.Reason, wantCode, body)
	}
	return r.Error
}

func TestHostileRequestsAreRefusedWhileOthersAreServed(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Limits.MaxBodyBytes = 256 << 10
		o.Limits.MaxPartBytes = 4 << 10
	})
	good := startGoodClient(e.url)
	defer good.finish(t)

	send := func(text string, mod func(*a2a.SendMessageRequest)) []byte {
		b, _ := a2a.MarshalRequest(1, "SendMessage", sendParams(text, mod))
		return b
	}
	rawSend := func(message string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + message + `}}`)
	}
	cases := []struct {
		name   string
		token  string
		body   []byte
		hdr    map[string]string
		status int
		code   int
		check  func(t *testing.T, h http.Header, e *a2a.Error)
	}{
		{name: "no token", body: send("hi", nil), status: 401, code: a2a.CodeUnauthorized,
			check: func(t *testing.T, h http.Header, e *a2a.Error) {
				if !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") || strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
					t.Errorf("WWW-Authenticate = %q", h.Get("WWW-Authenticate"))
				}
			}},
		{name: "wrong token", token: "not-a-known-token", body: send("hi", nil), status: 401, code: a2a.CodeUnauthorized,
			check: func(t *testing.T, h http.Header, e *a2a.Error) {
				if !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
					t.Errorf("WWW-Authenticate = %q", h.Get("WWW-Authenticate"))
				}
				if strings.Contains(e.Message, "not-a-known-token") {
					t.Errorf("the refusal echoes the token: %s", e.Message)
				}
			}},
		{name: "basic auth", body: send("hi", nil), hdr: map[string]string{"Authorization": "Basic YWxpY2U6cHc="}, status: 401, code: a2a.CodeUnauthorized},
		{name: "oversize body", token: tokAlice, body: send(strings.Repeat("x", 300<<10), nil), status: 413, code: a2a.CodeInvalidRequest,
			check: func(t *testing.T, h http.Header, e *a2a.Error) {
				if e.Reason != reasonTooLarge {
					t.Errorf("reason %s", e.Reason)
				}
			}},
		{name: "deep nesting", token: tokAlice, body: rawSend(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"a":` +
			strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}}`), status: 200, code: a2a.CodeInvalidRequest},
		{name: "thousands of parts", token: tokAlice, body: rawSend(`{"messageId":"m","role":"ROLE_USER","parts":[` +
			strings.TrimSuffix(strings.Repeat(`{"text":"a"},`, 100), ",") + `]}`), status: 200, code: a2a.CodeInvalidParams},
		{name: "tens of thousands of tiny values", token: tokAlice, body: rawSend(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"k":[` +
			strings.TrimSuffix(strings.Repeat(`null,`, 20000), ",") + `]}}`), status: 413, code: a2a.CodeInvalidRequest,
			check: func(t *testing.T, h http.Header, e *a2a.Error) {
				if e.Reason != reasonTooLarge || e.Metadata["maxValues"] == "" || !strings.Contains(e.Message, "JSON values") {
					t.Errorf("refusal = %s %v: %s", e.Reason, e.Metadata, e.Message)
				}
			}},
		{name: "part over the size limit", token: tokAlice, body: send(strings.Repeat("y", 5<<10), nil), status: 200, code: a2a.CodeInvalidParams},
		{name: "control character in messageId", token: tokAlice, body: rawSend(`{"messageId":"a\u0007b","role":"ROLE_USER","parts":[{"text":"x"}]}`), status: 200, code: a2a.CodeInvalidParams},
		{name: "newline in contextId", token: tokAlice, body: rawSend(`{"messageId":"m","contextId":"c\nX-Evil: 1","role":"ROLE_USER","parts":[{"text":"x"}]}`), status: 200, code: a2a.CodeInvalidParams},
		{name: "lone surrogate in taskId", token: tokAlice, body: rawSend(`{"messageId":"m","taskId":"\ud800","role":"ROLE_USER","parts":[{"text":"x"}]}`), status: 200, code: a2a.CodeInvalidParams},
		{name: "invalid UTF-8", token: tokAlice, body: []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` +
			"\xff\xfe" + `"}]}}}`), status: 200, code: a2a.CodeParseError},
		{name: "overlong id", token: tokAlice, body: rawSend(`{"messageId":"` + strings.Repeat("m", 300) + `","role":"ROLE_USER","parts":[{"text":"x"}]}`), status: 200, code: a2a.CodeInvalidParams},
		{name: "NUL in method name", token: tokAlice, body: []byte(`{"jsonrpc":"2.0","id":1,"method":"Get\u0000Task","params":{"id":"x"}}`), status: 200, code: a2a.CodeMethodNotFound},
		{name: "public peer may not list", token: tokCarol, body: []byte(`{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`), status: 200, code: a2a.CodeUnauthorized,
			check: func(t *testing.T, h http.Header, e *a2a.Error) {
				if e.Reason != reasonUnauthorized || !strings.Contains(e.Message, "public") || !strings.Contains(e.Message, "ListTasks") {
					t.Errorf("refusal = %s: %s", e.Reason, e.Message)
				}
			}},
		{name: "public peer may not register webhooks", token: tokCarol, body: []byte(`{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","url":"https://x.example/h"}}`), status: 200, code: a2a.CodeUnauthorized},
		{name: "public peer may not send inline webhooks", token: tokCarol, body: send("hi", func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://x.example/h"}}
		}), status: 200, code: a2a.CodeUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			status, h, b := e.post(tc.token, tc.body, hdr)
			err := expectRefusal(t, status, b, tc.status, tc.code)
			if tc.check != nil {
				tc.check(t, h, err)
			}
		})
	}
	// Nothing of the above reached the host.
	for _, text := range e.exec.turnTexts() {
		if !strings.HasPrefix(text, "good ") {
			t.Errorf("a hostile request reached the host: %q", text)
		}
	}
}

func TestForgedIdentityInTheBodyIsIgnored(t *testing.T) {
	e := newEnv(t)
	forged := map[string]any{"identity": "peer:bob", "owner": "peer:bob", "caller": map[string]any{"id": "peer:bob", "tier": "local"}, "authenticated": true}
	task := e.send(tokAlice, "hello", func(r *a2a.SendMessageRequest) {
		r.Message.Metadata = forged
		r.Metadata = forged
		r.Tenant = "bob"
	})
	if turn := e.exec.lastTurn(); turn.Sender.ID != "peer:alice" || turn.Sender.Tier != security.TierTrusted {
		t.Errorf("the host saw sender %+v", turn.Sender)
	}
	if err := e.fails(tokBob, "GetTask", &a2a.GetTaskRequest{ID: task.ID}); err.Code != a2a.CodeTaskNotFound {
		t.Errorf("bob reads alice's task: %v", err)
	}
	e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: task.ID})
}

func TestAnotherPeersTaskAnswersLikeAnUnknownOne(t *testing.T) {
	e := newEnv(t)
	bobDone := e.send(tokBob, "hello", nil)
	bobAsk := e.send(tokBob, "ask something", nil)
	bobSlow := e.startGated(tokBob, "slow work")
	defer e.exec.release(bobSlow.ID)
	e.ok(tokBob, "CreateTaskPushNotificationConfig", &a2a.TaskPushNotificationConfig{TaskID: bobDone.ID, ID: "bobs", URL: "https://bob.example/hook"})

	const unknown = "00000000-0000-4000-8000-000000000000"
	same := func(t *testing.T, method string, params func(id string) any) {
		t.Helper()
		for _, pair := range [][2]string{{bobDone.ID, unknown}, {bobAsk.ID, unknown}, {bobSlow.ID, unknown}} {
			var errs [2]*a2a.Error
			for i, id := range pair {
				r := e.rpc(tokAlice, method, params(id), map[string]string{"A2A-Version": versionFor(method)})
				if r.err == nil {
					t.Fatalf("%s(%s) succeeded for another peer: %s", method, id, r.body)
				}
				errs[i] = r.err
			}
			a, b := errs[0], errs[1]
			if a.Code != a2a.CodeTaskNotFound || a.Code != b.Code || a.Reason != b.Reason ||
				strings.ReplaceAll(a.Message, pair[0], "ID") != strings.ReplaceAll(b.Message, pair[1], "ID") {
				t.Errorf("%s: another peer's task answers %d %q, an unknown one %d %q", method, a.Code, a.Message, b.Code, b.Message)
			}
		}
	}
	cases := map[string]func(id string) any{
		"GetTask":           func(id string) any { return &a2a.GetTaskRequest{ID: id} },
		"CancelTask":        func(id string) any { return &a2a.CancelTaskRequest{ID: id} },
		"SubscribeToTask":   func(id string) any { return &a2a.SubscribeToTaskRequest{ID: id} },
		"tasks/get":         func(id string) any { return map[string]any{"id": id} },
		"tasks/cancel":      func(id string) any { return map[string]any{"id": id} },
		"tasks/resubscribe": func(id string) any { return map[string]any{"id": id} },
		"SendMessage": func(id string) any {
			return sendParams("answer", func(r *a2a.SendMessageRequest) { r.Message.TaskID = id })
		},
		"SendStreamingMessage": func(id string) any {
			return sendParams("answer", func(r *a2a.SendMessageRequest) { r.Message.TaskID = id })
		},
		"CreateTaskPushNotificationConfig": func(id string) any {
			return &a2a.TaskPushNotificationConfig{TaskID: id, URL: "https://alice.example/hook"}
		},
		"GetTaskPushNotificationConfig": func(id string) any {
			return &a2a.GetTaskPushNotificationConfigRequest{TaskID: id, ID: "bobs"}
		},
		"ListTaskPushNotificationConfigs": func(id string) any {
			return &a2a.ListTaskPushNotificationConfigsRequest{TaskID: id}
		},
		"DeleteTaskPushNotificationConfig": func(id string) any {
			return &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: id, ID: "bobs"}
		},
		"tasks/pushNotificationConfig/get":    func(id string) any { return map[string]any{"id": id, "pushNotificationConfigId": "bobs"} },
		"tasks/pushNotificationConfig/delete": func(id string) any { return map[string]any{"id": id, "pushNotificationConfigId": "bobs"} },
	}
	for method, params := range cases {
		t.Run(method, func(t *testing.T) { same(t, method, params) })
	}
	// Bob's task and config are untouched.
	if got := decode[a2a.Task](t, e.ok(tokBob, "GetTask", &a2a.GetTaskRequest{ID: bobSlow.ID})); got.Status.State != a2a.TaskStateWorking {
		t.Errorf("bob's slow task is %s", got.Status.State)
	}
	e.ok(tokBob, "GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskID: bobDone.ID, ID: "bobs"})
	// Listing shows only alice's own tasks, even in bob's context.
	e.send(tokAlice, "mine", nil)
	for _, req := range []*a2a.ListTasksRequest{{}, {ContextID: bobDone.ContextID}} {
		l := decode[a2a.ListTasksResponse](t, e.ok(tokAlice, "ListTasks", req))
		for _, task := range l.Tasks {
			if task.ID == bobDone.ID || task.ID == bobAsk.ID || task.ID == bobSlow.ID {
				t.Errorf("alice lists bob's task %s", task.ID)
			}
		}
		if req.ContextID != "" && (len(l.Tasks) != 0 || l.TotalSize != 0) {
			t.Errorf("alice sees %d task(s) in bob's context", l.TotalSize)
		}
	}
}

// versionFor picks the A2A-Version header that matches a method name.
func versionFor(method string) string {
	if strings.Contains(method, "/") {
		return "0.3"
	}
	return "1.0"
}

func TestTrustGateKeepsOthersFromRunningTasks(t *testing.T) {
	gate, err := security.NewTrustGate([]string{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *Options) { o.Gate = gate })
	e.send(tokAlice, "allowed", nil)
	for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
		r := e.rpc(tokBob, method, sendParams("not allowed", nil))
		if r.err == nil || r.err.Code != a2a.CodeUntrusted || r.err.Reason != reasonUntrusted || !strings.Contains(r.err.Message, "peer:bob") {
			t.Errorf("%s: %s", method, r.body)
		}
	}
	// Reading is not running: bob may still list his (zero) tasks.
	e.ok(tokBob, "ListTasks", &a2a.ListTasksRequest{})
}

func TestRateLimitRefusesWithRetryAfter(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, func(o *Options) { o.RateLimit = security.NewRateLimiter(3, clock) })
	list := []byte(`{"jsonrpc":"2.0","id":7,"method":"ListTasks"}`)
	for i := 0; i < 3; i++ {
		if status, _, b := e.post(tokAlice, list, nil); status != 200 {
			t.Fatalf("request %d: HTTP %d %s", i, status, b)
		}
	}
	status, h, b := e.post(tokAlice, list, nil)
	err := expectRefusal(t, status, b, http.StatusTooManyRequests, a2a.CodeRateLimited)
	if h.Get("Retry-After") != "60" || err.Metadata["retryAfterSeconds"] != "60" || err.Reason != reasonRateLimited {
		t.Errorf("Retry-After %q, error %+v", h.Get("Retry-After"), err)
	}
	// Another identity has its own budget.
	if status, _, b := e.post(tokBob, list, nil); status != 200 {
		t.Errorf("bob: HTTP %d %s", status, b)
	}
	// Token guessing is limited per address.
	for i := 0; i < 3; i++ {
		if status, _, _ := e.post("guess-"+fmt.Sprint(i), list, nil); status != 401 {
			t.Fatalf("guess %d: HTTP %d", i, status)
		}
	}
	if status, _, _ := e.post("guess-x", list, nil); status != 429 {
		t.Errorf("guessing past the limit: HTTP %d", status)
	}
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	if status, _, b := e.post(tokAlice, list, nil); status != 200 {
		t.Errorf("after the window: HTTP %d %s", status, b)
	}
}

func TestStreamLimitPerIdentity(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Streams = security.NewStreamLimiter(1) })
	task := e.startGated(tokAlice, "slow stream")
	first := e.openStream(tokAlice, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: task.ID})
	if first.r == nil {
		t.Fatalf("first stream: %s", first.errBody)
	}
	first.next()
	second := e.openStream(tokAlice, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: task.ID})
	err := expectRefusal(t, second.status, second.errBody, http.StatusTooManyRequests, a2a.CodeRateLimited)
	if err.Reason != reasonTooManyStreams {
		t.Errorf("reason %s", err.Reason)
	}
	// A send that would stream is refused too, before any task is made.
	third := e.openStream(tokAlice, "SendStreamingMessage", sendParams("hi", nil))
	expectRefusal(t, third.status, third.errBody, http.StatusTooManyRequests, a2a.CodeRateLimited)
	e.exec.release(task.ID)
	if _, errEv := first.all(); errEv != nil {
		t.Fatal(errEv)
	}
	waitFor(t, "the slot to be released", func() bool { return e.srv.pipe.streams.open() == 0 })
	if evs, errEv := e.openStream(tokAlice, "SendStreamingMessage", sendParams("hi", nil)).all(); errEv != nil || len(evs) == 0 {
		t.Errorf("after release: %v %v", kinds(evs), errEv)
	}
}

func TestTurnGuardRejectsLoopsAndCancelResets(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Turns = security.NewTurnGuard(2) })
	// Conversations by label: the first message opens one (a peer names
	// only contexts the agent returned to it), the next ones name it.
	conv := map[string]string{}
	in := func(label string) func(*a2a.SendMessageRequest) {
		return func(r *a2a.SendMessageRequest) { r.Message.ContextID = conv[label] }
	}
	send := func(text, label string) *a2a.Task {
		t.Helper()
		task := e.send(tokAlice, text, in(label))
		conv[label] = task.ContextID
		return task
	}
	send("one", "loop")
	send("two", "loop")
	hostTurns := len(e.exec.turnTexts())
	third := send("three", "loop")
	if third.Status.State != a2a.TaskStateRejected || third.Status.Message == nil ||
		!strings.Contains(third.Status.Message.Text(), "A2A_MAX_PINGPONG_TURNS") || !strings.Contains(third.Status.Message.Text(), conv["loop"]) {
		t.Fatalf("third turn = %s", mustJSON(third))
	}
	if len(e.exec.turnTexts()) != hostTurns {
		t.Error("a rejected turn reached the host")
	}
	// A continuation by task id counts in its task's context.
	asked := send("ask me", "ask")
	answered := e.send(tokAlice, "red", func(r *a2a.SendMessageRequest) { r.Message.TaskID = asked.ID })
	if answered.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("continuation = %s", answered.Status.State)
	}
	if again := send("more", "ask"); again.Status.State != a2a.TaskStateRejected {
		t.Errorf("third turn in ctx-ask = %s", again.Status.State)
	}
	// Cancel resets the count.
	pending := send("ask again", "reset")
	send("two", "reset")
	if r := send("three", "reset"); r.Status.State != a2a.TaskStateRejected {
		t.Fatalf("third = %s", r.Status.State)
	}
	e.ok(tokAlice, "CancelTask", &a2a.CancelTaskRequest{ID: pending.ID})
	if r := send("after cancel", "reset"); r.Status.State != a2a.TaskStateCompleted {
		t.Errorf("after cancel = %s", r.Status.State)
	}
}

func TestDelegationChainTooDeepIsRejected(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxDelegationDepth = 2 })
	chain := func(depth any) func(*a2a.SendMessageRequest) {
		return func(r *a2a.SendMessageRequest) {
			r.Message.Metadata = map[string]any{security.MetaChainID: "chain-abc", security.MetaChainDepth: depth}
		}
	}
	if ok := e.send(tokAlice, "fine", chain(2)); ok.Status.State != a2a.TaskStateCompleted {
		t.Errorf("depth 2 = %s", ok.Status.State)
	}
	deep := e.send(tokAlice, "too deep", chain(3))
	msg := deep.Status.Message.Text()
	if deep.Status.State != a2a.TaskStateRejected || !strings.Contains(msg, "chain-abc") || !strings.Contains(msg, "3 hops") {
		t.Errorf("depth 3 = %s: %s", deep.Status.State, msg)
	}
	if err := e.fails(tokAlice, "SendMessage", sendParams("bad", chain("-1"))); err.Code != a2a.CodeInvalidParams {
		t.Errorf("malformed depth: %v", err)
	}
}

func TestSlowLorisHeadersAreCutWhileOthersAreServed(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.ReadHeaderTimeout = 200 * time.Millisecond })
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: appl"))
		conns = append(conns, c)
	}
	e.url = base
	good := startGoodClient(base)
	time.Sleep(300 * time.Millisecond)
	good.finish(t)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, err := io.ReadAll(c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("connection %d still open after the header timeout", i)
		}
		if len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 408") && !strings.HasPrefix(string(b), "HTTP/1.1 400") {
			t.Errorf("connection %d got %q", i, b)
		}
	}
}

func TestStartReportsAPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	e := newEnv(t)
	_, err = e.srv.Start(context.Background(), ln.Addr().String(), "", "")
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) || !strings.Contains(err.Error(), "A2A_PORT") {
		t.Errorf("err = %v", err)
	}
}

func TestShutdownDrainsThenCutsStreams(t *testing.T) {
	e := newEnv(t)
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	e.url = base
	// A stream that finishes during the drain is delivered completely.
	short := e.startGated(tokAlice, "slow short")
	s1 := e.openStream(tokAlice, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: short.ID})
	s1.next()
	// A stream that outlives the drain gets a goodbye event.
	long := e.startGated(tokAlice, "slow long")
	s2 := e.openStream(tokAlice, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: long.ID})
	s2.next()
	go func() {
		time.Sleep(50 * time.Millisecond)
		e.exec.release(short.ID)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err = e.srv.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "1 open stream") {
		t.Errorf("Shutdown = %v", err)
	}
	if evs, errEv := s1.all(); errEv != nil || kinds(evs) != "artifactUpdate,statusUpdate:COMPLETED" {
		t.Errorf("drained stream: %s %v", kinds(evs), errEv)
	}
	_, errEv := s2.all()
	if errEv == nil || errEv.Reason != reasonUnavailable {
		t.Errorf("cut stream ended with %v", errEv)
	}
	e.exec.release(long.ID)
	// The task itself goes on.
	waitFor(t, "the long task to finish", func() bool {
		task, err := e.mgr.Get(context.Background(), "", &a2a.GetTaskRequest{ID: long.ID})
		return err == nil && task.Status.State == a2a.TaskStateCompleted
	})
}

func TestAuditRecordsEveryExchangeWithoutContent(t *testing.T) {
	dir := t.TempDir()
	log, err := security.NewAuditLog(dir+"/audit.jsonl", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *Options) { o.Audit = log })
	task := e.send(tokAlice, "secret words", nil)
	e.post("wrong-token", []byte(`{}`), nil)
	e.fails(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: "nope"})
	fetchCard(t, e, "/.well-known/agent-card.json", map[string]string{"Authorization": "Bearer " + tokBob})
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dir + "/audit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret words") || strings.Contains(string(b), tokAlice) || strings.Contains(string(b), "wrong-token") {
		t.Errorf("the audit log holds content or tokens:\n%s", b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d audit records:\n%s", len(lines), b)
	}
	var recs []security.AuditRecord
	for _, l := range lines {
		var r security.AuditRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if r := recs[0]; r.Identity != "peer:alice" || r.Tier != "trusted" || r.Method != "SendMessage" || r.TaskID != task.ID ||
		r.ContextID != task.ContextID || r.Outcome != "ok" || r.RequestBytes == 0 || r.ResponseBytes == 0 || r.Direction != security.AuditInbound {
		t.Errorf("send record = %+v", r)
	}
	if r := recs[1]; r.Outcome != outcomeRefused || r.Code != a2a.CodeUnauthorized || !strings.HasPrefix(r.Identity, "unauthenticated:") {
		t.Errorf("401 record = %+v", r)
	}
	if r := recs[2]; r.Outcome != "error" || r.Code != a2a.CodeTaskNotFound || r.TaskID != "nope" {
		t.Errorf("not-found record = %+v", r)
	}
	if r := recs[3]; r.Method != "card" || r.Identity != "peer:bob" || r.Outcome != "ok" || r.ResponseBytes == 0 {
		t.Errorf("card record = %+v", r)
	}
}
