package a2a

import (
	"reflect"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
)

const card03 = `{
  "protocolVersion": "0.3.0",
  "name": "Old Agent", "description": "speaks 0.3", "version": "2.1",
  "url": "https://old.example/a2a",
  "preferredTransport": "JSONRPC",
  "additionalInterfaces": [
    {"url": "https://old.example/a2a", "transport": "JSONRPC"},
    {"url": "https://old.example/rest", "transport": "HTTP+JSON"},
    {"url": "old.example:443", "transport": "GRPC"}
  ],
  "supportsAuthenticatedExtendedCard": true,
  "capabilities": {"streaming": true, "pushNotifications": false, "stateTransitionHistory": true},
  "securitySchemes": {
    "bearer_auth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
    "api": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "key"},
    "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://auth/token", "scopes": {"read_all": "read"}}, "authorizationCode": {"authorizationUrl": "https://auth/a", "tokenUrl": "https://auth/t", "scopes": {}}}},
    "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://auth/.well-known/openid-configuration"},
    "mtls": {"type": "mutualTLS"}
  },
  "security": [{"bearer_auth": []}, {"oauth": ["read_all"]}],
  "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"], "security": [{"api": []}]}]
}`

func TestParseAgentCardReadsA03Card(t *testing.T) {
	c, err := ParseAgentCard([]byte(card03))
	if err != nil {
		t.Fatal(err)
	}
	wantIfaces := []AgentInterface{
		{URL: "https://old.example/a2a", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		{URL: "https://old.example/rest", ProtocolBinding: "HTTP+JSON", ProtocolVersion: "0.3"},
		{URL: "old.example:443", ProtocolBinding: "GRPC", ProtocolVersion: "0.3"},
	}
	if !reflect.DeepEqual(c.SupportedInterfaces, wantIfaces) {
		t.Errorf("interfaces = %+v", c.SupportedInterfaces)
	}
	if !c.Capabilities.SupportsExtendedAgentCard() || !c.Capabilities.SupportsStreaming() || c.Capabilities.SupportsPushNotifications() {
		t.Errorf("capabilities = %+v", c.Capabilities)
	}
	s := c.SecuritySchemes
	if s["bearer_auth"].HTTPAuth == nil || s["bearer_auth"].HTTPAuth.BearerFormat != "JWT" ||
		s["api"].APIKey == nil || s["api"].APIKey.Location != "header" || s["api"].APIKey.Name != "X-API-Key" ||
		s["oauth"].OAuth2 == nil || s["oauth"].OAuth2.Flows.ClientCredentials.Scopes["read_all"] != "read" || s["oauth"].OAuth2.Flows.AuthorizationCode == nil ||
		s["oidc"].OpenIDConnect == nil || s["mtls"].MTLS == nil {
		t.Errorf("schemes = %+v", s)
	}
	wantReqs := []SecurityRequirement{{Schemes: map[string]StringList{"bearer_auth": {List: []string{}}}}, {Schemes: map[string]StringList{"oauth": {List: []string{"read_all"}}}}}
	if !reflect.DeepEqual(c.SecurityRequirements, wantReqs) {
		t.Errorf("requirements = %+v", c.SecurityRequirements)
	}
	if r := c.Skills[0].SecurityRequirements; len(r) != 1 || r[0].Schemes["api"].List == nil {
		t.Errorf("skill requirements = %+v", r)
	}
	in, ok := c.PreferredInterface(BindingJSONRPC)
	if !ok || in.URL != "https://old.example/a2a" || in.ProtocolVersion != "0.3" {
		t.Errorf("preferred = %+v, %v", in, ok)
	}
}

func TestParseAgentCardDefaultsForSparse03Cards(t *testing.T) {
	c, err := ParseAgentCard([]byte(`{"name":"x","url":"https://x/rpc"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []AgentInterface{{URL: "https://x/rpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"}}; !reflect.DeepEqual(c.SupportedInterfaces, want) {
		t.Errorf("interfaces = %+v", c.SupportedInterfaces)
	}
	if c.Capabilities.ExtendedAgentCard != nil {
		t.Error("extended card flag invented")
	}
	c, err = ParseAgentCard([]byte(`{"name":"x","url":"https://x/rpc","protocolVersion":"1.0.0","preferredTransport":"HTTP+JSON"}`))
	if err != nil || c.SupportedInterfaces[0].ProtocolVersion != "1.0" || c.SupportedInterfaces[0].ProtocolBinding != "HTTP+JSON" {
		t.Errorf("card = %+v, %v", c, err)
	}
}

func TestParseAgentCardPrefersV1FieldsOnADualCard(t *testing.T) {
	dual := `{"name":"d","description":"d","version":"1",
	  "supportedInterfaces":[{"url":"https://d/a2a","protocol_binding":"JSONRPC","protocol_version":"1.0.2"},{"url":"https://d/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
	  "url":"https://d/old","protocolVersion":"0.3.0",
	  "capabilities":{"extendedAgentCard":false},"supportsAuthenticatedExtendedCard":true,
	  "securityRequirements":[{"schemes":{"b":{}}}],"security":[{"other":[]}]}`
	c, err := ParseAgentCard([]byte(dual))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.SupportedInterfaces) != 2 || c.SupportedInterfaces[0].ProtocolVersion != "1.0" {
		t.Errorf("interfaces = %+v", c.SupportedInterfaces)
	}
	if c.Capabilities.SupportsExtendedAgentCard() {
		t.Error("0.3 flag overrode the v1.0 one")
	}
	if _, ok := c.SecurityRequirements[0].Schemes["b"]; !ok || len(c.SecurityRequirements) != 1 {
		t.Errorf("requirements = %+v", c.SecurityRequirements)
	}
}

func TestParseAgentCardRejectsCardsWithoutEndpoint(t *testing.T) {
	for _, in := range []string{`{"name":"x"}`, `not json`, `[]`} {
		if _, err := ParseAgentCard([]byte(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func TestPreferredInterfacePicksV1BeforeV03(t *testing.T) {
	c := &AgentCard{SupportedInterfaces: []AgentInterface{
		{URL: "https://a/old", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		{URL: "https://a/grpc", ProtocolBinding: "GRPC", ProtocolVersion: "1.0"},
		{URL: "https://a/rest", ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"},
		{URL: "https://a/new", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: "https://a/next", ProtocolBinding: "JSONRPC", ProtocolVersion: "2.0"},
	}}
	cases := []struct {
		bindings []string
		url      string
		ok       bool
	}{
		{[]string{"JSONRPC"}, "https://a/new", true},
		{[]string{"jsonrpc"}, "https://a/new", true},
		{[]string{"JSONRPC", "HTTP+JSON"}, "https://a/rest", true},
		{nil, "https://a/grpc", true},
		{[]string{"custom"}, "", false},
	}
	for _, c2 := range cases {
		in, ok := c.PreferredInterface(c2.bindings...)
		if ok != c2.ok || in.URL != c2.url {
			t.Errorf("PreferredInterface(%v) = %+v, %v", c2.bindings, in, ok)
		}
	}
	old := &AgentCard{SupportedInterfaces: []AgentInterface{{URL: "https://o", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"}}}
	if in, ok := old.PreferredInterface("JSONRPC"); !ok || in.URL != "https://o" {
		t.Errorf("0.3 only: %+v %v", in, ok)
	}
}

func TestAgentCardValidateNamesMissingFields(t *testing.T) {
	if err := fullCard().Validate(); err != nil {
		t.Fatalf("full card: %v", err)
	}
	b, _ := Marshal(fullCard())
	a2atest.ValidateJSON(t, "Agent Card", b)

	bad := fullCard()
	bad.Name = ""
	bad.SupportedInterfaces[0].URL = "/relative"
	bad.Skills[0].Tags = nil
	bad.SecuritySchemes["empty"] = SecurityScheme{}
	bad.SecurityRequirements = append(bad.SecurityRequirements, SecurityRequirement{Schemes: map[string]StringList{"ghost": {}}})
	err := bad.Validate()
	if err == nil {
		t.Fatal("bad card accepted")
	}
	var fields []string
	for _, v := range err.(*Error).Details[0].(BadRequest).FieldViolations {
		fields = append(fields, v.Field)
	}
	want := []string{"name", "supportedInterfaces[0].url", "skills[0].tags", "securitySchemes.empty", "securityRequirements[2].schemes.ghost"}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("violations %v, want %v", fields, want)
	}
}
