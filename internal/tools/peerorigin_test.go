package tools

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// innerService stands for a service on the plugin's machine (Redis on
// :6379, Docker on :2375 …) that no peer may point the plugin at. It
// records every request it gets.
type innerService struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string // "METHOD path auth=…"
}

func newInnerService(t *testing.T) *innerService {
	s := &innerService{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, fmt.Sprintf("%s %s auth=%q", r.Method, r.URL.Path, r.Header.Get("Authorization")))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *innerService) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hits...)
}

// pointingPeer is an agent whose card names interfaceURL as its JSON-RPC
// interface and whose /rpc, when redirectTo is set, redirects there.
func pointingPeer(t *testing.T, ln net.Listener, interfaceURL func(self string) string, redirectTo string) *httptest.Server {
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	if ln != nil {
		srv.Listener.Close()
		srv.Listener = ln
	}
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"pointing","description":"points elsewhere","version":"1",
		 "supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		 "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		 "skills":[{"id":"s","name":"s","description":"s","tags":["s"]}]}`, interfaceURL(srv.URL))
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		if redirectTo != "" {
			http.Redirect(w, r, redirectTo, http.StatusTemporaryRedirect)
			return
		}
		w.WriteHeader(http.StatusTeapot)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestConfiguredPeerIsExemptOnlyOnItsOwnOrigin: a configured peer on
// loopback is reachable (the operator named it), but that exemption is
// its exact origin, not every port of its host: its card's interface URL
// and its redirects cannot point the plugin at another service on the
// same machine.
func TestConfiguredPeerIsExemptOnlyOnItsOwnOrigin(t *testing.T) {
	inner := newInnerService(t)
	viaCard := pointingPeer(t, nil, func(string) string { return inner.srv.URL + "/rpc" }, "")
	viaRedirect := pointingPeer(t, nil, func(self string) string { return self + "/rpc" }, inner.srv.URL+"/rpc")
	ok := newCapture(t)
	ts, _ := newToolset(t, Config{AllowUnconfigured: true, Agents: []config.Peer{
		{Name: "card", URL: viaCard.URL},
		{Name: "redirect", URL: viaRedirect.URL, Token: "tok-redirect"},
		{Name: "good", URL: ok.srv.URL, Token: "tok-good"},
	}}, nil)

	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "good", "message": "hi"}, nil), "got it")
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": "card", "message": "hi"}, nil), "blocked", "loopback")
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": "redirect", "message": "hi"}, nil), "loopback")
	if hits := inner.requests(); len(hits) != 0 {
		t.Fatalf("a peer pointed the plugin at another service on its host: %q", hits)
	}
}

// nonLoopbackIPv4 returns an IPv4 address of this machine that is not
// loopback, or "" when it has none.
func nonLoopbackIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestUnconfiguredAgentCannotUseAConfiguredPeersExemption: with a peer
// configured on loopback and unconfigured URLs allowed, an unconfigured
// agent (here on a private address, which the configuration allows) can
// point neither its card's interface nor a redirect at loopback.
func TestUnconfiguredAgentCannotUseAConfiguredPeersExemption(t *testing.T) {
	ip := nonLoopbackIPv4()
	if ip == "" {
		t.Skip("this machine has no non-loopback IPv4 address to serve an unconfigured agent on")
	}
	listen := func() net.Listener {
		ln, err := net.Listen("tcp4", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Skipf("cannot listen on %s: %v", ip, err)
		}
		return ln
	}
	inner := newInnerService(t)
	configured := newCapture(t) // on loopback, like the brief's http://127.0.0.1:41241
	viaCard := pointingPeer(t, listen(), func(string) string { return inner.srv.URL + "/rpc" }, "")
	viaRedirect := pointingPeer(t, listen(), func(self string) string { return self + "/rpc" }, inner.srv.URL+"/rpc")
	ts, _ := newToolset(t, Config{AllowUnconfigured: true, AllowPrivate: true, Agents: []config.Peer{{Name: "self", URL: configured.srv.URL}}}, nil)

	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "self", "message": "hi"}, nil), "got it")
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": viaCard.URL, "message": "hi"}, nil), "loopback")
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": viaRedirect.URL, "message": "hi"}, nil), "loopback")
	if hits := inner.requests(); len(hits) != 0 {
		t.Fatalf("an unconfigured agent pointed the plugin at loopback: %q", hits)
	}
}
