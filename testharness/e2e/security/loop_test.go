package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// statusText returns the text of a task's status message.
func statusText(tk *task) string {
	var m struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	_ = json.Unmarshal(tk.Status.Message, &m)
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// sendUntilRejected sends messages into one conversation (the first one
// opens it) until one is rejected, at most limit messages, and returns the
// 1-based position of the rejected message (0 if none was) and its task.
func sendUntilRejected(t *testing.T, ctx context.Context, c *client, contextID string, from, limit int) (int, *task) {
	t.Helper()
	for i := from; i <= limit; i++ {
		var opts []msgOpt
		if contextID != "" {
			opts = append(opts, inContext(contextID))
		}
		tk := c.mustSend(t, ctx, fmt.Sprintf("turn %d", i), opts...)
		contextID = tk.ContextID
		switch tk.Status.State {
		case "TASK_STATE_REJECTED":
			return i, tk
		case "TASK_STATE_COMPLETED":
		default:
			t.Fatalf("message %d: task %s", i, tk.Status.State)
		}
	}
	return 0, nil
}

// TestTurnCapPerContext: with A2A_MAX_PINGPONG_TURNS=5 the sixth message
// in one conversation creates a REJECTED task naming the setting, without
// reaching the host; cancelling a task of the conversation resets the
// count. A cap above the hard maximum is lowered to 20.
func TestTurnCapPerContext(t *testing.T) {
	t.Parallel()
	agent := scenario([]testharness.Rule{when("question", testharness.Ask("which one?"))}, testharness.Echo("echo: "))
	h := startHost(t, hostOpts{agent: agent, env: map[string]string{"A2A_MAX_PINGPONG_TURNS": "5"}})
	c := newClient(h.Endpoint("a2a"), "")
	ctx := ctxFor(t, 60*time.Second)

	first := c.mustSend(t, ctx, "turn 1")
	cid := first.ContextID
	for i := 2; i <= 4; i++ {
		if tk := c.mustSend(t, ctx, fmt.Sprintf("turn %d", i), inContext(cid)); tk.Status.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("message %d: %s", i, tk.Status.State)
		}
	}
	open := c.mustSend(t, ctx, "question 5", inContext(cid))
	if open.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("message 5: %s, want INPUT_REQUIRED", open.Status.State)
	}

	n, rejected := sendUntilRejected(t, ctx, c, cid, 6, 8)
	switch {
	case n == 0:
		t.Fatal("no message was rejected up to the 8th in one conversation")
	case n != 6:
		t.Errorf("message #%d in the conversation was the first rejected, want #6 (A2A_MAX_PINGPONG_TURNS=5: five turns run, the sixth is refused)", n)
	}
	if txt := statusText(rejected); !strings.Contains(txt, "A2A_MAX_PINGPONG_TURNS") {
		t.Errorf("the rejection does not name the setting: %q", txt)
	}
	if reachedHost(h, rejected.ID) {
		t.Error("the rejected message reached the host")
	}

	r := c.mustCall(t, ctx, "CancelTask", map[string]any{"id": open.ID})
	if r.Err != nil || !strings.Contains(string(r.Result), "TASK_STATE_CANCELED") {
		t.Fatalf("CancelTask: %s", r)
	}
	after := c.mustSend(t, ctx, "after the cancel", inContext(cid))
	if after.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("after CancelTask the conversation is still capped: %s %q", after.Status.State, statusText(after))
	}
}

// TestTurnCapHardMaximum: A2A_MAX_PINGPONG_TURNS=100 is lowered to the hard
// maximum of 20 turns.
func TestTurnCapHardMaximum(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{env: map[string]string{"A2A_MAX_PINGPONG_TURNS": "100"}})
	c := newClient(h.Endpoint("a2a"), "")
	ctx := ctxFor(t, 60*time.Second)
	n, rejected := sendUntilRejected(t, ctx, c, "", 1, 25)
	switch {
	case n == 0:
		t.Fatal("25 messages in one conversation were all served: no hard maximum")
	case n != 21:
		t.Errorf("message #%d in the conversation was the first rejected, want #21 (hard maximum of 20 turns)", n)
	}
	if rejected != nil && !strings.Contains(statusText(rejected), "20 turns") {
		t.Errorf("the rejection does not say the cap is 20: %q", statusText(rejected))
	}
}

