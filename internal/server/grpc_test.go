package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/grpcwire"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/testcert"
)

// startedEnv is newEnv with the server listening through Start (the
// shared port: HTTP/1.1 and the gRPC binding's h2c on one listener).
func startedEnv(t *testing.T, mods ...func(*Options)) *testEnv {
	t.Helper()
	e := newEnv(t, mods...)
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	e.url = base
	return e
}

// dialGRPC dials the gRPC interface the card at base declares.
func dialGRPC(t *testing.T, base string, opts ...grpc.DialOption) (a2apb.A2AServiceClient, string) {
	t.Helper()
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	card, _ := splitCard(t, body)
	in, ok := card.PreferredInterface(a2a.BindingGRPC)
	if !ok {
		t.Fatalf("the card declares no GRPC interface: %+v", card.SupportedInterfaces)
	}
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	cc, err := grpc.NewClient(in.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return a2apb.NewA2AServiceClient(cc), in.URL
}

func callCtx(token string, kv ...string) context.Context {
	md := metadata.Pairs(kv...)
	if token != "" {
		md.Set("authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	_ = cancel // bounded by the test
	return metadata.NewOutgoingContext(ctx, md)
}

func textRequest(text string) *a2apb.SendMessageRequest {
	return &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: a2a.NewID(), Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}}
}

// grpcStatusOf returns the code, the ErrorInfo reason and metadata of a
// failed call.
func grpcStatusOf(t *testing.T, err error) (codes.Code, string, map[string]string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || err == nil {
		t.Fatalf("want a gRPC status error, got %v", err)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.Domain != a2a.ErrorDomain {
				t.Errorf("ErrorInfo domain %q", info.Domain)
			}
			return st.Code(), info.Reason, info.Metadata
		}
	}
	t.Fatalf("status %v %q carries no ErrorInfo", st.Code(), st.Message())
	return 0, "", nil
}

// TestGRPCSharesTheHTTPPort: the card declares the gRPC binding at the
// HTTP port as host:port, a plain gRPC client dials it, and JSON-RPC,
// HTTP+JSON and the card keep working on the same port.
func TestGRPCSharesTheHTTPPort(t *testing.T) {
	e := startedEnv(t)
	api, target := dialGRPC(t, e.url)
	if target != strings.TrimPrefix(e.url, "http://") {
		t.Errorf("GRPC interface %q, want the HTTP port %s", target, e.url)
	}
	res, err := api.SendMessage(callCtx(tokAlice), textRequest("hello grpc"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.GetTask()
	if task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED || task.GetArtifacts()[0].GetParts()[0].GetText() != "echo: hello grpc" {
		t.Fatalf("answer %v", res)
	}
	// The same task over JSON-RPC and HTTP+JSON, on the same port.
	if got := decode[a2a.Task](t, e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: task.GetId()})); got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("JSON-RPC GetTask of the gRPC task: %+v", got)
	}
	if r := e.restDo(tokAlice, "GET", "/tasks/"+task.GetId(), nil, nil); r.status != 200 {
		t.Errorf("HTTP+JSON GetTask: %d %s", r.status, r.body)
	}
	got, err := api.GetTask(callCtx(tokAlice), &a2apb.GetTaskRequest{Id: task.GetId()})
	if err != nil || got.GetId() != task.GetId() {
		t.Fatalf("GetTask: %v %v", got, err)
	}
	// The audit record names the method and the task, like the others'.
	waitFor(t, "the gRPC exchange's audit record", func() bool {
		for _, a := range e.audit.all() {
			if a.Method == "SendMessage" && a.TaskID == task.GetId() && a.Outcome == "ok" && a.RequestBytes > 0 && a.ResponseBytes > 0 {
				return true
			}
		}
		return false
	})
}

