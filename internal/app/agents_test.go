package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/app"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/oidcop"
)

// twoAgents is the host information of a host with two agents.
func twoAgents() *pb.HostInfo {
	return &pb.HostInfo{Name: "multi", Version: "1", ProtocolMinor: 4, Agents: []*pb.HostAgent{
		{Id: "main", Name: "Main Agent", Description: "The host's first agent"},
		{Id: "beta", Name: "Beta Agent", Description: "The host's second agent",
			Skills: []*pb.AgentSkill{{Id: "haiku", Name: "Haiku", Description: "Writes haiku", Tags: []string{"poetry"}}}},
	}}
}

// rpcAt posts one JSON-RPC request and returns the result or the error.
func rpcAt(t *testing.T, url, token, method, params string) (json.RawMessage, *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &env)
	return env.Result, env.Error, resp.StatusCode
}

func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTwoHostAgentsThroughThePlugin: a 1.4 host with two agents gets each
// inbound message with the agent it is for, its output routed back to
// that agent's task, and each agent its card, its tokens and its tasks.
func TestTwoHostAgentsThroughThePlugin(t *testing.T) {
	agent, err := testharness.NewAgent(testharness.EchoScenario(), testharness.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	p := serve(t, `{"port":0,"store":"memory","inspector":true,"peer_tokens":{"alice":"alice-token-0123456789"},"trusted_peers":["alice"],
		"agent_settings":{"beta":{"peer_tokens":{"dana":"dana-token-0123456789"},"policy":"public=send,get;trusted=all"}}}`, nil,
		hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: twoAgents()})
	plat, _ := p.Platform()
	agent.Attach(plat)
	base := strings.TrimSuffix(p.Endpoints()[0], "/") + "/"

	if code, body := getBody(t, base+".well-known/agent-card.json"); code != 200 || !strings.Contains(body, `"name":"Main Agent"`) {
		t.Fatalf("root card: %d %s", code, body)
	}
	code, body := getBody(t, base+"agents/beta/.well-known/agent-card.json")
	if code != 200 || !strings.Contains(body, `"name":"Beta Agent"`) || !strings.Contains(body, `"id":"haiku"`) || !strings.Contains(body, base+"agents/beta/") {
		t.Fatalf("beta's card: %d %s", code, body)
	}

	send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello beta"}]}}`
	res, rerr, _ := rpcAt(t, base+"agents/beta/", "dana-token-0123456789", "SendMessage", send)
	if rerr != nil || !strings.Contains(string(res), "TASK_STATE_COMPLETED") || !strings.Contains(string(res), "hello beta") {
		t.Fatalf("beta's answer: %s %v", res, rerr)
	}
	var got struct {
		Task struct{ ID string } `json:"task"`
	}
	_ = json.Unmarshal(res, &got)
	calls := agent.Recorder().Calls()
	var hm *pb.HandleMessageRequest
	for _, c := range calls {
		if c.Kind == testharness.KindHandleMessage {
			hm = c.Request.(*pb.HandleMessageRequest)
		}
	}
	if hm == nil || hm.GetAgentId() != "beta" || hm.GetTaskId() != got.Task.ID {
		t.Fatalf("the host's HandleMessage: %v, want agent beta and task %s", hm, got.Task.ID)
	}

	// Tokens and tasks are the agent's own.
	if _, rerr, status := rpcAt(t, base+"agents/beta/", "alice-token-0123456789", "SendMessage", send); status != 401 {
		t.Errorf("alice at beta: HTTP %d %v, want 401", status, rerr)
	}
	if _, rerr, _ := rpcAt(t, base, "alice-token-0123456789", "GetTask", `{"id":"`+got.Task.ID+`"}`); rerr == nil || rerr.Code != -32001 {
		t.Errorf("beta's task at main: %v, want -32001", rerr)
	}
	if _, rerr, _ := rpcAt(t, base, "dana-token-0123456789", "GetTask", `{"id":"`+got.Task.ID+`","tenant":"beta"}`); rerr != nil {
		t.Errorf("beta's task by tenant: %v", rerr)
	}
	// beta's own policy: dana (public: no trusted_peers) may not list.
	if _, rerr, _ := rpcAt(t, base+"agents/beta/", "dana-token-0123456789", "ListTasks", `{}`); rerr == nil {
		t.Errorf("ListTasks under beta's policy public=send,get succeeded")
	}
	if _, rerr, _ := rpcAt(t, base, "alice-token-0123456789", "ListTasks", `{}`); rerr != nil {
		t.Errorf("ListTasks at main under the default policy: %v", rerr)
	}

	// The host's output for main's task goes to main, for beta's to beta.
	res, rerr, _ = rpcAt(t, base+"agents/main/", "alice-token-0123456789", "SendMessage", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hello main"}]}}`)
	if rerr != nil || !strings.Contains(string(res), "TASK_STATE_COMPLETED") || !strings.Contains(string(res), "hello main") {
		t.Fatalf("main's answer: %s %v", res, rerr)
	}
	var mainTask struct {
		Task struct{ ID string } `json:"task"`
	}
	_ = json.Unmarshal(res, &mainTask)

	// Each agent's inspector shows its own tasks only, and links within
	// itself.
	code, page := getBody(t, base+"agents/beta/inspector/tasks")
	if code != 200 || !strings.Contains(page, got.Task.ID) || strings.Contains(page, mainTask.Task.ID) || !strings.Contains(page, `href="/agents/beta/inspector/tasks/`) {
		t.Errorf("beta's inspector: %d, beta's task shown %v, main's shown %v", code, strings.Contains(page, got.Task.ID), strings.Contains(page, mainTask.Task.ID))
	}
	code, page = getBody(t, base+"inspector/tasks")
	if code != 200 || strings.Contains(page, got.Task.ID) || !strings.Contains(page, mainTask.Task.ID) {
		t.Errorf("main's inspector: %d, beta's task shown %v, main's shown %v", code, strings.Contains(page, got.Task.ID), strings.Contains(page, mainTask.Task.ID))
	}
	if code, _ := getBody(t, base+"agents/beta/inspector/tasks/"+mainTask.Task.ID); code != 404 {
		t.Errorf("main's task in beta's inspector: %d, want 404", code)
	}
	if code, page := getBody(t, base+"agents/beta/inspector/"); code != 200 || !strings.Contains(page, "Beta Agent") {
		t.Errorf("beta's inspector overview: %d", code)
	}
}

// TestOlderHostIsOneDefaultAgent: a 1.3 host (no agents) is served as
// before: no /agents/ paths, HandleMessage without an agent id.
func TestOlderHostIsOneDefaultAgent(t *testing.T) {
	agent, err := testharness.NewAgent(testharness.EchoScenario(), testharness.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	p := serve(t, `{"port":0,"store":"memory","agent_name":"Solo"}`, nil,
		hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: &pb.HostInfo{Name: "old", Version: "1", ProtocolMinor: 3}})
	plat, _ := p.Platform()
	agent.Attach(plat)
	base := strings.TrimSuffix(p.Endpoints()[0], "/") + "/"
	if code, body := getBody(t, base+".well-known/agent-card.json"); code != 200 || !strings.Contains(body, `"name":"Solo"`) || strings.Contains(body, `"tenant"`) {
		t.Fatalf("card: %d %s", code, body)
	}
	if code, _ := getBody(t, base+"agents/main/.well-known/agent-card.json"); code != 404 {
		t.Errorf("/agents/ at a host without agents: %d, want 404", code)
	}
	res, rerr, _ := rpcAt(t, base, "", "SendMessage", `{"tenant":"whatever","message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	if rerr != nil || !strings.Contains(string(res), "TASK_STATE_COMPLETED") {
		t.Fatalf("send: %s %v", res, rerr)
	}
	for _, c := range agent.Recorder().Calls() {
		if c.Kind == testharness.KindHandleMessage && c.Request.(*pb.HandleMessageRequest).GetAgentId() != "" {
			t.Errorf("HandleMessage named agent %q for a host without agents", c.Request.(*pb.HandleMessageRequest).GetAgentId())
		}
	}
}

// TestUpgradeTo14KeepsTheDefaultAgentsTasks: a host that upgrades to
// contract 1.4 and declares its agents keeps serving the root URL as its
// default agent, with the same tokens; the tasks saved before (agent ""
// in the store) stay that agent's: found at the root, and a task the old
// process left running is failed at start-up like any other.
func TestUpgradeTo14KeepsTheDefaultAgentsTasks(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"port":0,"store":"sqlite","peer_tokens":{"alice":"alice-token-0123456789"},"trusted_peers":["alice"]}`
	start := func(info *pb.HostInfo) *hostsdk.Plugin {
		agent, err := testharness.NewAgent(testharness.EchoScenario(), testharness.AgentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agent.Close() })
		p := serve(t, cfg, nil, hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: info, DataDir: dir})
		plat, _ := p.Platform()
		agent.Attach(plat)
		return p
	}
	old := start(&pb.HostInfo{Name: "h", Version: "1", ProtocolMinor: 3})
	base := strings.TrimSuffix(old.Endpoints()[0], "/") + "/"
	res, rerr, _ := rpcAt(t, base, "alice-token-0123456789", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"before the upgrade"}]}}`)
	if rerr != nil || !strings.Contains(string(res), "TASK_STATE_COMPLETED") {
		t.Fatalf("send: %s %v", res, rerr)
	}
	var sent struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if err := json.Unmarshal(res, &sent); err != nil || sent.Task.ID == "" {
		t.Fatalf("send answered %s (%v)", res, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := old.Lifecycle().Drain(ctx, &pb.DrainRequest{}); err != nil {
		t.Fatal(err)
	}
	// A task the old process left running (its turn died with it), in
	// the plugin's data directory (the host's, then the plugin's name).
	st, err := store.OpenSQLite(filepath.Join(dir, "a2a", app.DatabaseFile), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	running := &store.TaskRecord{Owner: "peer:alice", CreatedAt: now, UpdatedAt: now, Task: a2a.Task{ID: "left-running", ContextID: "c-left",
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.NewTimestamp(now)}}}
	if err := st.SaveTask(ctx, running, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	upgraded := start(twoAgents())
	base = strings.TrimSuffix(upgraded.Endpoints()[0], "/") + "/"
	if _, rerr, _ := rpcAt(t, base, "alice-token-0123456789", "GetTask", `{"id":"`+sent.Task.ID+`"}`); rerr != nil {
		t.Errorf("the default agent's task from before the upgrade, at the root with the same token: %v", rerr)
	}
	res, rerr, _ = rpcAt(t, base, "alice-token-0123456789", "GetTask", `{"id":"left-running"}`)
	if rerr != nil || !strings.Contains(string(res), "TASK_STATE_FAILED") {
		t.Errorf("the task left running before the upgrade, after start-up: %s %v; want failed", res, rerr)
	}
	if _, rerr, _ := rpcAt(t, base+"agents/beta/", "alice-token-0123456789", "GetTask", `{"id":"`+sent.Task.ID+`"}`); rerr == nil {
		t.Error("the default agent's task from before the upgrade is beta's too")
	}
}

// TestToolsOfOneAgentDoNotShowAnotherAgentsConversations: beta's turn
// calls a peer with a2a_call; main's turn then runs a2a_list and
// a2a_history. The conversation (what beta sent and got back) is beta's:
// main does not see it, and beta still does.
func TestToolsOfOneAgentDoNotShowAnotherAgentsConversations(t *testing.T) {
	bob := newTracePeer(t)
	agent, err := testharness.NewAgent(testharness.EchoScenario(), testharness.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	cfg := fmt.Sprintf(`{"port":0,"store":"memory","allow_loopback_urls":true,"a2a_agents":[{"name":"bob","url":%q}]}`, bob.URL)
	p := serve(t, cfg, nil, hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: twoAgents()})
	toolset, _ := p.Toolset()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(agentID, name, args string) string {
		r, err := toolset.CallTool(ctx, &pb.CallToolRequest{Name: name, ArgumentsJson: args, AgentId: agentID}, nil)
		if err != nil {
			t.Fatalf("%s as %s: %v", name, agentID, err)
		}
		return r.GetContent()
	}
	out := call("beta", "a2a_call", `{"agent":"bob","message":"beta's private question"}`)
	if !strings.Contains(out, "bob done") {
		t.Fatalf("beta's a2a_call: %s", out)
	}
	// bob's task lives in context "bc" (see newTracePeer).
	if list := call("beta", "a2a_list", `{}`); !strings.Contains(list, `context "bc"`) {
		t.Fatalf("beta's own a2a_list does not show its conversation: %s", list)
	}
	if h := call("beta", "a2a_history", `{"context_id":"bc"}`); !strings.Contains(h, "beta's private question") {
		t.Errorf("beta's own a2a_history does not show what it sent:\n%s", h)
	}
	for _, id := range []string{"main", ""} { // "" from a 1.4 host is the default agent
		if list := call(id, "a2a_list", `{}`); strings.Contains(list, `context "bc"`) {
			t.Errorf("a2a_list of agent %q shows beta's conversation:\n%s", id, list)
		}
		if h := call(id, "a2a_history", `{"context_id":"bc"}`); strings.Contains(h, "beta's private question") {
			t.Errorf("a2a_history of agent %q reads what beta sent:\n%s", id, h)
		}
	}
}

// TestToolCallWithoutAgentIDIsTheAgentWhoseTurnMakesIt: a 1.4 host that
// leaves CallToolRequest.agent_id empty gets the call attributed to the
// agent whose inbound turn (its chat) makes it, as Send and
// ProcessingComplete are: beta's turn delegating to bob records beta's
// conversation, not the default agent's.
func TestToolCallWithoutAgentIDIsTheAgentWhoseTurnMakesIt(t *testing.T) {
	bob := newTracePeer(t)
	agent := delegatorAgent(t)
	cfg := fmt.Sprintf(`{"port":0,"store":"memory","allow_loopback_urls":true,"a2a_agents":[{"name":"bob","url":%q}]}`, bob.URL)
	p := serve(t, cfg, nil, hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: twoAgents()})
	plat, _ := p.Platform()
	toolset, _ := p.Toolset()
	agent.Attach(plat)
	var named []string
	agent.SetToolCaller(func(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
		named = append(named, req.GetAgentId())
		req.AgentId = "" // a host that does not echo the agent
		return toolset.CallTool(ctx, req, progress)
	})
	base := strings.TrimSuffix(p.Endpoints()[0], "/") + "/"
	res, rerr, _ := rpcAt(t, base+"agents/beta/", "", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"ask bob"}]}}`)
	if rerr != nil || !strings.Contains(string(res), "bob says") {
		t.Fatalf("beta's delegating turn: %s %v", res, rerr)
	}
	if len(named) != 1 {
		t.Fatalf("tool calls: %v, want one", named)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list := func(agentID string) string {
		r, err := toolset.CallTool(ctx, &pb.CallToolRequest{Name: "a2a_list", ArgumentsJson: `{}`, AgentId: agentID}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.GetContent()
	}
	if l := list("beta"); !strings.Contains(l, `context "bc"`) {
		t.Errorf("beta's a2a_list lacks the conversation its turn made:\n%s", l)
	}
	if l := list("main"); strings.Contains(l, `context "bc"`) {
		t.Errorf("main's a2a_list has the conversation beta's turn made:\n%s", l)
	}
}

// TestAgentWithOwnTokensAdmitsOAuthOnlyWhenItsSettingsSay: with
// oauth_issuers plugin-wide, an agent with tokens of its own admits only
// those — a token of the plugin's OAuth provider is refused there (and
// its card declares no OAuth scheme) — unless agent_settings.<id>.oauth
// is true; the default agent (no tokens of its own) admits it.
func TestAgentWithOwnTokensAdmitsOAuthOnlyWhenItsSettingsSay(t *testing.T) {
	const audience = "https://agents.example.test"
	op := oidcop.Start(t)
	op.AddClient(oidcop.Client{ID: "svc", Secret: "svc-secret", Scopes: []string{"a2a:send", "a2a:get"}, Audiences: []string{audience}})
	for _, tc := range []struct {
		oauth    string // beta's "oauth" setting, "" for none
		betaWant bool
	}{{"", false}, {`,"oauth":false`, false}, {`,"oauth":true`, true}} {
		cfg := fmt.Sprintf(`{"port":0,"store":"memory","loopback_is_local":false,"oauth_allow_loopback_http":true,
			"oauth_issuers":[{"name":"idp","issuer":%q,"audience":%q}],
			"peer_tokens":{"alice":"alice-token-0123456789"},
			"agent_settings":{"beta":{"peer_tokens":{"dana":"dana-token-0123456789"}%s}}}`, op.Issuer, audience, tc.oauth)
		agent, err := testharness.NewAgent(testharness.EchoScenario(), testharness.AgentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agent.Close() })
		p := serve(t, cfg, nil, hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: twoAgents()})
		plat, _ := p.Platform()
		agent.Attach(plat)
		base := strings.TrimSuffix(p.Endpoints()[0], "/") + "/"
		tok := op.Token(t, "svc", "svc-secret", []string{"a2a:send"}, audience)
		send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
		if _, rerr, code := rpcAt(t, base, tok, "SendMessage", send); rerr != nil || code != 200 {
			t.Errorf("beta%s: an OAuth token at the default agent: HTTP %d %v, want admitted", tc.oauth, code, rerr)
		}
		_, rerr, code := rpcAt(t, base+"agents/beta/", tok, "SendMessage", send)
		if got := rerr == nil && code == 200; got != tc.betaWant {
			t.Errorf("beta%s: an OAuth token at beta: HTTP %d %v, want admitted %v", tc.oauth, code, rerr, tc.betaWant)
		}
		if _, rerr, code := rpcAt(t, base+"agents/beta/", "dana-token-0123456789", "SendMessage", send); rerr != nil || code != 200 {
			t.Errorf("beta%s: beta's own token: HTTP %d %v", tc.oauth, code, rerr)
		}
		if _, card := getBody(t, base+"agents/beta/.well-known/agent-card.json"); strings.Contains(card, "oauth2-") != tc.betaWant {
			t.Errorf("beta%s: beta's card declares OAuth = %v, want %v: %s", tc.oauth, !tc.betaWant, tc.betaWant, card)
		}
	}
}

