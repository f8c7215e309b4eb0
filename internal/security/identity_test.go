package security

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func request(remote, auth string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.RemoteAddr = remote
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

func mustAuth(t *testing.T, cfg AuthConfig) *Authenticator {
	t.Helper()
	a, err := NewAuthenticator(cfg)
	if err != nil {
		t.Fatalf("NewAuthenticator: %v", err)
	}
	return a
}

func TestAuthenticateTierTable(t *testing.T) {
	peers := map[string]string{"alice": "tok-alice", "bob": "tok-bob"}
	tests := []struct {
		name     string
		cfg      AuthConfig
		remote   string
		auth     string
		wantID   string
		wantTier Tier
		wantAuth bool
		wantErr  bool
	}{
		{"shared token without trusted peers is trusted", AuthConfig{BearerToken: "shared"}, "203.0.113.7:4000", "Bearer shared", "ip:203.0.113.7", TierTrusted, true, false},
		{"shared token once peers are trusted is public", AuthConfig{BearerToken: "shared", PeerTokens: peers, TrustedPeers: []string{"alice"}}, "203.0.113.7:4000", "Bearer shared", "ip:203.0.113.7", TierPublic, true, false},
		{"trusted peer token", AuthConfig{PeerTokens: peers, TrustedPeers: []string{"alice"}}, "203.0.113.7:4000", "Bearer tok-alice", "peer:alice", TierTrusted, true, false},
		{"trusted peer named with prefix", AuthConfig{PeerTokens: peers, TrustedPeers: []string{"peer:alice"}}, "203.0.113.7:4000", "Bearer tok-alice", "peer:alice", TierTrusted, true, false},
		{"untrusted peer token is public", AuthConfig{PeerTokens: peers, TrustedPeers: []string{"alice"}}, "203.0.113.7:4000", "Bearer tok-bob", "peer:bob", TierPublic, true, false},
		{"peer token with no trusted list is public", AuthConfig{PeerTokens: peers}, "203.0.113.7:4000", "Bearer tok-bob", "peer:bob", TierPublic, true, false},
		{"scheme is case-insensitive", AuthConfig{PeerTokens: peers}, "203.0.113.7:4000", "bearer tok-bob", "peer:bob", TierPublic, true, false},
		{"no token remote is anonymous public", AuthConfig{BearerToken: "shared"}, "203.0.113.7:4000", "", "anon:203.0.113.7", TierPublic, false, false},
		{"no token loopback local", AuthConfig{BearerToken: "shared", LoopbackIsLocal: true}, "127.0.0.1:5000", "", "local:127.0.0.1", TierLocal, false, false},
		{"no token IPv6 loopback local", AuthConfig{LoopbackIsLocal: true}, "[::1]:5000", "", "local:::1", TierLocal, false, false},
		{"no token mapped loopback local", AuthConfig{LoopbackIsLocal: true}, "[::ffff:127.0.0.1]:5000", "", "local:::ffff:127.0.0.1", TierLocal, false, false},
		{"no token loopback without LoopbackIsLocal is anonymous", AuthConfig{}, "127.0.0.1:5000", "", "anon:127.0.0.1", TierPublic, false, false},
		// A presented token names the caller wherever it connects from:
		// Local is only for loopback callers presenting none.
		{"loopback with peer token is that peer, not local", AuthConfig{PeerTokens: peers, LoopbackIsLocal: true}, "127.0.0.1:5000", "Bearer tok-bob", "peer:bob", TierPublic, true, false},
		{"loopback with trusted peer token is trusted, not local", AuthConfig{PeerTokens: peers, TrustedPeers: []string{"alice"}, LoopbackIsLocal: true}, "127.0.0.1:5000", "Bearer tok-alice", "peer:alice", TierTrusted, true, false},
		{"loopback with shared token is ip, not local", AuthConfig{BearerToken: "shared", LoopbackIsLocal: true}, "[::1]:5000", "Bearer shared", "ip:::1", TierTrusted, true, false},
		{"loopback with wrong token is refused", AuthConfig{PeerTokens: peers, LoopbackIsLocal: true}, "127.0.0.1:5000", "Bearer nope", "", 0, false, true},
		{"wrong token refused", AuthConfig{BearerToken: "shared", PeerTokens: peers}, "203.0.113.7:4000", "Bearer shared2", "", 0, false, true},
		{"token prefix refused", AuthConfig{BearerToken: "shared"}, "203.0.113.7:4000", "Bearer share", "", 0, false, true},
		{"basic auth refused not downgraded", AuthConfig{BearerToken: "shared"}, "203.0.113.7:4000", "Basic c2hhcmVk", "", 0, false, true},
		{"empty bearer refused", AuthConfig{BearerToken: "shared"}, "203.0.113.7:4000", "Bearer ", "", 0, false, true},
		{"token when none configured refused", AuthConfig{}, "203.0.113.7:4000", "Bearer x", "", 0, false, true},
		{"token with inner space refused", AuthConfig{BearerToken: "shared"}, "203.0.113.7:4000", "Bearer shared x", "", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustAuth(t, tt.cfg)
			id, err := a.Authenticate(request(tt.remote, tt.auth))
			if tt.wantErr {
				if !errors.Is(err, ErrUnauthorized) {
					t.Fatalf("err = %v, want ErrUnauthorized (identity %+v)", err, id)
				}
				return
			}
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if id.ID != tt.wantID || id.Tier != tt.wantTier || id.Authenticated != tt.wantAuth {
				t.Fatalf("got %+v, want id=%s tier=%s auth=%v", id, tt.wantID, tt.wantTier, tt.wantAuth)
			}
		})
	}
}

