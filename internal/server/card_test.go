package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// v03CardKeys are the 0.3 card's top-level keys that the v1.0 schema does
// not have; the canonical card must carry none of them.
var v03CardKeys = []string{"url", "preferredTransport", "protocolVersion", "additionalInterfaces", "supportsAuthenticatedExtendedCard", "security"}

// fetchCard GETs a card path and returns the response and its body.
func fetchCard(t *testing.T, e *testEnv, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// splitCard validates a served canonical card: the document exactly as
// served, with no key removed, against the v1.0 schema (whose Agent Card
// allows no other keys), and as the model parses it. It returns both views.
func splitCard(t *testing.T, body []byte) (*a2a.AgentCard, map[string]any) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("card is not JSON: %v\n%s", err, body)
	}
	a2atest.ValidateJSON(t, "Agent Card", body)
	for _, k := range v03CardKeys {
		if _, ok := m[k]; ok {
			t.Errorf("the v1.0 card carries the 0.3 key %q", k)
		}
	}
	card, err := a2a.ParseAgentCard(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := card.Validate(); err != nil {
		t.Errorf("card: %v", err)
	}
	return card, m
}

// card03 validates a 0.3 card (the legacy path, or A2A-Version: 0.3) and
// returns it as a JSON object.
func card03(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("0.3 card is not JSON: %v\n%s", err, body)
	}
	for _, k := range []string{"name", "description", "url", "version", "protocolVersion", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		if _, ok := m[k]; !ok {
			t.Errorf("0.3 card lacks %q: %s", k, body)
		}
	}
	if _, ok := m["supportedInterfaces"]; ok {
		t.Errorf("the 0.3 card carries supportedInterfaces: %s", body)
	}
	return m
}