// TestAnAgentsOwnOAuthAudienceKeepsOtherAgentsTokensOut: with
// agent_settings.beta.oauth {"audience": …}, a token minted for the
// plugin's audience works at the default agent and not at beta, and one
// minted for beta's audience works at beta and not at the default agent.
func TestAnAgentsOwnOAuthAudienceKeepsOtherAgentsTokensOut(t *testing.T) {
	const audience, betaAudience = "https://agents.example.test", "https://beta.example.test"
	op := oidcop.Start(t)
	op.AddClient(oidcop.Client{ID: "svc", Secret: "svc-secret", Scopes: []string{"a2a:send"}, Audiences: []string{audience, betaAudience}})
	cfg := fmt.Sprintf(`{"port":0,"store":"memory","loopback_is_local":false,"oauth_allow_loopback_http":true,
		"oauth_issuers":[{"name":"idp","issuer":%q,"audience":%q}],
		"agent_settings":{"beta":{"oauth":{"issuers":["idp"],"audience":%q}}}}`, op.Issuer, audience, betaAudience)
	agent, err := testharness.NewAgent(testharness.EchoScenario(), testharness.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	p := serve(t, cfg, nil, hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: twoAgents()})
	plat, _ := p.Platform()
	agent.Attach(plat)
	base := strings.TrimSuffix(p.Endpoints()[0], "/") + "/"
	send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	for _, tc := range []struct {
		name, aud, url string
		admitted       bool
	}{
		{"the plugin's audience at the default agent", audience, base, true},
		{"the plugin's audience at beta", audience, base + "agents/beta/", false},
		{"beta's audience at beta", betaAudience, base + "agents/beta/", true},
		{"beta's audience at the default agent", betaAudience, base, false},
	} {
		tok := op.Token(t, "svc", "svc-secret", []string{"a2a:send"}, tc.aud)
		_, rerr, code := rpcAt(t, tc.url, tok, "SendMessage", send)
		if got := rerr == nil && code == 200; got != tc.admitted {
			t.Errorf("%s: HTTP %d %v, want admitted %v", tc.name, code, rerr, tc.admitted)
		}
		if !tc.admitted && (code != 401 || rerr == nil || !strings.Contains(rerr.Message, "audience")) {
			t.Errorf("%s: refused with HTTP %d %v, want 401 naming the audience", tc.name, code, rerr)
		}
	}
}

