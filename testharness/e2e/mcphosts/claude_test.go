package mcphosts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

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
	env := append(baseEnv(home),
		"ANTHROPIC_BASE_URL="+m.URL,
		"ANTHROPIC_API_KEY=sk-ant-fake-key-for-tests",
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_BUG_COMMAND=1",
		"MCP_TIMEOUT=60000",
		// Offer the MCP tools to the model directly rather than behind
		// the ToolSearch tool (a documented setting of Claude Code).
		"ENABLE_TOOL_SEARCH=false",
		"MCP_TOOL_TIMEOUT=120000",
	)
	out := runCLI(t, m, home, env, claude, "-p", "Ask the peer agent: "+msg,
		"--mcp-config", cfgPath, "--strict-mcp-config",
		"--allowedTools", "mcp__a2a__a2a_call",
		"--model", "claude-sonnet-4-5", "--output-format", "text")
	checkRoundTrip(t, m, out, msg)
}
