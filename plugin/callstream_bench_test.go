package plugin

import (
	"context"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// benchHostClient serves fn as the host's HandleMessage on loopback with
// the options both sides of the contract use (ServerOptions, DialOptions)
// and returns the plugin's client of a 1.2 host: one call-stream round trip
// per HandleMessage, as in a turn.
func benchHostClient(b *testing.B, fn func(context.Context, *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error)) *hostClient {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer(ServerOptions(nil)...)
	pb.RegisterHostServiceServer(srv, &hostServiceServer{hs: NewHostServer(&scriptedHost{fn: fn}, 0), logger: hclog.NewNullLogger()})
	go func() { _ = srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), append(DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		b.Fatal(err)
	}
	h := newHostClient(conn, 2)
	b.Cleanup(func() {
		_ = h.Close()
		srv.Stop()
	})
	return h
}

// benchTurn is a HandleMessage of the size a short text turn has.
func benchTurn() *pb.HandleMessageRequest {
	return &pb.HandleMessageRequest{
		Platform: "a2a", ChatId: "ctx-0123456789abcdef", TaskId: "task-0123456789abcdef0123456789ab",
		MessageId: "msg-0123456789abcdef0123456789abcd", AgentId: "echo",
		Sender: &pb.Sender{Id: "user-1", DisplayName: "user one"},
		Text:   "hello there, this is a short message",
		Parts:  []*pb.Part{{Content: &pb.Part_Text{Text: "hello there, this is a short message"}}},
	}
}

// cpuNow is the process's CPU time (user + system) so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallStreamRoundTrip is one HandleMessage on the call stream,
// both sides in this process (the plugin's caller, the host's served
// stream); cpu-ns/op is the CPU of both. serial is one caller at a time,
// 16callers sixteen at once (as under a2a-load -c 16).
func BenchmarkCallStreamRoundTrip(b *testing.B) {
	for _, par := range []int{1, 16} {
		b.Run(map[int]string{1: "serial", 16: "16callers"}[par], func(b *testing.B) {
			h := benchHostClient(b, func(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
				return &pb.HandleMessageResponse{TurnId: "turn-" + req.GetTaskId()}, nil
			})
			req := benchTurn()
			ctx := context.Background()
			// Warm up: open the stream.
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			if _, err := h.HandleMessage(c, req); err != nil {
				b.Fatal(err)
			}
			cancel()
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuNow()
			call := func() {
				c, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := h.HandleMessage(c, req)
				cancel()
				if err != nil {
					b.Error(err)
				}
			}
			if par == 1 {
				for i := 0; i < b.N; i++ {
					call()
				}
			} else {
				b.SetParallelism(max(1, par/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(tpb *testing.PB) {
					for tpb.Next() {
						call()
					}
				})
			}
			b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