// TestHostAgentMistakesFailConfigure: settings that do not fit the host's
// agents, and a host's own mistakes, fail Configure naming the setting.
func TestHostAgentMistakesFailConfigure(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		host *pb.HostInfo
		want string
	}{
		{`{"expose_agents":["gamma"]}`, twoAgents(), `expose_agents (A2A_EXPOSE_AGENTS) names "gamma"`},
		{`{"default_agent":"gamma"}`, twoAgents(), `default_agent (A2A_DEFAULT_AGENT)`},
		{`{"agent_settings":{"gamma":{"name":"G"}}}`, twoAgents(), `agent_settings (A2A_AGENT_SETTINGS)`},
		{`{"agent_settings":{"beta":{"policy":"public=fly"}}}`, twoAgents(), `agent_settings.beta (A2A_AGENT_SETTINGS): policy`},
		{`{"agent_settings":{"beta":{"oauth":{"audience":"https://beta.test"}}}}`, twoAgents(), "no oauth_issuers are configured"},
		{`{"oauth_allow_loopback_http":true,"oauth_issuers":[{"name":"idp","issuer":"http://127.0.0.1:9","audience":"a"}],"agent_settings":{"beta":{"oauth":{"issuers":["other"]}}}}`, twoAgents(),
			`agent_settings.beta (A2A_AGENT_SETTINGS): oauth.issuers names "other", which is not one of oauth_issuers (idp)`},
		{`{"agent_settings":{"beta":{"oauth":{"audiences":["x"]}}}}`, twoAgents(), `oauth is true, false or {"issuers"`},
		{`{"expose_agents":["main"]}`, &pb.HostInfo{ProtocolMinor: 3}, "declares no agents"},
		{`{}`, &pb.HostInfo{Agents: []*pb.HostAgent{{Id: "Main Agent"}}}, "HostInfo.agents"},
		{`{}`, &pb.HostInfo{Agents: []*pb.HostAgent{{Id: "a"}, {Id: "a"}}}, `lists agent "a" twice`},
	} {
		p := serve(t, `{}`, nil, hostsdk.InProcessOptions{NoConfigure: true})
		_, err := p.Lifecycle().Configure(context.Background(), &pb.ConfigureRequest{ConfigJson: []byte(tc.cfg), DataDir: t.TempDir(), Host: tc.host}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %s: err = %v, want it to mention %q", tc.cfg, err, tc.want)
		}
	}
}