// chainOf reads the delegation chain from HandleMessage metadata.
func chainOf(md *structpb.Struct) (id string, depth float64, ok bool) {
	f := md.GetFields()
	idv, okID := f["a2a-plugin/chain-id"]
	dv, okDepth := f["a2a-plugin/chain-depth"]
	if !okID || !okDepth {
		return "", 0, false
	}
	return idv.GetStringValue(), dv.GetNumberValue(), true
}

// TestDelegationRingStopsAtMaxDepth: three hosts A → B → C → A, each of
// whose agents forwards any message to the next with a2a_call and replies
// with the result. A message to A goes round until the delegation chain
// reaches A2A_MAX_DELEGATION_DEPTH; the next hop is refused with a clear
// message, every hop carries the same chain id with a growing depth, the
// refusal travels back as answers, and every task on every host ends.
func TestDelegationRingStopsAtMaxDepth(t *testing.T) {
	t.Parallel()
	const maxDepth = 3
	ring := scenario(nil, testharness.CallTool(testharness.ToolCallSpec{
		Name: "a2a_call", Args: map[string]any{"agent": "next", "message": "{{parts_text}}"},
		Reply: "{{result}}", IgnoreError: true,
	}))
	hostFor := func(port int, next string) *testharness.Host {
		return startHost(t, hostOpts{agent: ring, config: map[string]any{
			"port": port, "allow_loopback_urls": true, "call_timeout": "30s", "request_timeout": "45s",
			"max_delegation_depth": maxDepth,
			"a2a_agents":           []map[string]any{{"name": "next", "url": next}},
		}})
	}
	// A's port is chosen first: C must name A before A starts.
	portA := reserveLoopbackPort(t)
	c := hostFor(0, fmt.Sprintf("http://127.0.0.1:%d", portA))
	b := hostFor(0, c.Endpoint("a2a"))
	a := hostFor(portA, b.Endpoint("a2a"))
	hosts := map[string]*testharness.Host{"A": a, "B": b, "C": c}
	ctx := ctxFor(t, 80*time.Second)

	start := newClient(a.Endpoint("a2a"), "").mustSend(t, ctx, "start the loop")
	if start.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("the first task ended %s: %q", start.Status.State, statusText(start))
	}
	_, r := newClient(a.Endpoint("a2a"), "").getTask(t, ctx, start.ID)
	if !strings.Contains(string(r.Body), "delegation chain too deep") || !strings.Contains(string(r.Body), fmt.Sprintf("limit of %d hops", maxDepth)) {
		t.Errorf("the answer does not carry the refusal back: %s", r)
	}

	// The hops, in order: A (from the test), B, C, A again.
	type hop struct {
		host  string
		id    string
		depth float64
	}
	var hops []hop
	isHM := func(c testharness.Call) bool { return c.Kind == testharness.KindHandleMessage }
	for _, name := range []string{"A", "B", "C"} {
		want := 1
		if name == "A" {
			want = 2
		}
		calls, err := hosts[name].Recorder().WaitForN(ctx, want, isHM)
		if err != nil {
			t.Fatalf("host %s: %v", name, err)
		}
		if extra := len(hosts[name].Recorder().Filter(isHM)); extra != want {
			t.Errorf("host %s handled %d messages, want %d", name, extra, want)
		}
		for _, call := range calls {
			id, depth, ok := chainOf(call.HandleMessage().GetMetadata())
			if !ok {
				if name != "A" || call.HandleMessage().GetTaskId() != start.ID {
					t.Errorf("host %s: a hop without chain metadata: %v", name, call.HandleMessage().GetMetadata())
				}
				continue
			}
			hops = append(hops, hop{name, id, depth})
		}
	}
	if len(hops) != 3 {
		t.Fatalf("hops with a chain: %+v, want B, C and A", hops)
	}
	want := map[string]float64{"B": 1, "C": 2, "A": maxDepth}
	for _, hp := range hops {
		if hp.id == "" || hp.id != hops[0].id {
			t.Errorf("chain ids differ between hops: %+v", hops)
		}
		if hp.depth != want[hp.host] {
			t.Errorf("host %s saw depth %v, want %v", hp.host, hp.depth, want[hp.host])
		}
	}

	// The hop past the limit was refused by A's a2a_call with a clear
	// message, and never reached B again.
	refusals := a.Recorder().Filter(func(c testharness.Call) bool {
		return c.Kind == testharness.KindCallTool && c.ToolResult().GetIsError() &&
			strings.Contains(c.ToolResult().GetContent(), "delegation chain too deep")
	})
	if len(refusals) != 1 {
		t.Errorf("A refused %d outbound hops, want 1:\n%s", len(refusals), a.Recorder().Dump())
	} else if txt := refusals[0].ToolResult().GetContent(); !strings.Contains(txt, hops[0].id) {
		t.Errorf("the refusal does not name the chain: %q", txt)
	}

	// Nothing hangs: every turn on every host completed and every task is
	// terminal.
	for name, h := range hosts {
		for _, call := range h.Recorder().Filter(isHM) {
			if _, err := h.Recorder().WaitForCompletion(ctx, call.TaskID); err != nil {
				t.Errorf("host %s: task %s never completed: %v", name, call.TaskID, err)
			}
		}
		r := newClient(h.Endpoint("a2a"), "").mustCall(t, ctx, "ListTasks", map[string]any{})
		var list struct {
			Tasks []task `json:"tasks"`
		}
		if err := json.Unmarshal(r.Result, &list); err != nil || r.Err != nil {
			t.Fatalf("host %s ListTasks: %s", name, r)
		}
		for _, tk := range list.Tasks {
			switch tk.Status.State {
			case "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED":
			default:
				t.Errorf("host %s: task %s is still %s", name, tk.ID, tk.Status.State)
			}
		}
	}
}