func TestAgentCardDeclaresBothInterfacesAndConfiguredFields(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Card.ProviderOrganization = "Example Org"
		o.Card.ProviderURL = "https://example.org"
		o.Card.DocumentationURL = "https://example.org/docs"
		o.Card.IconURL = "https://example.org/icon.png"
	})
	resp, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	card, _ := splitCard(t, body)
	want := e.url + "/"
	if len(card.SupportedInterfaces) != 4 ||
		card.SupportedInterfaces[0] != (a2a.AgentInterface{URL: want, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}) ||
		card.SupportedInterfaces[1] != (a2a.AgentInterface{URL: want, ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"}) ||
		card.SupportedInterfaces[2] != (a2a.AgentInterface{URL: e.url, ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"}) ||
		card.SupportedInterfaces[3] != (a2a.AgentInterface{URL: strings.TrimPrefix(e.url, "http://"), ProtocolBinding: "GRPC", ProtocolVersion: "1.0"}) {
		t.Errorf("supportedInterfaces = %+v", card.SupportedInterfaces)
	}
	if card.Name != "Test Agent" || card.Description != "An agent for tests" || card.Version != "9.9.9" ||
		card.Provider == nil || card.Provider.Organization != "Example Org" || card.Provider.URL != "https://example.org" ||
		card.DocumentationURL != "https://example.org/docs" || card.IconURL != "https://example.org/icon.png" {
		t.Errorf("card fields = %+v", card)
	}
	// Tokens are configured, so authenticated peers exist: the extended
	// card is offered.
	if !card.Capabilities.SupportsStreaming() || !card.Capabilities.SupportsPushNotifications() || !card.Capabilities.SupportsExtendedAgentCard() {
		t.Errorf("capabilities = %s", mustJSON(card.Capabilities))
	}
	if len(card.Skills) != 1 || card.Skills[0].ID != "chat" {
		t.Errorf("skills = %+v, want the generic chat skill", card.Skills)
	}
	if len(card.DefaultInputModes) == 0 || card.DefaultInputModes[0] != "text/plain" {
		t.Errorf("defaultInputModes = %v", card.DefaultInputModes)
	}
}

// TestZeroThreeClientsGetA03Card: 0.3 clients find the 0.3 card at the
// legacy path /.well-known/agent.json, or at the canonical path by asking
// for it with A2A-Version: 0.3; it names the JSON-RPC endpoint, which
// serves the 0.3 methods.
func TestZeroThreeClientsGetA03Card(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
	}{
		{"legacy path", "/.well-known/agent.json", nil},
		{"negotiated", "/.well-known/agent-card.json", map[string]string{"A2A-Version": "0.3"}},
		{"negotiated with a patch", "/.well-known/agent-card.json", map[string]string{"A2A-Version": "0.3.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := fetchCard(t, e, tc.path, tc.hdr)
			if resp.StatusCode != 200 {
				t.Fatalf("HTTP %d", resp.StatusCode)
			}
			m := card03(t, body)
			if m["url"] != e.url+"/" || m["protocolVersion"] != "0.3.0" || m["preferredTransport"] != "JSONRPC" {
				t.Errorf("0.3 card: url=%v protocolVersion=%v preferredTransport=%v", m["url"], m["protocolVersion"], m["preferredTransport"])
			}
			s03 := m["securitySchemes"].(map[string]any)["bearer"].(map[string]any)
			if s03["type"] != "http" || !strings.EqualFold(s03["scheme"].(string), "bearer") {
				t.Errorf("0.3 scheme = %v", s03)
			}
			if sec, _ := m["security"].([]any); len(sec) != 1 {
				t.Errorf("0.3 security = %v", m["security"])
			}
			if !strings.Contains(resp.Header.Get("Vary"), "A2A-Version") {
				t.Errorf("Vary = %q", resp.Header.Get("Vary"))
			}
		})
	}
	// Any other version, or none, gets the v1.0 card.
	for _, v := range []string{"", "1.0"} {
		_, body := fetchCard(t, e, "/.well-known/agent-card.json", map[string]string{"A2A-Version": v})
		splitCard(t, body)
	}
}

// TestAgentCardSkillsComeFromTheHostsLiveTools: the card lists the skills
// of the host's live tools (bridge.SkillsOf builds them; its test checks
// the filter by toolset), sorted; none, or a failing host, gives the chat
// skill.
func TestAgentCardSkillsComeFromTheHostsLiveTools(t *testing.T) {
	var skills []a2a.AgentSkill
	var skillsErr error
	cases := []struct {
		name   string
		skills []a2a.AgentSkill
		err    error
		want   []string
	}{
		{"the host's tools, sorted", []a2a.AgentSkill{skill("web_search"), skill("read_file")}, nil, []string{"read_file", "web_search"}},
		{"empty registry gives chat", nil, nil, []string{"chat"}},
		{"failing registry gives chat", nil, errors.New("host unreachable"), []string{"chat"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) {
				o.Skills = func(ctx context.Context) ([]a2a.AgentSkill, error) { return skills, skillsErr }
			})
			skills, skillsErr = tc.skills, tc.err
			_, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
			card, _ := splitCard(t, body)
			var got []string
			for _, s := range card.Skills {
				got = append(got, s.ID)
				if s.Name == "" || s.Description == "" || len(s.Tags) == 0 {
					t.Errorf("skill %+v lacks a required field", s)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("skills = %v, want %v", got, tc.want)
			}
		})
	}
	// The card follows the registry, read at most once per skillsTTL.
	clock := newTestClock()
	e := newEnv(t, func(o *Options) {
		o.Skills = func(ctx context.Context) ([]a2a.AgentSkill, error) { return skills, nil }
		o.Now = clock.Now
	})
	skills = []a2a.AgentSkill{skill("one")}
	r1, b1 := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	skills = append(skills, skill("two"))
	clock.Advance(skillsTTL)
	r2, b2 := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	c1, _ := splitCard(t, b1)
	c2, _ := splitCard(t, b2)
	if len(c1.Skills) != 1 || len(c2.Skills) != 2 {
		t.Errorf("skills did not follow the registry: %d then %d", len(c1.Skills), len(c2.Skills))
	}
	if r1.Header.Get("ETag") == r2.Header.Get("ETag") {
		t.Errorf("ETag did not change with the card")
	}
}

func TestAgentCardDeclaresBearerSchemeOnlyWhenATokenIsRequired(t *testing.T) {
	withToken := newEnv(t)
	_, body := fetchCard(t, withToken, "/.well-known/agent-card.json", nil)
	card, _ := splitCard(t, body)
	sch, ok := card.SecuritySchemes["bearer"]
	if !ok || sch.HTTPAuth == nil || !strings.EqualFold(sch.HTTPAuth.Scheme, "bearer") {
		t.Fatalf("securitySchemes = %s", mustJSON(card.SecuritySchemes))
	}
	if len(card.SecurityRequirements) != 1 {
		t.Fatalf("securityRequirements = %s", mustJSON(card.SecurityRequirements))
	}
	if _, ok := card.SecurityRequirements[0].Schemes["bearer"]; !ok {
		t.Errorf("requirement does not name the bearer scheme")
	}

	noToken := newEnv(t, func(o *Options) {
		a, err := security.NewAuthenticator(security.AuthConfig{LoopbackIsLocal: true})
		if err != nil {
			t.Fatal(err)
		}
		o.Auth = a
	})
	_, body = fetchCard(t, noToken, "/.well-known/agent-card.json", nil)
	card, _ = splitCard(t, body)
	if len(card.SecuritySchemes) != 0 || len(card.SecurityRequirements) != 0 {
		t.Errorf("card without tokens declares security: %s", body)
	}
}

func TestAgentCardCachingHeadersAndConditionalGet(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Card.CacheMaxAge = 90 * time.Second })
	resp, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.Header.Get("Cache-Control") != "public, max-age=90" || etag == "" || lm == "" {
		t.Fatalf("headers: Cache-Control=%q ETag=%q Last-Modified=%q", resp.Header.Get("Cache-Control"), etag, lm)
	}
	if len(body) == 0 {
		t.Fatal("empty card")
	}
	cases := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"matching etag", map[string]string{"If-None-Match": etag}, 304},
		{"weak matching etag in a list", map[string]string{"If-None-Match": `"nope", W/` + etag}, 304},
		{"star", map[string]string{"If-None-Match": "*"}, 304},
		{"other etag", map[string]string{"If-None-Match": `"other"`}, 200},
		{"not modified since", map[string]string{"If-Modified-Since": lm}, 304},
		{"modified since long ago", map[string]string{"If-Modified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"}, 200},
		{"etag wins over date", map[string]string{"If-None-Match": `"other"`, "If-Modified-Since": lm}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := fetchCard(t, e, "/.well-known/agent-card.json", tc.hdr)
			if resp.StatusCode != tc.want {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 304 && (len(b) != 0 || resp.Header.Get("ETag") != etag) {
				t.Errorf("304 with body %q or ETag %q", b, resp.Header.Get("ETag"))
			}
		})
	}
}