// TestGRPCStreamsStartWithTheTask: server streaming, first event the
// task, then the updates in order.
func TestGRPCStreamsStartWithTheTask(t *testing.T) {
	e := startedEnv(t)
	api, _ := dialGRPC(t, e.url)
	st, err := api.SendStreamingMessage(callCtx(tokAlice), textRequest("progress over grpc"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for {
		m, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ev, _ := grpcwire.StreamResponseFromProto(m)
		kinds = append(kinds, ev.Kind())
	}
	if strings.Join(kinds, ",") != "task,statusUpdate,statusUpdate,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate" {
		t.Errorf("events %v", kinds)
	}
	waitFor(t, "no stream left open", func() bool { return e.srv.ActiveStreams() == 0 })
}

// TestGRPCSecurityTable: the refusals of the HTTP bindings, over gRPC,
// with the status codes of the mapping and the ErrorInfo reasons.
func TestGRPCSecurityTable(t *testing.T) {
	const limit = 64 << 10
	big := strings.Repeat("x", limit+1)
	for _, tc := range []struct {
		name   string
		mod    func(*Options)
		call   func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error
		code   codes.Code
		reason string
		// outcome is the audit record's outcome of the refused call.
		outcome string
	}{
		{"no token", nil, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			_, err := api.ListTasks(callCtx(""), &a2apb.ListTasksRequest{})
			return err
		}, codes.Unauthenticated, "UNAUTHENTICATED", "refused"},
		{"wrong token", nil, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			_, err := api.ListTasks(callCtx("wrong-token-0123456789"), &a2apb.ListTasksRequest{})
			return err
		}, codes.Unauthenticated, "UNAUTHENTICATED", "refused"},
		{"another peer's task", nil, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			res, err := api.SendMessage(callCtx(tokAlice), textRequest("mine"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = api.GetTask(callCtx(tokBob), &a2apb.GetTaskRequest{Id: res.GetTask().GetId()})
			return err
		}, codes.NotFound, "TASK_NOT_FOUND", "error"},
		{"a tier's permission", nil, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			_, err := api.ListTasks(callCtx(tokCarol), &a2apb.ListTasksRequest{})
			return err
		}, codes.PermissionDenied, "UNAUTHORIZED", "error"},
		{"oversized message", func(o *Options) { o.Limits.MaxBodyBytes = limit }, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			// gRPC's receive limit is the body limit: gRPC refuses the
			// message from its length prefix, before reading it, with its
			// own status (no ErrorInfo; see grpcBinding.newServer).
			_, err := api.SendMessage(callCtx(tokAlice), textRequest(big))
			if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "larger than max") {
				t.Fatalf("got %v", err)
			}
			st, _ := status.New(codes.ResourceExhausted, "").WithDetails(&errdetails.ErrorInfo{Reason: "REQUEST_TOO_LARGE", Domain: a2a.ErrorDomain})
			return st.Err()
		}, codes.ResourceExhausted, "REQUEST_TOO_LARGE", "refused"},
		{"message of many tiny values", func(o *Options) { o.Limits.MaxBodyBytes = limit }, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			// Counted before it is decoded: over its size's value budget.
			vals := make([]any, 10000)
			req, err := grpcwire.SendMessageRequestToProto(sendParams("hi", func(r *a2a.SendMessageRequest) { r.Message.Metadata = map[string]any{"k": vals} }))
			if err != nil {
				t.Fatal(err)
			}
			_, err = api.SendMessage(callCtx(tokAlice), req)
			return err
		}, codes.ResourceExhausted, "REQUEST_TOO_LARGE", "refused"},
		{"oversized message without a token", func(o *Options) { o.Limits.MaxBodyBytes = limit }, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			// Admission comes first: the message is not read.
			_, err := api.SendMessage(callCtx(""), textRequest(big))
			return err
		}, codes.Unauthenticated, "UNAUTHENTICATED", "refused"},
		{"too many streams", func(o *Options) { o.Streams = security.NewStreamLimiter(1) }, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			held, err := api.SendStreamingMessage(callCtx(tokAlice), textRequest("slow held"))
			if err != nil {
				t.Fatal(err)
			}
			first, err := held.Recv()
			if err != nil {
				t.Fatal(err)
			}
			defer e.exec.release(first.GetTask().GetId())
			second, err := api.SendStreamingMessage(callCtx(tokAlice), textRequest("another"))
			if err != nil {
				return err
			}
			_, err = second.Recv()
			return err
		}, codes.ResourceExhausted, "TOO_MANY_STREAMS", "rate-limited"},
		{"the global stream cap", func(o *Options) { o.Limits.MaxStreams = 1 }, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			held, err := api.SendStreamingMessage(callCtx(tokAlice), textRequest("slow held"))
			if err != nil {
				t.Fatal(err)
			}
			first, err := held.Recv()
			if err != nil {
				t.Fatal(err)
			}
			defer e.exec.release(first.GetTask().GetId())
			second, err := api.SubscribeToTask(callCtx(tokBob), &a2apb.SubscribeToTaskRequest{Id: "whatever"})
			if err != nil {
				return err
			}
			_, err = second.Recv()
			return err
		}, codes.Unavailable, "SERVER_BUSY", "refused"},
		{"rate limit", func(o *Options) { o.RateLimit = security.NewRateLimiter(2, nil) }, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			var err error
			for range 3 {
				_, err = api.ListTasks(callCtx(tokAlice), &a2apb.ListTasksRequest{})
			}
			return err
		}, codes.ResourceExhausted, "RATE_LIMITED", "rate-limited"},
		{"a browser page of another origin", nil, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			_, err := api.ListTasks(callCtx(tokAlice, "origin", "https://evil.example"), &a2apb.ListTasksRequest{})
			return err
		}, codes.PermissionDenied, "CROSS_SITE_REQUEST", "refused"},
		{"unsupported version", nil, func(t *testing.T, e *testEnv, api a2apb.A2AServiceClient) error {
			_, err := api.ListTasks(callCtx(tokAlice, "a2a-version", "0.3"), &a2apb.ListTasksRequest{})
			return err
		}, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED", "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mods []func(*Options)
			if tc.mod != nil {
				mods = append(mods, tc.mod)
			}
			e := startedEnv(t, mods...)
			api, _ := dialGRPC(t, e.url)
			code, reason, md := grpcStatusOf(t, tc.call(t, e, api))
			if code != tc.code || reason != tc.reason {
				t.Fatalf("got %v %s, want %v %s", code, reason, tc.code, tc.reason)
			}
			if (tc.reason == "RATE_LIMITED" || tc.reason == "SERVER_BUSY") && md["retryAfterSeconds"] == "" {
				t.Errorf("no retryAfterSeconds in %v", md)
			}
			waitFor(t, "the refusal's audit record", func() bool {
				for _, a := range e.audit.all() {
					if a.Outcome == tc.outcome && strings.HasPrefix(a.Error, tc.reason+":") {
						return true
					}
				}
				return false
			})
		})
	}
}

