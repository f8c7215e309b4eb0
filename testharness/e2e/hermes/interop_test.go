package hermes_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// Peer tokens of the official clients: the Go SDK is "gosdk", the JS SDK
// "jssdk", both of the trusted tier.
const (
	tokGoSDK = "gosdk-token-0123456789abcdef"
	tokJSSDK = "jssdk-token-0123456789abcdef"
)

// hermesGateway installs the plugin into a fresh HERMES_HOME with the
// install command, starts the stand-in Hermes gateway with its scripted
// model (host-sdk/hermes/tests/standin_main.py) and returns the agent's
// URL. The gateway stops at the end of the test.
func hermesGateway(t *testing.T) string {
	t.Helper()
	requirePython(t)
	root := moduleRoot(t)
	home := t.TempDir()
	install := exec.Command(python, filepath.Join(root, "host-sdk", "hermes", "install.py"),
		"--quiet", "--hermes-home", home, "--binary", pluginBinary(t))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install.py: %v\n%s", err, out)
	}
	// YAML is a superset of JSON: config.yaml written as JSON.
	cfg := map[string]any{
		"plugins": map[string]any{
			"enabled":  []string{"a2a-plugin"},
			"disabled": []string{"a2a-platform"},
			"entries": map[string]any{"a2a-plugin": map[string]any{"settings": map[string]any{
				"a2a": map[string]any{
					"port": 0, "rate_limit": 0,
					"peer_tokens":   map[string]string{"gosdk": tokGoSDK, "jssdk": tokJSSDK},
					"trusted_peers": []string{"gosdk", "jssdk"},
				},
				// Trusted peers get the platform's own toolsets (the
				// scripted model's long job included).
				"peer_toolsets": map[string]any{"trusted": nil},
			}}},
		},
		"gateway":           map[string]any{"platforms": map[string]any{"a2a": map[string]any{"enabled": true}}},
		"platform_toolsets": map[string]any{"a2a": []string{"terminal", "web", "a2a"}},
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join(root, "host-sdk", "hermes", "tests", "standin_main.py"), "gateway")
	cmd.Env = append(os.Environ(), "HERMES_HOME="+home, "AGENTPLUGIN_A2A_BIN="+pluginBinary(t), "PYTHONDONTWRITEBYTECODE=1", "STANDIN_LOG_LEVEL=INFO")
	var info struct {
		Endpoints []string `json:"endpoints"`
		Error     string   `json:"error"`
	}
	testharness.StartAnnounced(t, cmd, &info, syscall.SIGUSR1) // standin_main.py dumps its threads' stacks on SIGUSR1
	if len(info.Endpoints) == 0 {
		t.Fatalf("the stand-in gateway serves nothing: %s", info.Error)
	}
	return info.Endpoints[0]
}

// TestOfficialClientsAgainstHermes drives an agent hosted by Hermes (the
// stand-in gateway running the a2a-plugin Hermes plugin) with the official
// A2A SDK clients — code we did not write: the Go SDK and the JS SDK.
func TestOfficialClientsAgainstHermes(t *testing.T) {
	t.Parallel()
	url := hermesGateway(t)
	t.Run("Go SDK", func(t *testing.T) {
		t.Parallel()
		goSDKSession(t, url)
	})
	t.Run("JS SDK", func(t *testing.T) {
		t.Parallel()
		jsSDKSession(t, url)
	})
}

// statusText is the text of a task's status message (a question).
func statusText(task *sdk.Task) string {
	if task.Status.Message == nil || len(task.Status.Message.Parts) == 0 {
		return ""
	}
	return task.Status.Message.Parts[0].Text()
}

// answerText is a completed task's answer: its "answer" artifact.
func answerText(task *sdk.Task) string {
	for i := len(task.Artifacts) - 1; i >= 0; i-- {
		if a := task.Artifacts[i]; a.Name == "answer" && len(a.Parts) > 0 {
			return a.Parts[0].Text()
		}
	}
	return ""
}

