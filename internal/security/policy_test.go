package security

import (
	"strings"
	"testing"
)

func TestDefaultPolicyTable(t *testing.T) {
	p := DefaultPolicy()
	publicAllowed := map[Permission]bool{PermSend: true, PermGet: true, PermCancel: true, PermSubscribe: true, PermExtendedCard: true}
	for _, perm := range AllPermissions() {
		if !p.Allows(TierLocal, perm) || !p.Allows(TierTrusted, perm) {
			t.Errorf("local/trusted lack %s", perm)
		}
		if got := p.Allows(TierPublic, perm); got != publicAllowed[perm] {
			t.Errorf("public %s = %v, want %v", perm, got, publicAllowed[perm])
		}
	}
}

func TestZeroPolicyAllowsNothing(t *testing.T) {
	var p Policy
	if p.Allows(TierLocal, PermSend) {
		t.Fatal("zero policy allowed local send")
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy(" public = send,get ; trusted=all;local=none;")
	if err != nil {
		t.Fatalf("ParsePolicy: %v", err)
	}
	checks := []struct {
		tier Tier
		perm Permission
		want bool
	}{
		{TierPublic, PermSend, true},
		{TierPublic, PermGet, true},
		{TierPublic, PermCancel, false},
		{TierTrusted, PermExtendedCard, true},
		{TierLocal, PermSend, false},
	}
	for _, c := range checks {
		if got := p.Allows(c.tier, c.perm); got != c.want {
			t.Errorf("Allows(%s, %s) = %v, want %v", c.tier, c.perm, got, c.want)
		}
	}
	if got := p.String(); got != "public=send,get;trusted=send,get,list,cancel,subscribe,push-config,extended-card;local=none" {
		t.Errorf("String() = %q", got)
	}
	back, err := ParsePolicy(p.String())
	if err != nil || back.String() != p.String() {
		t.Errorf("round trip: %v, %v", back, err)
	}
}

func TestParsePolicyKeepsDefaultsForUnnamedTiers(t *testing.T) {
	p, err := ParsePolicy("public=none")
	if err != nil {
		t.Fatal(err)
	}
	if p.Allows(TierPublic, PermSend) || !p.Allows(TierTrusted, PermList) || !p.Allows(TierLocal, PermPushConfig) {
		t.Fatalf("policy = %s", p)
	}
	if p, err := ParsePolicy(""); err != nil || p.String() != DefaultPolicy().String() {
		t.Fatalf("empty policy = %v, %v", p, err)
	}
}

func TestParsePolicyAcceptsPermissionAliases(t *testing.T) {
	p, err := ParsePolicy("public=SEND,push,card")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Allows(TierPublic, PermPushConfig) || !p.Allows(TierPublic, PermExtendedCard) {
		t.Fatalf("policy = %s", p)
	}
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"public", `has no "="`},
		{"admin=all", "unknown trust tier"},
		{"public=send;public=get", "twice"},
		{"public=send,fly", `unknown permission "fly"`},
		{"public=", "no permissions given"},
		{"public=send,,get", "empty permission"},
		{"public=send,send", "listed twice"},
	}
	for _, tt := range tests {
		_, err := ParsePolicy(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParsePolicy(%q) err = %v, want it to mention %q", tt.in, err, tt.want)
		}
	}
}

func TestPermissionForMethod(t *testing.T) {
	tests := []struct {
		method string
		want   Permission
	}{
		{"SendMessage", PermSend},
		{"message/stream", PermSend},
		{"GetTask", PermGet},
		{"ListTasks", PermList},
		{"tasks/cancel", PermCancel},
		{"tasks/resubscribe", PermSubscribe},
		{"SubscribeToTask", PermSubscribe},
		{"ListTaskPushNotificationConfigs", PermPushConfig},
		{"tasks/pushNotificationConfig/create", PermPushConfig},
		{"GetExtendedAgentCard", PermExtendedCard},
		{"agent/getAuthenticatedExtendedCard", PermExtendedCard},
	}
	for _, tt := range tests {
		got, ok := PermissionForMethod(tt.method)
		if !ok || got != tt.want {
			t.Errorf("PermissionForMethod(%q) = %v, %v; want %v", tt.method, got, ok, tt.want)
		}
	}
	if _, ok := PermissionForMethod("tasks/send"); ok {
		t.Error("pre-0.3 method was mapped")
	}
}

func TestTrustGate(t *testing.T) {
	g, err := ParseTrustGate("alice, ip:203.0.113.7, local:*")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want bool
	}{
		{"peer:alice", true},
		{"peer:bob", false},
		{"ip:203.0.113.7", true},
		{"ip:203.0.113.8", false},
		{"local:127.0.0.1", true},
		{"local:::1", true},
		{"anon:203.0.113.7", false},
	}
	for _, tt := range tests {
		if got := g.Allows(Identity{ID: tt.id}); got != tt.want {
			t.Errorf("Allows(%s) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestEmptyTrustGateAllowsEveryone(t *testing.T) {
	var nilGate *TrustGate
	empty, err := ParseTrustGate("")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*TrustGate{nilGate, empty} {
		if !g.Allows(Identity{ID: "anon:x"}) {
			t.Error("empty gate refused a caller")
		}
	}
}

func TestTrustGateErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"alice,,bob", "empty identity"},
		{"team:alice", "unknown kind"},
		{"peer:", "missing a name"},
		{"al ice", "whitespace"},
		{"a/b", "peer name"},
	}
	for _, tt := range tests {
		_, err := ParseTrustGate(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseTrustGate(%q) err = %v, want it to mention %q", tt.in, err, tt.want)
		}
	}
}
