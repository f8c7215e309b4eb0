// Package oauth_test runs two of our agents — testharness hosts launching
// the real plugin binary, as a host does — where A calls B with OAuth 2.0
// client credentials: B accepts the JWT access tokens of a real OpenID
// provider on loopback (zitadel's, testharness/oidcop); A gets its tokens
// from that provider for B's audience and calls B with them.
package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/oidcop"
)

// callTimeout guards against hangs; it is never an assertion on timing.
const callTimeout = 60 * time.Second

// bAudience is the audience of B's access tokens.
const bAudience = "https://agent-b.test"

// call calls a tool of h's plugin as the host's model does.
func call(t *testing.T, h *testharness.Host, tool string, args map[string]any) *pb.ToolResult {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, _, err := h.CallTool(ctx, tool, string(b))
	if err != nil {
		t.Fatalf("%s %s: %v", tool, b, err)
	}
	t.Logf("%s %s: is_error=%t\n%s", tool, b, res.GetIsError(), res.GetContent())
	return res
}

// waitForTokenURL waits until the card at base names a token endpoint: B
// learns it by discovering its issuer in the background after start.
func waitForTokenURL(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		resp, err := http.Get(base + "/.well-known/agent-card.json")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), `"tokenUrl"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("B's card never named its issuer's token endpoint (last error %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestAgentACallsAgentBWithClientCredentials(t *testing.T) {
	op := oidcop.Start(t)
	op.AddClient(oidcop.Client{ID: "agent-a", Secret: "agent-a-secret-5f3c", Scopes: []string{"a2a:send", "a2a:get", "a2a:cancel", "a2a:subscribe"},
		Audiences: []string{"https://some-other-agent.test", bAudience}})

	b := testharness.Start(t, testharness.Options{PluginConfig: map[string]any{
		"port": 0, "store": "memory", "rate_limit": 0, "agent_name": "Bob",
		// A and B share the machine: without this, A's calls without a
		// token would be B's operator's (the Local tier).
		"loopback_is_local":         false,
		"oauth_issuers":             []map[string]any{{"name": "idp", "issuer": op.Issuer, "audience": bAudience}},
		"oauth_allow_loopback_http": true,
	}})
	bURL := b.Endpoint("a2a")
	waitForTokenURL(t, bURL)

	secret := filepath.Join(t.TempDir(), "agent-a.secret")
	if err := os.WriteFile(secret, []byte("agent-a-secret-5f3c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := testharness.Start(t, testharness.Options{PluginConfig: map[string]any{
		"port": 0, "store": "memory", "rate_limit": 0, "agent_name": "Alice", "oauth_allow_loopback_http": true,
		"a2a_agents": []map[string]any{
			{"name": "bob", "url": bURL, "oauth2": map[string]any{"token_url": op.TokenURL, "client_id": "agent-a",
				"client_secret_file": secret, "scopes": []string{"a2a:send", "a2a:get"}, "audience": bAudience}},
			{"name": "bob-anonymous", "url": bURL + "/"},
		},
	}})

	// B's card declares the provider; A's discover shows it and the
	// credential A has for B.
	d := call(t, a, "a2a_discover", map[string]any{"url": "bob"})
	for _, want := range []string{"OAuth 2.0 client credentials (token URL \"" + op.TokenURL + "\")", "OpenID Connect (discovery \"" + op.DiscoveryURL() + "\")",
		"bearer token from the OAuth 2.0 client credentials"} {
		if d.GetIsError() || !strings.Contains(d.GetContent(), want) {
			t.Errorf("discover lacks %q", want)
		}
	}

	r := call(t, a, "a2a_call", map[string]any{"agent": "bob", "message": "hello from Alice over OAuth"})
	if r.GetIsError() || !strings.Contains(r.GetContent(), "bob completed the task") || !strings.Contains(r.GetContent(), "hello from Alice over OAuth") {
		t.Fatalf("a2a_call failed")
	}
	// B's host saw the token's identity and tier.
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := b.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindHandleMessage && strings.Contains(c.HandleMessage().GetText(), "hello from Alice over OAuth")
	})
	if err != nil {
		t.Fatal(err)
	}
	hm := c.HandleMessage()
	if hm.GetSender().GetId() != "oauth:idp:agent-a" || hm.GetTrustTier() != pb.TrustTier_TRUST_TIER_PUBLIC {
		t.Errorf("B saw sender %q tier %s", hm.GetSender().GetId(), hm.GetTrustTier())
	}

	// The same agent without credentials: B refuses, and the tool error
	// says what to set.
	r = call(t, a, "a2a_call", map[string]any{"agent": "bob-anonymous", "message": "hello without a token"})
	if !r.GetIsError() || !strings.Contains(r.GetContent(), `set a2a_agents["bob-anonymous"].oauth2`) ||
		!strings.Contains(r.GetContent(), op.TokenURL) {
		t.Errorf("a call without credentials: %s", r.GetContent())
	}
}
