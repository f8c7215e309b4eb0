package clienttest

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc"

	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2asrv1 "github.com/a2aproject/a2a-go/v2/a2asrv"
)

// StartGoV1GRPC starts the official Go SDK v1.0 server (a2a-go v2) with
// the echo agent behind its gRPC handler only (lf.a2a.v1.A2AService on a
// port of its own), and an HTTP server for its card, which declares that
// one GRPC interface as the SDK's own examples do: the address
// "127.0.0.1:<port>" a gRPC client dials.
func StartGoV1GRPC(t testing.TB, name string) *Peer {
	t.Helper()
	exec := &v1Executor{canceled: make(chan string, 16)}
	handler := a2asrv1.NewHandler(exec, a2asrv1.WithCallInterceptors(authenticateAll{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	a2agrpc1.NewHandler(handler).RegisterWith(gs)
	go func() {
		if err := gs.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("gRPC server: %v", err)
		}
	}()
	t.Cleanup(gs.Stop)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := CardV1(srv.URL, name, true)
	card.Description = "Echo agent on the official Go SDK (a2a-go v2), gRPC only"
	card.SupportedInterfaces = []*a2av1.AgentInterface{a2av1.NewAgentInterface(ln.Addr().String(), a2av1.TransportProtocolGRPC)}
	mux.Handle("/.well-known/agent-card.json", a2asrv1.NewStaticAgentCardHandler(card))
	return &Peer{URL: srv.URL, Canceled: exec.canceled}
}
