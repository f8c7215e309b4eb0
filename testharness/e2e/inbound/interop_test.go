package inbound_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// Peer tokens of the interop clients: the Go SDK is alice, the JS SDK bob,
// so each lists only its own tasks.
const (
	tokGoSDK = "alice-go-sdk-token-0123456789"
	tokJSSDK = "bob-js-sdk-token-0123456789"
)

// TestOfficialClientsInterop drives the binary with the official A2A SDK
// clients — code we did not write — over the bearer-protected card and
// endpoint: the Go SDK (github.com/a2aproject/a2a-go/v2) and the JS SDK
// (@a2a-js/sdk, through testharness/interop/js/client-check.mjs).
func TestOfficialClientsInterop(t *testing.T) {
	t.Parallel()
	h := startHost(t, map[string]any{
		"loopback_is_local": false,
		"peer_tokens":       map[string]string{"alice": tokGoSDK, "bob": tokJSSDK},
		"trusted_peers":     []string{"alice", "bob"},
		// The host's tools on the card (opt-in), for the SDKs to read.
		"advertised_toolsets": []string{"*"},
	}, nil)
	// The card as the SDKs will read it, validated once here.
	if f := fetchCard(t, h.url, "/.well-known/agent-card.json"); len(f.card.SecuritySchemes) != 1 || len(f.card.SecurityRequirements) != 1 {
		t.Fatalf("a token-protected agent's card declares security %v %v", f.card.SecuritySchemes, f.card.SecurityRequirements)
	}
	t.Run("Go SDK", func(t *testing.T) {
		t.Parallel()
		goSDKSession(t, h)
	})
	t.Run("JS SDK", func(t *testing.T) {
		t.Parallel()
		jsSDKSession(t, h)
	})
}

// validating checks what the SDK client receives as our own tests check
// what they receive: every JSON-RPC answer and every SSE event against the
// schema definition of the request's method, and the card.
type validating struct {
	t    testing.TB
	next http.RoundTripper
}

func (v validating) RoundTrip(r *http.Request) (*http.Response, error) {
	method := ""
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		_ = r.Body.Close()
		var env struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &env)
		method = env.Method
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := v.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseChecker{t: v.t, body: resp.Body}
	case strings.HasPrefix(ct, "application/json"):
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "agent-card.json") {
			validateCard(v.t, body)
		} else {
			a2atest.ValidateJSONRPCResponse(v.t, body, definition(method))
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return resp, nil
}

// validatingProxy puts a reverse proxy in front of the plugin whose
// transport is validating, for clients we cannot instrument (the JS SDK).
// The plugin sees the proxy's Host, so its card advertises the proxy's URL
// and the client sends everything through it.
func validatingProxy(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		},
		Transport: validating{t: t, next: http.DefaultTransport},
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sseChecker keeps what the client reads of an SSE body and validates it
// when the client closes the stream.
type sseChecker struct {
	t    testing.TB
	body io.ReadCloser
	buf  bytes.Buffer
	once sync.Once
}

func (s *sseChecker) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	s.buf.Write(p[:n])
	return n, err
}

func (s *sseChecker) Close() error {
	s.once.Do(func() { a2atest.ValidateSSE(s.t, s.buf.Bytes(), "Stream Response") })
	return s.body.Close()
}