// TestInboundDelegationDepthIsChecked: a peer that ignores the limit and
// sends a message already past A2A_MAX_DELEGATION_DEPTH gets a REJECTED
// task that never reaches the host; malformed chain metadata is -32602.
func TestInboundDelegationDepthIsChecked(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{env: map[string]string{"A2A_MAX_DELEGATION_DEPTH": "2"}})
	c := newClient(h.Endpoint("a2a"), "")
	ctx := ctxFor(t, 30*time.Second)

	ok := c.mustSend(t, ctx, "at the limit", withMeta(map[string]any{"a2a-plugin/chain-id": "chain-e2e", "a2a-plugin/chain-depth": 2}))
	if ok.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("a message at the depth limit: %s", ok.Status.State)
	}
	deep := c.mustSend(t, ctx, "past the limit", withMeta(map[string]any{"a2a-plugin/chain-id": "chain-e2e", "a2a-plugin/chain-depth": 3}))
	if deep.Status.State != "TASK_STATE_REJECTED" || !strings.Contains(statusText(deep), "delegation") {
		t.Errorf("a message past the depth limit: %s %q", deep.Status.State, statusText(deep))
	}
	if reachedHost(h, deep.ID) {
		t.Error("the too-deep message reached the host")
	}
	for _, bad := range []any{"deep", -1, 1.5, map[string]any{"n": 1}} {
		r := c.mustCall(t, ctx, "SendMessage", sendParams(message("bad chain", withMeta(map[string]any{"a2a-plugin/chain-depth": bad}))))
		wantRefusal(t, r, http.StatusOK, -32602, "a2a-plugin/chain-depth")
	}
	r := c.mustCall(t, ctx, "SendMessage", sendParams(message("bad chain id", withMeta(map[string]any{"a2a-plugin/chain-id": "x y\nz"}))))
	wantRefusal(t, r, http.StatusOK, -32602, "a2a-plugin/chain-id")
}
