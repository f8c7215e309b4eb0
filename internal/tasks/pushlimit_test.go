package tasks

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// askingTask starts a task of alice's that waits for input, with the
// turn that asked ended.
func askingTask(t *testing.T, e *env) *Turn {
	t.Helper()
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "book a table", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("for how many?")}))
	if r := wait(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	must(t, e.m.EndTurn(ctx, turn.TaskID, OutcomeSuccess, ""))
	return turn
}

func hook(taskID, id string) a2a.TaskPushNotificationConfig {
	return a2a.TaskPushNotificationConfig{TaskID: taskID, ID: id, URL: "https://hooks.example/" + id}
}

func pushCount(t *testing.T, e *env, taskID string) int {
	t.Helper()
	pcs, err := e.store.ListPushConfigs(context.Background(), taskID)
	if err != nil {
		t.Fatal(err)
	}
	return len(pcs)
}

func TestPushConfigsPerTaskAreCapped(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	task := askingTask(t, e)
	for i := range DefaultMaxPushConfigsPerTask {
		if _, err := e.m.CreatePushConfig(ctx, alice.ID, alice.ID, hook(task.TaskID, fmt.Sprint("h", i))); err != nil {
			t.Fatalf("config %d: %v", i+1, err)
		}
	}
	_, err := e.m.CreatePushConfig(ctx, alice.ID, alice.ID, hook(task.TaskID, "one-too-many"))
	if code(err) != a2a.CodeInvalidParams || !strings.Contains(err.Error(), "already has 10 push notification configs") ||
		!strings.Contains(err.Error(), "max_push_configs_per_task") {
		t.Fatalf("the 11th config: %v", err)
	}
	// A config without an id is a new one too.
	if _, err := e.m.CreatePushConfig(ctx, alice.ID, alice.ID, hook(task.TaskID, "")); code(err) != a2a.CodeInvalidParams {
		t.Fatalf("an 11th config without id: %v", err)
	}
	// Replacing one by its id does not count.
	if _, err := e.m.CreatePushConfig(ctx, alice.ID, alice.ID, a2a.TaskPushNotificationConfig{TaskID: task.TaskID, ID: "h3", URL: "https://hooks.example/new"}); err != nil {
		t.Fatalf("replacing h3: %v", err)
	}
	if n := pushCount(t, e, task.TaskID); n != DefaultMaxPushConfigsPerTask {
		t.Fatalf("%d configs stored", n)
	}
	// An inline config on the task's next message is held to the same cap.
	_, err = e.m.Send(ctx, withPush(sendParams(alice, "four", func(r *a2a.SendMessageRequest) { r.Message.TaskID = task.TaskID }), hook("", "inline")))
	if code(err) != a2a.CodeInvalidParams || !strings.Contains(err.Error(), "configuration.taskPushNotificationConfig") {
		t.Fatalf("an inline 11th config: %v", err)
	}
	// After a delete there is room again.
	must(t, e.m.DeletePushConfig(ctx, alice.ID, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.TaskID, ID: "h0"}))
	if _, err := e.m.CreatePushConfig(ctx, alice.ID, alice.ID, hook(task.TaskID, "after-delete")); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}

func withPush(p SendParams, pc a2a.TaskPushNotificationConfig) SendParams {
	p.PushConfig = &pc
	return p
}

func TestPushConfigCapHoldsUnderConcurrentCreates(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxPushConfigsPerTask = 3 })
	ctx := context.Background()
	task := askingTask(t, e)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = e.m.CreatePushConfig(ctx, alice.ID, alice.ID, hook(task.TaskID, fmt.Sprint("c", i)))
		}()
	}
	wg.Wait()
	if n := pushCount(t, e, task.TaskID); n != 3 {
		t.Fatalf("%d configs stored, want the configured cap of 3", n)
	}
}