// goSDKSession runs the Go SDK client through discovery, send, direct
// reply, stream, get, list, cancel, resubscribe and a typed error.
func goSDKSession(t *testing.T, h *host) {
	ctx := within(t)
	hc := sdkclient.Bearer(tokGoSDK, validating{t: t, next: http.DefaultTransport})
	card := sdkclient.ResolveCard(t, ctx, hc, h.url)
	if card.Name != "Agent" || len(card.SupportedInterfaces) < 2 || card.SupportedInterfaces[0].URL != h.url+"/" ||
		card.SupportedInterfaces[0].ProtocolBinding != sdk.TransportProtocolJSONRPC || card.SupportedInterfaces[0].ProtocolVersion != "1.0" ||
		!card.Capabilities.Streaming || len(card.Skills) != 2 || len(card.SecuritySchemes) != 1 {
		t.Fatalf("card = %+v", card)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("client from card: %v", err)
	}
	defer client.Destroy()

	// Blocking send.
	res, err := client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello from go"))})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "echo: hello from go" {
		t.Fatalf("send result = %#v", res)
	}
	hm := h.handleMessage(t, ctx, string(task.ID)).HandleMessage()
	if hm.GetSender().GetId() != "peer:alice" || hm.GetChatId() != task.ContextID {
		t.Errorf("the host saw sender %s in %s", hm.GetSender().GetId(), hm.GetChatId())
	}

	// Direct reply.
	res, err = client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("direct go"))})
	if msg, ok := res.(*sdk.Message); err != nil || !ok || msg.Parts[0].Text() != "direct: direct go" {
		t.Fatalf("direct reply = %#v, %v", res, err)
	}

	// Stream.
	var kinds []string
	var streamTask sdk.TaskID
	for ev, err := range client.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("progress go"))}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task:"+string(v.Status.State))
			streamTask = v.ID
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		case *sdk.Message:
			kinds = append(kinds, "message")
		}
	}
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING",
		"artifact", "artifact", "artifact", "status:TASK_STATE_COMPLETED"}
	if !equal(kinds, want) {
		t.Fatalf("stream events = %v\nwant %v", kinds, want)
	}

	// Get.
	got, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("get = %+v, %v", got, err)
	}
	one := 1
	got, err = client.GetTask(ctx, &sdk.GetTaskRequest{ID: streamTask, HistoryLength: &one})
	if err != nil || len(got.History) != 1 || len(got.Artifacts) != 2 {
		t.Fatalf("get with historyLength = %+v, %v", got, err)
	}

	// List: alice's own tasks only (the direct reply made none).
	list, err := client.ListTasks(ctx, &sdk.ListTasksRequest{PageSize: 10})
	if err != nil || list.TotalSize != 2 || len(list.Tasks) != 2 || list.NextPageToken != "" || list.Tasks[0].ID != streamTask {
		t.Fatalf("list = %+v, %v", list, err)
	}

	// Cancel a running task; a second cancel is a typed error.
	res, err = client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("slow go")),
		Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	slow, ok := res.(*sdk.Task)
	if err != nil || !ok || slow.Status.State.Terminal() {
		t.Fatalf("non-blocking send = %#v, %v", res, err)
	}
	canceled, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: slow.ID})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", canceled, err)
	}
	h.cancelTurn(t, ctx, string(slow.ID))
	if _, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: slow.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Errorf("second cancel: %v, want ErrTaskNotCancelable", err)
	}

	// Resubscribe to a running task; it is released once subscribed.
	res, err = client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("slow resubscribed go")),
		Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	other, ok := res.(*sdk.Task)
	if err != nil || !ok {
		t.Fatalf("non-blocking send = %#v, %v", res, err)
	}
	h.handleMessage(t, ctx, string(other.ID))
	kinds = nil
	for ev, err := range client.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: other.ID}) {
		if err != nil {
			t.Fatalf("resubscribe: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task")
			h.agent.release(string(other.ID))
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		}
	}
	if !equal(kinds, []string{"task", "artifact", "status:TASK_STATE_COMPLETED"}) {
		t.Fatalf("resubscribe events = %v", kinds)
	}

	// Errors surface as the SDK's typed errors.
	if _, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("unknown task: %v, want ErrTaskNotFound", err)
	}
}

// jsSDKSession runs testharness/interop/js/client-check.mjs (the official
// JS SDK client) against the binary, through a proxy that validates every
// answer it gets, and checks every step it reports.
func jsSDKSession(t *testing.T, h *host) {
	base := validatingProxy(t, h.url)
	steps := testharness.RunJSClient(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + tokJSSDK}}, h.agent.release, "client-check.mjs", base)
	for _, name := range []string{"card", "send", "stream", "get", "list", "cancel", "resubscribe", "unknown-task", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	card := steps["card"]
	if card.Name != "Agent" || !card.Streaming || !equal(jsonrpcOnly(card.Interfaces), []string{"JSONRPC 1.0 " + base + "/", "JSONRPC 0.3 " + base + "/"}) ||
		card.Interfaces[0] != "JSONRPC 1.0 "+base+"/" ||
		!equal(card.Skills, []string{"calendar_add", "web_search"}) || !equal(card.SecuritySchemes, []string{"bearer"}) {
		t.Errorf("card = %+v", card)
	}
	send := steps["send"]
	if send.ProtocolVersion != "1.0" || send.State != "TASK_STATE_COMPLETED" || send.Answer != "echo: hello from js" || send.ContextID == "" {
		t.Errorf("send = %+v", send)
	}
	if send.TaskID != "" {
		if hm := h.handleMessage(t, within(t), send.TaskID).HandleMessage(); hm.GetSender().GetId() != "peer:bob" {
			t.Errorf("the host saw sender %s", hm.GetSender().GetId())
		}
	}
	want := "task:TASK_STATE_SUBMITTED,statusUpdate:TASK_STATE_WORKING,statusUpdate:TASK_STATE_WORKING,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate:TASK_STATE_COMPLETED"
	if got := strings.Join(steps["stream"].Events, ","); got != want {
		t.Errorf("stream = %s\nwant      %s", got, want)
	}
	if g := steps["get"]; g.TaskID != send.TaskID || g.State != "TASK_STATE_COMPLETED" || g.History != 1 {
		t.Errorf("get = %+v", g)
	}
	if l := steps["list"]; l.Count != 2 || l.TotalSize != 2 || l.NextPageToken == nil || *l.NextPageToken != "" {
		t.Errorf("list = %+v", l)
	}
	if c := steps["cancel"]; c.State != "TASK_STATE_CANCELED" || c.Before == "TASK_STATE_CANCELED" || c.SecondCancel == "succeeded" || c.SecondCancel == "" {
		t.Errorf("cancel = %+v", c)
	}
	if r := steps["resubscribe"]; !equal(r.Events, []string{"task:TASK_STATE_WORKING", "artifactUpdate", "statusUpdate:TASK_STATE_COMPLETED"}) {
		t.Errorf("resubscribe = %+v", r)
	}
	if u := steps["unknown-task"]; !strings.Contains(strings.ToLower(u.Error), "not found") {
		t.Errorf("unknown task = %+v", u)
	}
}
