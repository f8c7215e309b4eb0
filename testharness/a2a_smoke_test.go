package testharness

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// TestStartLaunchesTheA2APlugin is the harness's smoke test with the real
// plugin: Start with zero options builds cmd/a2a-plugin, launches it, and a
// message sent over A2A reaches the agent and comes back. The A2A behaviour
// itself is tested by the end-to-end suites built on this harness.
func TestStartLaunchesTheA2APlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and launches the A2A plugin")
	}
	root, err := ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(root, "cmd", "a2a-plugin", "*.go")); len(files) == 0 {
		t.Skip("cmd/a2a-plugin does not exist yet")
	}
	h := Start(t, Options{
		PluginConfig: map[string]any{"port": 0},
		Agent:        &Scenario{Default: &Rule{Actions: []Action{Progress("on it"), Echo("echo: ")}}},
	})
	ep := h.Endpoint(A2APluginName)
	if !strings.HasPrefix(ep, "http://127.0.0.1:") {
		t.Fatalf("a2a endpoint = %q (endpoints %v)", ep, h.Endpoints(A2APluginName))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(ep, "/")+"/.well-known/agent-card.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || card["name"] == nil {
		t.Fatalf("agent card: %d %v %v", resp.StatusCode, card, err)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` +
		`{"role":"ROLE_USER","messageId":"m-smoke-1","parts":[{"text":"ping"}]}}}`
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, ep, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "echo: ") || strings.Contains(string(out), `"error"`) {
		t.Fatalf("SendMessage: %d %s", resp.StatusCode, out)
	}

	rec := h.Recorder()
	hm, err := rec.WaitFor(ctx, func(c Call) bool { return c.Kind == KindHandleMessage })
	if err != nil {
		t.Fatal(err)
	}
	if m := hm.HandleMessage(); m.GetPlatform() != A2APluginName || m.GetTaskId() == "" || m.GetChatId() == "" || !strings.Contains(m.GetText(), "ping") {
		t.Fatalf("HandleMessage = %v", m)
	}
	pc, err := rec.WaitForCompletion(ctx, hm.TaskID)
	if err != nil || pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("ProcessingComplete = %v, %v", pc, err)
	}
	for _, c := range rec.CallsOf(KindSend) {
		if c.Err != nil {
			t.Fatalf("the plugin refused a Send: %v", c)
		}
	}
}
