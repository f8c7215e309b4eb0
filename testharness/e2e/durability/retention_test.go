package durability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// pruneWait bounds the wait for the first background prune: the plugin
// prunes every retention/24, but never more often than once a minute, and
// the first time one interval after it started.
const pruneWait = 80 * time.Second

// gone reports whether GetTask answers -32001 for id.
func (c client) gone(t testing.TB, id string) bool {
	t.Helper()
	_, e := c.call(t, "GetTask", map[string]any{"id": id})
	if e != nil && e.Code != -32001 {
		t.Fatalf("GetTask %s: %v", id, e)
	}
	return e != nil
}

// TestRetentionPrunesOldFinishedTasks: with a 2 s retention, finished
// tasks (with their push configs) and outbound conversations are pruned
// in the background, while a running task and one waiting for input stay,
// and the latter can still be answered. The plugin's pruning interval has
// a floor of one minute, so this test waits about 60 s (in parallel with
// the others).
func TestRetentionPrunesOldFinishedTasks(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits a minute for the plugin's first background prune")
	}
	dataDir := t.TempDir()
	logs := &logTee{}
	h := launch(t, launchOpts{
		config:  map[string]any{"retention": "2s", "allow_unconfigured_urls": true},
		env:     map[string]string{"A2A_PUSH_SECRET": pushSecret},
		dataDir: dataDir, logs: logs,
	})
	c := clientOf(h, "")
	ctx, cancel := context.WithTimeout(context.Background(), pruneWait+30*time.Second)
	defer cancel()

	finished := map[string]string{}
	for _, text := range []string{"report old", "fail old", "reject old"} {
		finished[text] = c.send(t, msg{text: text}).ID
	}
	hang := c.send(t, msg{text: "hang to be canceled", returnImmediately: true})
	c.waitState(t, hang.ID, a2a.TaskStateWorking)
	c.ok(t, "CancelTask", map[string]any{"id": hang.ID}, "Task")
	finished["canceled"] = hang.ID
	c.ok(t, "CreateTaskPushNotificationConfig", pushConfigFor(finished["report old"], "cfg-old", "http://127.0.0.1:9/hook", "c", "t"), "Task Push Notification Config")

	running := c.send(t, msg{text: "hang on", returnImmediately: true})
	c.waitState(t, running.ID, a2a.TaskStateWorking)
	asking := c.send(t, msg{text: "ask for later"})
	if asking.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: %s", asking.Status.State)
	}

	// An outbound conversation (the plugin calls itself).
	url := h.Endpoint(testharness.A2APluginName)
	res, _, err := h.CallTool(ctx, "a2a_call", fmt.Sprintf(`{"agent":%q,"message":"report to myself"}`, url))
	if err != nil || res.GetIsError() {
		t.Fatalf("a2a_call: %v %v", res, err)
	}
	contextID, _ := toolJSON(t, res.GetContent())["context_id"].(string)
	historyArgs := fmt.Sprintf(`{"context_id":%q}`, contextID)
	if hist, _, err := h.CallTool(ctx, "a2a_history", historyArgs); err != nil || !strings.Contains(hist.GetContent(), "report to myself") {
		t.Fatalf("a2a_history: %v %v", hist, err)
	}

	start := time.Now()
	deadline := start.Add(pruneWait)
	for !c.gone(t, finished["report old"]) {
		if time.Now().After(deadline) {
			t.Fatalf("a finished task older than the retention was not pruned within %s", pruneWait)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("pruned after %s", time.Since(start).Round(time.Second))

	for text, id := range finished {
		if !c.gone(t, id) {
			t.Errorf("finished task %q (%s) was not pruned", text, id)
		}
	}
	c.fails(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": finished["report old"], "id": "cfg-old"}, -32001)
	db := database(t, dataDir)
	if n := count(t, db, "SELECT COUNT(*) FROM push_configs WHERE task_id = ?", finished["report old"]); n != 0 {
		t.Errorf("%d push configs of a pruned task are left", n)
	}
	if hist, _, err := h.CallTool(ctx, "a2a_history", historyArgs); err != nil || !strings.Contains(hist.GetContent(), "No conversation") {
		t.Errorf("a2a_history of a pruned conversation: %v %v", hist, err)
	}
	if len(logs.matching("pruned old state")) == 0 {
		t.Error("the prune was not logged")
	}

	// What is not finished stays, however old.
	if tk := task(t, c.getTask(t, running.ID)); tk.Status.State != a2a.TaskStateWorking {
		t.Errorf("running task after the prune: %s", tk.Status.State)
	}
	if tk := task(t, c.getTask(t, asking.ID)); tk.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("task waiting for input after the prune: %s", tk.Status.State)
	}
	list, total := c.listTasks(t, nil)
	if total != 2 || len(list) != 2 {
		t.Errorf("after the prune ListTasks shows %d tasks (totalSize %d), want the 2 unfinished ones", len(list), total)
	}
	if tk := c.send(t, msg{text: "thursday", taskID: asking.ID}); tk.Status.State != a2a.TaskStateCompleted {
		t.Errorf("answering after the prune: %s", tk.Status.State)
	}
}

// TestRetentionPrunesSoonAfterAStart: a plugin that is restarted more often
// than its pruning interval (retention/24, at least a minute, at most an
// hour — one hour with the default 720h retention) must still prune: tasks
// far older than the retention should go soon after a start, not only one
// full interval later.
func TestRetentionPrunesSoonAfterAStart(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	h := launch(t, launchOpts{config: map[string]any{"retention": "1s"}, dataDir: dataDir})
	c := clientOf(h, "")
	old := c.send(t, msg{text: "report long ago"})
	time.Sleep(1500 * time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Restart(ctx, testharness.A2APluginName); err != nil {
		t.Fatal(err)
	}
	c = clientOf(h, "")
	const soon = 8 * time.Second
	deadline := time.Now().Add(soon)
	for !c.gone(t, old.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("BUG: task %s finished more than the 1s retention ago is still there %s after the plugin started: "+
				"internal/app/app.go background() prunes only on its ticker (every max(retention/24, 1m)), never at start-up, "+
				"so a plugin restarted more often than that interval (1h with the default 720h retention) never prunes", old.ID, soon)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
