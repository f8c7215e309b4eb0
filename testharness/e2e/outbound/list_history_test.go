package outbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// TestListShowsReachabilityCardsConversationsAndMetrics: a2a_list on a host
// of its own (so the counts are exact) shows the configured peers — Bob
// reachable with a summary of its card, a peer whose host was stopped
// unreachable — then, after two calls to Bob in one conversation and one to
// the stopped peer, that conversation and the per-peer call counts.
func TestListShowsReachabilityCardsConversationsAndMetrics(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	down := testharness.Start(t, testharness.Options{PluginConfig: peerConfig(nil)})
	downURL := down.Endpoint(testharness.A2APluginName)
	lister := testharness.Start(t, testharness.Options{PluginConfig: peerConfig(map[string]any{
		"a2a_agents": []map[string]any{
			{"name": "bob", "url": w.bobURL, "token": bobToken, "trust": "trusted"},
			{"name": "down", "url": downURL},
		},
	})})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := down.Close(ctx); err != nil {
		t.Fatal(err)
	}

	r, _ := callTool(t, lister, "a2a_list", nil)
	e2etest.MustOK(t, r, "Configured peers (2):",
		"- bob ("+w.bobURL+", trust trusted): reachable",
		`card: "Bob" — Bob translates and proofreads.; protocol 1.0; streaming yes; skills: proofread, translate`,
		"- down ("+downURL+", trust public): unreachable",
		"Conversations: none yet.", "Call metrics: no calls yet.")

	first := unique(t, "first of two")
	r, _ = callTool(t, lister, "a2a_call", map[string]any{"agent": "bob", "message": first})
	s := e2etest.SummaryOf(t, r)
	r, _ = callTool(t, lister, "a2a_call", map[string]any{"agent": "bob", "message": "second of two", "context_id": s.ContextID})
	e2etest.MustOK(t, r, "bob completed the task")
	last := e2etest.SummaryOf(t, r)
	r, _ = callTool(t, lister, "a2a_call", map[string]any{"agent": "down", "message": "hello?"})
	e2etest.MustErr(t, r, "unreachable")

	r, _ = callTool(t, lister, "a2a_list", nil)
	e2etest.MustOK(t, r, "Recent conversations (1, newest first",
		"- context \""+s.ContextID+"\" with bob: 4 entries, last task \""+last.TaskID+"\" COMPLETED",
		"bob: 2 calls, 0 errors", "down: 1 calls, 1 errors")
}

// TestListShowsAPeerUnreachableOnceItStopped: once a2a_list has seen
// a peer, stopping it should show in the next a2a_list.
func TestListShowsAPeerUnreachableOnceItStopped(t *testing.T) {
	t.Parallel()
	peer := testharness.Start(t, testharness.Options{PluginConfig: peerConfig(nil)})
	lister := testharness.Start(t, testharness.Options{PluginConfig: peerConfig(map[string]any{
		"a2a_agents": []map[string]any{{"name": "peer", "url": peer.Endpoint(testharness.A2APluginName)}},
	})})
	r, _ := callTool(t, lister, "a2a_list", nil)
	e2etest.MustOK(t, r, "): reachable")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := peer.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r, _ = callTool(t, lister, "a2a_list", nil)
	e2etest.MustOK(t, r, "): unreachable")
}

// TestHistoryShowsTheConversationInOrderAndHonoursLimit: after a multi-turn
// exchange (a question, its answer, a follow-up), a2a_history returns what
// was sent and what came back, oldest first; limit keeps the last entries.
func TestHistoryShowsTheConversationInOrderAndHonoursLimit(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	ask, answer, follow := unique(t, "book a room"), unique(t, "Monday"), unique(t, "thanks")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": ask})
	q := e2etest.SummaryOf(t, r)
	askingTurnOver(t, w.bob, q.TaskID)
	r, _ = callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": answer, "task_id": q.TaskID, "context_id": q.ContextID})
	e2etest.MustOK(t, r, "booked for "+answer)
	r, _ = callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": follow, "context_id": q.ContextID})
	e2etest.MustOK(t, r, "bob heard (message 3 of this chat): "+follow)

	r, _ = callTool(t, w.alice, "a2a_history", map[string]any{"context_id": q.ContextID})
	e2etest.MustOK(t, r, "Conversation \""+q.ContextID+"\" (6 entries, oldest first):")
	inOrder(t, r.GetContent(),
		"→ sent to bob (task \""+q.TaskID+"\"): "+ask,
		"← from bob (task \""+q.TaskID+"\", INPUT_REQUIRED):\n[A2A UNTRUSTED INPUT BEGIN from bob]", "Which day should I book?",
		"→ sent to bob (task \""+q.TaskID+"\"): "+answer,
		"← from bob (task \""+q.TaskID+"\", COMPLETED):\n[A2A UNTRUSTED INPUT BEGIN from bob]", "booked for "+answer,
		"→ sent to bob", follow,
		"← from bob", "COMPLETED):\n[A2A UNTRUSTED INPUT BEGIN from bob]", "bob heard (message 3 of this chat): "+follow,
	)

	r, _ = callTool(t, w.alice, "a2a_history", map[string]any{"context_id": q.ContextID, "limit": 2})
	e2etest.MustOK(t, r, "(2 entries, oldest first)", "→ sent to bob", follow, "bob heard (message 3 of this chat)")
	mustNotContain(t, r, ask, "booked for")

	r, _ = callTool(t, w.alice, "a2a_history", map[string]any{"context_id": "no-such-context"})
	e2etest.MustOK(t, r, `No conversation with context_id "no-such-context" is known`)
}
