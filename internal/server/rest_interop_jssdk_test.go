package server

import (
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestOfficialJSSDKRESTClientInterop drives our HTTP+JSON binding with the
// official JS SDK's REST transport (@a2a-js/sdk 1.3.0) through
// testharness/interop/js/client-binding.mjs: every operation, push configs
// included, and the SDK's typed errors decoded from google.rpc.Status.
func TestOfficialJSSDKRESTClientInterop(t *testing.T) {
	e := newEnv(t)
	steps := testharness.RunJSClient(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + tokAlice}}, e.exec.release, "client-binding.mjs", e.url, "rest")
	for _, name := range []string{"card", "send", "direct", "stream", "get", "list", "push", "cancel", "resubscribe",
		"unknown-task", "not-cancelable", "terminal-subscribe", "invalid-params", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	if c := steps["card"]; len(c.Interfaces) != 4 || c.Interfaces[2] != "HTTP+JSON 1.0 "+e.url {
		t.Errorf("card = %+v", c)
	}
	send := steps["send"]
	if send.State != "TASK_STATE_COMPLETED" || send.Answer != "echo: hello from js rest" || send.ContextID == "" {
		t.Errorf("send = %+v", send)
	}
	if d := steps["direct"]; d.Answer != "direct: js rest" {
		t.Errorf("direct = %+v", d)
	}
	want := "task:TASK_STATE_SUBMITTED,statusUpdate:TASK_STATE_WORKING,statusUpdate:TASK_STATE_WORKING,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate:TASK_STATE_COMPLETED"
	if got := strings.Join(steps["stream"].Events, ","); got != want {
		t.Errorf("stream = %s\nwant      %s", got, want)
	}
	if g := steps["get"]; g.TaskID != send.TaskID || g.State != "TASK_STATE_COMPLETED" || g.History != 1 {
		t.Errorf("get = %+v", g)
	}
	if l := steps["list"]; l.Count != 2 || l.TotalSize != 2 || l.Artifacts != 3 || l.NextPageToken == nil || *l.NextPageToken != "" {
		t.Errorf("list = %+v", l)
	}
	if p := steps["push"]; p.Created != "js-cfg" || p.Token != "js-token" || p.Listed != 1 || p.AfterDelete == nil || *p.AfterDelete != 0 {
		t.Errorf("push = %+v", p)
	}
	if c := steps["cancel"]; c.State != "TASK_STATE_CANCELED" {
		t.Errorf("cancel = %+v", c)
	}
	if r := steps["resubscribe"]; len(r.Events) != 3 || r.Events[0] != "task:TASK_STATE_WORKING" || r.Events[2] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("resubscribe = %+v", r)
	}
	// The SDK maps our google.rpc.Status errors to its typed REST errors.
	for name, want := range map[string]struct {
		class  string
		status int
	}{
		"unknown-task":       {"TaskNotFoundError", 404},
		"not-cancelable":     {"TaskNotCancelableError", 400},
		"terminal-subscribe": {"UnsupportedOperationError", 400},
		"invalid-params":     {"RequestMalformedError", 400},
	} {
		if s := steps[name]; s.Name != want.class || s.StatusCode != want.status || s.Transport != "rest" {
			t.Errorf("%s = %+v, want %s HTTP %d", name, s, want.class, want.status)
		}
	}
	// Nothing went to the JSON-RPC endpoint.
	for _, r := range steps["done"].Requests {
		if r == "POST /" {
			t.Errorf("the REST client called the JSON-RPC endpoint: %v", steps["done"].Requests)
			break
		}
	}
}
