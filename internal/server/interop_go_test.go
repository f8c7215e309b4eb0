package server

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestOfficialGoSDKClientInterop drives our server with the official Go
// SDK client (github.com/a2aproject/a2a-go/v2, a client we did not write):
// card discovery, blocking send, stream, get, list, cancel, resubscribe.
func TestOfficialGoSDKClientInterop(t *testing.T) {
	t.Run("open agent, stock card parser", func(t *testing.T) {
		e := newEnv(t, func(o *Options) { o.Auth = nil }) // no token: loopback callers are local
		card, err := agentcard.NewResolver(http.DefaultClient).Resolve(context.Background(), e.url)
		if err != nil {
			t.Fatalf("resolve card: %v", err)
		}
		goSDKSession(t, e, card, []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(http.DefaultClient)}, "")
	})
	t.Run("token required", func(t *testing.T) {
		e := newEnv(t)
		hc := sdkclient.Bearer(tokAlice, nil)
		// The card declares the bearer scheme with ProtoJSON scopes, which
		// the SDK's stock parser cannot read yet.
		card := sdkclient.ResolveCard(t, context.Background(), hc, e.url)
		goSDKSession(t, e, card, []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(hc)}, tokAlice)
		if len(card.SecuritySchemes) != 1 || len(card.SecurityRequirements) != 1 {
			t.Errorf("security = %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
		}
		// Without a token the SDK client gets an error, not an answer.
		plain, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(http.DefaultClient))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := plain.ListTasks(context.Background(), &sdk.ListTasksRequest{}); err == nil {
			t.Error("unauthenticated SDK call succeeded")
		}
	})
}

// goSDKSession runs the SDK client, made from card with the factory
// options (its transport), through every operation.
func goSDKSession(t *testing.T, e *testEnv, card *sdk.AgentCard, opts []a2aclient.FactoryOption, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if card.Name != "Test Agent" || len(card.SupportedInterfaces) == 0 || !card.Capabilities.Streaming {
		t.Fatalf("card = %+v", card)
	}
	client, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("client from card: %v", err)
	}
	defer client.Destroy()

	// Blocking send.
	res, err := client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello from go"))})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "echo: hello from go" {
		t.Fatalf("send result = %#v", res)
	}

	// Direct reply.
	res, err = client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("direct go"))})
	if msg, ok := res.(*sdk.Message); err != nil || !ok || msg.Parts[0].Text() != "direct: go" {
		t.Fatalf("direct reply = %#v, %v", res, err)
	}

	// Stream.
	var kinds []string
	var streamTask sdk.TaskID
	for ev, err := range client.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("progress go"))}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task")
			streamTask = v.ID
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		case *sdk.Message:
			kinds = append(kinds, "message")
		}
	}
	if len(kinds) != 7 || kinds[0] != "task" || kinds[6] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("stream events = %v", kinds)
	}

	// Get.
	got, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("get = %+v, %v", got, err)
	}
	one := 1
	got, err = client.GetTask(ctx, &sdk.GetTaskRequest{ID: streamTask, HistoryLength: &one})
	if err != nil || len(got.History) != 1 {
		t.Fatalf("get with historyLength = %+v, %v", got, err)
	}

	// List.
	list, err := client.ListTasks(ctx, &sdk.ListTasksRequest{PageSize: 10})
	if err != nil || list.TotalSize != 2 || len(list.Tasks) != 2 || list.NextPageToken != "" {
		t.Fatalf("list = %+v, %v", list, err)
	}

	// Cancel a running task, and resubscribe to another.
	slow := e.startGated(token, "slow go")
	canceled, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: sdk.TaskID(slow.ID)})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", canceled, err)
	}
	if _, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: sdk.TaskID(slow.ID)}); err == nil {
		t.Error("second cancel succeeded")
	}

	goSDKResubscribe(t, ctx, e, client, token, "slow again")

	// Errors surface as the SDK's typed errors.
	_, err = client.GetTask(ctx, &sdk.GetTaskRequest{ID: "no-such-task"})
	if err == nil || !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("unknown task: %v", err)
	}
}

// goSDKResubscribe starts a task as token that the agent holds,
// resubscribes to it with the SDK client, releases it 100 ms later and
// checks that the client sees three events, the WORKING task first and the
// completion last. It returns the task's id.
func goSDKResubscribe(t *testing.T, ctx context.Context, e *testEnv, client *a2aclient.Client, token, text string) string {
	t.Helper()
	other := e.startGated(token, text)
	go func() {
		time.Sleep(100 * time.Millisecond)
		e.exec.release(other.ID)
	}()
	var kinds []string
	for ev, err := range client.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: sdk.TaskID(other.ID)}) {
		if err != nil {
			t.Fatalf("resubscribe: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task:"+string(v.Status.State))
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		}
	}
	if len(kinds) != 3 || kinds[0] != "task:TASK_STATE_WORKING" || kinds[2] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("resubscribe events = %v", kinds)
	}
	return other.ID
}
