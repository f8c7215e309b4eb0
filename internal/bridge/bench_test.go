package bridge

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// echoHost answers every turn from goroutines of its own, as a host does:
// the HandleMessage call returns, then the agent's final answer comes
// back through the bridge's Send and the turn ends (ProcessingComplete,
// what a Send with ends_turn does).
type echoHost struct {
	fakeHost
	turns chan *pb.HandleMessageRequest
}

func (h *echoHost) HandleMessage(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	h.turns <- req
	return &pb.HandleMessageResponse{TurnId: "turn-" + req.GetTaskId()}, nil
}

func (h *echoHost) run(br *Bridge, out Tasks) {
	ctx := context.Background()
	for req := range h.turns {
		_, _ = br.Send(ctx, out, &pb.SendRequest{Platform: PlatformName, ChatId: req.GetChatId(), TaskId: req.GetTaskId(),
			Kind: pb.SendKind_SEND_KIND_FINAL, Text: "echo: " + req.GetParts()[0].GetText(), EndsTurn: true})
		_, _ = br.ProcessingComplete(ctx, out, &pb.ProcessingCompleteRequest{Platform: PlatformName, ChatId: req.GetChatId(),
			TaskId: req.GetTaskId(), Outcome: pb.Outcome_OUTCOME_SUCCESS})
	}
}

// BenchmarkTurn is a blocking SendMessage through the task manager and
// the bridge, with the host played in-process (no gRPC, no HTTP): the
// bridge's share of a turn is the inbound conversion (filtering, framing,
// PartsToProto) and the outbound one (redaction, PartsFromProto).
// cpu-ns/op is the process's CPU per turn (wall time on a shared machine
// moves with its load).
func BenchmarkTurn(b *testing.B) {
	host := &echoHost{turns: make(chan *pb.HandleMessageRequest, 1024)}
	br, err := New(Options{Host: host})
	if err != nil {
		b.Fatal(err)
	}
	mgr, err := tasks.NewManager(tasks.Options{Store: store.NewMemory(10_000), Executor: br, RequestTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := mgr.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = mgr.Close(context.Background()); close(host.turns) })
	for range 2 {
		go host.run(br, mgr)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuNow()
	for range b.N {
		msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hello there, this is a short message"))
		r, err := mgr.Send(context.Background(), tasks.SendParams{Caller: peer, Scope: peer.ID, Request: &a2a.SendMessageRequest{Message: msg}})
		if err != nil || r.Task == nil || r.Task.Status.State != a2a.TaskStateCompleted {
			b.Fatalf("Send = %+v, %v", r, err)
		}
	}
	b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
}

// cpuNow is the process's CPU time (user + system) so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
