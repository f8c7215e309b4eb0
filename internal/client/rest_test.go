package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/server"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// ourAgent is a scripted host agent behind this project's own server:
// "direct …" answers with a message, "progress …" reports progress then
// answers, "slow …" works until canceled, anything else is echoed.
type ourAgent struct {
	m *tasks.Manager
}

func (a *ourAgent) StartTurn(ctx context.Context, t *tasks.Turn) error {
	msg := func(s string) *a2a.Message { m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart(s)); return &m }
	text := t.Message.Text()
	go func() {
		ctx := context.Background()
		switch {
		case strings.HasPrefix(text, "direct"):
			_ = a.m.Apply(ctx, t.TaskID, tasks.Update{Kind: tasks.UpdateDirectReply, Message: msg("direct: " + text)})
		case strings.HasPrefix(text, "progress"):
			_ = a.m.Apply(ctx, t.TaskID, tasks.Update{Kind: tasks.UpdateProgress, Message: msg("working")})
			_ = a.m.Apply(ctx, t.TaskID, tasks.Update{Kind: tasks.UpdateFinal, Message: msg("echo: " + text)})
		case strings.HasPrefix(text, "slow"):
			_ = a.m.Apply(ctx, t.TaskID, tasks.Update{Kind: tasks.UpdateProgress, Message: msg("thinking")})
		default:
			_ = a.m.Apply(ctx, t.TaskID, tasks.Update{Kind: tasks.UpdateFinal, Message: msg("echo: " + text)})
		}
	}()
	return nil
}

func (a *ourAgent) CancelTurn(ctx context.Context, t *tasks.Turn, reason string) error { return nil }

// Tokens of the peers of ourServer: alice is trusted, carol public.
const (
	tokAlice = "alice-token-0123456789"
	tokCarol = "carol-token-0123456789"
)

// ourServer starts this project's server (both bindings) and, in front of
// it, a second origin whose card lists only the HTTP+JSON interface. It
// returns the URL of each: the client picks JSON-RPC at the first, and
// HTTP+JSON at the second, both served by the same server.
func ourServer(t *testing.T, mod func(*server.Options)) (rpcURL, restURL string) {
	t.Helper()
	agent := &ourAgent{}
	mgr, err := tasks.NewManager(tasks.Options{Store: store.NewMemory(1000), Executor: agent, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	agent.m = mgr
	if _, err := mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(context.Background()) })
	auth, err := security.NewAuthenticator(security.AuthConfig{
		PeerTokens:   map[string]string{"alice": tokAlice, "carol": tokCarol},
		TrustedPeers: []string{"alice"},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := server.Options{Tasks: mgr, Auth: auth, Card: server.CardConfig{Name: "Our Agent"}, Push: server.PushOptions{Enabled: true}}
	if mod != nil {
		mod(&opts)
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	direct := httptest.NewServer(srv.Handler())
	t.Cleanup(direct.Close)
	restOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != client.WellKnownCardPath {
			srv.Handler().ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, r)
		var card map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &card); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		var keep []any
		for _, in := range card["supportedInterfaces"].([]any) {
			if in.(map[string]any)["protocolBinding"] == a2a.BindingHTTPJSON {
				keep = append(keep, in)
			}
		}
		card["supportedInterfaces"] = keep
		for _, k := range []string{"url", "preferredTransport", "protocolVersion", "additionalInterfaces"} {
			delete(card, k) // the 0.3 keys would offer JSON-RPC again
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	}))
	t.Cleanup(restOnly.Close)
	return direct.URL, restOnly.URL
}

