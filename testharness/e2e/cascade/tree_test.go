package cascade_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// treeWorld is the delegation tree of the issue, four plugin instances and
// the official JS SDK server:
//
//	A ─┬─▶ B ──▶ D
//	   ├─▶ C
//	   └─▶ J (the JS SDK)
//
// A's agent, given "tree <label> <mode>", delegates "<label> c" to C and
// "hold <label> j" to J without waiting, then "<label> b" to B — waiting
// for the answer in mode hold (its turn stays in that call), without
// waiting in the other modes, which then wait for the test to release
// the label and end the turn: ask asks a question (the task waits for
// input), fail fails, reject rejects, quit is the host canceling its own
// turn. B's agent delegates "<label> d" to D without waiting and holds;
// C, D and J hold until canceled.
type treeWorld struct {
	a, b, c, d *testharness.Host
	jsURL      string
	gates      e2etest.Gates

	mu    sync.Mutex
	jsIDs map[string]string // label → J's task id
}

func startTree(t *testing.T) *treeWorld {
	w := &treeWorld{jsIDs: map[string]string{}}
	t.Cleanup(w.gates.ReleaseAll)
	w.d = start(t, "D", holder, config(nil), nil)
	w.c = start(t, "C", holder, config(nil), nil)
	w.b = start(t, "B", testharness.BehaviorFunc(func(ctx context.Context, turn *testharness.Turn) error {
		label := strings.TrimSuffix(testharness.PartsText(turn.Request), " b")
		if err := turn.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, "asking D"); err != nil {
			return err
		}
		r, err := delegate(ctx, turn, map[string]any{"agent": "d", "message": label + " d", "wait": false})
		if err != nil || r.GetIsError() {
			return fmt.Errorf("delegating to D: %v %s", err, r.GetContent())
		}
		<-ctx.Done()
		return ctx.Err()
	}), config(map[string]any{"a2a_agents": peers("d", w.d.Endpoint(testharness.A2APluginName))}), nil)
	w.jsURL = clienttest.StartJS(t, "JS Hop").URL
	w.a = start(t, "A", testharness.BehaviorFunc(w.playA), config(map[string]any{"a2a_agents": peers(
		"b", w.b.Endpoint(testharness.A2APluginName), "c", w.c.Endpoint(testharness.A2APluginName), "j", w.jsURL)}), nil)
	return w
}

// playA is A's agent (see treeWorld).
func (w *treeWorld) playA(ctx context.Context, turn *testharness.Turn) error {
	f := strings.Fields(testharness.PartsText(turn.Request)) // tree <label> <mode>
	if len(f) != 3 || f[0] != "tree" {
		return testharness.Failed("A expects: tree <label> <mode>")
	}
	label, mode := f[1], f[2]
	if err := turn.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, "delegating"); err != nil {
		return err
	}
	call := func(agent, message string, wait bool) (*pb.ToolResult, error) {
		args := map[string]any{"agent": agent, "message": message, "wait": wait}
		if wait {
			args["timeout_s"] = 600
		}
		r, err := delegate(ctx, turn, args)
		if err == nil && r.GetIsError() && ctx.Err() == nil {
			err = fmt.Errorf("a2a_call %s: %s", agent, r.GetContent())
		}
		return r, err
	}
	if _, err := call("c", label+" c", false); err != nil {
		return err
	}
	r, err := call("j", "hold "+label+" j", false)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.jsIDs[label] = summaryTaskID(r)
	w.mu.Unlock()
	if mode == "hold" {
		_, _ = call("b", label+" b", true) // returns when the turn is canceled
		<-ctx.Done()
		return ctx.Err()
	}
	if _, err := call("b", label+" b", false); err != nil {
		return err
	}
	select {
	case <-w.gates.Gate(label):
	case <-ctx.Done():
		return ctx.Err()
	}
	switch mode {
	case "ask":
		return turn.SendText(ctx, pb.SendKind_SEND_KIND_INPUT_REQUIRED, "Anything else?")
	case "fail":
		return testharness.Failed("A gave up")
	case "reject":
		return testharness.Rejected("A will not do this")
	case "quit":
		return &testharness.TurnError{Outcome: pb.Outcome_OUTCOME_CANCELLED, Message: "the user stopped A"}
	}
	return testharness.Failed("unknown mode " + mode)
}

// tree is one delegation tree of the world: the root task on A and its
// descendants.
type tree struct {
	root       remote
	b, c, d, j remote
}

// grow sends "tree <label> <mode>" to A (in contextID, when given) and
// waits until every task of the tree is working.
func (w *treeWorld) grow(t *testing.T, contextID, label, mode string) tree {
	t.Helper()
	aURL := w.a.Endpoint(testharness.A2APluginName)
	root := send(t, aURL, contextID, fmt.Sprintf("tree %s %s", label, mode))
	tr := tree{root: remote{"A", aURL, root.ID}}
	tr.b = taskOf(t, "B", w.b, label+" b")
	tr.c = taskOf(t, "C", w.c, label+" c")
	tr.d = taskOf(t, "D", w.d, label+" d")
	waitFor(t, "A delegated to J", func(context.Context) (bool, string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		id := w.jsIDs[label]
		tr.j = remote{"J", w.jsURL + "/a2a/jsonrpc", id}
		return id != "", "no task id yet"
	})
	waitState(t, "TASK_STATE_WORKING", tr.root, tr.b, tr.c, tr.d, tr.j)
	return tr
}

