package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// fakeHandler is a Handler that answers GetTask with a fixed task (or a
// fixed refusal), refuses admission when told to, and records the calls
// the bindings made: what a binding does is then only its own mapping.
type fakeHandler struct {
	admit *Refusal
	task  *a2a.Task
	fail  *Refusal

	mu       sync.Mutex
	peers    []Peer
	finished int
}

func (f *fakeHandler) Admit(ctx context.Context, p Peer) (context.Context, *Call, error) {
	f.mu.Lock()
	f.peers = append(f.peers, p)
	f.mu.Unlock()
	c := &Call{Peer: p, status: 200}
	if f.admit != nil {
		return ctx, c, f.admit
	}
	return ctx, c, nil
}

func (f *fakeHandler) Authorize(context.Context, *Call) error { return nil }

func (f *fakeHandler) Finish(*Call) {
	f.mu.Lock()
	f.finished++
	f.mu.Unlock()
}

func (f *fakeHandler) GetTask(_ context.Context, c *Call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	t := *f.task
	t.ID = req.ID
	return &t, nil
}

var errFakeOnly = refusal(a2a.ErrUnsupportedOperation("the fake handler answers GetTask only"))

func (f *fakeHandler) SendMessage(context.Context, *Call, *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) SendStreamingMessage(context.Context, *Call, *a2a.SendMessageRequest) (*Stream, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) ListTasks(context.Context, *Call, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) CancelTask(context.Context, *Call, *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) SubscribeToTask(context.Context, *Call, *a2a.SubscribeToTaskRequest) (*Stream, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) CreateTaskPushNotificationConfig(context.Context, *Call, *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) GetTaskPushNotificationConfig(context.Context, *Call, *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) ListTaskPushNotificationConfigs(context.Context, *Call, *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	return nil, errFakeOnly
}
func (f *fakeHandler) DeleteTaskPushNotificationConfig(context.Context, *Call, *a2a.DeleteTaskPushNotificationConfigRequest) error {
	return errFakeOnly
}
func (f *fakeHandler) GetExtendedAgentCard(context.Context, *Call, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, errFakeOnly
}

var testLimits = Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 64, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
	IdleTimeout: time.Minute, WriteTimeout: 5 * time.Second, MaxHeaderBytes: 64 << 10, KeepAlive: 15 * time.Second}

// fakeBindings serves the three bindings over h: the JSON-RPC and
// HTTP+JSON handlers on one HTTP server, the gRPC server on a listener.
func fakeBindings(t *testing.T, h Handler) (httpURL string, api a2apb.A2AServiceClient) {
	t.Helper()
	hb := httpBinding{h: h, limits: &testLimits, log: hclog.NewNullLogger()}
	mux := http.NewServeMux()
	mux.Handle("POST /{$}", &jsonrpcBinding{hb})
	mux.Handle("/", &restBinding{hb})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	gs := (&grpcBinding{h: h, limits: &testLimits, log: hclog.NewNullLogger()}).newServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return ts.URL, a2apb.NewA2AServiceClient(cc)
}

// TestBindingsMapAFakeHandlersAnswers runs the bindings against a fake
// handler: each puts the handler's typed answer and refusals on its wire,
// hands it the caller's credentials and service parameters, and finishes
// every exchange.
func TestBindingsMapAFakeHandlersAnswers(t *testing.T) {
	task := &a2a.Task{ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	post := func(url string, body string, hdr map[string]string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	getTask := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-7"}}`

	t.Run("an answer", func(t *testing.T) {
		f := &fakeHandler{task: task}
		url, api := fakeBindings(t, f)
		resp, body := post(url+"/", getTask, map[string]string{"Authorization": "Bearer x", "A2A-Version": "1.0", "A2A-Extensions": "urn:a, urn:b"})
		r, err := a2a.ParseResponse(body)
		if err != nil || resp.StatusCode != 200 || r.Error != nil || !bytes.Contains(body, []byte(`"id":"t-7"`)) {
			t.Errorf("JSON-RPC: %d %s", resp.StatusCode, body)
		}
		hr, err := http.Get(url + "/tasks/t-7")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(hr.Body)
		hr.Body.Close()
		var got a2a.Task
		if hr.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.ID != "t-7" || got.Status.State != a2a.TaskStateWorking {
			t.Errorf("HTTP+JSON: %d %s", hr.StatusCode, b)
		}
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer y", "a2a-version", "1.0", "a2a-extensions", "urn:c")
		pt, err := api.GetTask(ctx, &a2apb.GetTaskRequest{Id: "t-7"})
		if err != nil || pt.GetId() != "t-7" || pt.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_WORKING {
			t.Errorf("gRPC: %v %v", pt, err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.peers) != 3 || f.finished != 3 {
			t.Fatalf("%d admitted, %d finished", len(f.peers), f.finished)
		}
		for i, want := range []struct {
			binding, auth string
			ext           int
		}{{a2a.BindingJSONRPC, "Bearer x", 2}, {a2a.BindingHTTPJSON, "", 0}, {a2a.BindingGRPC, "Bearer y", 1}} {
			p := f.peers[i]
			if p.Binding != want.binding || (want.auth != "" && (len(p.Authorization) != 1 || p.Authorization[0] != want.auth)) || len(p.Extensions) != want.ext || p.RemoteAddr == "" {
				t.Errorf("peer %d = %+v, want %+v", i, p, want)
			}
		}
	})

	t.Run("a transport-level refusal", func(t *testing.T) {
		f := &fakeHandler{task: task, admit: &Refusal{Err: errRateLimited(7 * time.Second), Status: 429, RetryAfter: 7 * time.Second}}
		url, api := fakeBindings(t, f)
		resp, body := post(url+"/", getTask, nil)
		if r, _ := a2a.ParseResponse(body); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || r == nil || r.Error == nil || r.Error.Code != a2a.CodeRateLimited {
			t.Errorf("JSON-RPC: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		hr, err := http.Get(url + "/tasks/t-7")
		if err != nil {
			t.Fatal(err)
		}
		hr.Body.Close()
		if hr.StatusCode != 429 || hr.Header.Get("Retry-After") != "7" {
			t.Errorf("HTTP+JSON: %d %q", hr.StatusCode, hr.Header.Get("Retry-After"))
		}
		_, err = api.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t-7"})
		if code, reason, md := grpcStatusOf(t, err); code != codes.ResourceExhausted || reason != "RATE_LIMITED" || md["retryAfterSeconds"] != "7" {
			t.Errorf("gRPC: %v %s %v", code, reason, md)
		}
	})

	t.Run("a protocol error", func(t *testing.T) {
		f := &fakeHandler{task: task, fail: refusal(a2a.ErrTaskNotFound("t-7"))}
		url, api := fakeBindings(t, f)
		resp, body := post(url+"/", getTask, nil)
		if r, _ := a2a.ParseResponse(body); resp.StatusCode != 200 || r == nil || r.Error == nil || r.Error.Reason != "TASK_NOT_FOUND" {
			t.Errorf("JSON-RPC: %d %s", resp.StatusCode, body)
		}
		hr, err := http.Get(url + "/tasks/t-7")
		if err != nil {
			t.Fatal(err)
		}
		hr.Body.Close()
		if hr.StatusCode != 404 {
			t.Errorf("HTTP+JSON: %d", hr.StatusCode)
		}
		_, err = api.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t-7"})
		if code, reason, md := grpcStatusOf(t, err); code != codes.NotFound || reason != "TASK_NOT_FOUND" || md["taskId"] != "t-7" {
			t.Errorf("gRPC: %v %s %v", code, reason, md)
		}
	})
}
