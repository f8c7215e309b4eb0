package mcphosts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Codex CLI (codex exec): a config.toml under a temporary CODEX_HOME with
// a model_providers entry whose wire_api is "responses", pointing at the
// fake Responses API (streamed), and the MCP face in [mcp_servers], its
// tools approved in advance (default_tools_approval_mode = "approve"):
// codex exec has nobody to ask, and with approval_policy = "never" an MCP
// call that needs approval fails. Update checks and analytics are off.
func TestCodexCallsAnA2AAgentThroughTheMCPFace(t *testing.T) {
	t.Parallel()
	codex := cli(t, "MCPHOSTS_CODEX", "Codex CLI")
	w := sharedWorld(t)
	msg := nonce(t)
	m := startModel(t, "a2a_call", map[string]any{"agent": "peer", "message": msg})
	face := w.mcpFace()
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	var env []string
	for k, v := range face.env {
		env = append(env, fmt.Sprintf("%s = %s", strconv.Quote(k), strconv.Quote(v)))
	}
	sort.Strings(env)
	var args []string
	for _, a := range face.args {
		args = append(args, strconv.Quote(a))
	}
	config := fmt.Sprintf(`model = "gpt-fake"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "Fake model (testharness/fakemodel)"
base_url = %q
wire_api = "responses"
env_key = "FAKE_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.a2a]
command = %q
args = [%s]
env = { %s }
startup_timeout_sec = 60
tool_timeout_sec = 180
default_tools_approval_mode = "approve"
`, m.URL+"/v1", face.command, strings.Join(args, ", "), strings.Join(env, ", "))
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cliEnv := append(baseEnv(home), "CODEX_HOME="+codexHome, "FAKE_MODEL_API_KEY=fake-key-for-tests")
	out := runCLI(t, m, home, cliEnv, codex, "exec", "--skip-git-repo-check", "Ask the peer agent: "+msg)
	checkRoundTrip(t, m, out, msg)
}
