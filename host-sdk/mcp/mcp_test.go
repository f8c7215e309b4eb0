package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// A session that serves channels offers no revision newer than
// 2025-11-25 (Claude Code drops channels on 2026-07-28), and still offers
// 2025-11-25 itself.
func TestChannelSessionsOfferRevisionsUpTo20251125(t *testing.T) {
	got := channelProtocols()
	if !slices.Contains(got, "2025-11-25") || slices.Contains(got, "2026-07-28") {
		t.Fatalf("channel protocols = %v", got)
	}
	for _, v := range got {
		if v > ChannelsMaxProtocol {
			t.Errorf("offers %s", v)
		}
	}
}

// A tool whose schema the SDK would refuse (AddTool panics) is an error,
// not a panic; an object schema passes as written.
func TestToolSchemasThatAreNotObjectsAreRefused(t *testing.T) {
	for _, c := range []struct {
		schema string
		ok     bool
	}{
		{`{"type":"object","properties":{"agent":{"type":"string"}}}`, true},
		{``, true},
		{`{"type":"string"}`, false},
		{`[1]`, false},
		{`not json`, false},
	} {
		tool, err := mcpTool(&pb.ToolDefinition{Name: "t", Description: "d", ParametersJsonSchema: c.schema})
		if (err == nil) != c.ok {
			t.Errorf("schema %q: err = %v", c.schema, err)
			continue
		}
		if c.ok && c.schema != "" && string(tool.InputSchema.(json.RawMessage)) != c.schema {
			t.Errorf("schema %q became %s", c.schema, tool.InputSchema)
		}
	}
}

// a2a_reply refuses bad arguments and a task that is not open with a tool
// error saying what to fix, before anything reaches the plugin.
func TestReplyRefusesBadArgumentsAndUnknownTasks(t *testing.T) {
	in := newInbound(true, nil)
	in.tasks["open"] = &openTask{platform: "a2a", chat: "c"}
	for _, c := range []struct{ args, want string }{
		{`{"task_id":"x"}`, "task_id and text are required"},
		{`{"task_id":"open","text":"hi","kind":"maybe"}`, `kind must be "final" or "question"`},
		{`{"task_id":"open","text":"hi","extra":1}`, "bad arguments"},
		{`{"task_id":"gone","text":"hi"}`, `no open A2A task "gone"`},
	} {
		res, err := in.reply(context.Background(), &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: ReplyTool, Arguments: json.RawMessage(c.args)}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, c.want) {
			t.Errorf("%s: %+v %v, want an isError result saying %q", c.args, res, err, c.want)
		}
	}
	if in.tasks["open"] == nil {
		t.Error("a refused reply closed the task")
	}
}

// Without inbound, HandleMessage refuses the task saying why, so the
// plugin fails it at once instead of waiting for a reply nobody can give.
func TestInboundOffRefusesTasks(t *testing.T) {
	_, err := newInbound(false, nil).HandleMessage(context.Background(), &pb.HandleMessageRequest{TaskId: "t"})
	if err == nil || !strings.Contains(err.Error(), "--inbound") {
		t.Fatalf("err = %v", err)
	}
}

// The Claude Code marketplace and plugin manifests are valid JSON, the
// marketplace's plugin source exists, and the plugin bundles a2a-mcp with
// inbound on (the channel).
func TestClaudePluginManifestBundlesTheServerWithItsChannel(t *testing.T) {
	var market struct {
		Name    string `json:"name"`
		Plugins []struct {
			Name, Source string
		} `json:"plugins"`
	}
	readJSON(t, "claude-plugin/.claude-plugin/marketplace.json", &market)
	if market.Name == "" || len(market.Plugins) != 1 || market.Plugins[0].Name != "a2a" {
		t.Fatalf("marketplace = %+v", market)
	}
	dir := filepath.Join("claude-plugin", market.Plugins[0].Source)
	var manifest struct{ Name string }
	readJSON(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), &manifest)
	if manifest.Name != "a2a" {
		t.Errorf("plugin.json name = %q", manifest.Name)
	}
	var servers struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	readJSON(t, filepath.Join(dir, ".mcp.json"), &servers)
	s, ok := servers.MCPServers["a2a"]
	if !ok || s.Command != "a2a-mcp" || !slices.Contains(s.Args, "--inbound") {
		t.Fatalf(".mcp.json = %+v", servers)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// With inbound on, every plugin tool takes inbound_task_id, which the face
// takes out before the plugin sees the arguments (its schemas refuse
// unknown properties).
func TestTurnArgIsAddedToSchemasAndTakenOutOfArguments(t *testing.T) {
	tool := withTurnArg(&sdk.Tool{Name: "a2a_call", InputSchema: json.RawMessage(`{"type":"object","properties":{"agent":{"type":"string"}},"additionalProperties":false}`)})
	if s := string(tool.InputSchema.(json.RawMessage)); !strings.Contains(s, `"inbound_task_id"`) || !strings.Contains(s, `"agent"`) {
		t.Errorf("schema = %s", s)
	}
	for _, c := range []struct{ in, args, task, err string }{
		{``, `{}`, ``, ``},
		{`{"agent":"a"}`, `{"agent":"a"}`, ``, ``},
		{`{"agent":"a","inbound_task_id":"t1"}`, `{"agent":"a"}`, `t1`, ``},
		{`{"inbound_task_id":5}`, ``, ``, `must be a string`},
		{`[1]`, ``, ``, `JSON object`},
	} {
		args, task, err := splitTurnArg(json.RawMessage(c.in))
		if args != c.args || task != c.task || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %q %q %v", c.in, args, task, err)
		}
	}
	in := newInbound(true, nil)
	if got, err := in.turnFor(""); got != nil || err != nil {
		t.Errorf("no open task: %v %v", got, err)
	}
	in.tasks["t1"] = &openTask{chat: "c1"}
	if got, _ := in.turnFor(""); got == nil || got.chat != "c1" {
		t.Errorf("the only open task is implied: %v", got)
	}
	in.tasks["t2"] = &openTask{chat: "c2"}
	if got, _ := in.turnFor(""); got != nil {
		t.Errorf("two open tasks: none is implied, got %v", got)
	}
	if _, err := in.turnFor("t9"); err == nil {
		t.Error("a task that is not open is accepted")
	}
}
