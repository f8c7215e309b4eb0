package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// binaries builds the real agenthost and a plugins directory with the real
// A2A plugin, as make build does.
type binaries struct {
	root, agenthost, plugins string
}

func build(t *testing.T) *binaries {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and launches binaries")
	}
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	host, err := testharness.BuildBinary(ctx, root, testharness.Binary{Name: "agenthost", Package: "./cmd/agenthost"})
	if err != nil {
		t.Fatal(err)
	}
	plug, err := testharness.BuildBinary(ctx, root, testharness.PluginBinary)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "plugins")
	if _, err := testharness.InstallBinary(plug, dir, "a2a-plugin"); err != nil {
		t.Fatal(err)
	}
	return &binaries{root: root, agenthost: host, plugins: dir}
}

// runningHost is an "agenthost run" process.
type runningHost struct {
	url    string
	cmd    *exec.Cmd
	stderr *testharness.SyncBuffer
}

// startHost runs agenthost run with the repository's run.yaml on a free
// port (make run's RUN_PORT knob) and waits until it serves.
func (b *binaries) startHost(t *testing.T, agent string, env ...string) *runningHost {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(b.agenthost, "run", "--plugins", b.plugins, "--data", t.TempDir(),
		"--config", filepath.Join(b.root, "cmd", "agenthost", "run.yaml"), "--agent", agent)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), append([]string{"RUN_PORT=" + port}, env...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, stderr := &testharness.SyncBuffer{}, &testharness.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stdout.String(), "plugin(s) ready") {
		select {
		case <-done:
			t.Fatalf("agenthost exited: %v\nstdout:\n%s\nstderr:\n%s", cmd.ProcessState, stdout.String(), stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("agenthost not ready:\n%s\n%s", stdout.String(), stderr.String())
		}
	}
	return &runningHost{url: "http://127.0.0.1:" + port, cmd: cmd, stderr: stderr}
}

// rpc calls a JSON-RPC method of the agent and returns its result (or
// fails the test on an error).
func (h *runningHost) rpc(t *testing.T, method string, params any, token string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, h.url+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error != nil {
		t.Fatalf("%s: error %v", method, out.Error)
	}
	return out.Result
}

// send sends text (with optional message fields) and returns the result.
func (h *runningHost) send(t *testing.T, text string, msg map[string]any, config map[string]any, token string) map[string]any {
	t.Helper()
	m := map[string]any{"messageId": fmt.Sprintf("m-%d", time.Now().UnixNano()), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	for k, v := range msg {
		m[k] = v
	}
	params := map[string]any{"message": m}
	if config != nil {
		params["configuration"] = config
	}
	return h.rpc(t, "SendMessage", params, token)
}

// task is the task of a SendMessage result (or the result itself, for
// GetTask).
func task(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	if tk, ok := r["task"].(map[string]any); ok {
		return tk
	}
	if _, ok := r["status"]; ok {
		return r
	}
	t.Fatalf("no task in %v", r)
	return nil
}

func state(tk map[string]any) string {
	st, _ := tk["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

// statusText is the text of a task's status message or, when it has none
// (an answer may travel as an artifact only), of its last artifact.
func statusText(tk map[string]any) string {
	st, _ := tk["status"].(map[string]any)
	m, _ := st["message"].(map[string]any)
	if s := partsText(m); s != "" {
		return s
	}
	if arts, _ := tk["artifacts"].([]any); len(arts) > 0 {
		a, _ := arts[len(arts)-1].(map[string]any)
		return partsText(a)
	}
	return ""
}

func partsText(m map[string]any) string {
	var texts []string
	parts, _ := m["parts"].([]any)
	for _, p := range parts {
		if s, ok := p.(map[string]any)["text"].(string); ok {
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n")
}

// allText is every text of a task: status message, artifacts and history.
func allText(tk map[string]any) string {
	b, _ := json.Marshal(tk)
	return string(b)
}
