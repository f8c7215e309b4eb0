package durability_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// jsStep is one line of client-push.mjs output.
type jsStep struct {
	Step  string `json:"step"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Name  string `json:"name"`

	PushNotifications bool             `json:"pushNotifications"`
	Interfaces        []string         `json:"interfaces"`
	TaskID            string           `json:"taskId"`
	State             string           `json:"state"`
	ProtocolVersion   string           `json:"protocolVersion"`
	Config            map[string]any   `json:"config"`
	Configs           []map[string]any `json:"configs"`
	IDs               []string         `json:"ids"`
	Created           map[string]any   `json:"created"`
	Got               map[string]any   `json:"got"`
	IDsAfterDelete    []string         `json:"idsAfterDelete"`
}

// TestOfficialJSSDKClientManagesPushConfigs runs
// testharness/interop/js/client-push.mjs, which creates (with its own id
// and with a generated one), gets, lists and deletes push configs with the
// official JS SDK client (@a2a-js/sdk 1.3.0) over v1.0, registers one
// inline, and does the same over the SDK's 0.3 transport. The plugin has a
// bearer token and no A2A_PUSH_SECRET, so the notifications of the inline
// config must be signed with the key it generates into its data directory,
// never with the bearer token.
func TestOfficialJSSDKClientManagesPushConfigs(t *testing.T) {
	t.Parallel()
	const bearer = "js-bearer-token-5c1d93"
	rcv := newReceiver(t, bearer) // the key is set once the plugin made it
	for _, name := range []string{"js-1", "js-2", "js-inline", "js-03"} {
		rcv.url(hook{name: name, auth: "Bearer cred-" + name, token: "tok-" + name})
	}
	dataDir := t.TempDir()
	h := launch(t, launchOpts{config: map[string]any{"loopback_is_local": false}, env: map[string]string{"A2A_BEARER_TOKEN": bearer}, dataDir: dataDir})
	key, err := os.ReadFile(filepath.Join(dataDir, testharness.A2APluginName, "push-secret"))
	if err != nil {
		t.Fatalf("no generated webhook signing key beside the bearer token: %v", err)
	}
	if strings.TrimSpace(string(key)) == bearer {
		t.Fatal("the webhook signing key is the bearer token")
	}
	rcv.setSecret(strings.TrimSpace(string(key)))
	url := h.Endpoint(testharness.A2APluginName)
	hooks := "http://" + rcv.addr + "/hooks"

	steps := map[string]jsStep{}
	testharness.RunNodeJSONLines(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + bearer}}, func(s jsStep) {
		steps[s.Step] = s
	}, "client-push.mjs", url, hooks)
	for _, name := range []string{"card", "send", "create", "create-generated-id", "get", "list", "delete", "delete-again",
		"get-deleted", "list-after-delete", "inline", "legacy", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}

	if c := steps["card"]; !c.PushNotifications || !slices.Contains(c.Interfaces, "JSONRPC 1.0") || !slices.Contains(c.Interfaces, "JSONRPC 0.3") {
		t.Errorf("card = %+v", c)
	}
	send := steps["send"]
	if send.State != "TASK_STATE_COMPLETED" || send.ProtocolVersion != "1.0" || send.TaskID == "" {
		t.Errorf("send = %+v", send)
	}
	taskID := send.TaskID
	want := func(id, name string) map[string]any {
		return map[string]any{"taskId": taskID, "id": id, "url": hooks + "/" + name, "token": "tok-" + name,
			"authentication": map[string]any{"scheme": "Bearer", "credentials": "cred-" + name}}
	}
	same := func(a, b map[string]any) bool { return jsonEqual(mustJSON(a), mustJSON(b)) }
	if c := steps["create"].Config; !same(c, want("js-cfg-1", "js-1")) {
		t.Errorf("create answered %v, want %v", c, want("js-cfg-1", "js-1"))
	}
	gen, _ := steps["create-generated-id"].Config["id"].(string)
	if gen == "" || gen == "js-cfg-1" {
		t.Errorf("create without an id answered %v", steps["create-generated-id"].Config)
	}
	if c := steps["get"].Config; !same(c, want("js-cfg-1", "js-1")) {
		t.Errorf("get answered %v", c)
	}
	if ids := steps["list"].IDs; !slices.Equal(ids, []string{"js-cfg-1", gen}) {
		t.Errorf("list: %v, want [js-cfg-1 %s]", ids, gen)
	}
	if e := steps["get-deleted"]; !strings.Contains(strings.ToLower(e.Error), "not found") {
		t.Errorf("get of a deleted config: %+v", e)
	}
	if ids := steps["list-after-delete"].IDs; !slices.Equal(ids, []string{gen}) {
		t.Errorf("list after delete: %v, want [%s]", ids, gen)
	}

	in := steps["inline"]
	if in.State != "TASK_STATE_COMPLETED" || !slices.Equal(in.IDs, []string{"js-inline"}) || len(in.Configs) != 1 {
		t.Errorf("inline = %+v", in)
	} else {
		w := want("js-inline", "js-inline")
		w["taskId"] = in.TaskID
		if !same(in.Configs[0], w) {
			t.Errorf("inline config listed as %v, want %v", in.Configs[0], w)
		}
	}
	events := reportEvents(in.TaskID, "report inline from js")
	checkSequence(t, "js-inline", rcv.waitDelivered(t, "js-inline", len(events), 15*time.Second), in.TaskID, events)

	old := steps["legacy"]
	if old.ProtocolVersion != "0.3" || !same(old.Created, want("js-03", "js-03")) || !same(old.Got, want("js-03", "js-03")) ||
		!slices.Equal(old.IDs, []string{gen, "js-03"}) || !slices.Equal(old.IDsAfterDelete, []string{gen}) {
		t.Errorf("legacy (0.3) = %+v", old)
	}

	// What the plugin holds in the end, as seen from Go.
	res := clientOf(h, bearer).ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": taskID}, "List Task Push Notification Configs Response")
	if ids := configIDs(t, res); !slices.Equal(ids, []string{gen}) {
		t.Errorf("configs left on the task: %v, want [%s]", ids, gen)
	}
	time.Sleep(200 * time.Millisecond)
	for _, name := range []string{"js-1", "js-2", "js-03"} {
		if n := len(rcv.requestsTo(name)); n != 0 {
			t.Errorf("hook %s of a finished task got %d notifications", name, n)
		}
	}
}
