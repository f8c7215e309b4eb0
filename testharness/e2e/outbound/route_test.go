package outbound_test

import (
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// TestRoutePicksThePeerWhoseSkillsMatchAndExplainsWhy: a2a_route reads the
// peers' cards (built from their hosts' tools) and picks the peer whose
// skill the message names, or whose skills share its words, saying which
// rule decided; without send it calls nobody.
func TestRoutePicksThePeerWhoseSkillsMatchAndExplainsWhy(t *testing.T) {
	t.Parallel()
	w := team(t)

	byName := unique(t, "Please translate this sentence into French: good morning")
	r, _ := callTool(t, w.boss, "a2a_route", map[string]any{"message": byName})
	e2etest.MustOK(t, r, `Route: linguist (matched by name: the message names its skill "translate")`, `To send it: a2a_call agent="linguist"`)

	byWords := unique(t, "Look up the weather forecast on the web for Paris")
	r, _ = callTool(t, w.boss, "a2a_route", map[string]any{"message": byWords})
	e2etest.MustOK(t, r, "Route: scout (matched by keywords: its skills share the words", `"weather"`, `"web"`)

	// Nothing fits and Boss's host has no model to ask: no pick, and the
	// peers' skills to choose from.
	r, _ = callTool(t, w.boss, "a2a_route", map[string]any{"message": "What is the meaning of life?"})
	e2etest.MustOK(t, r, "No peer clearly fits this message.", "The host offers no model for semantic routing.",
		"- linguist: translate [language, translation]", "- scout: web_search [research, web]")

	for _, msg := range []string{byName, byWords} {
		if got := append(messagesWith(w.linguist, msg), messagesWith(w.scout, msg)...); len(got) != 0 {
			t.Fatalf("a2a_route without send sent %q: %v", msg, got)
		}
	}
}

// TestRouteWithSendDeliversTheMessageToTheChosenPeer: with send, the
// message goes to the chosen peer as a2a_call would send it, and the
// result carries both the choice and the answer.
func TestRouteWithSendDeliversTheMessageToTheChosenPeer(t *testing.T) {
	t.Parallel()
	w := team(t)
	msg := unique(t, "Please translate thank you into German")

	r, _ := callTool(t, w.boss, "a2a_route", map[string]any{"message": msg, "send": true})
	e2etest.MustOK(t, r, "Route: linguist (matched by name", "linguist completed the task", "linguist: "+msg+" (translated)")
	waitFor(t, w.linguist, messageWith(msg))
	if got := messagesWith(w.scout, msg); len(got) != 0 {
		t.Fatalf("the message also reached scout: %v", got)
	}
}