// TestGRPCRefusesEnumValuesItDoesNotKnow: a task state past the v1.0
// enum in a filter is refused as the JSON bindings refuse an unknown
// state name, not read as "no filter".
func TestGRPCRefusesEnumValuesItDoesNotKnow(t *testing.T) {
	e := startedEnv(t)
	api, _ := dialGRPC(t, e.url)
	_, err := api.ListTasks(callCtx(tokAlice), &a2apb.ListTasksRequest{Status: 42})
	if code, reason, md := grpcStatusOf(t, err); code != codes.InvalidArgument || reason != "INVALID_PARAMS" || md["field"] != "status" {
		t.Errorf("got %v %s %v", code, reason, md)
	}
	st, _ := status.FromError(err)
	var br *errdetails.BadRequest
	for _, d := range st.Details() {
		if v, ok := d.(*errdetails.BadRequest); ok {
			br = v
		}
	}
	if br == nil || len(br.FieldViolations) == 0 || br.FieldViolations[0].Field != "status" {
		t.Errorf("BadRequest detail %v", br)
	}
}

// TestGRPCEchoesActivatedExtensions: a2a-extensions metadata in, the
// activated ones back in the header metadata; a required one missing is
// -32008 (FAILED_PRECONDITION).
func TestGRPCEchoesActivatedExtensions(t *testing.T) {
	const ext = "https://example.com/ext/v1"
	e := startedEnv(t, func(o *Options) { o.Card.Extensions = []a2a.AgentExtension{{URI: ext, Required: true}} })
	api, _ := dialGRPC(t, e.url)
	_, err := api.ListTasks(callCtx(tokAlice), &a2apb.ListTasksRequest{})
	if code, reason, _ := grpcStatusOf(t, err); code != codes.FailedPrecondition || reason != "EXTENSION_SUPPORT_REQUIRED" {
		t.Errorf("without the extension: %v %s", code, reason)
	}
	var hdr metadata.MD
	if _, err := api.ListTasks(callCtx(tokAlice, "a2a-extensions", ext+", urn:unknown"), &a2apb.ListTasksRequest{}, grpc.Header(&hdr)); err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("a2a-extensions"); len(got) != 1 || got[0] != ext {
		t.Errorf("activated extensions %q", got)
	}
}

