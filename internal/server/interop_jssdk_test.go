package server

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jsInteropDir finds testharness/interop/js from the working directory.
func jsInteropDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testharness", "interop", "js")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// jsStep is one line of client-check.mjs output.
type jsStep struct {
	Step  string `json:"step"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`

	Name            string   `json:"name"`
	Streaming       bool     `json:"streaming"`
	Interfaces      []string `json:"interfaces"`
	Skills          []string `json:"skills"`
	SecuritySchemes []string `json:"securitySchemes"`
	ProtocolVersion string   `json:"protocolVersion"`
	TaskID          string   `json:"taskId"`
	ContextID       string   `json:"contextId"`
	State           string   `json:"state"`
	Before          string   `json:"before"`
	Answer          string   `json:"answer"`
	History         int      `json:"history"`
	Events          []string `json:"events"`
	Count           int      `json:"count"`
	TotalSize       int      `json:"totalSize"`
	NextPageToken   *string  `json:"nextPageToken"`
	SecondCancel    string   `json:"secondCancel"`
}

// TestOfficialJSSDKClientInterop drives our server with the official JS SDK
// client (@a2a-js/sdk 1.3.0) through testharness/interop/js/client-check.mjs.
func TestOfficialJSSDKClientInterop(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the JS SDK interop test needs Node.js 20 or later")
	}
	dir := jsInteropDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		t.Fatalf("the official JS SDK is not installed in %s: run `make deps` (or `npm ci` in that directory) first", dir)
	}
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client-check.mjs", e.url)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "A2A_TOKEN="+tokAlice)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	steps := map[string]jsStep{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s jsStep
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Errorf("client-check printed a non-JSON line: %s", sc.Bytes())
			continue
		}
		t.Logf("js %s", sc.Bytes())
		if s.Step == "subscribed" {
			e.exec.release(s.TaskID) // the resubscribed task may finish now
			continue
		}
		steps[s.Step] = s
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client-check failed: %v\n%s", err, stderr.String())
	}
	for _, name := range []string{"card", "send", "stream", "get", "list", "cancel", "resubscribe", "unknown-task", "done"} {
		s, ok := steps[name]
		if !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	card := steps["card"]
	if card.Name != "Test Agent" || !card.Streaming || len(card.Interfaces) != 3 ||
		card.Interfaces[0] != "JSONRPC 1.0 "+e.url+"/" || len(card.SecuritySchemes) != 1 {
		t.Errorf("card = %+v", card)
	}
	send := steps["send"]
	if send.ProtocolVersion != "1.0" || send.State != "TASK_STATE_COMPLETED" || send.Answer != "echo: hello from js" || send.ContextID == "" {
		t.Errorf("send = %+v", send)
	}
	want := "task:TASK_STATE_SUBMITTED,statusUpdate:TASK_STATE_WORKING,statusUpdate:TASK_STATE_WORKING,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate:TASK_STATE_COMPLETED"
	if got := strings.Join(steps["stream"].Events, ","); got != want {
		t.Errorf("stream = %s\nwant      %s", got, want)
	}
	if g := steps["get"]; g.TaskID != send.TaskID || g.State != "TASK_STATE_COMPLETED" || g.History != 1 {
		t.Errorf("get = %+v", g)
	}
	if l := steps["list"]; l.Count != 2 || l.TotalSize != 2 || l.NextPageToken == nil || *l.NextPageToken != "" {
		t.Errorf("list = %+v", l)
	}
	if c := steps["cancel"]; c.State != "TASK_STATE_CANCELED" || c.Before == "TASK_STATE_CANCELED" || c.SecondCancel == "succeeded" || c.SecondCancel == "" {
		t.Errorf("cancel = %+v", c)
	}
	if r := steps["resubscribe"]; len(r.Events) != 3 || r.Events[0] != "task:TASK_STATE_WORKING" || r.Events[2] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("resubscribe = %+v", r)
	}
	if u := steps["unknown-task"]; !strings.Contains(strings.ToLower(u.Error), "not found") {
		t.Errorf("unknown task = %+v", u)
	}
}
