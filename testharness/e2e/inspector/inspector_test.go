// Package inspector_test proves the operator's inspector in a real browser:
// it launches the real cmd/a2a-plugin binary twice through the test harness
// (Alice with the inspector on and Bob as her configured outbound peer),
// then runs testharness/inspector/run.mjs, which drives Debian's headless
// Chromium through playwright-core: the card, a message streamed to
// completion, a slow task cancelled, an input-required task answered (from
// the send page and from the task's page), a task created by another client
// appearing live in the list, a message to the peer through a2a_call, the
// peers view. Assertions run in the page; a screenshot of each main view is
// saved in test-artifacts/inspector/.
//
// The test fails — it does not skip — when Chromium or the npm packages are
// missing (`make deps` installs both); it skips only without node.
package inspector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// chromium is Debian's package; the browser test never downloads one.
const chromium = "/usr/bin/chromium"

// carolToken identifies "another client" (peer:carol) to Alice.
const carolToken = "carol-token-for-the-inspector-test"

// browserTimeout bounds the whole browser run (it takes about 15 s).
const browserTimeout = 120 * time.Second

func TestInspectorInHeadlessChromium(t *testing.T) {
	// Checked before the hosts start: it skips only without node.
	browser := testharness.NodeOptions{Dir: testharness.InspectorDir(), Needs: "playwright-core",
		Env: []string{"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CHROMIUM=" + chromium}, Timeout: browserTimeout}
	testharness.RequireNode(t, browser.Dir, browser.Needs)
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("Chromium is missing (%s): run `make deps` (it installs Debian's chromium package with apt)", chromium)
	}
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	artifacts := filepath.Join(root, "test-artifacts", "inspector")
	_ = os.RemoveAll(artifacts) // no screenshot of an earlier run stays behind
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	bob := testharness.Start(t, testharness.Options{
		Agent: &testharness.Scenario{Name: "bob", Default: &testharness.Rule{Actions: []testharness.Action{
			testharness.Progress("bob is thinking"), testharness.Echo("bob heard: ")}}},
		PluginConfig: map[string]any{"port": 0, "store": "memory", "agent_name": "Bob", "audit_log": "off",
			"agent_description": "Bob's agent: a peer that echoes what it hears."},
	})
	scenario, err := testharness.LoadScenario(filepath.Join("testdata", "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	alice := testharness.Start(t, testharness.Options{
		Agent: scenario,
		PluginConfig: map[string]any{
			"port": 0, "store": "memory", "inspector": true, "audit_log": "off", "rate_limit": 0,
			"agent_name": "Alice", "agent_description": "Alice's agent, inspected by her operator.",
			// The operator opts in to list the host's tools on the card (they
			// are private by default): the overview shows them as skills.
			"advertised_toolsets": []string{"*"},
			"peer_tokens":         map[string]string{"carol": carolToken},
			// Bob is also the peer "self", as make run names a peer (run.yaml):
			// the Send page must call it, not Alice.
			"a2a_agents": []map[string]any{{"name": "bob", "url": bob.Endpoint(testharness.A2APluginName), "trust": "trusted"},
				{"name": "self", "url": bob.Endpoint(testharness.A2APluginName), "trust": "trusted"}},
		},
	})
	url := alice.Endpoint(testharness.A2APluginName)

	// The inspector is an endpoint of Alice's (agenthost prints it), and off
	// by default: Bob has none and answers 404.
	if eps := alice.Endpoints(testharness.A2APluginName); len(eps) != 2 || eps[1] != url+"/inspector/" {
		t.Fatalf("Alice's endpoints = %v, want the A2A URL and %s/inspector/", eps, url)
	}
	if eps := bob.Endpoints(testharness.A2APluginName); len(eps) != 1 {
		t.Fatalf("Bob's endpoints = %v, want only the A2A URL (inspector off by default)", eps)
	}
	if code := status(t, bob.Endpoint(testharness.A2APluginName)+"/inspector/", nil); code != http.StatusNotFound {
		t.Fatalf("GET /inspector/ with the inspector off: %d, want 404", code)
	}
	// Behind the same authentication as everything else (callers that are
	// not Local get 403: internal/app's tests; every caller here is on
	// loopback, which is Local).
	if code := status(t, url+"/inspector/", map[string]string{"Authorization": "Bearer not-a-token"}); code != http.StatusUnauthorized {
		t.Fatalf("GET /inspector/ with a bad token: %d, want 401", code)
	}

	// The script says what it needs on stdout and reads the answers on stdin.
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	browser.OnLine = func(line string) string {
		if strings.TrimSpace(line) != "need: other-client-task" {
			return ""
		}
		id, err := sendAsCarol(ctx, url, "hello from carol, another client")
		if err != nil {
			t.Errorf("another client's SendMessage: %v", err)
			id = "none"
		}
		return fmt.Sprintf("task %s\n", id)
	}
	steps, stderr := testharness.RunNodeScript(t, browser, "run.mjs", url, artifacts)
	if len(steps) == 0 || steps[len(steps)-1] != "done" {
		t.Fatalf("the browser script did not finish; its last lines: %q\n%s", steps, stderr)
	}
	for _, name := range []string{"01-overview", "02-send-stream", "03-cancel", "04-input-required", "05-task-detail", "06-task-reply", "07-tasks-live", "08-send-peer", "09-peers"} {
		if fi, err := os.Stat(filepath.Join(artifacts, name+".png")); err != nil || fi.Size() < 10_000 {
			t.Errorf("screenshot %s.png missing or empty in %s (%v)", name, artifacts, err)
		}
	}
}

// status GETs url and returns the HTTP status.
func status(t *testing.T, url string, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// sendAsCarol plays another A2A client: a plain blocking SendMessage over
// HTTP with Carol's token. It returns the task id.
func sendAsCarol(ctx context.Context, url, text string) (string, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"carol-%d","role":"ROLE_USER","parts":[{"text":%q}]}}}`,
		time.Now().UnixNano(), text)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+carolToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Error != nil || out.Result.Task.ID == "" {
		return "", fmt.Errorf("answer %d %s", resp.StatusCode, b)
	}
	return out.Result.Task.ID, nil
}