func TestAuthenticateRefusesOtherPeersTokenAsAnyoneElse(t *testing.T) {
	a := mustAuth(t, AuthConfig{PeerTokens: map[string]string{"alice": "tok-alice", "bob": "tok-bob"}, TrustedPeers: []string{"alice"}})
	id, err := a.Authenticate(request("198.51.100.2:1", "Bearer tok-bob"))
	if err != nil || id.ID != "peer:bob" || id.Tier != TierPublic {
		t.Fatalf("bob's token gave %+v, %v; want peer:bob public", id, err)
	}
}

func TestAuthenticateRefusesDuplicateAuthorizationHeaders(t *testing.T) {
	a := mustAuth(t, AuthConfig{BearerToken: "shared"})
	r := request("198.51.100.2:1", "")
	r.Header.Add("Authorization", "Bearer shared")
	r.Header.Add("Authorization", "Bearer other")
	if _, err := a.Authenticate(r); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
}

func TestAuthenticateIgnoresForwardingHeaders(t *testing.T) {
	a := mustAuth(t, AuthConfig{LoopbackIsLocal: true})
	r := request("203.0.113.9:1", "")
	r.Header.Set("X-Forwarded-For", "127.0.0.1")
	r.Header.Set("Forwarded", "for=127.0.0.1")
	id, _ := a.Authenticate(r)
	if id.Tier != TierPublic || id.ID != "anon:203.0.113.9" {
		t.Fatalf("forwarding headers changed identity: %+v", id)
	}
}

func TestAdmitRequiresTokenForRemoteCallersOnlyWhenConfigured(t *testing.T) {
	open := mustAuth(t, AuthConfig{})
	locked := mustAuth(t, AuthConfig{BearerToken: "shared", LoopbackIsLocal: true})
	anon := Identity{ID: "anon:203.0.113.7", Tier: TierPublic}
	local := Identity{ID: "local:127.0.0.1", Tier: TierLocal}
	peer := Identity{ID: "peer:bob", Tier: TierPublic, Authenticated: true}
	if open.RequiresAuth() || !locked.RequiresAuth() {
		t.Fatalf("RequiresAuth: open=%v locked=%v", open.RequiresAuth(), locked.RequiresAuth())
	}
	if err := open.Admit(anon); err != nil {
		t.Errorf("open endpoint refused anonymous caller: %v", err)
	}
	if err := locked.Admit(anon); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("locked endpoint admitted anonymous caller: %v", err)
	}
	if err := locked.Admit(local); err != nil {
		t.Errorf("locked endpoint refused local caller: %v", err)
	}
	if err := locked.Admit(peer); err != nil {
		t.Errorf("locked endpoint refused authenticated caller: %v", err)
	}
}

func TestNewAuthenticatorRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  AuthConfig
		want string
	}{
		{"shared token equals peer token", AuthConfig{BearerToken: "same", PeerTokens: map[string]string{"a": "same"}}, "same token"},
		{"two peers share a token", AuthConfig{PeerTokens: map[string]string{"a": "t", "b": "t"}}, "same token"},
		{"token with whitespace", AuthConfig{BearerToken: "a b"}, "whitespace"},
		{"empty peer token", AuthConfig{PeerTokens: map[string]string{"a": ""}}, "empty token"},
		{"bad peer name", AuthConfig{PeerTokens: map[string]string{"a/b": "t"}}, "peer name"},
		{"trusted peer without token", AuthConfig{PeerTokens: map[string]string{"a": "t"}, TrustedPeers: []string{"carol"}}, "has no token"},
		{"non-ascii token", AuthConfig{BearerToken: "tök"}, "non-ASCII"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewAuthenticator(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestParsePeerTokens(t *testing.T) {
	got, err := ParsePeerTokens(" alice:tok1 , bob:tok:2")
	if err != nil {
		t.Fatalf("ParsePeerTokens: %v", err)
	}
	if len(got) != 2 || got["alice"] != "tok1" || got["bob"] != "tok:2" {
		t.Fatalf("got %v", got)
	}
	if m, err := ParsePeerTokens("  "); err != nil || len(m) != 0 {
		t.Fatalf("empty setting: %v, %v", m, err)
	}
	bad := []struct{ in, want string }{
		{":tok", "empty peer name"},
		{"alice:", "empty token"},
		{"alice", "no colon"},
		{"alice:t1,,bob:t2", "entry 2 is empty"},
		{"alice:t1,alice:t2", `"alice" is listed twice`},
		{"alice:t1,bob:t1", "same token"},
		{"al ice:t1", "whitespace"},
		{"alice:t 1", "whitespace"},
		{"alice:t\x01", "control"},
	}
	for _, b := range bad {
		_, err := ParsePeerTokens(b.in)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParsePeerTokens(%q) err = %v, want it to mention %q", b.in, err, b.want)
		}
	}
}

func TestParsePeerTokensErrorsDoNotCarryTokens(t *testing.T) {
	_, err := ParsePeerTokens("alice-supersecrettoken")
	if err == nil || strings.Contains(err.Error(), "supersecrettoken") {
		t.Fatalf("error leaks the token: %v", err)
	}
}

func TestConstantTimeEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"secret", "secret", true},
		{"secret", "secreT", false},
		{"secret", "secret-longer", false},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := ConstantTimeEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("ConstantTimeEqual(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

func TestMatchComparesEveryCredential(t *testing.T) {
	a := mustAuth(t, AuthConfig{BearerToken: "s", PeerTokens: map[string]string{"a": "ta", "b": "tb", "c": "tc"}})
	for i, c := range a.creds {
		tok := "s"
		if c.peer != "" {
			tok = "t" + c.peer
		}
		if got := a.match(tok); got != i {
			t.Errorf("match(%q) = %d, want %d", tok, got, i)
		}
	}
	if got := a.match("zz"); got != -1 {
		t.Errorf("match of unknown token = %d", got)
	}
}

func TestTierStringAndParse(t *testing.T) {
	for _, tier := range []Tier{TierPublic, TierTrusted, TierLocal} {
		got, err := ParseTier(strings.ToUpper(tier.String()))
		if err != nil || got != tier {
			t.Errorf("ParseTier(%q) = %v, %v", tier, got, err)
		}
		b, err := tier.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Tier
		if err := back.UnmarshalText(b); err != nil || back != tier {
			t.Errorf("text round trip of %v: %v, %v", tier, back, err)
		}
	}
	if _, err := ParseTier("admin"); err == nil {
		t.Error("ParseTier accepted admin")
	}
	if _, err := Tier(9).MarshalText(); err == nil {
		t.Error("MarshalText accepted unknown tier")
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	peers := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		peers[n] = "token-of-peer-" + n + "-0123456789abcdef"
	}
	a, err := NewAuthenticator(AuthConfig{BearerToken: "shared-0123456789abcdef", PeerTokens: peers, TrustedPeers: []string{"a"}})
	if err != nil {
		b.Fatal(err)
	}
	r := request("203.0.113.7:4000", "Bearer token-of-peer-h-0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(r); err != nil {
			b.Fatal(err)
		}
	}
}
