package cascade_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestCancelsThatFailAreRecordedShownAndRetriedAcrossARestart: F's root
// task delegated to R, whose host cannot stop a running turn (contract
// 1.3, like OpenClaw), and to X, which is down when the root is canceled.
// R's refusal is recorded as a failed cancel at once and X's as one being
// retried, with the reasons, in the root's metadata and on the
// inspector's task page; R's task goes on, as its host said it would. F's
// plugin then crashes and comes back; X is up again; the restarted plugin
// sends the cancel it had stored, and X's task is canceled.
func TestCancelsThatFailAreRecordedShownAndRetriedAcrossARestart(t *testing.T) {
	r := start(t, "R", holder, config(nil), func(o *testharness.Options) { o.HostCannotCancel = true })
	proxy := newSwitchable(t)
	x := start(t, "X", holder, config(map[string]any{"public_url": proxy.srv.URL}), nil)
	proxy.to(t, x.Endpoint(testharness.A2APluginName))
	// Closed once F's turn has both answers: a remote task is recorded as
	// the root's delegation when its peer's answer reaches F, which can
	// come after the task shows on X (the answer crosses the proxy).
	delegatedBoth := make(chan struct{})
	var once sync.Once
	f := start(t, "F", testharness.BehaviorFunc(func(ctx context.Context, turn *testharness.Turn) error {
		label := testharness.PartsText(turn.Request)
		for _, agent := range []string{"r", "x"} {
			res, err := delegate(ctx, turn, map[string]any{"agent": agent, "message": label + " " + agent, "wait": false})
			if err != nil || res.GetIsError() {
				return fmt.Errorf("delegating to %s: %v %s", agent, err, res.GetContent())
			}
		}
		once.Do(func() { close(delegatedBoth) })
		return hold(ctx, turn)
	}), map[string]any{"port": 0, "rate_limit": 0, "inspector": true, // the SQLite store in the host's data directory
		"a2a_agents": peers("r", r.Endpoint(testharness.A2APluginName), "x", proxy.srv.URL)}, nil)

	root := send(t, f.Endpoint(testharness.A2APluginName), "", "failing")
	rTask, xTask := taskOf(t, "R", r, "failing r"), taskOf(t, "X", x, "failing x")
	waitState(t, "TASK_STATE_WORKING", rTask, xTask)
	select {
	case <-delegatedBoth:
	case <-time.After(patience):
		t.Fatal("F's turn never had both delegations' answers")
	}

	proxy.down.Store(true)
	if got := cancel(t, f.Endpoint(testharness.A2APluginName), root.ID); got.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("F's root is %s after CancelTask", got.Status.State)
	}
	var problems []any
	waitFor(t, "F's root metadata records R's refusal and X's retry", func(ctx context.Context) (bool, string) {
		tk, err := get(ctx, f.Endpoint(testharness.A2APluginName), root.ID)
		if err != nil {
			return false, err.Error()
		}
		c := cascadeOf(tk)
		problems, _ = c["problems"].([]any)
		return c != nil && c["failed"] == 1.0 && c["pending"] == 1.0 && len(problems) == 2, fmt.Sprint(tk.Metadata)
	})
	byAgent := map[string]map[string]any{}
	for _, p := range problems {
		m := p.(map[string]any)
		byAgent[m["agent"].(string)] = m
	}
	if p := byAgent["r"]; p == nil || p["status"] != "failed" || p["taskId"] != rTask.id || !strings.Contains(p["error"].(string), "cannot stop a running turn") {
		t.Errorf("R's problem = %v; want a failed cancel saying its host cannot stop the turn", p)
	}
	if p := byAgent["x"]; p == nil || p["status"] != "retrying" || p["taskId"] != xTask.id || !strings.Contains(p["error"].(string), "503") || p["nextAttempt"] == nil {
		t.Errorf("X's problem = %v; want a cancel being retried, saying X answered 503", p)
	}
	stillIn(t, "TASK_STATE_WORKING", rTask, xTask)

	page := inspectorPage(t, f, root.ID)
	for _, want := range []string{"Delegated tasks", `data-agent="r" data-task-id="` + rTask.id + `" data-state="cancel failed"`,
		`data-agent="x" data-task-id="` + xTask.id + `" data-state="cancel retrying"`, "cannot stop a running turn", "503"} {
		if !strings.Contains(page, want) {
			t.Errorf("the inspector's task page lacks %q", want)
		}
	}

	// A crash of F's plugin; X comes back; the stored cancel goes out.
	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	if err := f.Restart(ctx, testharness.A2APluginName); err != nil {
		t.Fatal(err)
	}
	proxy.down.Store(false)
	waitState(t, "TASK_STATE_CANCELED", xTask)
	waitFor(t, "F's root metadata after the restart", func(ctx context.Context) (bool, string) {
		tk, err := get(ctx, f.Endpoint(testharness.A2APluginName), root.ID)
		if err != nil {
			return false, err.Error()
		}
		c := cascadeOf(tk)
		return c != nil && c["canceled"] == 1.0 && c["failed"] == 1.0 && c["pending"] == 0.0, fmt.Sprint(tk.Metadata)
	})
	if page := inspectorPage(t, f, root.ID); !strings.Contains(page, `data-agent="x" data-task-id="`+xTask.id+`" data-state="canceled"`) {
		t.Error("the inspector does not show X's task canceled after the restart")
	}
	stillIn(t, "TASK_STATE_WORKING", rTask)
}

// inspectorPage fetches the inspector's page of a task of h as the local
// operator.
func inspectorPage(t *testing.T, h *testharness.Host, taskID string) string {
	t.Helper()
	base := strings.TrimSuffix(h.Endpoint(testharness.A2APluginName), "/")
	resp, err := http.Get(base + "/inspector/tasks/" + taskID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("inspector page of %s: HTTP %d: %s", taskID, resp.StatusCode, b)
	}
	return string(b)
}
