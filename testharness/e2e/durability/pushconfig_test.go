package durability_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// scopedConfig makes two named, trusted peers the only callers: loopback
// is not local, so every caller is scoped to its own tasks.
func scopedConfig() map[string]any {
	return map[string]any{"trusted_peers": []string{"alice", "bob"}, "loopback_is_local": false}
}

// scopedEnv gives the peers their tokens and sets the push secret.
func scopedEnv() map[string]string {
	return map[string]string{"A2A_PEER_TOKENS": peerTokens, "A2A_PUSH_SECRET": pushSecret}
}

// agentCard fetches the public Agent Card.
func agentCard(t testing.TB, h *testharness.Host) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(h.Endpoint(testharness.A2APluginName), "/")+"/.well-known/agent-card.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("agent card: HTTP %d: %s", resp.StatusCode, body)
	}
	var card map[string]any
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatalf("agent card: %v", err)
	}
	return card
}

// pushCapability is capabilities.pushNotifications of a card.
func pushCapability(card map[string]any) any {
	caps, _ := card["capabilities"].(map[string]any)
	return caps["pushNotifications"]
}

// reasonOf returns the ErrorInfo reason of an A2A error: of the v1.0
// data array, or of the 0.3 data object.
func reasonOf(e *rpcError) string {
	var obj map[string]any
	if json.Unmarshal(e.Data, &obj) == nil {
		r, _ := obj["reason"].(string)
		return r
	}
	var items []map[string]any
	_ = json.Unmarshal(e.Data, &items)
	for _, it := range items {
		if typ, _ := it["@type"].(string); strings.HasSuffix(typ, "google.rpc.ErrorInfo") {
			r, _ := it["reason"].(string)
			return r
		}
	}
	return ""
}

