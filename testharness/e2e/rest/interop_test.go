package rest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestOfficialGoSDKRESTClientAgainstTheBinary: the official Go SDK with
// only its REST transport picks the binary's HTTP+JSON interface and runs
// the operations; our google.rpc.Status errors arrive as its typed errors.
func TestOfficialGoSDKRESTClientAgainstTheBinary(t *testing.T) {
	h := startHost(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	hc := sdkclient.Bearer(tokAlice, nil)
	card := sdkclient.ResolveCard(t, ctx, hc, h.url)
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()

	goSDKOperations(t, ctx, client, "go sdk")
	plain, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ListTasks(ctx, &sdk.ListTasksRequest{}); !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Errorf("without a token: %v", err)
	}
}

// TestOfficialJSSDKRESTClientAgainstTheBinary runs
// testharness/interop/js/client-binding.mjs (the official JS SDK's REST
// transport) against the binary.
func TestOfficialJSSDKRESTClientAgainstTheBinary(t *testing.T) {
	steps := jsBindingSession(t, "rest")
	if s := steps["direct"]; s.Answer != "direct: js rest" {
		t.Errorf("direct = %+v", s)
	}
	if ev := steps["stream"].Events; len(ev) < 4 || ev[0] != "task:TASK_STATE_SUBMITTED" || ev[len(ev)-1] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("stream = %v", ev)
	}
	if s := steps["cancel"]; s.State != "TASK_STATE_CANCELED" {
		t.Errorf("cancel = %+v", s)
	}
	if ev := steps["resubscribe"].Events; len(ev) == 0 || ev[0] != "task:TASK_STATE_WORKING" || ev[len(ev)-1] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("resubscribe = %v", ev)
	}
	for name, want := range map[string]struct {
		class  string
		status int
	}{
		"unknown-task":       {"TaskNotFoundError", 404},
		"not-cancelable":     {"TaskNotCancelableError", 400},
		"terminal-subscribe": {"UnsupportedOperationError", 400},
		"invalid-params":     {"RequestMalformedError", 400},
	} {
		if s := steps[name]; s.Name != want.class || s.StatusCode != want.status {
			t.Errorf("%s = %+v, want %s HTTP %d", name, s, want.class, want.status)
		}
	}
	for _, r := range steps["done"].Requests {
		if r == "POST /" {
			t.Errorf("the REST client called the JSON-RPC endpoint: %v", steps["done"].Requests)
			break
		}
	}
}

// jsBindingSession runs testharness/interop/js/client-binding.mjs with the
// official JS SDK's transport for binding ("rest", "grpc") against the
// binary, checks that every step passed and that the send was answered,
// and returns the steps for the binding's own checks.
func jsBindingSession(t *testing.T, binding string) map[string]testharness.JSClientStep {
	t.Helper()
	h := startHost(t, nil)
	steps := testharness.RunJSClient(t, testharness.NodeOptions{
		Env:     []string{"A2A_TOKEN=" + tokAlice, "A2A_WEBHOOK_URL=http://127.0.0.1:9/hook"},
		Timeout: 90 * time.Second,
	}, h.agent.release, "client-binding.mjs", h.url, binding)
	for _, name := range []string{"card", "send", "direct", "stream", "get", "list", "push", "cancel", "resubscribe",
		"unknown-task", "not-cancelable", "terminal-subscribe", "invalid-params", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	if s := steps["send"]; s.State != "TASK_STATE_COMPLETED" || s.Answer != "echo: hello from js "+binding {
		t.Errorf("send = %+v", s)
	}
	return steps
}

// goSDKOperations runs the operations through an official Go SDK client,
// whatever its transport: a send (words "hello over <via>"), a stream
// from the Task to COMPLETED, get with history, list, a push config
// created and deleted, and our refusals as the SDK's typed errors.
func goSDKOperations(t *testing.T, ctx context.Context, client *a2aclient.Client, via string) {
	t.Helper()
	res, err := client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello over "+via))})
	task, ok := res.(*sdk.Task)
	if err != nil || !ok || task.Status.State != sdk.TaskStateCompleted || task.Artifacts[0].Parts[0].Text() != "echo: hello over "+via {
		t.Fatalf("send = %#v, %v", res, err)
	}
	var kinds []string
	for ev, err := range client.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("progress "+via))}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task")
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		}
	}
	if len(kinds) < 4 || kinds[0] != "task" || kinds[len(kinds)-1] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("stream events = %v", kinds)
	}
	one := 1
	if got, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &one}); err != nil || len(got.History) != 1 {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if list, err := client.ListTasks(ctx, &sdk.ListTasksRequest{ContextID: task.ContextID}); err != nil || len(list.Tasks) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if cfg, err := client.CreateTaskPushConfig(ctx, &sdk.PushConfig{TaskID: task.ID, ID: "go", URL: "http://127.0.0.1:9/hook"}); err != nil || cfg.ID != "go" {
		t.Fatalf("push config = %+v, %v", cfg, err)
	}
	if err := client.DeleteTaskPushConfig(ctx, &sdk.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "go"}); err != nil {
		t.Fatalf("delete push config: %v", err)
	}
	if _, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: task.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Errorf("cancel a completed task: %v", err)
	}
	if _, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("unknown task: %v", err)
	}
}