// TestClientUsesHTTPJSONWhenItIsTheOnlyBinding runs the same calls through
// both bindings of our own server and requires the same results and the
// same typed errors: the same *a2a.Error code and reason and the same
// Kind, except where HTTP+JSON answers with an HTTP status that JSON-RPC
// sends as 200 (a caller's tier may not use the operation: 403, so
// ErrAuthRefused instead of ErrRPC).
func TestClientUsesHTTPJSONWhenItIsTheOnlyBinding(t *testing.T) {
	rpcURL, restURL := ourServer(t, nil)
	c := client.New(client.Options{Timeout: 10 * time.Second})
	defer c.Close()
	ctx := context.Background()
	type outcome struct {
		result string
		kind   client.Kind
		code   int
		reason string
	}
	run := func(base, token string) []outcome {
		p := c.Peer(client.Endpoint{URL: base, Auth: client.Auth{Token: token}})
		var out []outcome
		record := func(result string, err error) {
			o := outcome{result: result}
			if err != nil {
				o.kind = client.KindOf(err)
				if re, ok := client.RPCError(err); ok {
					o.code, o.reason = re.Code, re.Reason
				}
			}
			out = append(out, o)
		}
		send := func(text string, mod func(*a2a.SendMessageRequest)) *a2a.SendMessageResponse {
			req := &a2a.SendMessageRequest{Message: textMessage(text)}
			if mod != nil {
				mod(req)
			}
			resp, err := p.SendMessage(ctx, req)
			switch {
			case err != nil:
				record("", err)
			case resp.Task != nil:
				record(fmt.Sprintf("task %s %q", resp.Task.Status.State, answerOf(resp)), nil)
			default:
				record(fmt.Sprintf("message %q", resp.Message.Text()), nil)
			}
			return resp
		}
		resp := send("hello", nil)
		send("direct hi", nil)
		var kinds []string
		err := p.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("progress report")}, func(ev client.Event) error {
			kinds = append(kinds, ev.Response.Kind()+":"+string(ev.State()))
			return nil
		})
		record(strings.Join(kinds, ","), err)
		if resp != nil && resp.Task != nil {
			task, err := p.GetTask(ctx, &a2a.GetTaskRequest{ID: resp.Task.ID, HistoryLength: a2a.Int32(1)})
			if err == nil {
				record(fmt.Sprintf("get %s history %d", task.Status.State, len(task.History)), nil)
			} else {
				record("", err)
			}
			_, err = p.CancelTask(ctx, &a2a.CancelTaskRequest{ID: resp.Task.ID})
			record("cancel terminal", err)
			err = p.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: resp.Task.ID}, func(client.Event) error { return nil })
			record("subscribe terminal", err)
			list, err := p.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: resp.Task.ContextID, IncludeArtifacts: true})
			if err == nil {
				record(fmt.Sprintf("list %d of %d, %d artifacts", len(list.Tasks), list.TotalSize, len(list.Tasks[0].Artifacts)), nil)
			} else {
				record("", err)
			}
			send("more", func(r *a2a.SendMessageRequest) { r.Message.TaskID = resp.Task.ID })
		}
		// Non-blocking: the state it returns depends on timing, so only
		// that there is a task is recorded.
		slow, err := p.SendMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("slow one"),
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
		record(fmt.Sprintf("slow task %v", err == nil && slow.Task != nil), err)
		if err == nil && slow.Task != nil {
			task, err := p.CancelTask(ctx, &a2a.CancelTaskRequest{ID: slow.Task.ID, Metadata: map[string]any{"why": "test"}})
			if err == nil {
				record("canceled "+string(task.Status.State), nil)
			} else {
				record("", err)
			}
		}
		_, err = p.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
		record("unknown", err)
		_, err = p.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: a2a.Int32(500)})
		record("page size", err)
		return out
	}
	for _, tc := range []struct {
		name, token string
	}{{"trusted", tokAlice}, {"public", tokCarol}, {"bad token", "wrong-token-0123456789"}} {
		t.Run(tc.name, func(t *testing.T) {
			rpc, rest := run(rpcURL, tc.token), run(restURL, tc.token)
			if len(rpc) != len(rest) {
				t.Fatalf("JSON-RPC %d outcomes, HTTP+JSON %d:\n%v\n%v", len(rpc), len(rest), rpc, rest)
			}
			for i := range rpc {
				want := rpc[i]
				if want.kind == client.ErrRPC && want.reason == "UNAUTHORIZED" {
					want.kind = client.ErrAuthRefused // HTTP+JSON: 403
				}
				if rest[i] != want {
					t.Errorf("outcome %d: JSON-RPC %+v, HTTP+JSON %+v", i, rpc[i], rest[i])
				}
			}
			t.Logf("%+v", rest)
		})
	}
	// The client did use HTTP+JSON at the second origin.
	info, err := c.Peer(client.Endpoint{URL: restURL, Auth: client.Auth{Token: tokAlice}}).Card(ctx)
	if err != nil || info.Interface.ProtocolBinding != a2a.BindingHTTPJSON || info.Interface.ProtocolVersion != "1.0" {
		t.Errorf("interface %+v, %v", info, err)
	}
}

func TestClientHTTPJSONRateLimitKeepsRetryAfter(t *testing.T) {
	_, restURL := ourServer(t, func(o *server.Options) { o.RateLimit = security.NewRateLimiter(2, nil) })
	c := client.New(client.Options{Timeout: 10 * time.Second})
	defer c.Close()
	p := c.Peer(client.Endpoint{URL: restURL, Auth: client.Auth{Token: tokAlice}})
	var err error
	for i := 0; i < 3 && err == nil; i++ {
		_, err = p.ListTasks(context.Background(), &a2a.ListTasksRequest{})
	}
	var ce *client.Error
	re, ok := client.RPCError(err)
	if !errors.As(err, &ce) || ce.Kind != client.ErrRateLimited || ce.RetryAfter <= 0 || ce.HTTPStatus != 429 || !ok || re.Code != a2a.CodeRateLimited {
		t.Errorf("err = %v", err)
	}
}

// restFake is an HTTP+JSON peer scripted per test: it serves a card with
// one HTTP+JSON interface (with tenant, when set) and records requests.
type restFake struct {
	srv    *httptest.Server
	tenant string
	mu     sync.Mutex
	seen   []string // "METHOD path?query body"
	handle func(w http.ResponseWriter, r *http.Request)
}

