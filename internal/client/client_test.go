package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// fakeAgent is a scriptable A2A server for failure-mode tests.
type fakeAgent struct {
	srv       *httptest.Server
	card      string // JSON; "%s" is replaced by the server URL
	cardHits  atomic.Int32
	cardHook  func(w http.ResponseWriter, r *http.Request) bool // true: handled
	rpc       func(w http.ResponseWriter, r *http.Request, req *a2a.Request)
	mu        sync.Mutex
	lastHdr   http.Header
	lastReq   *a2a.Request
	cardPaths []string
}

const v1Card = `{"name":"Fake","description":"fake agent","version":"1",
 "supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
 "capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

func newFake(t *testing.T, card string) *fakeAgent {
	f := &fakeAgent{card: card}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.cardPaths = append(f.cardPaths, r.URL.Path)
		f.lastHdr = r.Header.Clone()
		f.mu.Unlock()
		if f.cardHook != nil && f.cardHook(w, r) {
			return
		}
		if r.URL.Path != client.WellKnownCardPath {
			http.NotFound(w, r)
			return
		}
		f.cardHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, f.card, f.srv.URL)
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, perr := a2a.ParseRequest(body)
		if perr != nil {
			t.Errorf("client sent an invalid request: %v", perr)
		}
		f.mu.Lock()
		f.lastHdr, f.lastReq = r.Header.Clone(), req
		f.mu.Unlock()
		f.rpc(w, r, req)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAgent) header() http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastHdr
}

func (f *fakeAgent) request() *a2a.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastReq
}

func writeResult(w http.ResponseWriter, req *a2a.Request, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
}

const completedTask = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"done"}]}]}}`

func send(ctx context.Context, p *client.Peer) (*a2a.SendMessageResponse, error) {
	return p.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hi"))})
}

func TestSendMessageV1SendsVersionHeaderAuthAndTrace(t *testing.T) {
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, completedTask) }
	c := client.New(client.Options{UserAgent: "test-agent"})
	p := c.Peer(client.Endpoint{Name: "fake", URL: f.srv.URL, Auth: client.Auth{Token: "tok", HeaderName: "X-Api-Key", HeaderValue: "k"}})
	call := client.Call{Trace: tracing.Context{Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Tracestate: "vendor=1"}}
	resp, err := send(context.Background(), p.For(call))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Task == nil || resp.Task.Artifacts[0].Text() != "done" {
		t.Fatalf("response %+v", resp)
	}
	h := f.header()
	for k, want := range map[string]string{
		"A2A-Version": "1.0", "Authorization": "Bearer tok", "X-Api-Key": "k", "User-Agent": "test-agent",
		"Tracestate": "vendor=1", "Content-Type": "application/json",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	// The call is a child of the caller's trace: same trace id, new span.
	if tp := h.Get("Traceparent"); !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || strings.Contains(tp, "b7ad6b7169203331") || len(tp) != 55 {
		t.Errorf("traceparent %q, want a child of the caller's trace", tp)
	}
	if m := f.request().Method; m != "SendMessage" {
		t.Errorf("method %q", m)
	}
}

func TestTokenFuncIsAskedOnEveryRequest(t *testing.T) {
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, completedTask) }
	var current atomic.Value
	current.Store("first")
	c := client.New(client.Options{})
	p := c.Peer(client.Endpoint{URL: f.srv.URL, Auth: client.Auth{Token: "static", TokenFunc: func() string { return current.Load().(string) }}})
	for _, want := range []string{"first", "second", ""} {
		current.Store(want)
		if _, err := send(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = "static" // an empty TokenFunc answer falls back to Token
		}
		if got := f.header().Get("Authorization"); got != "Bearer "+want {
			t.Fatalf("Authorization = %q, want Bearer %s", got, want)
		}
	}
}

func TestInvalidTraceparentIsNotSent(t *testing.T) {
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, completedTask) }
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	if _, err := send(context.Background(), p.For(client.Call{Trace: tracing.Context{Traceparent: "garbage", Tracestate: "x=1"}})); err != nil {
		t.Fatal(err)
	}
	// A new trace starts instead; the garbage and its state stay behind.
	if tp := f.header().Get("traceparent"); tp == "garbage" || !tracing.Valid(tp) || f.header().Get("tracestate") != "" {
		t.Fatalf("traceparent %q, tracestate %q; want a new trace", tp, f.header().Get("tracestate"))
	}
}

