package security_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRateLimitPerIdentity: with A2A_RATE_LIMIT=5 the sixth request of an
// identity within a minute is HTTP 429 with Retry-After and a -32051 body
// saying when to retry, and never reaches the host; other identities are
// not affected; failed authentication attempts are limited per address;
// the public card counts against the caller's budget too.
func TestRateLimitPerIdentity(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{
		config: map[string]any{"loopback_is_local": false},
		env:    map[string]string{"A2A_PEER_TOKENS": peerTokens, "A2A_RATE_LIMIT": "5"},
	})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 30*time.Second)
	alice, bob := newClient(ep, tokAlice), newClient(ep, tokBob)

	first := alice.mustSend(t, ctx, "one")
	for i := 2; i <= 5; i++ {
		if r := alice.mustCall(t, ctx, "GetTask", map[string]any{"id": first.ID}); r.Status != http.StatusOK || r.Err != nil {
			t.Fatalf("request %d of 5: %s", i, r)
		}
	}
	checkRateLimited := func(what string, r *resp) {
		t.Helper()
		wantRefusal(t, r, http.StatusTooManyRequests, -32051, "retry after")
		if r.reason() != "RATE_LIMITED" {
			t.Errorf("%s: reason %q, want RATE_LIMITED", what, r.reason())
		}
		ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 60 {
			t.Errorf("%s: Retry-After %q, want whole seconds within the minute", what, r.Header.Get("Retry-After"))
		} else if r.Err != nil && !strings.Contains(r.Err.Message, "after "+strconv.Itoa(ra)+" second") {
			t.Errorf("%s: message %q disagrees with Retry-After %d", what, r.Err.Message, ra)
		}
	}
	before := len(h.Recorder().CallsOf("HandleMessage"))
	checkRateLimited("6th request", alice.mustCall(t, ctx, "SendMessage", sendParams(message("six"))))
	checkRateLimited("7th request", alice.mustCall(t, ctx, "GetTask", map[string]any{"id": first.ID}))
	if after := len(h.Recorder().CallsOf("HandleMessage")); after != before {
		t.Errorf("a rate-limited message reached the host (%d → %d)", before, after)
	}

	// Bob has his own budget.
	for i := 1; i <= 5; i++ {
		if r := bob.mustCall(t, ctx, "ListTasks", map[string]any{}); r.Status == http.StatusTooManyRequests {
			t.Fatalf("bob's request %d was limited by alice's traffic: %s", i, r)
		}
	}

	// Token guessing is limited per address.
	guess := newClient(ep, "guess-token-000000000000000000")
	for i := 1; i <= 5; i++ {
		if r := guess.mustCall(t, ctx, "GetTask", map[string]any{"id": "x"}); r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %s, want 401", i, r)
		}
	}
	checkRateLimited("6th wrong token", guess.mustCall(t, ctx, "GetTask", map[string]any{"id": "x"}))

	// The card is public but counts against the same budget: alice, over
	// her limit, is refused it too (plain HTTP 429 with Retry-After), and
	// an anonymous caller gets 5 cards a minute.
	cardStatus := func(c *client) (int, string) {
		t.Helper()
		hr := getCard(t, ctx, c)
		hr.Body.Close()
		return hr.StatusCode, hr.Header.Get("Retry-After")
	}
	if status, ra := cardStatus(alice); status != http.StatusTooManyRequests || ra == "" {
		t.Errorf("alice's card over her limit: HTTP %d, Retry-After %q, want 429 with Retry-After", status, ra)
	}
	anon := newClient(ep, "")
	for i := 1; i <= 5; i++ {
		fetchCard(t, ctx, anon)
	}
	if status, _ := cardStatus(anon); status != http.StatusTooManyRequests {
		t.Errorf("6th anonymous card: HTTP %d, want 429", status)
	}
}

// TestLocalCallersAreNotRateLimitedByDefault: the operator's own tools
// (loopback, no token: the Local tier) are exempt from A2A_RATE_LIMIT, so
// every agent and test suite on the machine does not share one
// "local:127.0.0.1" budget; a peer presenting its token over loopback is
// limited as anywhere; A2A_RATE_LIMIT_LOCAL=true limits Local callers too.
func TestLocalCallersAreNotRateLimitedByDefault(t *testing.T) {
	t.Parallel()
	for _, limitLocal := range []bool{false, true} {
		env := map[string]string{"A2A_PEER_TOKENS": peerTokens, "A2A_RATE_LIMIT": "5"}
		if limitLocal {
			env["A2A_RATE_LIMIT_LOCAL"] = "true"
		}
		h := startHost(t, hostOpts{env: env})
		ep := h.Endpoint("a2a")
		ctx := ctxFor(t, 30*time.Second)
		local, alice := newClient(ep, ""), newClient(ep, tokAlice)
		limited := 0
		for i := 1; i <= 12; i++ {
			r := local.mustCall(t, ctx, "ListTasks", map[string]any{})
			switch {
			case r.Status == http.StatusTooManyRequests:
				limited++
			case r.Status != http.StatusOK || r.Err != nil:
				t.Fatalf("local request %d: %s", i, r)
			}
		}
		switch {
		case !limitLocal && limited > 0:
			t.Errorf("%d of 12 Local requests were rate limited with A2A_RATE_LIMIT=5; Local callers are exempt by default", limited)
		case limitLocal && limited != 7:
			t.Errorf("with A2A_RATE_LIMIT_LOCAL=true %d of 12 Local requests were limited, want 7", limited)
		}
		for i := 1; i <= 5; i++ {
			if r := alice.mustCall(t, ctx, "GetTask", map[string]any{"id": "x"}); r.Status == http.StatusTooManyRequests {
				t.Fatalf("alice's request %d was limited: %s", i, r)
			}
		}
		wantRefusal(t, alice.mustCall(t, ctx, "GetTask", map[string]any{"id": "x"}), http.StatusTooManyRequests, -32051, "retry after")
	}
}
