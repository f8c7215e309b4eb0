package inbound_test

import (
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/app"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestHostThatCannotCancelIsAnsweredHonestly runs the real binary under a
// host that declares it cannot stop a running turn (contract 1.3, as
// OpenClaw): the card says so (a schema-valid extension), CancelTask of the
// running task is -32002 with the reason and leaves it running, the host
// gets no CancelTurn for it, and the task ends with the agent's answer. A
// task queued behind it is still canceled.
func TestHostThatCannotCancelIsAnsweredHonestly(t *testing.T) {
	t.Parallel()
	a := newGatedAgent(t)
	h := startHostWith(t, a, testharness.Options{PluginConfig: baseConfig(nil), HostCannotCancel: true})
	c := newClient(h.url)
	ctx := within(t)

	f := fetchCard(t, h.url, "/.well-known/agent-card.json")
	exts, _ := f.whole["capabilities"].(map[string]any)["extensions"].([]any)
	var declared bool
	for _, e := range exts {
		if m, _ := e.(map[string]any); m["uri"] == app.NoRunningCancelExtension && strings.Contains(m["description"].(string), "cannot stop") {
			declared = true
		}
	}
	if !declared {
		t.Errorf("the card does not declare %s: %v", app.NoRunningCancelExtension, exts)
	}

	cid := newID("ctx-nocancel")
	running := c.sendTask(t, ctx, nonBlocking(msg("slow and not cancelable", "contextId", cid)))
	h.handleMessage(t, ctx, running.ID)
	queued := c.sendTask(t, ctx, nonBlocking(msg("queued behind it", "contextId", cid)))

	e := c.call(t, ctx, "CancelTask", map[string]any{"id": running.ID}).wantError(t, -32002, "TASK_NOT_CANCELABLE")
	if !strings.Contains(e.Message, "cannot stop a running turn") {
		t.Errorf("-32002 message %q does not say why", e.Message)
	}
	if got := c.getTask(t, ctx, running.ID); got.Status.State != stWorking {
		t.Errorf("after the refused cancel the task is %s, want still working", got.Status.State)
	}
	if got := c.call(t, ctx, "CancelTask", map[string]any{"id": queued.ID}); got.Err != nil {
		t.Errorf("cancel of the queued task: %s", got.Body)
	}

	a.release(running.ID)
	if got := c.waitState(t, ctx, running.ID, stCompleted); got.answer() != "slow done" {
		t.Errorf("the running task answered %q", got.answer())
	}
	if n := len(h.Recorder().Filter(func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.TaskID == running.ID
	})); n != 0 {
		t.Errorf("the host got %d CancelTurn for the turn it said it cannot stop", n)
	}
	if got := c.getTask(t, ctx, queued.ID); got.Status.State != stCanceled {
		t.Errorf("the queued task is %s", got.Status.State)
	}
}
