package server

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestOfficialGoSDKRESTClientInterop drives our HTTP+JSON binding with the
// official Go SDK's REST transport (github.com/a2aproject/a2a-go/v2
// v2.4.0): the client picks the card's HTTP+JSON interface and runs every
// operation, push configs included; errors arrive as the SDK's typed
// errors, decoded from our google.rpc.Status bodies.
func TestOfficialGoSDKRESTClientInterop(t *testing.T) {
	e := newEnv(t)
	hc := sdkclient.Bearer(tokAlice, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	card := sdkclient.ResolveCard(t, ctx, hc, e.url) // works around a2aproject/a2a-go#430
	// Only the REST transport is registered, so the client must pick the
	// HTTP+JSON interface.
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatalf("client from card (interfaces %+v): %v", card.SupportedInterfaces, err)
	}
	defer client.Destroy()

	res, err := client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello from go rest"))})
	task, ok := res.(*sdk.Task)
	if err != nil || !ok || task.Status.State != sdk.TaskStateCompleted || task.Artifacts[0].Parts[0].Text() != "echo: hello from go rest" {
		t.Fatalf("send = %#v, %v", res, err)
	}
	res, err = client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("direct go rest"))})
	if msg, ok := res.(*sdk.Message); err != nil || !ok || msg.Parts[0].Text() != "direct: go rest" {
		t.Fatalf("direct reply = %#v, %v", res, err)
	}

	var kinds []string
	for ev, err := range client.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("progress go rest"))}) {
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
	if len(kinds) != 7 || kinds[0] != "task" || kinds[6] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("stream events = %v", kinds)
	}

	one := 1
	got, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &one})
	if err != nil || got.ID != task.ID || len(got.History) != 1 {
		t.Fatalf("get = %+v, %v", got, err)
	}
	list, err := client.ListTasks(ctx, &sdk.ListTasksRequest{PageSize: 10, ContextID: task.ContextID, IncludeArtifacts: true})
	if err != nil || list.TotalSize != 1 || len(list.Tasks) != 1 || len(list.Tasks[0].Artifacts) != 1 || list.NextPageToken != "" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	// The SDK sends statusTimestampAfter as lastUpdatedAfter.
	later := time.Now().Add(time.Hour)
	list, err = client.ListTasks(ctx, &sdk.ListTasksRequest{StatusTimestampAfter: &later})
	if err != nil || len(list.Tasks) != 0 {
		t.Fatalf("list after a future time = %+v, %v", list, err)
	}

	// Push configs.
	cfg, err := client.CreateTaskPushConfig(ctx, &sdk.PushConfig{TaskID: task.ID, ID: "go-cfg", URL: "https://client.example/cb", Token: "tok"})
	if err != nil || cfg.ID != "go-cfg" || cfg.URL != "https://client.example/cb" {
		t.Fatalf("create push config = %+v, %v", cfg, err)
	}
	if cfg, err = client.GetTaskPushConfig(ctx, &sdk.GetTaskPushConfigRequest{TaskID: task.ID, ID: "go-cfg"}); err != nil || cfg.Token != "tok" {
		t.Fatalf("get push config = %+v, %v", cfg, err)
	}
	if cfgs, err := client.ListTaskPushConfigs(ctx, &sdk.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(cfgs) != 1 {
		t.Fatalf("list push configs = %+v, %v", cfgs, err)
	}
	if err := client.DeleteTaskPushConfig(ctx, &sdk.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "go-cfg"}); err != nil {
		t.Fatalf("delete push config: %v", err)
	}

	// Cancel, then the typed errors.
	slow := e.startGated(tokAlice, "slow go rest")
	canceled, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: sdk.TaskID(slow.ID)})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", canceled, err)
	}
	if _, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: sdk.TaskID(slow.ID)}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Errorf("second cancel: %v", err)
	}

	other := goSDKResubscribe(t, ctx, e, client, tokAlice, "slow rest again")
	for ev, err := range client.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: sdk.TaskID(other)}) {
		if !errors.Is(err, sdk.ErrUnsupportedOperation) {
			t.Errorf("subscribe to a terminal task: %v %v", ev, err)
		}
	}

	if _, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("unknown task: %v", err)
	}
	bad := -1
	if _, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &bad}); !errors.Is(err, sdk.ErrInvalidParams) {
		t.Errorf("negative historyLength: %v", err)
	}

	// Without a token: the SDK reports the 401 as unauthenticated.
	plain, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ListTasks(ctx, &sdk.ListTasksRequest{}); !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Errorf("unauthenticated list: %v", err)
	}
}
