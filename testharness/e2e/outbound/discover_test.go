package outbound_test

import (
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// TestDiscoverByNameSummarisesSkillsInterfaceCapabilitiesAndAuth: a2a_discover
// of a configured peer fetches the card Bob's plugin builds from Bob's host
// (its tools become skills) and says what a model needs: skills with tags,
// the interface that will be used, streaming and push support, that a
// bearer token is required and that one is configured; refresh revalidates
// the cached card.
func TestDiscoverByNameSummarisesSkillsInterfaceCapabilitiesAndAuth(t *testing.T) {
	t.Parallel()
	w := plugins(t)

	r, _ := callTool(t, w.alice, "a2a_discover", map[string]any{"url": "bob"})
	e2etest.MustOK(t, r,
		`Agent "Bob"`, `configured peer "bob"`, "Description: Bob translates and proofreads.",
		"Interface used: JSONRPC, protocol 1.0, "+w.bobURL,
		"Capabilities: streaming yes, push notifications yes",
		"Authentication: HTTP Bearer",
		"Credential configured for it: bearer token",
		"Skills (2):",
		"- proofread: Check the spelling and grammar of a text. [tags: language, grammar]",
		"- translate: Translate text between English, French and German. [tags: language, translation, french]",
		`To delegate: a2a_call agent="bob"`,
		`"skills":["proofread","translate"]`,
	)
	// The token is configured for the peer, never shown.
	mustNotContain(t, r, bobToken)

	r, _ = callTool(t, w.alice, "a2a_discover", map[string]any{"url": "bob", "refresh": true})
	e2etest.MustOK(t, r, `Agent "Bob"`, "revalidated now (304 Not Modified)")

	r, _ = callTool(t, w.alice, "a2a_discover", map[string]any{"url": "bob"})
	e2etest.MustOK(t, r, `Agent "Bob"`, "(from cache;")
}

// TestDiscoverByURLWithAllowUnconfiguredURLs: with allow_unconfigured_urls a
// model may discover an agent by URL. Carol has no peers, so Bob's URL is
// an unconfigured agent (no credential, no trust tier); Alice has Bob
// configured, so the same URL is the configured peer with its credential.
func TestDiscoverByURLWithAllowUnconfiguredURLs(t *testing.T) {
	t.Parallel()
	w := plugins(t)

	r, _ := callTool(t, w.carol, "a2a_discover", map[string]any{"url": w.bobURL})
	e2etest.MustOK(t, r, `Agent "Bob"`, "Skills (2):", "translate", "Authentication: HTTP Bearer",
		"Capabilities: streaming yes", `To delegate: a2a_call agent="`+w.bobURL+`"`)
	mustNotContain(t, r, "configured peer", "Credential configured")

	r, _ = callTool(t, w.alice, "a2a_discover", map[string]any{"url": w.bobURL})
	e2etest.MustOK(t, r, `Agent "Bob"`, `configured peer "bob"`, "Credential configured for it: bearer token")
}
