package server

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

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
