package outbound_test

import (
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// TestCallWithoutTheRightTokenIsRefusedByThePeer: Bob's card is public but
// its tasks are not. Carol calls Bob by URL with no token, Alice calls Bob
// as "bob-wrong" with a wrong one: both get an is_error result saying the
// peer refused the authentication and how to fix it, and Bob's host never
// sees either message.
func TestCallWithoutTheRightTokenIsRefusedByThePeer(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	noToken, wrongToken := unique(t, "no token"), unique(t, "wrong token")

	r, _ := callTool(t, w.carol, "a2a_call", map[string]any{"agent": w.bobURL, "message": noToken})
	e2etest.MustErr(t, r, "a2a_call to "+w.bobURL+" failed", "authentication refused (HTTP 401)", "configure a valid credential for this peer")

	r, _ = callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob-wrong", "message": wrongToken})
	e2etest.MustErr(t, r, "a2a_call to bob-wrong failed", "authentication refused (HTTP 401)", "configure a valid credential for this peer")
	mustNotContain(t, r, "not-bobs-token")

	// The refusal is about the token, not the card: discovery still works.
	r, _ = callTool(t, w.alice, "a2a_discover", map[string]any{"url": "bob-wrong"})
	e2etest.MustOK(t, r, `Agent "Bob"`, "Authentication: HTTP Bearer")

	// Bob's plugin turned both away before its host; a later message that
	// passes shows the recorder was looking.
	ok := unique(t, "right token")
	r, _ = callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": ok})
	e2etest.MustOK(t, r, "bob completed the task")
	waitFor(t, w.bob, messageWith(ok))
	if got := append(messagesWith(w.bob, noToken), messagesWith(w.bob, wrongToken)...); len(got) != 0 {
		t.Fatalf("refused messages reached Bob's host: %v", got)
	}
}

// TestCallToAPeerThatIsDownIsAnUnreachableErrorResult: a configured peer
// whose host was stopped gives every tool a clear is_error result naming
// the peer and saying it is unreachable — not a Go error, not a hang.
func TestCallToAPeerThatIsDownIsAnUnreachableErrorResult(t *testing.T) {
	t.Parallel()
	w := plugins(t)

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "gone", "message": "anyone there?"})
	e2etest.MustErr(t, r, "a2a_call to gone failed", `a2a peer "gone" (`+w.goneURL, "unreachable", "check that the agent is running")

	r, _ = callTool(t, w.alice, "a2a_discover", map[string]any{"url": "gone"})
	e2etest.MustErr(t, r, "a2a_discover", "unreachable")

	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "gone", "task_id": "t-1", "action": "get"})
	e2etest.MustErr(t, r, "a2a_task get on gone failed", "unreachable")
}

// TestCallByURLIsRefusedWithoutAllowUnconfiguredURLs: Boss has no
// allow_unconfigured_urls, so a URL that is not a configured peer is
// refused before any request — even a live agent's — and the result lists
// the configured peers to use instead.
func TestCallByURLIsRefusedWithoutAllowUnconfiguredURLs(t *testing.T) {
	t.Parallel()
	tw, pw := team(t), plugins(t)
	carolURL := pw.carol.Endpoint(testharness.A2APluginName)
	msg := unique(t, "let me in")

	r, _ := callTool(t, tw.boss, "a2a_call", map[string]any{"agent": carolURL, "message": msg})
	e2etest.MustErr(t, r, "calling agents by URL is disabled", "archive, flaky, scout, linguist")

	r, _ = callTool(t, tw.boss, "a2a_discover", map[string]any{"url": carolURL})
	e2etest.MustErr(t, r, "calling agents by URL is disabled")

	if got := messagesWith(pw.carol, msg); len(got) != 0 {
		t.Fatalf("the refused message reached Carol's host: %v", got)
	}
}

// TestSSRFGuardRefusesPrivateAndLinkLocalURLs: Carol may call agents by URL
// and on loopback, but not on private or link-local addresses (the cloud
// metadata address among them): those are refused by the SSRF guard before
// any connection.
func TestSSRFGuardRefusesPrivateAndLinkLocalURLs(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	for _, url := range []string{"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://192.168.1.20:8080/"} {
		r, _ := callTool(t, w.carol, "a2a_discover", map[string]any{"url": url})
		e2etest.MustErr(t, r, url+" is refused by the SSRF guard")
		r, _ = callTool(t, w.carol, "a2a_call", map[string]any{"agent": url, "message": "hello"})
		e2etest.MustErr(t, r, url+" is refused by the SSRF guard")
	}
	// Loopback is allowed for Carol: the guard is selective, not closed.
	r, _ := callTool(t, w.carol, "a2a_discover", map[string]any{"url": w.bobURL})
	e2etest.MustOK(t, r, `Agent "Bob"`)
}
