package mcphosts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Gemini CLI as an A2A client: a remote subagent (kind: remote) in
// ~/.gemini/agents/, its agent_card_url the reference host's Agent Card
// at the A2A 0.3 path, which is the protocol Gemini CLI speaks. The model
// delegates to it with the CLI's invoke_agent tool; the reference host's
// agent answers over A2A and the answer reaches the model's next request.
func TestGeminiCLIRemoteAgentIsAnsweredByTheReferenceHost(t *testing.T) {
	t.Parallel()
	gemini := cli(t, "MCPHOSTS_GEMINI", "Gemini CLI")
	w := sharedWorld(t)
	msg := nonce(t)
	m := startModel(t, "invoke_agent", map[string]any{"agent_name": "upper_agent", "prompt": msg})
	home := geminiHome(t, nil)
	agents := filepath.Join(home, ".gemini", "agents")
	if err := os.MkdirAll(agents, 0o700); err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf("---\nkind: remote\nname: upper_agent\nagent_card_url: %s/.well-known/agent.json\n---\n", w.peerURL)
	if err := os.WriteFile(filepath.Join(agents, "upper_agent.md"), []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runCLI(t, m, home, geminiEnv(home, m), gemini, "-p", "Ask the upper agent: "+msg,
		"--model", "gemini-2.5-flash", "--output-format", "text", "--approval-mode", "yolo")
	checkRoundTrip(t, m, out, msg)
}