// configIDs lists the ids of a v1.0 ListTaskPushNotificationConfigs
// result.
func configIDs(t testing.TB, res json.RawMessage) []string {
	t.Helper()
	var l struct {
		Configs       []a2a.TaskPushNotificationConfig `json:"configs"`
		NextPageToken *string                          `json:"nextPageToken"`
	}
	if err := json.Unmarshal(res, &l); err != nil {
		t.Fatalf("not a config list: %v: %s", err, res)
	}
	ids := make([]string, 0, len(l.Configs))
	for _, c := range l.Configs {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestPushConfigMethodsThroughTheBinary drives the four push-config
// methods in v1.0 and 0.3 shapes, the slash-style and pre-release
// aliases, inline configs on SendMessage, and scoping between two peers.
func TestPushConfigMethodsThroughTheBinary(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, pushSecret)
	h := launch(t, launchOpts{config: scopedConfig(), env: scopedEnv()})
	alice, bob, anon := clientOf(h, tokAlice), clientOf(h, tokBob), clientOf(h, "")

	card := agentCard(t, h)
	if pushCapability(card) != true {
		t.Errorf("capabilities.pushNotifications = %v, want true", pushCapability(card))
	}

	tk := alice.send(t, msg{text: "ask alice"})
	if tk.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: state %s", tk.Status.State)
	}
	const v1Def, listDef = "Task Push Notification Config", "List Task Push Notification Configs Response"

	t.Run("v1.0", func(t *testing.T) {
		url := rcv.url(hook{name: "a1-old", auth: "Bearer cred-a1", token: "tok-a1"})
		want := map[string]any{"taskId": tk.ID, "id": "cfg-a1", "url": url, "token": "tok-a1",
			"authentication": map[string]any{"scheme": "Bearer", "credentials": "cred-a1"}}
		got := alice.ok(t, "CreateTaskPushNotificationConfig", want, v1Def)
		wantJSON, _ := json.Marshal(want)
		if !jsonEqual(got, wantJSON) {
			t.Errorf("create with a client id answered %s, want %s", got, wantJSON)
		}
		if got := alice.ok(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "cfg-a1"}, v1Def); !jsonEqual(got, wantJSON) {
			t.Errorf("get answered %s, want %s", got, wantJSON)
		}
		// snake_case keys, as the conformance kit sends them.
		if got := alice.ok(t, "GetTaskPushNotificationConfig", map[string]any{"task_id": tk.ID, "id": "cfg-a1"}, v1Def); !jsonEqual(got, wantJSON) {
			t.Errorf("get with snake_case keys answered %s", got)
		}

		gen := alice.ok(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "url": url}, v1Def)
		var genCfg a2a.TaskPushNotificationConfig
		_ = json.Unmarshal(gen, &genCfg)
		if genCfg.ID == "" || genCfg.ID == "cfg-a1" || genCfg.TaskID != tk.ID {
			t.Errorf("create without an id answered %s; want a new id", gen)
		}

		list := alice.ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": tk.ID}, listDef)
		if ids := configIDs(t, list); strings.Join(ids, ",") != "cfg-a1,"+genCfg.ID {
			t.Errorf("list: ids %v, want [cfg-a1 %s] in creation order", ids, genCfg.ID)
		}
		if !strings.Contains(string(list), `"nextPageToken"`) {
			t.Logf("note: the list result has no nextPageToken: %s", list)
		}

		// The same id again replaces the config, in place.
		url = rcv.url(hook{name: "a1", auth: "Bearer cred-a1-new", token: "tok-a1-new"})
		alice.ok(t, "CreateTaskPushNotificationConfig", pushConfigFor(tk.ID, "cfg-a1", url, "cred-a1-new", "tok-a1-new"), v1Def)
		list = alice.ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": tk.ID}, listDef)
		if ids := configIDs(t, list); strings.Join(ids, ",") != "cfg-a1,"+genCfg.ID {
			t.Errorf("list after replacing cfg-a1: ids %v", ids)
		}
		var cfg a2a.TaskPushNotificationConfig
		_ = json.Unmarshal(alice.ok(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "cfg-a1"}, v1Def), &cfg)
		if cfg.URL != url || cfg.Token != "tok-a1-new" || cfg.Authentication == nil || cfg.Authentication.Credentials != "cred-a1-new" {
			t.Errorf("replaced config = %+v", cfg)
		}

		// Delete is idempotent.
		for range 2 {
			if res := alice.ok(t, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": genCfg.ID}, ""); string(res) != "{}" && string(res) != "null" {
				t.Errorf("delete answered %s, want {} or null", res)
			}
		}
		alice.ok(t, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "never-existed"}, "")
		e := alice.fails(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": genCfg.ID}, -32001)
		if reasonOf(e) != "TASK_NOT_FOUND" {
			t.Errorf("get of a deleted config: reason %q", reasonOf(e))
		}

		// Unknown tasks and missing URLs.
		for _, m := range []string{"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"} {
			alice.fails(t, m, map[string]any{"taskId": "no-such-task", "id": "x", "url": url}, -32001)
		}
		alice.fails(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "no-url"}, -32602)

		// Aliases of the v1.0 operations answer in v1.0 shapes.
		alias := alice.ok(t, "tasks/pushNotificationConfig/create", pushConfigFor(tk.ID, "cfg-alias", url, "cred-a1-new", "tok-a1-new"), v1Def)
		if !strings.Contains(string(alias), `"scheme":"Bearer"`) {
			t.Errorf("tasks/pushNotificationConfig/create answered %s", alias)
		}
		alice.ok(t, "SetTaskPushNotificationConfig", pushConfigFor(tk.ID, "cfg-alias", url, "cred-a1-new", "tok-a1-new"), v1Def)
		if ids := configIDs(t, alice.ok(t, "ListTaskPushNotificationConfig", map[string]any{"taskId": tk.ID}, listDef)); strings.Join(ids, ",") != "cfg-a1,cfg-alias" {
			t.Errorf("ListTaskPushNotificationConfig: ids %v", ids)
		}
		alice.ok(t, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "cfg-alias"}, "")
	})

	t.Run("0.3", func(t *testing.T) {
		url := rcv.url(hook{name: "a03", auth: "Bearer cred-03", token: "tok-03"})
		nested := map[string]any{"id": "cfg-03", "url": url, "token": "tok-03",
			"authentication": map[string]any{"schemes": []string{"Bearer"}, "credentials": "cred-03"}}
		want, _ := json.Marshal(map[string]any{"taskId": tk.ID, "pushNotificationConfig": nested})
		if got := alice.ok(t, "tasks/pushNotificationConfig/set", map[string]any{"taskId": tk.ID, "pushNotificationConfig": nested}, ""); !jsonEqual(got, want) {
			t.Errorf("0.3 set answered %s, want %s", got, want)
		}
		if got := alice.ok(t, "tasks/pushNotificationConfig/get", map[string]any{"id": tk.ID, "pushNotificationConfigId": "cfg-03"}, ""); !jsonEqual(got, want) {
			t.Errorf("0.3 get answered %s, want %s", got, want)
		}
		var list []map[string]any
		if err := json.Unmarshal(alice.ok(t, "tasks/pushNotificationConfig/list", map[string]any{"id": tk.ID}, ""), &list); err != nil {
			t.Fatalf("0.3 list is not an array: %v", err)
		}
		var ids []string
		for _, c := range list {
			n, _ := c["pushNotificationConfig"].(map[string]any)
			id, _ := n["id"].(string)
			ids = append(ids, id)
			if c["taskId"] != tk.ID {
				t.Errorf("0.3 list entry %v has the wrong taskId", c)
			}
		}
		if strings.Join(ids, ",") != "cfg-a1,cfg-03" {
			t.Errorf("0.3 list ids %v, want [cfg-a1 cfg-03]", ids)
		}
		// The v1.0 methods see the same config in the flat shape.
		flat, _ := json.Marshal(pushConfigFor(tk.ID, "cfg-03", url, "cred-03", "tok-03"))
		if got := alice.ok(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "cfg-03"}, v1Def); !jsonEqual(got, flat) {
			t.Errorf("v1.0 get of a 0.3 config answered %s, want %s", got, flat)
		}
		for range 2 {
			if res := alice.ok(t, "tasks/pushNotificationConfig/delete", map[string]any{"id": tk.ID, "pushNotificationConfigId": "cfg-03"}, ""); string(res) != "null" {
				t.Errorf("0.3 delete answered %s, want null", res)
			}
		}
		alice.fails(t, "tasks/pushNotificationConfig/get", map[string]any{"id": tk.ID, "pushNotificationConfigId": "cfg-03"}, -32001)

		// A 0.3 set without a config id uses the task id (as the 0.3 SDKs
		// did), so a get without pushNotificationConfigId finds it.
		bare := map[string]any{"url": url, "token": "tok-03", "authentication": map[string]any{"schemes": []string{"Bearer"}, "credentials": "cred-03"}}
		got := alice.ok(t, "tasks/pushNotificationConfig/set", map[string]any{"taskId": tk.ID, "pushNotificationConfig": bare}, "")
		withID := map[string]any{"id": tk.ID}
		maps.Copy(withID, bare)
		want, _ = json.Marshal(map[string]any{"taskId": tk.ID, "pushNotificationConfig": withID})
		if !jsonEqual(got, want) {
			t.Errorf("0.3 set without an id answered %s, want %s", got, want)
		}
		if got := alice.ok(t, "tasks/pushNotificationConfig/get", map[string]any{"id": tk.ID}, ""); !jsonEqual(got, want) {
			t.Errorf("0.3 get without pushNotificationConfigId answered %s, want %s", got, want)
		}
		alice.ok(t, "tasks/pushNotificationConfig/delete", map[string]any{"id": tk.ID, "pushNotificationConfigId": tk.ID}, "")

		// An inline 0.3 config on message/send.
		url = rcv.url(hook{name: "inline-03", auth: "Bearer cred-i03", token: "tok-i03"})
		res := alice.ok(t, "message/send", map[string]any{
			"message": map[string]any{"kind": "message", "messageId": a2a.NewID(), "role": "user", "parts": []any{map[string]any{"kind": "text", "text": "report inline 0.3"}}},
			"configuration": map[string]any{"blocking": true, "pushNotificationConfig": map[string]any{"id": "cfg-i03", "url": url, "token": "tok-i03",
				"authentication": map[string]any{"schemes": []string{"Bearer"}, "credentials": "cred-i03"}}},
		}, "")
		var t03 struct {
			ID     string `json:"id"`
			Kind   string `json:"kind"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		}
		if err := json.Unmarshal(res, &t03); err != nil || t03.Kind != "task" || t03.Status.State != "completed" {
			t.Fatalf("0.3 message/send answered %s", res)
		}
		events := reportEvents(t03.ID, "report inline 0.3")
		checkSequence(t, "inline-03", rcv.waitDelivered(t, "inline-03", len(events), 15*time.Second), t03.ID, events)
	})

	t.Run("inline", func(t *testing.T) {
		url := rcv.url(hook{name: "inline", auth: "Bearer cred-in", token: "tok-in"})
		in := alice.send(t, msg{text: "report inline", push: pushConfig("cfg-inline", url, "cred-in", "tok-in")})
		flat, _ := json.Marshal(pushConfigFor(in.ID, "cfg-inline", url, "cred-in", "tok-in"))
		list := alice.ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": in.ID}, listDef)
		var l struct{ Configs []json.RawMessage }
		_ = json.Unmarshal(list, &l)
		if len(l.Configs) != 1 || !jsonEqual(l.Configs[0], flat) {
			t.Errorf("inline config listed as %s, want %s", list, flat)
		}
		want := reportEvents(in.ID, "report inline")
		checkSequence(t, "inline", rcv.waitDelivered(t, "inline", len(want), 15*time.Second), in.ID, want)

		bare := rcv.url(hook{name: "inline-bare"})
		gen := alice.send(t, msg{text: "echo me", push: map[string]any{"url": bare}})
		if ids := configIDs(t, alice.ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": gen.ID}, listDef)); len(ids) != 1 || ids[0] == "" {
			t.Errorf("an inline config without id is listed with ids %v; want one generated id", ids)
		}
	})

	t.Run("scoping", func(t *testing.T) {
		// Bob cannot see, create, change or delete Alice's configs: her
		// task does not exist for him.
		for _, m := range []string{"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"} {
			e := bob.fails(t, m, map[string]any{"taskId": tk.ID, "id": "cfg-a1", "url": rcv.url(hook{name: "bob-steal"})}, -32001)
			if strings.Contains(e.Message, "alice") {
				t.Errorf("%s: the refusal reveals the owner: %s", m, e.Message)
			}
		}
		for _, m := range []string{"tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete"} {
			bob.fails(t, m, map[string]any{"id": tk.ID, "pushNotificationConfigId": "cfg-a1"}, -32001)
		}
		bob.fails(t, "GetTask", map[string]any{"id": tk.ID}, -32001)
		// Bob's own task, with a config of the same id.
		bt := bob.send(t, msg{text: "ask bob"})
		bob.ok(t, "CreateTaskPushNotificationConfig", pushConfigFor(bt.ID, "cfg-a1", rcv.url(hook{name: "bob", auth: "Bearer cred-b", token: "tok-b"}), "cred-b", "tok-b"), v1Def)
		if ids := configIDs(t, bob.ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": bt.ID}, listDef)); strings.Join(ids, ",") != "cfg-a1" {
			t.Errorf("bob's configs: %v", ids)
		}
		alice.fails(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": bt.ID}, -32001)
		// Alice's config is untouched by all of that.
		var cfg a2a.TaskPushNotificationConfig
		_ = json.Unmarshal(alice.ok(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "cfg-a1"}, v1Def), &cfg)
		if cfg.Token != "tok-a1-new" || !strings.HasSuffix(cfg.URL, "/hooks/a1") {
			t.Errorf("alice's config after bob's attempts: %+v", cfg)
		}
		// A caller without a token gets nothing.
		if _, e := anon.call(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": tk.ID}); e == nil {
			t.Error("an anonymous caller listed alice's configs")
		}

		// Alice answers her task: her (replaced) config gets the
		// continuation, the deleted ones nothing, Bob's nothing.
		done := alice.send(t, msg{text: "monday", taskID: tk.ID})
		if done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("continuation: %s", done.Status.State)
		}
		want := answerEvents(tk.ID, "monday")
		checkSequence(t, "a1", rcv.waitDelivered(t, "a1", len(want), 15*time.Second), tk.ID, want)
		time.Sleep(300 * time.Millisecond)
		for _, name := range []string{"a1-old", "a03", "bob", "bob-steal"} {
			if n := len(rcv.requestsTo(name)); n != 0 {
				t.Errorf("hook %s got %d requests", name, n)
			}
		}
	})
}

// pushConfigFor is a flat v1.0 config with Bearer credentials and a token.
func pushConfigFor(taskID, id, url, cred, token string) map[string]any {
	c := pushConfig(id, url, cred, token)
	c["taskId"] = taskID
	return c
}

// TestPushDisabledRefusesEveryPushMethod: with push_enabled false the card
// says so and every push-config method, in both versions and as an
// inline config, is -32003.
func TestPushDisabledRefusesEveryPushMethod(t *testing.T) {
	t.Parallel()
	h := launch(t, launchOpts{config: map[string]any{"push_enabled": false}})
	c := clientOf(h, "")
	if v := pushCapability(agentCard(t, h)); v == true {
		t.Errorf("capabilities.pushNotifications = %v with push disabled", v)
	}
	tk := c.send(t, msg{text: "report disabled"})
	url := "http://127.0.0.1:9/hook"
	calls := []struct {
		method string
		params any
	}{
		{"CreateTaskPushNotificationConfig", pushConfigFor(tk.ID, "c", url, "", "")},
		{"GetTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "c"}},
		{"ListTaskPushNotificationConfigs", map[string]any{"taskId": tk.ID}},
		{"DeleteTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "c"}},
		{"tasks/pushNotificationConfig/set", map[string]any{"taskId": tk.ID, "pushNotificationConfig": map[string]any{"url": url}}},
		{"tasks/pushNotificationConfig/get", map[string]any{"id": tk.ID, "pushNotificationConfigId": "c"}},
		{"tasks/pushNotificationConfig/list", map[string]any{"id": tk.ID}},
		{"tasks/pushNotificationConfig/delete", map[string]any{"id": tk.ID, "pushNotificationConfigId": "c"}},
		{"tasks/pushNotificationConfig/create", pushConfigFor(tk.ID, "c", url, "", "")},
		{"SendMessage", msg{text: "report inline", push: pushConfig("c", url, "", "")}.params()},
	}
	for _, call := range calls {
		e := c.fails(t, call.method, call.params, -32003)
		if reasonOf(e) != "PUSH_NOTIFICATION_NOT_SUPPORTED" {
			t.Errorf("%s: reason %q", call.method, reasonOf(e))
		}
	}
}

// TestInlineConfigOnAContinuationIsKept: a message that answers a task
// waiting for input may carry configuration.taskPushNotificationConfig too;
// the config must be stored (listed) and notified of the rest of the task,
// not silently dropped.
func TestInlineConfigOnAContinuationIsKept(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, pushSecret)
	h := launch(t, launchOpts{env: map[string]string{"A2A_PUSH_SECRET": pushSecret}})
	c := clientOf(h, "")
	tk := c.send(t, msg{text: "ask about a continuation"})
	if tk.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: %s", tk.Status.State)
	}
	url := rcv.url(hook{name: "continuation", auth: "Bearer cred-cont", token: "tok-cont"})
	done := c.send(t, msg{text: "saturday", taskID: tk.ID, push: pushConfig("cfg-cont", url, "cred-cont", "tok-cont")})
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("continuation: %s", done.Status.State)
	}
	ids := configIDs(t, c.ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": tk.ID}, "List Task Push Notification Configs Response"))
	if !slices.Equal(ids, []string{"cfg-cont"}) {
		t.Errorf("BUG: the inline push config of a continuation message was dropped: the task's configs are %v, want [cfg-cont] "+
			"(internal/tasks/send.go: prepare() stores SendParams.PushConfig only for a new task; prepareContinuation ignores it, "+
			"and SendMessage still answers success)", ids)
		return
	}
	want := answerEvents(tk.ID, "saturday")
	checkSequence(t, "continuation", rcv.waitDelivered(t, "continuation", len(want), 15*time.Second), tk.ID, want)
}