// descendants are the tasks below the root.
func (tr tree) descendants() []remote { return []remote{tr.b, tr.c, tr.d, tr.j} }

// TestCancelReachesTheWholeTree: canceling the root task on A cancels the
// tasks of B, C and D (one of these plugins at every hop) and of J (the
// official JS SDK server) — B cancels D because its own task was canceled;
// a sibling tree started in the same conversation of A is untouched until
// its own root is canceled, while its turn is still running; the roots'
// metadata say how the cancel went, and every canceled hop says why.
func TestCancelReachesTheWholeTree(t *testing.T) {
	w := startTree(t)

	first := w.grow(t, "", "one", "ask")
	w.gates.Release("one")
	waitState(t, "TASK_STATE_INPUT_REQUIRED", first.root)
	rootTask, err := get(context.Background(), first.root.endpoint, first.root.id)
	if err != nil {
		t.Fatal(err)
	}
	// The same conversation of A: a second tree beside the first.
	second := w.grow(t, rootTask.ContextID, "two", "hold")

	canceled := cancel(t, first.root.endpoint, first.root.id)
	if canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("the root is %s after CancelTask", canceled.Status.State)
	}
	waitState(t, "TASK_STATE_CANCELED", first.descendants()...)
	stillIn(t, "TASK_STATE_WORKING", append(second.descendants(), second.root)...)

	// Each plugin that canceled says how; B's cancel came from A.
	waitFor(t, "A's metadata says B, C and J were canceled", func(ctx context.Context) (bool, string) {
		tk, err := get(ctx, first.root.endpoint, first.root.id)
		if err != nil {
			return false, err.Error()
		}
		c := cascadeOf(tk)
		return c != nil && c["canceled"] == 3.0 && c["delegated"] == 3.0 && c["cause"] == "TASK_STATE_CANCELED", fmt.Sprint(tk.Metadata)
	})
	waitFor(t, "B's metadata says D was canceled", func(ctx context.Context) (bool, string) {
		tk, err := get(ctx, first.b.endpoint, first.b.id)
		if err != nil {
			return false, err.Error()
		}
		c := cascadeOf(tk)
		return c != nil && c["canceled"] == 1.0, fmt.Sprint(tk.Metadata)
	})
	ctx := context.Background()
	bTask, _ := get(ctx, first.b.endpoint, first.b.id)
	rootTask, _ = get(ctx, first.root.endpoint, first.root.id)
	chain, _ := rootTask.Metadata["a2a-plugin/chain-id"].(string)
	if chain == "" || bTask.Metadata["a2a-plugin/chain-id"] != chain {
		t.Errorf("A's task is in chain %q and B's in %v: one tree, one chain", chain, bTask.Metadata["a2a-plugin/chain-id"])
	}
	if !strings.Contains(bTask.statusText(), "delegation chain "+chain) {
		t.Errorf("B's task does not say why it was canceled: %q", bTask.statusText())
	}
	dTask, _ := get(ctx, first.d.endpoint, first.d.id)
	if dTask.Metadata["a2a-plugin/chain-id"] != chain {
		t.Errorf("D's task is in chain %v, want A's %s", dTask.Metadata["a2a-plugin/chain-id"], chain)
	}
	secondRoot, _ := get(ctx, second.root.endpoint, second.root.id)
	if secondRoot.Metadata["a2a-plugin/chain-id"] == chain {
		t.Errorf("the sibling tree shares chain %s", chain)
	}

	// The second root's turn is running (inside its call to B): canceling
	// it stops the host and the whole second tree.
	cancel(t, second.root.endpoint, second.root.id)
	waitState(t, "TASK_STATE_CANCELED", second.descendants()...)
}

// TestAFailedRejectedOrHostCanceledTaskCancelsItsTree: with
// cancel_on_failure on (the default), a root whose turn fails or is
// rejected cancels its tree too, and so does one whose host canceled the
// turn itself.
func TestAFailedRejectedOrHostCanceledTaskCancelsItsTree(t *testing.T) {
	w := startTree(t)
	for _, tc := range []struct{ mode, state string }{
		{"fail", "TASK_STATE_FAILED"},
		{"reject", "TASK_STATE_REJECTED"},
		{"quit", "TASK_STATE_CANCELED"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			label := "end-" + tc.mode
			tr := w.grow(t, "", label, tc.mode)
			w.gates.Release(label)
			waitState(t, tc.state, tr.root)
			waitState(t, "TASK_STATE_CANCELED", tr.descendants()...)
		})
	}
}
