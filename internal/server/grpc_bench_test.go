package server

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// BenchmarkSendMessageBlockingGRPC is BenchmarkSendMessageBlockingHTTP
// over the gRPC binding: a real loopback connection per goroutine, the
// whole handler, an agent that answers at once.
func BenchmarkSendMessageBlockingGRPC(b *testing.B) {
	srv, _ := newInstantServer(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.grpc.Serve(ln) }()
	defer srv.grpc.Stop()
	req := textRequest("hello, how are you today?")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Error(err)
			return
		}
		defer cc.Close()
		api := a2apb.NewA2AServiceClient(cc)
		ctx := metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0")
		for pb.Next() {
			res, err := api.SendMessage(ctx, req)
			if err != nil || res.GetTask().GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED {
				b.Errorf("%v %v", res, err)
				return
			}
		}
	})
}