func TestCallsWithoutATraceStartOne(t *testing.T) {
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, completedTask) }
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	if _, err := send(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	first := f.header().Get("traceparent")
	if _, err := send(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	second := f.header().Get("traceparent")
	if !tracing.Valid(first) || !tracing.Valid(second) || tracing.TraceID(first) == tracing.TraceID(second) {
		t.Errorf("untraced calls sent %q and %q; want two new traces", first, second)
	}
}

func TestSpanIsSentAsItIs(t *testing.T) {
	const span = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, completedTask) }
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	if _, err := send(context.Background(), p.For(client.Call{Trace: tracing.Context{Traceparent: span, Tracestate: "v=2"}, Span: true})); err != nil {
		t.Fatal(err)
	}
	if got := f.header().Get("traceparent"); got != span || f.header().Get("tracestate") != "v=2" {
		t.Errorf("traceparent %q, tracestate %q; want the span %s as it is", got, f.header().Get("tracestate"), span)
	}
	// The handle of that call is a copy: the peer's own handle carries no
	// trace of it.
	if _, err := send(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := f.header().Get("traceparent"); tracing.TraceID(got) == tracing.TraceID(span) || f.header().Get("tracestate") != "" {
		t.Errorf("the peer's own handle sent traceparent %q, tracestate %q: the trace of another call's handle", got, f.header().Get("tracestate"))
	}
}

func TestTenantIsCopiedFromInterface(t *testing.T) {
	card := strings.Replace(v1Card, `"protocolVersion":"1.0"`, `"protocolVersion":"1.0","tenant":"acme"`, 1)
	f := newFake(t, card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, completedTask) }
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	if _, err := send(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	var params map[string]any
	_ = json.Unmarshal(f.request().Params, &params)
	if params["tenant"] != "acme" {
		t.Fatalf("params %v lack the tenant", params)
	}
}

// TestFailureModes covers every error kind of a unary call.
func TestFailureModes(t *testing.T) {
	cases := []struct {
		name   string
		rpc    func(w http.ResponseWriter, r *http.Request, req *a2a.Request)
		kind   client.Kind
		check  func(t *testing.T, err error)
		inText string
	}{
		{"auth refused 401", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
			w.WriteHeader(401)
		}, client.ErrAuthRefused, nil, "credential"},
		{"auth refused 403", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { w.WriteHeader(403) }, client.ErrAuthRefused, nil, "HTTP 403"},
		{"rate limited", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
		}, client.ErrRateLimited, func(t *testing.T, err error) {
			var ce *client.Error
			if !errors.As(err, &ce) || ce.RetryAfter != 7*time.Second {
				t.Fatalf("RetryAfter not read: %#v", ce)
			}
		}, "wait 7s"},
		{"json-rpc error", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`, req.ID)
		}, client.ErrRPC, func(t *testing.T, err error) {
			re, ok := client.RPCError(err)
			if !ok || re.Code != -32001 || re.Reason != "TASK_NOT_FOUND" || re.Message != "Task not found" {
				t.Fatalf("rpc error not kept: %#v", re)
			}
		}, "check the task id"},
		{"json-rpc error with HTTP 500", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"boom"}}`, req.ID)
		}, client.ErrRPC, nil, "boom"},
		{"not json", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>hello</html>")
		}, client.ErrInvalidResponse, nil, "does not speak A2A"},
		{"wrong id", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			writeResult(w, &a2a.Request{ID: json.RawMessage(`"other"`)}, completedTask)
		}, client.ErrInvalidResponse, nil, "does not match"},
		{"no task nor message", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, `{}`) }, client.ErrInvalidResponse, nil, "exactly one"},
		{"endpoint missing", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { http.NotFound(w, r) }, client.ErrInvalidResponse, nil, "no A2A endpoint"},
		{"unavailable", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { w.WriteHeader(503) }, client.ErrUnreachable, nil, "running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, v1Card)
			f.rpc = tc.rpc
			p := client.New(client.Options{}).Peer(client.Endpoint{Name: "fake", URL: f.srv.URL})
			_, err := send(context.Background(), p)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("want %v, got %v", tc.kind, err)
			}
			if !strings.Contains(err.Error(), tc.inText) || !strings.Contains(err.Error(), `"fake"`) || !strings.Contains(err.Error(), f.srv.URL) {
				t.Fatalf("error text %q should name the peer, its URL and contain %q", err, tc.inText)
			}
			if tc.check != nil {
				tc.check(t, err)
			}
		})
	}
}

func TestUnreachablePeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := client.New(client.Options{Timeout: 2 * time.Second}).Peer(client.Endpoint{URL: "http://" + addr})
	_, err = p.Card(context.Background())
	if !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("want ErrUnreachable, got %v", err)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL, Timeout: 200 * time.Millisecond})
	_, err := send(context.Background(), p)
	if !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
}

func TestCallerCancelIsNotATimeout(t *testing.T) {
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { <-r.Context().Done() }
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	if _, err := p.Card(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := send(ctx, p)
	if !errors.Is(err, context.Canceled) || errors.Is(err, client.ErrTimeout) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestBadCards(t *testing.T) {
	cases := map[string]string{
		"not json":        `<html>not a card</html>`,
		"missing name":    `{"description":"x","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		"no endpoint":     `{"name":"x","description":"x"}`,
		"only grpc 0.3":   `{"name":"x","description":"x","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"GRPC","protocolVersion":"0.3"}]}`,
		"unknown binding": `{"name":"x","description":"x","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"WEBSOCKET","protocolVersion":"1.0"}]}`,
		"unknown version": `{"name":"x","description":"x","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"2.0"}]}`,
	}
	for name, card := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, card)
			p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
			_, err := p.Card(context.Background())
			if !errors.Is(err, client.ErrBadCard) {
				t.Fatalf("want ErrBadCard, got %v", err)
			}
		})
	}
	t.Run("no card anywhere", func(t *testing.T) {
		f := newFake(t, v1Card)
		f.cardHook = func(w http.ResponseWriter, r *http.Request) bool { http.NotFound(w, r); return true }
		p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
		_, err := p.Card(context.Background())
		if !errors.Is(err, client.ErrBadCard) {
			t.Fatalf("want ErrBadCard, got %v", err)
		}
	})
}

func TestLegacyCardPathFallback(t *testing.T) {
	f := newFake(t, v1Card)
	f.cardHook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == client.LegacyWellKnownCardPath {
			fmt.Fprintf(w, v1Card, f.srv.URL)
			return true
		}
		http.NotFound(w, r)
		return true
	}
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	info, err := p.Card(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.CardURL, client.LegacyWellKnownCardPath) {
		t.Fatalf("card URL %s", info.CardURL)
	}
}

func TestCardCacheHonoursETagAndMaxAge(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	var full, notModified atomic.Int32
	var lastINM atomic.Value
	f := newFake(t, v1Card)
	f.cardHook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != client.WellKnownCardPath {
			return false
		}
		lastINM.Store(r.Header.Get("If-None-Match"))
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return true
		}
		full.Add(1)
		fmt.Fprintf(w, v1Card, f.srv.URL)
		return true
	}
	p := client.New(client.Options{Now: clock}).Peer(client.Endpoint{URL: f.srv.URL})
	ctx := context.Background()
	info, err := p.Card(ctx)
	if err != nil || info.FromCache {
		t.Fatalf("first fetch: %v %+v", err, info)
	}
	info, err = p.Card(ctx) // fresh: no request
	if err != nil || !info.FromCache || info.Revalidated || full.Load()+notModified.Load() != 1 {
		t.Fatalf("second fetch should come from cache: %v %+v (requests %d)", err, info, full.Load()+notModified.Load())
	}
	now.Add(int64(61 * time.Second)) // stale: conditional GET, 304
	info, err = p.Card(ctx)
	if err != nil || !info.Revalidated || notModified.Load() != 1 || full.Load() != 1 {
		t.Fatalf("stale fetch should revalidate: %v %+v full=%d 304=%d", err, info, full.Load(), notModified.Load())
	}
	if lastINM.Load() != `"v1"` {
		t.Fatalf("If-None-Match = %v", lastINM.Load())
	}
	if info.Card.Name != "Fake" {
		t.Fatalf("304 lost the card: %+v", info.Card)
	}
	info, err = p.Card(ctx) // fresh again after the 304
	if err != nil || !info.FromCache || notModified.Load() != 1 {
		t.Fatalf("after 304 the card should be fresh again: %v %+v", err, info)
	}
	if _, err = p.Refresh(ctx); err != nil || notModified.Load() != 2 { // forced
		t.Fatalf("refresh should revalidate now: %v (304s %d)", err, notModified.Load())
	}
}

