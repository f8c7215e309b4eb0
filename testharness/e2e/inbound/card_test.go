package inbound_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// v03CardKeys are the 0.3 card's top-level keys that the v1.0 schema does
// not have: the canonical card carries none of them, the 0.3 card (the
// legacy path) has them.
var v03CardKeys = []string{"url", "preferredTransport", "protocolVersion", "additionalInterfaces", "supportsAuthenticatedExtendedCard", "security"}

// card is the v1.0 part of the served card.
type card struct {
	Name                string `json:"name"`
	Description         string `json:"description"`
	Version             string `json:"version"`
	DocumentationURL    string `json:"documentationUrl"`
	IconURL             string `json:"iconUrl"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
	Provider *struct {
		Organization string `json:"organization"`
		URL          string `json:"url"`
	} `json:"provider"`
	Capabilities struct {
		Streaming         bool `json:"streaming"`
		PushNotifications bool `json:"pushNotifications"`
	} `json:"capabilities"`
	Skills []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
	} `json:"skills"`
	SecuritySchemes      map[string]map[string]any `json:"securitySchemes"`
	SecurityRequirements []map[string]any          `json:"securityRequirements"`
}

func (c *card) skillIDs() []string {
	var out []string
	for _, s := range c.Skills {
		out = append(out, s.ID)
	}
	return out
}

// fetchedCard is one card answer.
type fetchedCard struct {
	status int
	header http.Header
	body   []byte
	card   card           // the v1.0 card (canonical path)
	whole  map[string]any // the document as served (the 0.3 card at the legacy path)
}

// fetchCard GETs a card path with extra request headers. A 200 body of the
// canonical path is validated as a v1.0 Agent Card exactly as served; one
// of the legacy path as a 0.3 card.
func fetchCard(t testing.TB, base, path string, hdr ...string) fetchedCard {
	t.Helper()
	req, err := http.NewRequestWithContext(within(t), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers(hdr...) {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	f := fetchedCard{status: resp.StatusCode, header: resp.Header, body: body}
	if resp.StatusCode != http.StatusOK {
		return f
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("card Content-Type = %q", ct)
	}
	if path == "/.well-known/agent.json" {
		f.whole = validateCard03(t, body)
		return f
	}
	f.card, f.whole = validateCard(t, body)
	return f
}

// validateCard03 checks a 0.3 card: the keys 0.3 requires, no v1.0
// interfaces list.
func validateCard03(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var whole map[string]any
	if err := json.Unmarshal(body, &whole); err != nil {
		t.Fatalf("0.3 card is not JSON: %v\n%s", err, body)
	}
	for _, k := range []string{"name", "description", "url", "version", "protocolVersion", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		if _, ok := whole[k]; !ok {
			t.Errorf("0.3 card lacks %q", k)
		}
	}
	if _, ok := whole["supportedInterfaces"]; ok {
		t.Errorf("0.3 card has supportedInterfaces")
	}
	return whole
}

// validateCard validates a served card body, exactly as served (no key
// removed), against the v1.0 Agent Card schema, which allows no other
// keys, and returns the v1.0 view and the whole document.
func validateCard(t testing.TB, body []byte) (card, map[string]any) {
	t.Helper()
	var whole map[string]any
	if err := json.Unmarshal(body, &whole); err != nil {
		t.Fatalf("card is not JSON: %v\n%s", err, body)
	}
	a2atest.ValidateJSON(t, "Agent Card", body)
	for _, k := range v03CardKeys {
		if _, ok := whole[k]; ok {
			t.Errorf("the v1.0 card carries the 0.3 key %q", k)
		}
	}
	var c card
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c, whole
}

// TestAgentCardServesConfiguredV1CardWithLiveSkills fetches the card from
// both well-known paths and checks the v1.0 fields, the interfaces with the
// real URL, the configured identity, the skills built from the host's tool
// registry and the caching headers with conditional GET.
func TestAgentCardServesConfiguredV1CardWithLiveSkills(t *testing.T) {
	t.Parallel()
	h := startHost(t, map[string]any{
		"agent_name":            "Research Assistant",
		"agent_description":     "Finds and summarises sources.",
		"agent_version":         "2.3.4",
		"provider_organization": "Example Org",
		"provider_url":          "https://example.org",
		"documentation_url":     "https://example.org/docs",
		"icon_url":              "https://example.org/icon.png",
		"advertised_toolsets":   []string{"*"},
	}, nil)

	t.Run("0.3 card at the legacy path", func(t *testing.T) {
		t.Parallel()
		path := "/.well-known/agent.json"
		f := fetchCard(t, h.url, path)
		if f.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, f.status, f.body)
		}
		w := f.whole
		if w["url"] != h.url+"/" || w["protocolVersion"] != "0.3.0" || w["preferredTransport"] != "JSONRPC" || w["name"] != "Research Assistant" {
			t.Errorf("0.3 card = url %v, protocolVersion %v, preferredTransport %v, name %v", w["url"], w["protocolVersion"], w["preferredTransport"], w["name"])
		}
		checkCardCaching(t, h.url, path, f)
	})
	for _, path := range []string{"/.well-known/agent-card.json"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			f := fetchCard(t, h.url, path)
			if f.status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, f.status, f.body)
			}
			c := f.card
			if c.Name != "Research Assistant" || c.Description != "Finds and summarises sources." || c.Version != "2.3.4" ||
				c.DocumentationURL != "https://example.org/docs" || c.IconURL != "https://example.org/icon.png" {
				t.Errorf("identity from config = %+v", c)
			}
			if c.Provider == nil || c.Provider.Organization != "Example Org" || c.Provider.URL != "https://example.org" {
				t.Errorf("provider = %+v", c.Provider)
			}
			var ifaces []string
			for _, in := range c.SupportedInterfaces {
				ifaces = append(ifaces, in.ProtocolBinding+" "+in.ProtocolVersion+" "+in.URL)
			}
			// JSON-RPC 1.0 first (preferred), then 0.3, at the real URL;
			// other bindings may follow.
			want := []string{"JSONRPC 1.0 " + h.url + "/", "JSONRPC 0.3 " + h.url + "/"}
			if got := jsonrpcOnly(ifaces); len(ifaces) == 0 || ifaces[0] != want[0] || !equal(got, want) {
				t.Errorf("supportedInterfaces = %v, want %v first (first = preferred)", ifaces, want)
			}
			if !c.Capabilities.Streaming || !c.Capabilities.PushNotifications {
				t.Errorf("capabilities = %+v", c.Capabilities)
			}
			// Skills: the host's tools (advertised_toolsets *), sorted,
			// without the plugin's own a2a toolset.
			if got := c.skillIDs(); !equal(got, []string{"calendar_add", "web_search"}) {
				t.Errorf("skills = %v, want calendar_add, web_search", got)
			}
			for _, s := range c.Skills {
				if s.ID == "web_search" && (s.Description != "Search the web and return the top results." || !equal(s.Tags, []string{"web", "search", "read-only"})) {
					t.Errorf("web_search skill = %+v", s)
				}
			}
			if len(c.SecuritySchemes) != 0 || len(c.SecurityRequirements) != 0 {
				t.Errorf("an open agent declares security: %v %v", c.SecuritySchemes, c.SecurityRequirements)
			}
			checkCardCaching(t, h.url, path, f)
		})
	}
}

// jsonrpcOnly keeps the JSON-RPC entries of "BINDING VERSION URL" lines.
func jsonrpcOnly(ifaces []string) []string {
	var out []string
	for _, in := range ifaces {
		if strings.HasPrefix(in, "JSONRPC ") {
			out = append(out, in)
		}
	}
	return out
}

// checkCardCaching checks Cache-Control, ETag and Last-Modified, and that
// conditional requests with them answer 304 without a body.
func checkCardCaching(t *testing.T, base, path string, f fetchedCard) {
	t.Helper()
	cc := f.header.Get("Cache-Control")
	etag := f.header.Get("ETag")
	lm := f.header.Get("Last-Modified")
	if !strings.Contains(cc, "max-age=") {
		t.Errorf("Cache-Control = %q, want a max-age", cc)
	}
	if etag == "" || !strings.HasPrefix(etag, `"`) {
		t.Errorf("ETag = %q, want a quoted tag", etag)
	}
	if _, err := http.ParseTime(lm); err != nil {
		t.Errorf("Last-Modified = %q: %v", lm, err)
	}
	cases := []struct {
		name   string
		hdr    []string
		status int
	}{
		{"matching If-None-Match", []string{"If-None-Match", etag}, http.StatusNotModified},
		{"weak matching If-None-Match", []string{"If-None-Match", `"other", W/` + etag}, http.StatusNotModified},
		{"other If-None-Match", []string{"If-None-Match", `"something-else"`}, http.StatusOK},
		{"If-Modified-Since now", []string{"If-Modified-Since", time.Now().UTC().Add(time.Second).Format(http.TimeFormat)}, http.StatusNotModified},
		{"If-Modified-Since long ago", []string{"If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"}, http.StatusOK},
	}
	for _, tc := range cases {
		g := fetchCard(t, base, path, tc.hdr...)
		if g.status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, g.status, tc.status)
		}
		if g.status == http.StatusNotModified && (len(g.body) != 0 || g.header.Get("ETag") != etag) {
			t.Errorf("%s: 304 with body %q, ETag %q", tc.name, g.body, g.header.Get("ETag"))
		}
	}
}

