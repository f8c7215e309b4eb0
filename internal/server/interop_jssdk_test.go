package server

import (
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestOfficialJSSDKClientInterop drives our server with the official JS SDK
// client (@a2a-js/sdk 1.3.0) through testharness/interop/js/client-check.mjs.
func TestOfficialJSSDKClientInterop(t *testing.T) {
	e := newEnv(t)
	steps := testharness.RunJSClient(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + tokAlice}}, e.exec.release, "client-check.mjs", e.url)
	for _, name := range []string{"card", "send", "stream", "get", "list", "cancel", "resubscribe", "unknown-task", "done"} {
		s, ok := steps[name]
		if !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	card := steps["card"]
	if card.Name != "Test Agent" || !card.Streaming || len(card.Interfaces) != 4 ||
		card.Interfaces[0] != "JSONRPC 1.0 "+e.url+"/" || len(card.SecuritySchemes) != 1 {
		t.Errorf("card = %+v", card)
	}
	send := steps["send"]
	if send.ProtocolVersion != "1.0" || send.State != "TASK_STATE_COMPLETED" || send.Answer != "echo: hello from js" || send.ContextID == "" {
		t.Errorf("send = %+v", send)
	}
	// The answer once, however a client joins the task's texts.
	if n := strings.Count(send.AllText, "echo: hello from js"); n != 1 {
		t.Errorf("the task's texts hold the answer %d times, want once:\n%s", n, send.AllText)
	}
	want := "task:TASK_STATE_SUBMITTED,statusUpdate:TASK_STATE_WORKING,statusUpdate:TASK_STATE_WORKING,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate:TASK_STATE_COMPLETED"
	if got := strings.Join(steps["stream"].Events, ","); got != want {
		t.Errorf("stream = %s\nwant      %s", got, want)
	}
	if g := steps["get"]; g.TaskID != send.TaskID || g.State != "TASK_STATE_COMPLETED" || g.History != 1 {
		t.Errorf("get = %+v", g)
	}
	if l := steps["list"]; l.Count != 2 || l.TotalSize != 2 || l.NextPageToken == nil || *l.NextPageToken != "" {
		t.Errorf("list = %+v", l)
	}
	if c := steps["cancel"]; c.State != "TASK_STATE_CANCELED" || c.Before == "TASK_STATE_CANCELED" || c.SecondCancel == "succeeded" || c.SecondCancel == "" {
		t.Errorf("cancel = %+v", c)
	}
	if r := steps["resubscribe"]; len(r.Events) != 3 || r.Events[0] != "task:TASK_STATE_WORKING" || r.Events[2] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("resubscribe = %+v", r)
	}
	if u := steps["unknown-task"]; !strings.Contains(strings.ToLower(u.Error), "not found") {
		t.Errorf("unknown task = %+v", u)
	}
}