func newRESTFake(t *testing.T, tenant, version string, handle func(w http.ResponseWriter, r *http.Request)) *restFake {
	f := &restFake{tenant: tenant, handle: handle}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == client.WellKnownCardPath {
			in := map[string]any{"url": f.srv.URL + "/api/", "protocolBinding": "HTTP+JSON", "protocolVersion": version}
			if tenant != "" {
				in["tenant"] = tenant
			}
			_ = json.NewEncoder(w).Encode(map[string]any{
				"name": "REST Fake", "description": "d", "version": "1", "supportedInterfaces": []any{in},
				"capabilities": map[string]any{"streaming": true}, "defaultInputModes": []string{"text/plain"},
				"defaultOutputModes": []string{"text/plain"}, "skills": []any{map[string]any{"id": "s", "name": "s", "description": "s", "tags": []string{"t"}}},
			})
			return
		}
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.seen = append(f.seen, strings.TrimSpace(fmt.Sprintf("%s %s %s", r.Method, r.URL.RequestURI(), b)))
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		f.handle(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *restFake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func TestClientHTTPJSONRequestsAndErrors(t *testing.T) {
	task := `{"id":"t/1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}`
	f := newRESTFake(t, "acme", "1.0", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/acme/tasks/missing":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":{"code":404,"status":"NOT_FOUND","message":"Task missing not found","details":[`+
				`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"missing"}}]}}`)
		case r.URL.Path == "/api/acme/tasks/gone":
			w.WriteHeader(404) // no body: not an A2A answer
		case strings.HasSuffix(r.URL.Path, ":subscribe"):
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"task\":"+task[:len(task)-len(`"TASK_STATE_COMPLETED"}}`)]+"\"TASK_STATE_WORKING\"}}}\n\n"+
				"event: error\ndata: {\"error\":{\"code\":500,\"status\":\"INTERNAL\",\"message\":\"boom\",\"details\":[]}}\n\n")
		case r.URL.Path == "/api/acme/tasks":
			w.Header().Set("Content-Type", "application/a2a+json")
			_, _ = io.WriteString(w, `{"tasks":[`+task+`],"nextPageToken":"","pageSize":50,"totalSize":1}`)
		default:
			w.Header().Set("Content-Type", "application/a2a+json")
			_, _ = io.WriteString(w, task)
		}
	})
	c := client.New(client.Options{Timeout: 5 * time.Second})
	defer c.Close()
	p := c.Peer(client.Endpoint{URL: f.srv.URL, Auth: client.Auth{Token: "tok"}})
	ctx := context.Background()

	if _, err := p.GetTask(ctx, &a2a.GetTaskRequest{ID: "t/1", HistoryLength: a2a.Int32(2)}); err != nil {
		t.Fatal(err)
	}
	after := &a2a.Timestamp{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if _, err := p.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "c1", Status: a2a.TaskStateWorking, PageSize: a2a.Int32(5),
		PageToken: "p", HistoryLength: a2a.Int32(0), StatusTimestampAfter: after, IncludeArtifacts: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "t1", Metadata: map[string]any{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`GET /api/acme/tasks/t%2F1?historyLength=2`,
		`GET /api/acme/tasks?contextId=c1&historyLength=0&includeArtifacts=true&pageSize=5&pageToken=p&status=TASK_STATE_WORKING&statusTimestampAfter=2026-01-02T03%3A04%3A05.000Z`,
		`POST /api/acme/tasks/t1:cancel {"metadata":{"k":"v"}}`,
	}
	if got := f.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	_, err := p.GetTask(ctx, &a2a.GetTaskRequest{ID: "missing"})
	if re, ok := client.RPCError(err); !ok || re.Code != a2a.CodeTaskNotFound || re.Metadata["taskId"] != "missing" || client.KindOf(err) != client.ErrRPC {
		t.Errorf("google.rpc.Status 404: %v", err)
	}
	_, err = p.GetTask(ctx, &a2a.GetTaskRequest{ID: "gone"})
	if _, ok := client.RPCError(err); ok || client.KindOf(err) != client.ErrInvalidResponse {
		t.Errorf("bare 404: %v", err)
	}
	var events int
	err = p.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "t1"}, func(client.Event) error { events++; return nil })
	if re, ok := client.RPCError(err); !ok || re.Code != a2a.CodeInternalError || re.Message != "boom" || events != 1 {
		t.Errorf("error event after %d events: %v", events, err)
	}
	last := f.requests()[len(f.requests())-1]
	if last != "POST /api/acme/tasks/t1:subscribe" {
		t.Errorf("subscribe request %q", last)
	}
}

func TestClientRefusesAPeerWithOnlyAnHTTPJSON03Interface(t *testing.T) {
	f := newRESTFake(t, "", "0.3", func(w http.ResponseWriter, r *http.Request) { t.Errorf("unexpected %s %s", r.Method, r.URL) })
	c := client.New(client.Options{Timeout: 5 * time.Second})
	defer c.Close()
	_, err := c.Peer(client.Endpoint{URL: f.srv.URL}).Card(context.Background())
	if client.KindOf(err) != client.ErrBadCard || !strings.Contains(err.Error(), "HTTP+JSON or GRPC interface for protocol 1.0") {
		t.Errorf("err = %v", err)
	}
}