// fetchCardUntil fetches a card path until ok accepts it. The plugin reads
// the host's tool registry at most once every 2 s, so a change of the
// registry shows on the card within that time.
func fetchCardUntil(t *testing.T, base, path string, ok func(fetchedCard) bool) fetchedCard {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := fetchCard(t, base, path)
		if ok(f) || time.Now().After(deadline) {
			return f
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAgentCardListsNoHostToolUnlessTheOperatorOptsIn: by default the card
// — public and extended — lists the agent's own skill (one chat skill
// here), never the host's tool registry (a terminal, a file writer), which
// says what the operator runs, not what a peer can get; the extended card
// adds only the configured extended skills.
func TestAgentCardListsNoHostToolUnlessTheOperatorOptsIn(t *testing.T) {
	t.Parallel()
	h := startHost(t, map[string]any{
		"loopback_is_local": false,
		"peer_tokens":       map[string]string{"alice": "alice-token-0123456789abcdef"},
		"trusted_peers":     []string{"alice"},
		"extended_skills":   []map[string]any{{"id": "vault-ops", "name": "Vault", "description": "Vault operations."}},
	}, nil)
	h.agent.setTools([]*pb.ToolDefinition{
		{Name: "terminal", Description: "Run a shell command.", Toolset: "terminal"},
		{Name: "write_file", Description: "Write a file.", Toolset: "files"},
		{Name: "web_search", Description: "Search the web.", Toolset: "web"},
	})
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		f := fetchCard(t, h.url, path)
		if f.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, f.status, f.body)
		}
		var got []string // from the JSON itself: the 0.3 card is another shape
		skills, _ := f.whole["skills"].([]any)
		for _, s := range skills {
			if m, ok := s.(map[string]any); ok {
				got = append(got, fmt.Sprint(m["id"]))
			}
		}
		if !equal(got, []string{"chat"}) {
			t.Errorf("%s skills = %v, want only the agent's own [chat]", path, got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ext card
	newClient(h.url).withToken("alice-token-0123456789abcdef").call(t, ctx, "GetExtendedAgentCard", map[string]any{}).ok(t, &ext)
	if got := ext.skillIDs(); !equal(got, []string{"chat", "vault-ops"}) {
		t.Errorf("extended card skills = %v, want [chat vault-ops]", got)
	}
}

// TestAgentCardSkillsFollowTheHostRegistryAndAdvertisedToolsets changes
// the host's tool registry between fetches: the skills (and the ETag)
// change within the plugin's 2 s tool-list cache, restricted to
// advertised_toolsets; with nothing to advertise the card still lists one
// generic skill.
func TestAgentCardSkillsFollowTheHostRegistryAndAdvertisedToolsets(t *testing.T) {
	t.Parallel()
	h := startHost(t, map[string]any{"advertised_toolsets": []string{"calendar", "docs"}}, nil)
	const path = "/.well-known/agent-card.json"

	first := fetchCard(t, h.url, path)
	if got := first.card.skillIDs(); !equal(got, []string{"calendar_add"}) {
		t.Fatalf("skills with advertised_toolsets [calendar docs] = %v, want [calendar_add]", got)
	}

	h.agent.setTools([]*pb.ToolDefinition{
		{Name: "calendar_add", Description: "Add an event.", Toolset: "calendar"},
		{Name: "summarise", Description: "Summarise a document.", Toolset: "docs", Tags: []string{"text"}},
		{Name: "web_search", Toolset: "web"},
	})
	second := fetchCardUntil(t, h.url, path, func(f fetchedCard) bool { return len(f.card.Skills) != 1 })
	if got := second.card.skillIDs(); !equal(got, []string{"calendar_add", "summarise"}) {
		t.Errorf("skills after the registry changed = %v, want [calendar_add summarise]", got)
	}
	if second.header.Get("ETag") == first.header.Get("ETag") {
		t.Errorf("the ETag did not change with the skills")
	}
	// A client revalidating with the old ETag gets the new card.
	if again := fetchCard(t, h.url, path, "If-None-Match", first.header.Get("ETag")); again.status != http.StatusOK {
		t.Errorf("conditional GET with the old ETag = %d, want 200", again.status)
	}

	h.agent.setTools([]*pb.ToolDefinition{{Name: "web_search", Toolset: "web"}})
	third := fetchCardUntil(t, h.url, path, func(f fetchedCard) bool { return len(f.card.Skills) != 2 })
	if got := third.card.skillIDs(); len(got) != 1 || got[0] == "web_search" {
		t.Errorf("skills with nothing advertised = %v, want one generic skill", got)
	}
}
