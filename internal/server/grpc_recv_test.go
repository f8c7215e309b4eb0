package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// TestGRPCReadTimeoutWithPooledReceivers: an RPC whose client sends its
// headers and then no message is refused with DEADLINE_EXCEEDED once
// Limits.ReadTimeout has passed, however many such RPCs wait at once, and
// the receivers they held serve the next RPCs.
func TestGRPCReadTimeoutWithPooledReceivers(t *testing.T) {
	e := startedEnv(t, func(o *Options) { o.Limits.ReadTimeout = 300 * time.Millisecond })
	api, addr := dialGRPC(t, e.url)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	const stalled = 5
	errs := make(chan error, stalled)
	for range stalled {
		go func() {
			ctx, cancel := context.WithTimeout(callCtx(tokAlice), 10*time.Second)
			defer cancel()
			desc := &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}
			s, err := cc.NewStream(ctx, desc, "/"+a2apb.A2AService_ServiceDesc.ServiceName+"/SendMessage")
			if err != nil {
				errs <- err
				return
			}
			// NewStream sent the headers; the message never comes.
			errs <- s.RecvMsg(new(a2apb.SendMessageResponse))
		}()
	}
	for range stalled {
		err := <-errs
		if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(status.Convert(err).Message(), "did not arrive within 300ms") {
			t.Fatalf("a call that sends no message ended with %v, want DEADLINE_EXCEEDED from the read timeout", err)
		}
	}
	for i := range 3 {
		res, err := api.SendMessage(callCtx(tokAlice), textRequest("after the stalled calls"))
		if err != nil || res.GetTask() == nil {
			t.Fatalf("call %d after the stalled ones: %v %v", i, res, err)
		}
	}
}

// TestGRPCMessageLargerThanTheWindows: the binding's flow-control windows
// are fixed (grpcStreamWindow, grpcConnWindow); a request larger than both
// still arrives whole, the window reopening as it is read.
func TestGRPCMessageLargerThanTheWindows(t *testing.T) {
	e := startedEnv(t, func(o *Options) { o.Limits.MaxBodyBytes = 4 << 20 })
	api, _ := dialGRPC(t, e.url)
	text := strings.Repeat("0123456789abcdef", (grpcConnWindow+grpcStreamWindow)/16)
	res, err := api.SendMessage(callCtx(tokAlice), textRequest(text))
	if err != nil {
		t.Fatal(err)
	}
	got := res.GetTask().GetHistory()
	if len(got) == 0 || got[0].GetParts()[0].GetText() != text {
		t.Fatalf("the %d-byte message did not arrive whole: %d history entries", len(text), len(got))
	}
}
