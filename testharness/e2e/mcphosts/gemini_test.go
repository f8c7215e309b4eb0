package mcphosts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness/fakemodel"
)

// geminiHome writes ~/.gemini/settings.json under a fresh HOME: API-key
// auth (the key and GOOGLE_GEMINI_BASE_URL come from the environment), no
// telemetry, usage statistics or update checks, folder trust off (the temp
// directory is not a project to vet), and mcpServers when given.
func geminiHome(t *testing.T, mcpServers map[string]any) string {
	t.Helper()
	home := t.TempDir()
	geminiHomeIn(t, home, mcpServers)
	return home
}

// geminiHomeIn writes geminiHome's settings.json into home.
func geminiHomeIn(t *testing.T, home string, mcpServers map[string]any) {
	t.Helper()
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	if mcpServers != nil {
		settings["mcpServers"] = mcpServers
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// geminiEnv is the environment of gemini -p against the fake model.
func geminiEnv(home string, m *fakemodel.Server) []string {
	return append(baseEnv(home),
		"GEMINI_API_KEY=fake-key-for-tests",
		"GOOGLE_GEMINI_BASE_URL="+m.URL,
		"GEMINI_CLI_NO_RELAUNCH=true",
	)
}

// Gemini CLI (gemini -p): the MCP face in settings.json's mcpServers
// (trusted, so its tools run without a confirmation), the model at
// GOOGLE_GEMINI_BASE_URL (the fake Gemini API, streamGenerateContent).
func TestGeminiCLICallsAnA2AAgentThroughTheMCPFace(t *testing.T) {
	t.Parallel()
	gemini := cli(t, "MCPHOSTS_GEMINI", "Gemini CLI")
	w := sharedWorld(t)
	msg := nonce(t)
	m := startModel(t, "a2a_call", map[string]any{"agent": "peer", "message": msg})
	face := w.mcpFace()
	home := geminiHome(t, map[string]any{
		"a2a": map[string]any{"command": face.command, "args": face.args, "env": face.env, "trust": true, "timeout": 180000},
	})
	out := runCLI(t, m, home, geminiEnv(home, m), gemini, "-p", "Ask the peer agent: "+msg,
		"--model", "gemini-2.5-flash", "--output-format", "text")
	checkRoundTrip(t, m, out, msg)
}