func TestCardCacheLastModifiedAndNoStore(t *testing.T) {
	var hits atomic.Int32
	var ims atomic.Value
	ims.Store("")
	f := newFake(t, v1Card)
	lm := "Wed, 01 Jan 2025 00:00:00 GMT"
	f.cardHook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != client.WellKnownCardPath {
			return false
		}
		hits.Add(1)
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Last-Modified", lm)
		if r.Header.Get("If-Modified-Since") == lm {
			ims.Store(lm)
			w.WriteHeader(http.StatusNotModified)
			return true
		}
		fmt.Fprintf(w, v1Card, f.srv.URL)
		return true
	}
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	for i := 0; i < 2; i++ {
		if _, err := p.Card(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if hits.Load() != 2 || ims.Load() != lm {
		t.Fatalf("no-cache must revalidate each time with If-Modified-Since: hits=%d ims=%v", hits.Load(), ims.Load())
	}
}

const v03Card = `{"name":"Old","description":"0.3 agent","url":"%s/rpc","protocolVersion":"0.3.0","version":"1",
 "capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

func TestV03CardFallsBackToV03Methods(t *testing.T) {
	f := newFake(t, v03Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		switch req.Method {
		case "message/send":
			var params map[string]any
			_ = json.Unmarshal(req.Params, &params)
			msg, _ := params["message"].(map[string]any)
			parts, _ := msg["parts"].([]any)
			first, _ := parts[0].(map[string]any)
			if msg["role"] != "user" || msg["kind"] != "message" || first["kind"] != "text" {
				t.Errorf("0.3 message shape expected, got %v", msg)
			}
			cfg, _ := params["configuration"].(map[string]any)
			if cfg["blocking"] != true {
				t.Errorf("0.3 blocking flag expected, got %v", cfg)
			}
			writeResult(w, req, `{"kind":"task","id":"t9","contextId":"c9","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"old answer"}]}]}`)
		case "tasks/get":
			writeResult(w, req, `{"kind":"task","id":"t9","contextId":"c9","status":{"state":"input-required"}}`)
		case "message/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"task\",\"id\":\"t9\",\"contextId\":\"c9\",\"status\":{\"state\":\"submitted\"}}}\n\n", req.ID)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t9\",\"contextId\":\"c9\",\"status\":{\"state\":\"working\"},\"final\":true}}\n\n", req.ID)
		default:
			t.Errorf("unexpected method %q", req.Method)
		}
	}
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	resp, err := send(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if h := f.header().Get("A2A-Version"); h != "" {
		t.Errorf("0.3 peers get no A2A-Version header, got %q", h)
	}
	if resp.Task == nil || resp.Task.Status.State != a2a.TaskStateCompleted || resp.Task.Artifacts[0].Text() != "old answer" {
		t.Fatalf("0.3 result not converted: %+v", resp.Task)
	}
	task, err := p.GetTask(context.Background(), &a2a.GetTaskRequest{ID: "t9"})
	if err != nil || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("tasks/get: %v %+v", err, task)
	}
	var events []client.Event
	err = p.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("x"))}, func(ev client.Event) error {
		events = append(events, ev)
		return nil
	})
	if err != nil {
		t.Fatalf("0.3 stream ending with final:true on a working state is complete: %v", err)
	}
	if len(events) != 2 || events[1].Response.StatusUpdate == nil || !events[1].Final {
		t.Fatalf("events %+v", events)
	}
	if _, err := p.ListTasks(context.Background(), &a2a.ListTasksRequest{}); !errors.Is(err, client.ErrUnsupported) {
		t.Fatalf("ListTasks on 0.3: %v", err)
	}
}

// sseServer answers every streaming call with body (a format string with
// %[1]s for the request id).
func sseServer(t *testing.T, body string) *fakeAgent {
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, body, req.ID)
	}
	return f
}

func collect(t *testing.T, f *fakeAgent) ([]client.Event, error) {
	t.Helper()
	p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
	var evs []client.Event
	err := p.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("x"))}, func(ev client.Event) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, err
}

