package security_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// reachable reports whether a TCP connection to host:port succeeds.
func reachable(host, port string) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 2*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// checkLoopbackOnly checks that the endpoint is on 127.0.0.1 and that the
// port cannot be reached through this machine's other address.
func checkLoopbackOnly(t *testing.T, ep string) {
	t.Helper()
	if !strings.HasPrefix(ep, "http://127.0.0.1:") {
		t.Errorf("endpoint %q, want http://127.0.0.1:<port>", ep)
	}
	port := portOf(t, ep)
	if !reachable("127.0.0.1", port) {
		t.Errorf("the server is not reachable on 127.0.0.1:%s", port)
	}
	if ext := externalIPv4(); ext == "" {
		t.Log("no non-loopback address on this machine: cannot show that the bind is loopback-only")
	} else if reachable(ext, port) {
		t.Errorf("the server answers on %s:%s: it listens beyond loopback", ext, port)
	}
}

// TestBindWithoutTokenIsLoopbackOnly: with no token configured the server
// binds 127.0.0.1 only and its card declares no security scheme.
func TestBindWithoutTokenIsLoopbackOnly(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{})
	ep := h.Endpoint("a2a")
	checkLoopbackOnly(t, ep)
	card := fetchCard(t, ctxFor(t, 20*time.Second), newClient(ep, ""))
	if card.SecuritySchemes != nil || card.SecurityRequirements != nil || card.Security != nil {
		t.Errorf("the card declares security without a token: schemes %s, requirements %s, security %s",
			card.SecuritySchemes, card.SecurityRequirements, card.Security)
	}
}

// TestTokenAloneDoesNotWidenTheBind: a token without an explicit host still
// binds 127.0.0.1 only; a loopback caller without a token stays Local, one
// presenting a token is the token's peer (a token always names its
// holder), and the card declares the bearer scheme it now enforces.
func TestTokenAloneDoesNotWidenTheBind(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{env: map[string]string{"A2A_PEER_TOKENS": peerTokens}})
	ep := h.Endpoint("a2a")
	checkLoopbackOnly(t, ep)
	ctx := ctxFor(t, 30*time.Second)

	card := fetchCard(t, ctx, newClient(ep, ""))
	checkBearerDeclared(t, card)

	for _, tc := range []struct {
		token, id string
		tier      pb.TrustTier
	}{{"", "local:127.0.0.1", pb.TrustTier_TRUST_TIER_LOCAL}, {tokAlice, "peer:alice", pb.TrustTier_TRUST_TIER_PUBLIC}} {
		tk := newClient(ep, tc.token).mustSend(t, ctx, "hello from loopback")
		hm := handleMessageFor(t, ctx, h, tk.ID)
		if hm.GetSender().GetId() != tc.id || hm.GetTrustTier() != tc.tier {
			t.Errorf("token %q: host saw sender %q tier %s, want %s %s (A2A_LOOPBACK_IS_LOCAL defaults to true; a token names its holder)",
				tc.token, hm.GetSender().GetId(), hm.GetTrustTier(), tc.id, tc.tier)
		}
	}
}

// TestRemoteExposureNeedsTokenAndExplicitHost: with a token and host
// 0.0.0.0 the server answers on the machine's other address, where callers
// are remote: no token is 401, the shared token is ip:<address>.
func TestRemoteExposureNeedsTokenAndExplicitHost(t *testing.T) {
	t.Parallel()
	ext := externalIPv4()
	if ext == "" {
		t.Skip("no non-loopback address on this machine")
	}
	h := startHost(t, hostOpts{
		config: map[string]any{"host": "0.0.0.0"},
		env:    map[string]string{"A2A_BEARER_TOKEN": tokShared},
	})
	port := portOf(t, h.Endpoint("a2a"))
	remote := "http://" + net.JoinHostPort(ext, port)
	ctx := ctxFor(t, 30*time.Second)

	r := newClient(remote, "").mustCall(t, ctx, "SendMessage", sendParams(message("anyone?")))
	wantRefusal(t, r, http.StatusUnauthorized, -32050, "Authorization: Bearer")

	tk := newClient(remote, tokShared).mustSend(t, ctx, "shared token over the network")
	hm := handleMessageFor(t, ctx, h, tk.ID)
	if want := "ip:" + ext; hm.GetSender().GetId() != want || hm.GetTrustTier() != pb.TrustTier_TRUST_TIER_TRUSTED {
		t.Errorf("host saw sender %q tier %s, want %s TRUSTED (the shared token with no trusted peers named)",
			hm.GetSender().GetId(), hm.GetTrustTier(), want)
	}
}