func goSDKSession(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hc := sdkclient.Bearer(tokGoSDK, nil)
	card := sdkclient.ResolveCard(t, ctx, hc, url)
	if !card.Capabilities.Streaming || len(card.SupportedInterfaces) == 0 {
		t.Fatalf("card = %+v", card)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	send := func(text, contextID string, taskID sdk.TaskID, cfg *sdk.SendMessageConfig) *sdk.Task {
		t.Helper()
		msg := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(text))
		msg.ContextID, msg.TaskID = contextID, taskID
		res, err := client.SendMessage(ctx, &sdk.SendMessageRequest{Message: msg, Config: cfg})
		if err != nil {
			t.Fatalf("send %q: %v", text, err)
		}
		task, ok := res.(*sdk.Task)
		if !ok {
			t.Fatalf("send %q = %#v, want a task", text, res)
		}
		return task
	}

	// Answered by the live Hermes session.
	hello := send("hello from go", "", "", nil)
	if hello.Status.State != sdk.TaskStateCompleted || answerText(hello) != "echo: hello from go" {
		t.Fatalf("send = %s %q", hello.Status.State, answerText(hello))
	}
	// Two turns of one context share the session's history.
	first := send("remember the word otter", "", "", nil)
	second := send("what word did I say?", first.ContextID, "", nil)
	if answerText(second) != "The word was otter." || second.ContextID != first.ContextID {
		t.Fatalf("second turn = %q in %s (first in %s)", answerText(second), second.ContextID, first.ContextID)
	}
	// A question and its answer.
	q := send("book a table for saturday", "", "", nil)
	if q.Status.State != sdk.TaskStateInputRequired || statusText(q) != "For how many people?" {
		t.Fatalf("question = %s %q", q.Status.State, statusText(q))
	}
	a := send("3", q.ContextID, q.ID, nil)
	if a.ID != q.ID || a.Status.State != sdk.TaskStateCompleted || answerText(a) != "Booked a table for 3." {
		t.Fatalf("answer = %s %s %q", a.ID, a.Status.State, answerText(a))
	}
	// Streamed.
	var states []sdk.TaskState
	for ev, err := range client.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello stream"))}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			states = append(states, v.Status.State)
		case *sdk.TaskStatusUpdateEvent:
			states = append(states, v.Status.State)
		}
	}
	if len(states) == 0 || states[len(states)-1] != sdk.TaskStateCompleted {
		t.Fatalf("stream states = %v", states)
	}
	// Get, cancel, and a typed error.
	got, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: hello.ID})
	if err != nil || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("get = %+v, %v", got, err)
	}
	slow := send("slow from go", "", "", &sdk.SendMessageConfig{ReturnImmediately: true})
	canceled, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: slow.ID})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", canceled, err)
	}
	if _, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: slow.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Errorf("second cancel: %v, want ErrTaskNotCancelable", err)
	}
	if _, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("unknown task: %v, want ErrTaskNotFound", err)
	}
}

// hermesStep is one line of client-hermes.mjs.
type hermesStep struct {
	Step      string      `json:"step"`
	OK        bool        `json:"ok"`
	Error     string      `json:"error"`
	Name      string      `json:"name"`
	Streaming bool        `json:"streaming"`
	TaskID    string      `json:"taskId"`
	ContextID string      `json:"contextId"`
	State     string      `json:"state"`
	Answer    string      `json:"answer"`
	Before    string      `json:"before"`
	Events    []string    `json:"events"`
	First     *hermesStep `json:"first"`
	Question  *hermesStep `json:"question"`
}

func jsSDKSession(t *testing.T, url string) {
	steps := map[string]hermesStep{}
	testharness.RunNodeJSONLines(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + tokJSSDK}, Timeout: 2 * time.Minute},
		func(s hermesStep) { steps[s.Step] = s }, "client-hermes.mjs", url)
	for _, name := range []string{"card", "send", "history", "question", "stream", "get", "cancel", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	if s := steps["card"]; !s.Streaming {
		t.Errorf("card = %+v", s)
	}
	if s := steps["send"]; s.State != "TASK_STATE_COMPLETED" || s.Answer != "echo: hello from js" {
		t.Errorf("send = %+v", s)
	}
	if s := steps["history"]; s.Answer != "The word was heron." || s.First == nil || s.First.ContextID != s.ContextID {
		t.Errorf("history = %+v (first %+v)", s, s.First)
	}
	if s := steps["question"]; s.Question == nil || s.Question.State != "TASK_STATE_INPUT_REQUIRED" ||
		s.Question.Answer != "For how many people?" || s.State != "TASK_STATE_COMPLETED" || s.Answer != "Booked a table for 2." {
		t.Errorf("question = %+v (question %+v)", s, s.Question)
	}
	if s := steps["stream"]; len(s.Events) == 0 || s.Events[len(s.Events)-1] != "statusUpdate:TASK_STATE_COMPLETED" || s.Answer != "echo: hello stream" {
		t.Errorf("stream = %+v", s)
	}
	if s := steps["get"]; s.TaskID != steps["send"].TaskID || s.State != "TASK_STATE_COMPLETED" {
		t.Errorf("get = %+v", s)
	}
	if s := steps["cancel"]; s.State != "TASK_STATE_CANCELED" {
		t.Errorf("cancel = %+v", s)
	}
}
