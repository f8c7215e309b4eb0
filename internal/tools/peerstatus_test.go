package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// TestPeersTellRateLimitedFromUnreachable: a peer that answers its card
// request with HTTP 429 is up and answering, only busy: the operator's
// view says "rate limited", not that it cannot be reached.
func TestPeersTellRateLimitedFromUnreachable(t *testing.T) {
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	t.Cleanup(busy.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "busy", URL: busy.URL}, {Name: "down", URL: downURL}}}, nil)
	got := map[string]PeerStatus{}
	for _, p := range ts.Peers(context.Background()) {
		got[p.Name] = p
	}
	if b := got["busy"]; !b.RateLimited || b.Reachable || !strings.Contains(b.Error, "rate limited") {
		t.Errorf("busy peer: %+v, want rate limited (and not reachable)", b)
	}
	if d := got["down"]; d.RateLimited || d.Reachable || !strings.Contains(d.Error, "unreachable") {
		t.Errorf("down peer: %+v, want unreachable", d)
	}
}
