package clienttest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	a2asrv1 "github.com/a2aproject/a2a-go/v2/a2asrv"
)

// StartGoV1REST starts the official Go SDK v1.0 server (a2a-go v2) with the
// echo agent behind its HTTP+JSON (REST) handler only, mounted under
// /rest; its card declares that one HTTP+JSON interface, so a client must
// speak the REST binding to use it.
func StartGoV1REST(t testing.TB, name string) *Peer {
	t.Helper()
	exec := &v1Executor{canceled: make(chan string, 16)}
	handler := a2asrv1.NewHandler(exec, a2asrv1.WithCallInterceptors(authenticateAll{}))
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.Handle("/rest/", http.StripPrefix("/rest", a2asrv1.NewRESTHandler(handler)))
	card := CardV1(srv.URL, name, true)
	card.Description = "Echo agent on the official Go SDK (a2a-go v2), HTTP+JSON only"
	card.SupportedInterfaces = []*a2av1.AgentInterface{a2av1.NewAgentInterface(srv.URL+"/rest", a2av1.TransportProtocolHTTPJSON)}
	mux.Handle("/.well-known/agent-card.json", a2asrv1.NewStaticAgentCardHandler(card))
	return &Peer{URL: srv.URL, Canceled: exec.canceled}
}