func TestAgentCardUsesPublicURLWhenConfigured(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Card.PublicURL = "https://agent.example.com/base/" })
	_, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	card, _ := splitCard(t, body)
	if card.SupportedInterfaces[0].URL != "https://agent.example.com/base/" {
		t.Errorf("url = %q", card.SupportedInterfaces[0].URL)
	}
}

func TestNewRefusesAnInvalidCardConfiguration(t *testing.T) {
	e := newEnv(t)
	cases := map[string]CardConfig{
		"provider without url":  {ProviderOrganization: "Org"},
		"relative public url":   {PublicURL: "/agent"},
		"bad input mode":        {InputModes: []string{"not a type"}},
		"extended skill no tag": {ExtendedSkills: []a2a.AgentSkill{{ID: "x", Name: "x", Description: "x"}}},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := New(Options{Tasks: e.mgr, Card: cfg}); err == nil {
				t.Errorf("New accepted %+v", cfg)
			}
		})
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New accepted options without a task manager")
	}
}

func TestExtendedAgentCardForAuthenticatedPeersOnly(t *testing.T) {
	extra := a2a.AgentSkill{ID: "deploy", Name: "Deploy", Description: "Deploys things", Tags: []string{"ops"}}
	e := newEnv(t, func(o *Options) { o.Card.ExtendedSkills = []a2a.AgentSkill{extra} })
	_, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	public, _ := splitCard(t, body)
	if !public.Capabilities.SupportsExtendedAgentCard() {
		t.Fatal("card does not declare the extended card")
	}
	for _, s := range public.Skills {
		if s.ID == "deploy" {
			t.Fatal("public card shows an extended skill")
		}
	}
	raw := e.ok(tokAlice, "GetExtendedAgentCard", nil)
	card := decode[a2a.AgentCard](t, raw)
	if card.Skills[len(card.Skills)-1].ID != "deploy" {
		t.Errorf("extended skills = %+v", card.Skills)
	}
	// 0.3 name, 0.3 shape.
	r := e.rpc(tokAlice, "agent/getAuthenticatedExtendedCard", nil, map[string]string{"A2A-Version": ""})
	var c03 map[string]any
	_ = json.Unmarshal(r.result, &c03)
	if r.err != nil || c03["protocolVersion"] != "0.3.0" || c03["url"] == nil {
		t.Errorf("0.3 extended card: %s", r.body)
	}
	// carol is public but authenticated: she may read it.
	if raw := e.ok(tokCarol, "GetExtendedAgentCard", nil); !strings.Contains(string(raw), `"deploy"`) {
		t.Errorf("authenticated public caller: %s", raw)
	}
	// Anonymous callers may not.
	if err := e.fails("", "GetExtendedAgentCard", nil); err.Code != a2a.CodeUnauthorized {
		t.Errorf("anonymous caller: %v", err)
	}
	// Without extended skills it is offered all the same wherever
	// authenticated peers exist (tokens are configured): the card as an
	// authenticated peer sees it.
	plain := newEnv(t)
	if c := decode[a2a.AgentCard](t, plain.ok(tokAlice, "GetExtendedAgentCard", nil)); len(c.Skills) != 1 || c.Skills[0].ID != "chat" {
		t.Errorf("extended card without extended skills: %+v", c.Skills)
	}
	// With no token configured nobody is authenticated: -32004, and the
	// public card does not declare it.
	open := newEnv(t, func(o *Options) {
		a, err := security.NewAuthenticator(security.AuthConfig{LoopbackIsLocal: true})
		if err != nil {
			t.Fatal(err)
		}
		o.Auth = a
	})
	if err := open.fails("", "GetExtendedAgentCard", nil); err.Code != a2a.CodeUnsupportedOperation {
		t.Errorf("no authenticated peers: %v", err)
	}
	_, body = fetchCard(t, open, "/.well-known/agent-card.json", nil)
	if c, _ := splitCard(t, body); c.Capabilities.SupportsExtendedAgentCard() {
		t.Error("a card without authenticated peers declares the extended card")
	}
}
