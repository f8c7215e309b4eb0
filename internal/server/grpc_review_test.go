package server

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// panickingHandler is the fake handler with a GetTask that panics for
// the task id "boom".
type panickingHandler struct{ *fakeHandler }

func (p panickingHandler) GetTask(ctx context.Context, c *Call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.ID == "boom" {
		panic("a bug in an operation")
	}
	return p.fakeHandler.GetTask(ctx, c, req)
}

// TestGRPCPanicIsAnInternalError: a panic while serving an RPC is
// answered INTERNAL with its ErrorInfo, as the HTTP bindings' recoverer
// answers -32603; the process survives it and the exchange is finished.
// gRPC itself recovers no panic: without the binding's, one request
// would kill the plugin.
func TestGRPCPanicIsAnInternalError(t *testing.T) {
	f := &fakeHandler{task: &a2a.Task{ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
	_, api := fakeBindings(t, panickingHandler{f})
	_, err := api.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "boom"})
	if code, reason, _ := grpcStatusOf(t, err); code != codes.Internal || reason != "INTERNAL_ERROR" {
		t.Errorf("a panicking RPC: %v %s", code, reason)
	}
	if got, err := api.GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "t-1"}); err != nil || got.GetId() != "t-1" {
		t.Errorf("the next RPC: %v %v", got, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished != 2 {
		t.Errorf("%d exchanges finished, want 2", f.finished)
	}
}

// nestedStruct is metadata nested depth objects deep ({"a":{"a":…}}).
func nestedStruct(depth int) *structpb.Struct {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{"leaf": structpb.NewBoolValue(true)}}
	for range depth - 1 {
		s = &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewStructValue(s)}}
	}
	return s
}

// TestGRPCRefusesMessagesNestedTooDeep: Limits.MaxJSONDepth holds over
// gRPC as over JSON-RPC and HTTP+JSON (-32600 REQUEST_TOO_DEEP,
// INVALID_ARGUMENT), counted as the message's ProtoJSON form nests:
// protobuf itself accepts 10,000 levels, which the task's JSON then
// carries to the store, the host and every JSON client.
func TestGRPCRefusesMessagesNestedTooDeep(t *testing.T) {
	e := startedEnv(t)
	api, _ := dialGRPC(t, e.url)
	limit := e.srv.opts.Limits.MaxJSONDepth
	// SendMessageRequest, message, metadata: three levels before the
	// nested objects, as in an HTTP+JSON body.
	req := textRequest("deep")
	req.Message.Metadata = nestedStruct(limit - 2)
	if _, err := api.SendMessage(callCtx(tokAlice), req); err != nil {
		t.Fatalf("a message nested %d deep: %v", limit, err)
	}
	req.Message.MessageId = a2a.NewID()
	if body, _ := protojson.Marshal(req); e.restDo(tokAlice, "POST", "/message:send", body, nil).status != 200 {
		t.Fatalf("HTTP+JSON refuses the message nested %d deep", limit)
	}
	req = textRequest("too deep")
	req.Message.Metadata = nestedStruct(limit - 1)
	_, err := api.SendMessage(callCtx(tokAlice), req)
	if code, reason, md := grpcStatusOf(t, err); code != codes.InvalidArgument || reason != "REQUEST_TOO_DEEP" || md["maxDepth"] != strconv.Itoa(limit) {
		t.Errorf("a message nested %d deep: %v %s %v", limit+1, code, reason, md)
	}
	// The same message over HTTP+JSON is refused alike.
	body, _ := protojson.Marshal(req)
	if r := e.restDo(tokAlice, "POST", "/message:send", body, nil); r.status != 400 || !strings.Contains(string(r.body), "REQUEST_TOO_DEEP") {
		t.Errorf("HTTP+JSON: %d %s", r.status, r.body)
	}
	// Deep data parts (google.protobuf.Value lists) count as arrays.
	list := structpb.NewListValue(&structpb.ListValue{})
	for range limit {
		list = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{list}})
	}
	req = textRequest("deep data")
	req.Message.Parts = append(req.Message.Parts, &a2apb.Part{Content: &a2apb.Part_Data{Data: list}})
	_, err = api.SendMessage(callCtx(tokAlice), req)
	if code, reason, _ := grpcStatusOf(t, err); code != codes.InvalidArgument || reason != "REQUEST_TOO_DEEP" {
		t.Errorf("a data part nested %d deep: %v %s", limit+3, code, reason)
	}
}

// TestGRPCConnectionsMakeRoomUnderTheCap: under Limits.MaxConnections a
// gRPC (h2c) connection that carries no call is idle, as a keep-alive
// HTTP connection between requests is, and makes room for a newcomer;
// one carrying a call (a stream) keeps its place. Otherwise connections
// that did one call and then nothing held every place for IdleTimeout
// and the HTTP clients were refused.
func TestGRPCConnectionsMakeRoomUnderTheCap(t *testing.T) {
	e := startedEnv(t, func(o *Options) { o.Limits.MaxConnections = 2 })
	e.srv.conns.minIdle, e.srv.conns.minFresh = 0, 1<<62 // the stalled one keeps its place
	addr := strings.TrimPrefix(e.url, "http://")
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	api := a2apb.NewA2AServiceClient(cc)
	if _, err := api.ListTasks(callCtx(tokAlice), &a2apb.ListTasksRequest{}); err != nil {
		t.Fatal(err)
	}
	stalled := rawRequest(t, addr, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Ty") // busy
	waitFor(t, "two open connections, the gRPC one idle", func() bool { return e.srv.conns.open() == 2 && e.srv.conns.idle() == 1 })
	c := rawRequest(t, addr, listRequest(addr, tokBob))
	if resp, b := readAnswer(t, c, bufio.NewReader(c)); resp.StatusCode != http.StatusOK {
		t.Fatalf("a newcomer while the gRPC connection was idle: HTTP %d %s", resp.StatusCode, b)
	}
	c.Close()
	stalled.Close()

	// A gRPC connection with a stream open is in use.
	waitFor(t, "room", func() bool { return e.srv.conns.open() <= 1 })
	task := e.startGated(tokAlice, "slow stream")
	defer e.exec.release(task.ID)
	st, err := api.SubscribeToTask(callCtx(tokAlice), &a2apb.SubscribeToTaskRequest{Id: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
	waitFor(t, "the gRPC connection alone", func() bool { return e.srv.conns.open() == 1 })
	stalled = rawRequest(t, addr, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Ty")
	defer stalled.Close()
	waitFor(t, "two busy connections", func() bool { return e.srv.conns.open() == 2 && e.srv.conns.idle() == 0 })
	c = rawRequest(t, addr, listRequest(addr, tokBob))
	if resp, _ := readAnswer(t, c, bufio.NewReader(c)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a newcomer while the gRPC connection carried a stream: HTTP %d, want 503", resp.StatusCode)
	}
}
