package rest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// callTool calls a tool of h's plugin as the host's model does.
func callTool(t *testing.T, h *testharness.Host, tool string, args map[string]any) *pb.ToolResult {
	t.Helper()
	res, _ := e2etest.CallTool(t, h, tool, args, waitTimeout)
	return res
}

// contains fails unless r's content has every string and r.is_error is
// isError.
func contains(t *testing.T, r *pb.ToolResult, isError bool, want ...string) {
	t.Helper()
	if r.GetIsError() != isError {
		t.Fatalf("is_error=%t, want %t:\n%s", r.GetIsError(), isError, r.GetContent())
	}
	for _, w := range want {
		if !strings.Contains(r.GetContent(), w) {
			t.Fatalf("result lacks %q:\n%s", w, r.GetContent())
		}
	}
}

// callerHost starts a plugin whose a2a_agents are the given peers.
func callerHost(t *testing.T, agents []map[string]any) *testharness.Host {
	t.Helper()
	h := testharness.Start(t, testharness.Options{
		PluginConfig: map[string]any{
			"port": 0, "store": "memory", "rate_limit": 0, "audit_log": "off",
			"a2a_agents": agents, "allow_loopback_urls": true,
		},
		LogLevel: "info",
	})
	return h
}

// TestToolsCallAnOfficialRESTOnlyPeer: the binary's tools against the
// official Go SDK server offering only HTTP+JSON: discovery names the
// HTTP+JSON interface, a blocking call, a question and its answer, a
// stream with progress, and a cancel that reaches the SDK's executor.
func TestToolsCallAnOfficialRESTOnlyPeer(t *testing.T) {
	peer := clienttest.StartGoV1REST(t, "Go REST Echo")
	h := callerHost(t, []map[string]any{{"name": "gorest", "url": peer.URL}})

	r := callTool(t, h, "a2a_discover", map[string]any{"url": "gorest"})
	contains(t, r, false, `Agent "Go REST Echo"`, "Interface used: HTTP+JSON, protocol 1.0, "+peer.URL+"/rest")

	r = callTool(t, h, "a2a_call", map[string]any{"agent": "gorest", "message": "hello over rest"})
	contains(t, r, false, "gorest completed the task", "echo: hello over rest")

	r = callTool(t, h, "a2a_call", map[string]any{"agent": "gorest", "message": "ask me something"})
	contains(t, r, false, clienttest.Question)
	var s struct {
		TaskID    string `json:"task_id"`
		ContextID string `json:"context_id"`
	}
	c := r.GetContent()
	if i := strings.LastIndex(c, "\n{\""); i < 0 || json.Unmarshal([]byte(c[i+1:]), &s) != nil || s.TaskID == "" {
		t.Fatalf("no summary line in:\n%s", c)
	}
	r = callTool(t, h, "a2a_call", map[string]any{"agent": "gorest", "message": "blue", "task_id": s.TaskID, "context_id": s.ContextID})
	contains(t, r, false, "gorest completed the task", "echo: blue")

	r = callTool(t, h, "a2a_call", map[string]any{"agent": "gorest", "message": "slow report"})
	contains(t, r, false, "echo: slow report")

	r = callTool(t, h, "a2a_call", map[string]any{"agent": "gorest", "message": "hang on", "wait": false})
	c = r.GetContent()
	if i := strings.LastIndex(c, "\n{\""); i < 0 || json.Unmarshal([]byte(c[i+1:]), &s) != nil || s.TaskID == "" {
		t.Fatalf("no summary line in:\n%s", c)
	}
	r = callTool(t, h, "a2a_task", map[string]any{"agent": "gorest", "task_id": s.TaskID, "action": "cancel"})
	contains(t, r, false, "Asked gorest to cancel task \""+s.TaskID+"\"")
	select {
	case id := <-peer.Canceled:
		if id != s.TaskID {
			t.Errorf("the SDK cancelled %s, not %s", id, s.TaskID)
		}
	case <-time.After(waitTimeout):
		t.Error("the SDK's executor never saw the cancellation")
	}

	r = callTool(t, h, "a2a_task", map[string]any{"agent": "gorest", "task_id": "no-such-task", "action": "get"})
	contains(t, r, true, "a2a_task get on gorest failed", "-32001")
}

// TestToolsCallThePluginOverHTTPJSON: one binary calls another whose card
// (seen through a proxy) offers only the HTTP+JSON interface, so both
// sides of the binding are this project's: the call, a question and its
// answer, and the typed errors (unknown task, bad token) arrive as they
// do over JSON-RPC.
func TestToolsCallThePluginOverHTTPJSON(t *testing.T) {
	bob := startHost(t, nil)
	target, err := url.Parse(bob.url)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			rp.ServeHTTP(w, r)
			return
		}
		a := bob.do(t, "", http.MethodGet, r.URL.Path, nil, nil)
		var card map[string]any
		if err := json.Unmarshal(a.body, &card); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		var keep []any
		for _, in := range card["supportedInterfaces"].([]any) {
			if m := in.(map[string]any); m["protocolBinding"] == "HTTP+JSON" {
				m["url"] = "http://" + r.Host // through the proxy
				keep = append(keep, m)
			}
		}
		card["supportedInterfaces"] = keep
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	}))
	t.Cleanup(proxy.Close)
	alice := callerHost(t, []map[string]any{
		{"name": "bob", "url": proxy.URL, "token": tokAlice},
		{"name": "bob-wrong", "url": proxy.URL, "token": "not-a-token-0123456789"},
	})

	r := callTool(t, alice, "a2a_discover", map[string]any{"url": "bob"})
	contains(t, r, false, "Interface used: HTTP+JSON, protocol 1.0, "+proxy.URL)

	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "hello bob"})
	contains(t, r, false, "bob completed the task", "echo: hello bob")
	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "progress please"})
	contains(t, r, false, "bob completed the task", "part one;", "part two", "done: please")

	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "ask away"})
	contains(t, r, false, "Which colour?")
	var s struct {
		TaskID    string `json:"task_id"`
		ContextID string `json:"context_id"`
	}
	c := r.GetContent()
	if i := strings.LastIndex(c, "\n{\""); i < 0 || json.Unmarshal([]byte(c[i+1:]), &s) != nil || s.TaskID == "" {
		t.Fatalf("no summary line in:\n%s", c)
	}
	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "green", "task_id": s.TaskID, "context_id": s.ContextID})
	contains(t, r, false, "bob completed the task", "got: green")

	r = callTool(t, alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "cancel"})
	contains(t, r, true, "has already finished and cannot be canceled")
	r = callTool(t, alice, "a2a_task", map[string]any{"agent": "bob", "task_id": "no-such-task", "action": "get"})
	contains(t, r, true, "TASK_NOT_FOUND")
	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob-wrong", "message": "hello"})
	contains(t, r, true, "authentication refused", "HTTP 401")
}
