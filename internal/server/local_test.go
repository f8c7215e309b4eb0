package server

import (
	"io"
	"net/http"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// TestTokenFromLoopbackNamesThePeerNotLocal: with loopback_is_local on
// (the default), a peer presenting its token over loopback is that peer —
// scoped to its own tasks, refused the operator routes — and only a
// loopback caller presenting no token is Local.
func TestTokenFromLoopbackNamesThePeerNotLocal(t *testing.T) {
	operator := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "operator page") })
	e := newEnv(t, func(o *Options) {
		o.Auth = testAuth(t, true)
		o.Extra = []ExtraRoute{
			{Pattern: "GET /debug/pprof/", Handler: operator},
			{Pattern: "GET /metrics", Handler: operator, Allow: func(id security.Identity) bool { return id.Tier >= security.TierTrusted }},
		}
	})
	bobs := e.send(tokBob, "hello", nil)
	bobSlow := e.startGated(tokBob, "slow work")
	defer e.exec.release(bobSlow.ID)

	// carol (a public peer) over loopback: her own tasks only.
	if err := e.fails(tokCarol, "GetTask", &a2a.GetTaskRequest{ID: bobs.ID}); err.Code != a2a.CodeTaskNotFound {
		t.Errorf("carol reads bob's task over loopback: %v", err)
	}
	if err := e.fails(tokCarol, "CancelTask", &a2a.CancelTaskRequest{ID: bobSlow.ID}); err.Code != a2a.CodeTaskNotFound {
		t.Errorf("carol cancels bob's task over loopback: %v", err)
	}
	if err := e.fails(tokCarol, "ListTasks", &a2a.ListTasksRequest{}); err.Code != a2a.CodeUnauthorized {
		// The default policy does not let public peers list at all.
		t.Errorf("carol lists tasks over loopback: %v", err)
	}
	// alice (trusted) may list, but sees her own tasks, not bob's.
	l := decode[a2a.ListTasksResponse](t, e.ok(tokAlice, "ListTasks", &a2a.ListTasksRequest{}))
	for _, tk := range l.Tasks {
		if tk.ID == bobs.ID || tk.ID == bobSlow.ID {
			t.Errorf("alice lists bob's task %s over loopback", tk.ID)
		}
	}
	// The host is told who the caller is, with its own tier.
	e.send(tokCarol, "who am i", nil)
	if turn := e.exec.lastTurn(); turn.Sender.ID != "peer:carol" || turn.Sender.Tier != security.TierPublic {
		t.Errorf("the host saw carol as %+v, want peer:carol public", turn.Sender)
	}

	// Operator routes: Local only (metrics also to trusted peers).
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/debug/pprof/", tokCarol, http.StatusForbidden},
		{"/debug/pprof/", tokAlice, http.StatusForbidden},
		{"/metrics", tokCarol, http.StatusForbidden},
		{"/metrics", tokAlice, http.StatusOK},
		{"/debug/pprof/", "", http.StatusOK},
		{"/metrics", "", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, e.url+c.path, nil)
		if status, _, body := e.do(req, c.token, nil); status != c.want {
			t.Errorf("GET %s with token %q: HTTP %d %s, want %d", c.path, c.token, status, body, c.want)
		}
	}

	// Without a token, the loopback caller is the operator: every task.
	l = decode[a2a.ListTasksResponse](t, e.ok("", "ListTasks", &a2a.ListTasksRequest{}))
	seen := map[string]bool{}
	for _, tk := range l.Tasks {
		seen[tk.ID] = true
	}
	if !seen[bobs.ID] || !seen[bobSlow.ID] {
		t.Errorf("the local operator does not see bob's tasks: %v", seen)
	}
}

// TestLocalCallersAreExemptFromTheRateLimitByDefault: the operator's own
// tools (Local: loopback, no token) are not rate limited unless
// RateLimitLocal says so; peers are, over loopback too, and so are the
// card requests of each.
func TestLocalCallersAreExemptFromTheRateLimitByDefault(t *testing.T) {
	list := []byte(`{"jsonrpc":"2.0","id":7,"method":"ListTasks"}`)
	card := func(e *testEnv, token string) int {
		req, _ := http.NewRequest(http.MethodGet, e.url+"/.well-known/agent-card.json", nil)
		status, _, _ := e.do(req, token, nil)
		return status
	}
	for _, limitLocal := range []bool{false, true} {
		e := newEnv(t, func(o *Options) {
			o.Auth = testAuth(t, true)
			o.RateLimit = security.NewRateLimiter(3, nil)
			o.RateLimitLocal = limitLocal
		})
		refused := 0
		for i := 0; i < 10; i++ {
			status, _, b := e.post("", list, nil)
			switch status {
			case http.StatusOK:
			case http.StatusTooManyRequests:
				refused++
				expectRefusal(t, status, b, http.StatusTooManyRequests, a2a.CodeRateLimited)
			default:
				t.Fatalf("local request %d: HTTP %d %s", i, status, b)
			}
			if status := card(e, ""); status != http.StatusOK && status != http.StatusTooManyRequests {
				t.Fatalf("local card request %d: HTTP %d", i, status)
			} else if status == http.StatusTooManyRequests {
				refused++
			}
		}
		switch {
		case !limitLocal && refused > 0:
			t.Errorf("%d of 20 Local requests were rate limited; Local callers are exempt by default", refused)
		case limitLocal && refused == 0:
			t.Errorf("with RateLimitLocal no Local request was rate limited (limit 3 per minute, 20 requests)")
		}
		// A peer over loopback has its budget whatever RateLimitLocal says.
		for i := 0; i < 3; i++ {
			if status, _, b := e.post(tokAlice, list, nil); status != http.StatusOK {
				t.Fatalf("alice request %d: HTTP %d %s", i, status, b)
			}
		}
		status, _, b := e.post(tokAlice, list, nil)
		expectRefusal(t, status, b, http.StatusTooManyRequests, a2a.CodeRateLimited)
	}
}