// TestGRPCExtendedCard: the extended card over gRPC, for authenticated
// callers only.
func TestGRPCExtendedCard(t *testing.T) {
	e := startedEnv(t, func(o *Options) {
		o.Card.ExtendedSkills = []a2a.AgentSkill{{ID: "secret", Name: "Secret", Description: "For friends", Tags: []string{"x"}}}
	})
	api, target := dialGRPC(t, e.url)
	card, err := api.GetExtendedAgentCard(callCtx(tokAlice), &a2apb.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	skills := card.GetSkills()
	if skills[len(skills)-1].GetId() != "secret" || card.GetSupportedInterfaces()[3].GetUrl() != target {
		t.Errorf("extended card %v", card)
	}
	_, err = api.GetExtendedAgentCard(callCtx(""), &a2apb.GetExtendedAgentCardRequest{})
	if code, _, _ := grpcStatusOf(t, err); code != codes.Unauthenticated {
		t.Errorf("anonymous: %v", code)
	}
}

// TestGRPCOverTLS: with TLS the HTTP server negotiates HTTP/2 and the
// gRPC binding answers on it, under the same certificate.
func TestGRPCOverTLS(t *testing.T) {
	cert, key, pool := testcert.Write(t, t.TempDir())
	e := newEnv(t)
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", cert, key)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	card, _ := splitCard(t, body)
	in, ok := card.PreferredInterface(a2a.BindingGRPC)
	if !ok || in.URL != strings.TrimPrefix(base, "https://") {
		t.Fatalf("GRPC interface %+v", in)
	}
	cc, err := grpc.NewClient(in.URL, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	res, err := a2apb.NewA2AServiceClient(cc).SendMessage(callCtx(tokAlice), textRequest("hello tls"))
	if err != nil || res.GetTask().GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("over TLS: %v %v", res, err)
	}
	// JSON-RPC on the same TLS port still works.
	rb, _ := a2a.MarshalRequest(1, "GetTask", &a2a.GetTaskRequest{ID: res.GetTask().GetId()})
	req, _ := http.NewRequest(http.MethodPost, base+"/", bytes.NewReader(rb))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	hr, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	if r, err := a2a.ParseResponse(b); err != nil || r.Error != nil {
		t.Errorf("JSON-RPC over TLS: %s", b)
	}
}

// TestGRPCShutdownCutsStreamsWithUnavailable: a stream still open when
// Shutdown's grace ends gets UNAVAILABLE (resubscribe), as the SSE
// streams get their error event.
func TestGRPCShutdownCutsStreamsWithUnavailable(t *testing.T) {
	e := startedEnv(t)
	api, _ := dialGRPC(t, e.url)
	st, err := api.SendStreamingMessage(callCtx(tokAlice), textRequest("slow until shutdown"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.srv.Shutdown(ctx) }()
	var last error
	for {
		if _, last = st.Recv(); last != nil {
			break
		}
	}
	if code, reason, _ := grpcStatusOf(t, last); code != codes.Unavailable || reason != "UNAVAILABLE" {
		t.Errorf("cut stream: %v %s", code, reason)
	}
	if err := <-done; err == nil {
		t.Error("Shutdown reported no cut stream")
	}
}

// TestGRPCAcceptsOAuthTokens: a JWT access token in the authorization
// metadata names the same caller, with the same tier and scopes, as over
// HTTP.
func TestGRPCAcceptsOAuthTokens(t *testing.T) {
	e, op := oauthEnv(t)
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	api, _ := dialGRPC(t, base)
	tok := func(scopes ...string) string { return op.Token(t, "svc", "svc-secret", scopes, oauthAudience) }
	res, err := api.SendMessage(callCtx(tok("a2a:send", "a2a:get")), textRequest("hello oauth grpc"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.exec.lastTurn().Sender.ID; got != "oauth:idp:svc" {
		t.Errorf("the host saw caller %q", got)
	}
	// The task is the token identity's, whichever token it shows.
	if _, err := api.GetTask(callCtx(tok("a2a:get")), &a2apb.GetTaskRequest{Id: res.GetTask().GetId()}); err != nil {
		t.Errorf("GetTask with another token of the same client: %v", err)
	}
	_, err = api.CancelTask(callCtx(tok("a2a:get")), &a2apb.CancelTaskRequest{Id: res.GetTask().GetId()})
	code, reason, md := grpcStatusOf(t, err)
	if code != codes.PermissionDenied || reason != "UNAUTHORIZED" || md["scope"] != "a2a:cancel" {
		t.Errorf("without the cancel scope: %v %s %v", code, reason, md)
	}
	if _, err := api.ListTasks(callCtx(tok("a2a:trusted", "a2a:list")), &a2apb.ListTasksRequest{}); err != nil {
		t.Errorf("list with the trusted tier and the scope: %v", err)
	}
}
