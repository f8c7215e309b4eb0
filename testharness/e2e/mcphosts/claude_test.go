package mcphosts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness/fakemodel"
)

// claudeEnv is the environment of claude against the fake model: the
// model at ANTHROPIC_BASE_URL with a fake key, the configuration under
// home, and telemetry, error reports, update checks and other
// nonessential traffic off.
func claudeEnv(home string, m *fakemodel.Server) []string {
	return append(baseEnv(home),
		"ANTHROPIC_BASE_URL="+m.URL,
		"ANTHROPIC_API_KEY=sk-ant-fake-key-for-tests",
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_BUG_COMMAND=1",
		"MCP_TIMEOUT=60000",
		"MCP_TOOL_TIMEOUT=180000",
		// Offer the MCP tools to the model directly rather than behind
		// the ToolSearch tool (a documented setting of Claude Code).
		"ENABLE_TOOL_SEARCH=false",
	)
}

// Claude Code (claude -p): the MCP face from --mcp-config, the model at
// ANTHROPIC_BASE_URL (the fake Messages API, streamed), the MCP tool
// allowed with --allowedTools so it runs unattended, and the CLI's
// telemetry and other traffic off.
func TestClaudeCodeCallsAnA2AAgentThroughTheMCPFace(t *testing.T) {
	t.Parallel()
	claude := cli(t, "MCPHOSTS_CLAUDE", "Claude Code")
	w := sharedWorld(t)
	msg := nonce(t)
	m := startModel(t, "a2a_call", map[string]any{"agent": "peer", "message": msg})
	face := w.mcpFace()
	home := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"a2a": map[string]any{"type": "stdio", "command": face.command, "args": face.args, "env": face.env},
	}})
	cfgPath := filepath.Join(home, "mcp.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	env := claudeEnv(home, m)
	out := runCLI(t, m, home, env, claude, "-p", "Ask the peer agent: "+msg,
		"--mcp-config", cfgPath, "--strict-mcp-config",
		"--allowedTools", "mcp__a2a__a2a_call",
		"--model", "claude-sonnet-4-5", "--output-format", "text")
	checkRoundTrip(t, m, out, msg)
}

// The Claude Code plugin (host-sdk/mcp/claude-plugin), installed from its
// marketplace with Claude Code's own commands as docs/mcp.md says, brings
// the MCP face (a2a-mcp --inbound, from PATH) into claude -p, whose model
// calls a2a_call through it. The plugin passes A2A_MCP_CONFIG and A2A_PORT
// on from Claude Code's environment: the settings file names the peer, and
// the port is a free one, as --inbound serves A2A.
func TestClaudeCodePluginFromItsMarketplaceCallsAnA2AAgent(t *testing.T) {
	t.Parallel()
	claude := cli(t, "MCPHOSTS_CLAUDE", "Claude Code")
	w := sharedWorld(t)
	msg := nonce(t)
	m := startModel(t, "a2a_call", map[string]any{"agent": "peer", "message": msg})
	home := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	env := claudeEnv(home, m)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + filepath.Dir(w.face) + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	env = append(env, "A2A_MCP_CONFIG="+w.faceConfig, "A2A_PORT="+port)
	runCLI(t, m, home, env, claude, "plugin", "marketplace", "add", filepath.Join(w.root, "host-sdk", "mcp", "claude-plugin"))
	runCLI(t, m, home, env, claude, "plugin", "install", "a2a@a2a-plugin")
	out := runCLI(t, m, home, env, claude, "-p", "Ask the peer agent: "+msg,
		"--allowedTools", "mcp__plugin_a2a_a2a__a2a_call",
		"--model", "claude-sonnet-4-5", "--output-format", "text")
	checkRoundTrip(t, m, out, msg)
}