// TestOutputWithoutAgentIDFindsItsAgent: a host that does not echo
// agent_id in its Send (an older host library) still has its output
// reach the agent whose turn it answers — here a blocking send, whose task
// is not in the store yet when the answer comes.
func TestOutputWithoutAgentIDFindsItsAgent(t *testing.T) {
	var plat plugin.Platform
	agent, err := testharness.NewAgent(testharness.BehaviorFunc(func(ctx context.Context, turn *testharness.Turn) error {
		r := turn.Request
		_, err := plat.Send(ctx, &pb.SendRequest{Platform: r.GetPlatform(), ChatId: r.GetChatId(), TaskId: r.GetTaskId(),
			Kind: pb.SendKind_SEND_KIND_FINAL, Text: "answered by " + r.GetAgentId(), EndsTurn: true})
		return err
	}), testharness.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	p := serve(t, `{"port":0,"store":"memory"}`, nil, hostsdk.InProcessOptions{Host: agent.Handler(), HostInfo: twoAgents()})
	plat, _ = p.Platform()
	agent.Attach(plat)
	base := strings.TrimSuffix(p.Endpoints()[0], "/") + "/"
	for _, path := range []string{"", "agents/beta/"} {
		res, rerr, _ := rpcAt(t, base+path, "", "SendMessage", `{"message":{"messageId":"m-`+path+`","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
		want := map[string]string{"": "answered by main", "agents/beta/": "answered by beta"}[path]
		if rerr != nil || !strings.Contains(string(res), "TASK_STATE_COMPLETED") || !strings.Contains(string(res), want) {
			t.Errorf("at /%s: %s %v, want %q", path, res, rerr, want)
		}
	}
}
