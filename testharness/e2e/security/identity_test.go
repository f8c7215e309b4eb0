package security_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// extendedSkills is the extended_skills setting of the identity hosts.
var extendedSkills = []map[string]any{{
	"id": "vault-ops", "name": "Vault operations", "description": "Rotates credentials; only for authenticated peers.", "tags": []string{"ops"},
}}

// checkSender sends a message as c and checks the identity and tier the
// host saw.
func checkSender(t *testing.T, ctx context.Context, host *testharness.Host, c *client, wantID string, wantTier pb.TrustTier) {
	t.Helper()
	tk := c.mustSend(t, ctx, "who am I to you?")
	hm := handleMessageFor(t, ctx, host, tk.ID)
	if hm.GetSender().GetId() != wantID || hm.GetTrustTier() != wantTier {
		t.Errorf("host saw sender %q tier %s, want %s %s", hm.GetSender().GetId(), hm.GetTrustTier(), wantID, wantTier)
	}
	if !hm.GetUnattended() {
		t.Error("an inbound A2A turn is not marked unattended")
	}
	if !strings.HasPrefix(hm.GetText(), "[A2A UNTRUSTED INPUT BEGIN from "+wantID+"]") {
		t.Errorf("the frame does not name %s: %q", wantID, hm.GetText())
	}
}

// extendedCard calls GetExtendedAgentCard and decodes the card.
func extendedCard(t *testing.T, ctx context.Context, c *client) (*agentCard, *resp) {
	t.Helper()
	r := c.mustCall(t, ctx, "GetExtendedAgentCard", map[string]any{})
	if r.Err != nil || r.Status != http.StatusOK {
		return nil, r
	}
	var card agentCard
	if err := json.Unmarshal(r.Result, &card); err != nil {
		t.Fatalf("extended card: %v (%s)", err, r)
	}
	return &card, r
}

// TestSharedAndPeerTokensGiveIdentitiesTiersAndPolicy: the shared token is
// ip:<address> (Trusted while no trusted peers are named), a peer token is
// peer:<name> (Public unless trusted); the tier reaches the host with each
// message, and A2A_POLICY decides per tier which operations are allowed.
func TestSharedAndPeerTokensGiveIdentitiesTiersAndPolicy(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{
		agent:  scenario(nil, testharness.Echo("echo: ")),
		config: map[string]any{"loopback_is_local": false, "extended_skills": extendedSkills},
		env: map[string]string{"A2A_BEARER_TOKEN": tokShared, "A2A_PEER_TOKENS": peerTokens,
			"A2A_POLICY": "public=send,get"},
	})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 40*time.Second)
	shared, alice, anon := newClient(ep, tokShared), newClient(ep, tokAlice), newClient(ep, "")

	checkSender(t, ctx, h, shared, "ip:127.0.0.1", pb.TrustTier_TRUST_TIER_TRUSTED)
	checkSender(t, ctx, h, alice, "peer:alice", pb.TrustTier_TRUST_TIER_PUBLIC)
	r := anon.mustCall(t, ctx, "SendMessage", sendParams(message("anonymous")))
	wantRefusal(t, r, http.StatusUnauthorized, -32050, "Authorization: Bearer")

	// The public tier may send and get, nothing else.
	own := alice.mustSend(t, ctx, "mine")
	if _, r := alice.getTask(t, ctx, own.ID); r.Err != nil {
		t.Errorf("public GetTask of its own task: %s", r)
	}
	for _, tc := range []struct {
		method string
		params any
		perm   string
	}{
		{"ListTasks", map[string]any{}, "list"},
		{"CancelTask", map[string]any{"id": own.ID}, "cancel"},
		{"SubscribeToTask", map[string]any{"id": own.ID}, "subscribe"},
		{"CreateTaskPushNotificationConfig", map[string]any{"taskId": own.ID, "url": "https://example.com/hook"}, "push-config"},
		{"GetExtendedAgentCard", map[string]any{}, "extended-card"},
	} {
		r := alice.mustCall(t, ctx, tc.method, tc.params)
		wantRefusal(t, r, http.StatusOK, -32050, `"`+tc.perm+`" permission`)
		if r.Err != nil && !strings.Contains(r.Err.Message, `"public"`) {
			t.Errorf("%s refusal does not name the caller's tier: %q", tc.method, r.Err.Message)
		}
		if r.reason() != "UNAUTHORIZED" {
			t.Errorf("%s refusal reason %q, want UNAUTHORIZED", tc.method, r.reason())
		}
	}
	// The trusted tier keeps every operation.
	if r := shared.mustCall(t, ctx, "ListTasks", map[string]any{}); r.Err != nil {
		t.Errorf("trusted ListTasks: %s", r)
	}

	// Card: the public card declares the bearer scheme and hides the
	// extended skills; the trusted caller gets them.
	card := fetchCard(t, ctx, anon)
	checkBearerDeclared(t, card)
	if !card.Capabilities.ExtendedAgentCard || card.hasSkill("vault-ops") {
		t.Errorf("public card: extendedAgentCard=%t, lists vault-ops=%t", card.Capabilities.ExtendedAgentCard, card.hasSkill("vault-ops"))
	}
	if ext, r := extendedCard(t, ctx, shared); ext == nil || !ext.hasSkill("vault-ops") {
		t.Errorf("trusted caller's extended card lacks the extended skill: %s", r)
	}
	r = anon.mustCall(t, ctx, "GetExtendedAgentCard", map[string]any{})
	wantRefusal(t, r, http.StatusUnauthorized, -32050, "Authorization: Bearer")
}

