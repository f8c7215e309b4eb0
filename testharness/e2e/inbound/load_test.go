package inbound_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// loadScenario answers "re:<the sender's words>" after a wait of 0–9 ms
// chosen by the message's last digit, so turns of different contexts
// finish out of step with each other.
func loadScenario() *testharness.Scenario {
	s := &testharness.Scenario{Name: "load"}
	for d := 0; d < 10; d++ {
		s.Rules = append(s.Rules, testharness.Rule{
			Name:    fmt.Sprintf("wait %d ms", d),
			Match:   []testharness.Condition{testharness.Match("parts_text", testharness.OpRegexp, fmt.Sprintf("-%d$", d))},
			Actions: []testharness.Action{testharness.Wait(time.Duration(d) * time.Millisecond), testharness.Reply("re:{{parts_text}}")},
		})
	}
	return s
}

// TestThousandConcurrentTasksOverHundredContexts sends 1,000 blocking
// SendMessage requests at once, spread over 100 contexts: every task ends
// COMPLETED with its own answer, and the host's record shows one turn at a
// time per context, in the same order from HandleMessage to
// ProcessingComplete, each Send answering the task its turn names.
func TestThousandConcurrentTasksOverHundredContexts(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 tasks through the binary")
	}
	t.Parallel()
	const tasks, contexts = 1000, 100
	h := testharness.Start(t, testharness.Options{
		Agent:        loadScenario(),
		PluginConfig: baseConfig(nil),
		LogLevel:     "warn",
	})
	c := newClient(h.Endpoint(testharness.A2APluginName))
	c.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: tasks, MaxIdleConns: tasks}}
	defer c.hc.CloseIdleConnections()
	ctx := within(t)

	type result struct {
		text string
		cid  string
		task *task
		err  string
	}
	results := make([]result, tasks)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < tasks; i++ {
		cid := fmt.Sprintf("load-ctx-%03d", i%contexts)
		text := fmt.Sprintf("%s-task-%04d-%d", cid, i, (i*7)%10)
		results[i] = result{text: text, cid: cid}
		wg.Go(func() {
			r := c.call(t, ctx, "SendMessage", msg(text, "contextId", cid))
			var res sendResult
			switch {
			case r.Err != nil:
				results[i].err = r.Err.Error()
			case json.Unmarshal(r.Result, &res) != nil || res.Task == nil:
				results[i].err = "not a task: " + string(r.Result)
			default:
				results[i].task = res.Task
			}
		})
	}
	wg.Wait()
	t.Logf("%d blocking sends over %d contexts answered in %v", tasks, contexts, time.Since(start).Round(time.Millisecond))

	byTask := map[string]string{} // task id → the words it was sent
	failures := 0
	for _, r := range results {
		switch {
		case r.err != "":
			t.Errorf("%s: %s", r.text, r.err)
		case r.task.Status.State != stCompleted || r.task.answer() != "re:"+r.text || r.task.ContextID != r.cid:
			t.Errorf("%s: %s %q in %s", r.text, r.task.Status.State, r.task.answer(), r.task.ContextID)
		default:
			byTask[r.task.ID] = r.text
			continue
		}
		if failures++; failures > 10 {
			t.Fatal("too many failures")
		}
	}
	if len(byTask) != tasks {
		t.Fatalf("%d distinct completed tasks, want %d", len(byTask), tasks)
	}

	// The host's view: per conversation, turns start in order, one at a
	// time, and end in the same order.
	rec := h.Recorder()
	if _, err := rec.WaitForN(ctx, tasks, func(c testharness.Call) bool { _, end := c.TurnEnd(); return end }); err != nil {
		t.Fatal(err)
	}
	hmOrder := map[string][]testharness.Call{}
	pcOrder := map[string][]string{}
	finals := map[string]testharness.Call{} // turn id → its FINAL Send
	turnTask := map[string]string{}         // turn id → task id
	for _, call := range rec.Calls() {
		// A turn ends with ProcessingComplete, or with a FINAL Send
		// carrying ends_turn (protocol 1.1).
		if pc, end := call.TurnEnd(); end {
			if o := pc.GetOutcome(); o != pb.Outcome_OUTCOME_SUCCESS || call.Err != nil {
				t.Errorf("turn %s ended %s: %v", call.TurnID, o, call.Err)
			}
			pcOrder[call.ChatID] = append(pcOrder[call.ChatID], call.TaskID)
		}
		switch call.Kind {
		case testharness.KindHandleMessage:
			hmOrder[call.ChatID] = append(hmOrder[call.ChatID], call)
			turnTask[call.TurnID] = call.TaskID
			if byTask[call.TaskID] != testharness.PartsText(call.HandleMessage()) {
				t.Errorf("task %s reached the host as %q, was sent as %q", call.TaskID, testharness.PartsText(call.HandleMessage()), byTask[call.TaskID])
			}
		case testharness.KindSend:
			if call.Err != nil {
				t.Errorf("the plugin refused Send %s: %v", call.Send().GetKind(), call.Err)
			}
			if call.Send().GetKind() == pb.SendKind_SEND_KIND_FINAL {
				finals[call.TurnID] = call
			}
		}
	}
	if len(hmOrder) != contexts {
		t.Fatalf("the host saw %d conversations, want %d", len(hmOrder), contexts)
	}
	for cid, hms := range hmOrder {
		if len(hms) != tasks/contexts {
			t.Errorf("conversation %s got %d messages, want %d", cid, len(hms), tasks/contexts)
		}
		var order []string
		for i, hm := range hms {
			order = append(order, hm.TaskID)
			final, ok := finals[hm.TurnID]
			if !ok {
				t.Errorf("turn %s of %s has no final answer", hm.TurnID, cid)
				continue
			}
			// Each Send answers the task its turn names.
			if final.Send().GetTaskId() != turnTask[hm.TurnID] || final.Send().GetText() != "re:"+byTask[hm.TaskID] {
				t.Errorf("turn %s answered task %s with %q", hm.TurnID, final.Send().GetTaskId(), final.Send().GetText())
			}
			if i+1 < len(hms) && !hms[i+1].Time.After(final.Time) {
				t.Errorf("%s: message %d reached the host before turn %d answered", cid, i+1, i)
			}
		}
		if !equal(order, pcOrder[cid]) {
			t.Errorf("%s: HandleMessage order %v, ProcessingComplete order %v", cid, order, pcOrder[cid])
		}
	}
}