// TestUnsafeSettingsFailConfigure: settings that would expose the agent
// without a token, or half a TLS setup, stop the plugin at start-up with a
// message naming the setting to fix. Nothing is bound.
func TestUnsafeSettingsFailConfigure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		config map[string]any
		env    map[string]string
		want   string
	}{
		{"0.0.0.0 without a token", nil, map[string]string{"A2A_HOST": "0.0.0.0"}, "A2A_BEARER_TOKEN"},
		{"a public address without a token", map[string]any{"host": "192.0.2.10"}, nil, "A2A_PEER_TOKENS"},
		{"a certificate without a key", map[string]any{"tls_cert": "/nonexistent/cert.pem"}, map[string]string{"A2A_BEARER_TOKEN": tokShared}, "A2A_TLS_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := map[string]any{"port": 0, "store": "memory"}
			for k, v := range tc.config {
				cfg[k] = v
			}
			h := testharness.Start(t, testharness.Options{PluginConfig: cfg, Env: tc.env, AllowFailures: true, LogLevel: "info",
				StartTimeout: 15 * time.Second})
			p := h.Plugin("a2a")
			if p == nil {
				t.Fatal("no a2a plugin handle")
			}
			if p.State() == hostsdk.StateReady || len(p.Endpoints()) > 0 {
				t.Fatalf("the plugin started (state %s, endpoints %v)", p.State(), p.Endpoints())
			}
			if err := p.LastError(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Configure error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// TestTLSServesHTTPSWithTheConfiguredCertificate: with A2A_TLS_CERT and
// A2A_TLS_KEY the server speaks only HTTPS with that certificate.
func TestTLSServesHTTPSWithTheConfiguredCertificate(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	h := startHost(t, hostOpts{
		config: map[string]any{"loopback_is_local": false},
		env:    map[string]string{"A2A_TLS_CERT": certFile, "A2A_TLS_KEY": keyFile, "A2A_PEER_TOKENS": peerTokens},
	})
	ep := h.Endpoint("a2a")
	if !strings.HasPrefix(ep, "https://127.0.0.1:") {
		t.Fatalf("endpoint %q, want https://127.0.0.1:<port>", ep)
	}
	ctx := ctxFor(t, 30*time.Second)

	alice := tlsClient(ep, tokAlice, pool)
	card := fetchCard(t, ctx, alice)
	if !strings.Contains(string(card.SupportedInterfaces), `"https://127.0.0.1:`) {
		t.Errorf("the card's interfaces do not name the https URL: %s", card.SupportedInterfaces)
	}
	checkBearerDeclared(t, card)
	tk := alice.mustSend(t, ctx, "over TLS")
	if hm := handleMessageFor(t, ctx, h, tk.ID); hm.GetSender().GetId() != "peer:alice" {
		t.Errorf("sender over TLS = %q, want peer:alice", hm.GetSender().GetId())
	}
	r := tlsClient(ep, "", pool).mustCall(t, ctx, "SendMessage", sendParams(message("no token over TLS")))
	wantRefusal(t, r, http.StatusUnauthorized, -32050, "Bearer")

	// A client that does not trust the certificate is refused by TLS.
	if _, err := newClient(ep, tokAlice).call(ctx, "GetTask", map[string]any{"id": "x"}); err == nil {
		t.Error("a client without the certificate completed a request")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted client error %v, want a certificate error", err)
	}
	// Plain HTTP on the TLS port gets no A2A answer.
	plain := "http://" + strings.TrimPrefix(ep, "https://")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, plain+"/", strings.NewReader(string(rpcBody("GetTask", map[string]any{"id": "x"}))))
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	if hr, err := http.DefaultClient.Do(req); err == nil {
		hr.Body.Close()
		if hr.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP on the TLS port answered 200")
		}
	}
}

// agentCard is the part of an agent card these tests read.
type agentCard struct {
	Name                 string          `json:"name"`
	SecuritySchemes      json.RawMessage `json:"securitySchemes"`
	SecurityRequirements json.RawMessage `json:"securityRequirements"`
	Security             json.RawMessage `json:"security"`
	SupportedInterfaces  json.RawMessage `json:"supportedInterfaces"`
	Capabilities         struct {
		ExtendedAgentCard bool `json:"extendedAgentCard"`
	} `json:"capabilities"`
	Skills []struct {
		ID string `json:"id"`
	} `json:"skills"`
}

func (c *agentCard) hasSkill(id string) bool {
	for _, s := range c.Skills {
		if s.ID == id {
			return true
		}
	}
	return false
}

// getCard requests the public agent card as c; the caller closes the body.
func getCard(t *testing.T, ctx context.Context, c *client) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/.well-known/agent-card.json", nil)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hr, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("agent card: %v", err)
	}
	return hr
}

// fetchCard reads the public agent card.
func fetchCard(t *testing.T, ctx context.Context, c *client) *agentCard {
	t.Helper()
	hr := getCard(t, ctx, c)
	defer hr.Body.Close()
	var card agentCard
	if err := json.NewDecoder(hr.Body).Decode(&card); err != nil || hr.StatusCode != http.StatusOK {
		t.Fatalf("agent card: HTTP %d, %v", hr.StatusCode, err)
	}
	return &card
}

// checkBearerDeclared checks that the card declares the bearer scheme and
// requires it.
func checkBearerDeclared(t *testing.T, card *agentCard) {
	t.Helper()
	var schemes map[string]struct {
		HTTPAuth *struct {
			Scheme string `json:"scheme"`
		} `json:"httpAuthSecurityScheme"`
		Type   string `json:"type"`
		Scheme string `json:"scheme"`
	}
	if err := json.Unmarshal(card.SecuritySchemes, &schemes); err != nil || len(schemes) == 0 {
		t.Fatalf("the card declares no security scheme while a token is enforced: %s", card.SecuritySchemes)
	}
	// The v1.0 card has the v1.0 form only (0.3 clients read the 0.3 card
	// at /.well-known/agent.json).
	for name, s := range schemes {
		if s.HTTPAuth == nil || !strings.EqualFold(s.HTTPAuth.Scheme, "bearer") || s.Type != "" {
			t.Errorf("scheme %q is not an HTTP bearer scheme in the v1.0 form alone: %s", name, card.SecuritySchemes)
		}
		if !strings.Contains(string(card.SecurityRequirements), `"`+name+`"`) {
			t.Errorf("scheme %q is declared but not required (securityRequirements %s)", name, card.SecurityRequirements)
		}
	}
	if len(card.Security) != 0 {
		t.Errorf("the v1.0 card carries the 0.3 key security: %s", card.Security)
	}
}