// TestTrustGateLetsOnlyTrustedPeersRunTasks: with A2A_TRUSTED_PEERS=alice,
// alice is Trusted and runs tasks; bob's sends (blocking and streaming) are
// -32052 naming him and never reach the host. Authenticated peers get the
// extended card; anonymous callers are refused.
func TestTrustGateLetsOnlyTrustedPeersRunTasks(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{
		config: map[string]any{"loopback_is_local": false, "extended_skills": extendedSkills},
		env:    map[string]string{"A2A_PEER_TOKENS": peerTokens, "A2A_TRUSTED_PEERS": "alice"},
	})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 40*time.Second)
	alice, bob, anon := newClient(ep, tokAlice), newClient(ep, tokBob), newClient(ep, "")

	checkSender(t, ctx, h, alice, "peer:alice", pb.TrustTier_TRUST_TIER_TRUSTED)

	r := bob.mustCall(t, ctx, "SendMessage", sendParams(message("let me run something")))
	wantRefusal(t, r, http.StatusOK, -32052, "peer:bob")
	if r.reason() != "UNTRUSTED" {
		t.Errorf("trust gate reason %q, want UNTRUSTED", r.reason())
	}
	hr, events, err := bob.stream(ctx, "SendStreamingMessage", sendParams(message("stream it")))
	if err != nil {
		t.Fatal(err)
	}
	for range events {
		t.Error("bob's refused stream produced events")
	}
	var refusal struct {
		Error *rpcError `json:"error"`
	}
	_ = json.NewDecoder(hr.Body).Decode(&refusal)
	hr.Body.Close()
	if refusal.Error == nil || refusal.Error.Code != -32052 {
		t.Errorf("bob's streaming send: HTTP %d error %s, want -32052", hr.StatusCode, refusal.Error)
	}
	for _, c := range h.Recorder().CallsOf("HandleMessage") {
		if c.HandleMessage().GetSender().GetId() == "peer:bob" {
			t.Errorf("a message from the untrusted peer reached the host: %v", c)
		}
	}

	if ext, r := extendedCard(t, ctx, alice); ext == nil || !ext.hasSkill("vault-ops") {
		t.Errorf("trusted alice's extended card: %s", r)
	}
	// An authenticated peer is entitled to the extended card even when it
	// is not trusted to run tasks (issue: "extended agent card for
	// authenticated peers").
	if ext, r := extendedCard(t, ctx, bob); ext == nil || !ext.hasSkill("vault-ops") {
		t.Errorf("authenticated (untrusted) bob is refused the extended card: %s", r)
	}
	r = anon.mustCall(t, ctx, "GetExtendedAgentCard", map[string]any{})
	wantRefusal(t, r, http.StatusUnauthorized, -32050, "Authorization: Bearer")
}

// TestWithoutTokensCallersArePublicWhenLoopbackIsNotLocal: no token and
// A2A_LOOPBACK_IS_LOCAL=false: callers are anon:<address>, Public, may send
// but not list tasks or read the extended card, and the card declares no
// security scheme.
func TestWithoutTokensCallersArePublicWhenLoopbackIsNotLocal(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{
		config: map[string]any{"extended_skills": extendedSkills},
		env:    map[string]string{"A2A_LOOPBACK_IS_LOCAL": "false"},
	})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 30*time.Second)
	anon := newClient(ep, "")

	checkSender(t, ctx, h, anon, "anon:127.0.0.1", pb.TrustTier_TRUST_TIER_PUBLIC)
	wantRefusal(t, anon.mustCall(t, ctx, "ListTasks", map[string]any{}), http.StatusOK, -32050, `"list" permission`)
	wantRefusal(t, anon.mustCall(t, ctx, "GetExtendedAgentCard", map[string]any{}), http.StatusOK, -32050, "")
	card := fetchCard(t, ctx, anon)
	if card.SecuritySchemes != nil || card.SecurityRequirements != nil {
		t.Errorf("the card declares security without a token: %s %s", card.SecuritySchemes, card.SecurityRequirements)
	}
	if card.hasSkill("vault-ops") {
		t.Error("the public card lists an extended skill")
	}
}