func TestSSEParsing(t *testing.T) {
	t.Run("comments, CRLF, multi-line data", func(t *testing.T) {
		f := sseServer(t, ": ping\r\n\r\n"+
			"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\r\ndata: \"result\":{\"task\":{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}}}\r\n\r\n"+
			": keep-alive\n\n"+
			"data: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\"result\":{\"artifactUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"text\":\"chunk\"}]}}}}\n\n"+
			"data: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n")
		evs, err := collect(t, f)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.Response.Kind())
		}
		if strings.Join(kinds, ",") != "task,artifactUpdate,statusUpdate" || !evs[2].Final {
			t.Fatalf("events %v", kinds)
		}
	})
	t.Run("message-only stream", func(t *testing.T) {
		f := sseServer(t, "data: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\"result\":{\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"hi\"}]}}}\n\n")
		if _, err := collect(t, f); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cut before a terminal state", func(t *testing.T) {
		f := sseServer(t, "data: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\"result\":{\"task\":{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n")
		evs, err := collect(t, f)
		if !errors.Is(err, client.ErrStreamCut) || len(evs) != 1 {
			t.Fatalf("want ErrStreamCut after 1 event, got %v (%d events)", err, len(evs))
		}
		if !strings.Contains(err.Error(), "task t was last TASK_STATE_WORKING") || !strings.Contains(err.Error(), "a2a_task") {
			t.Fatalf("error should say how far it got and what to do: %v", err)
		}
	})
	t.Run("cut mid-event", func(t *testing.T) {
		f := sseServer(t, "data: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\"result\":{\"task\":{\"id\":\"t\",\"contex")
		if _, err := collect(t, f); !errors.Is(err, client.ErrInvalidResponse) && !errors.Is(err, client.ErrStreamCut) {
			t.Fatalf("want a cut/invalid error, got %v", err)
		}
	})
	t.Run("error event", func(t *testing.T) {
		f := sseServer(t, "event: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\"error\":{\"code\":-32004,\"message\":\"no streaming\"}}\n\n")
		_, err := collect(t, f)
		if re, ok := client.RPCError(err); !ok || re.Code != -32004 {
			t.Fatalf("want the JSON-RPC error, got %v", err)
		}
	})
	t.Run("error before stream", func(t *testing.T) {
		f := newFake(t, v1Card)
		f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad"}}`, req.ID)
		}
		if _, err := collect(t, f); !errors.Is(err, client.ErrRPC) {
			t.Fatalf("want ErrRPC, got %v", err)
		}
	})
	t.Run("iterator", func(t *testing.T) {
		f := sseServer(t, "data: {\"jsonrpc\":\"2.0\",\"id\":%[1]s,\"result\":{\"task\":{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n")
		p := client.New(client.Options{}).Peer(client.Endpoint{URL: f.srv.URL})
		n := 0
		for ev, err := range p.StreamMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("x"))}) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.State() != a2a.TaskStateCompleted {
				t.Fatalf("state %s", ev.State())
			}
			n++
		}
		if n != 1 {
			t.Fatalf("%d events", n)
		}
	})
}

func TestStreamIdleTimeout(t *testing.T) {
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"task\":{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n", req.ID)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	p := client.New(client.Options{StreamIdleTimeout: 200 * time.Millisecond}).Peer(client.Endpoint{URL: f.srv.URL})
	err := p.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("x"))}, func(client.Event) error { return nil })
	if !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
}

func TestStreamingRefusedWithoutCapability(t *testing.T) {
	f := newFake(t, strings.Replace(v1Card, `"streaming":true`, `"streaming":false`, 1))
	_, err := collect(t, f)
	if !errors.Is(err, client.ErrUnsupported) {
		t.Fatalf("want ErrUnsupported, got %v", err)
	}
}

// refuseGuard refuses every URL, like the SSRF guard for a private address.
type refuseGuard struct{}

func (refuseGuard) CheckURL(ctx context.Context, raw string) error {
	return fmt.Errorf("%s is a private address", raw)
}
func (refuseGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return nil, errors.New("refused")
}

func TestGuardRefusalIsBlocked(t *testing.T) {
	p := client.New(client.Options{Guard: refuseGuard{}}).Peer(client.Endpoint{URL: "http://10.0.0.1"})
	_, err := p.Card(context.Background())
	if !errors.Is(err, client.ErrBlocked) {
		t.Fatalf("want ErrBlocked, got %v", err)
	}
}
