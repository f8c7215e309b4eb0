package a2a

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// mustJSON marshals v or fails the test.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestToV03ShapesCarryKindAndLegacyNames(t *testing.T) {
	status := &Message{MessageID: "s", ContextID: "c", TaskID: "t", Role: RoleAgent, Parts: []Part{TextPart("need input")}}
	task := &Task{
		ID: "t", ContextID: "c",
		Status: TaskStatus{State: TaskStateInputRequired, Message: status, Timestamp: fixedTime},
		History: []Message{{MessageID: "m", Role: RoleUser, Parts: []Part{
			TextPart("hi"),
			FilePart([]byte("hi"), "text/plain", "a.txt"),
			URLPart("https://x/y.pdf", "application/pdf", ""),
			DataPart(map[string]any{"k": 1}),
			DataPart([]int{1, 2}),
		}}},
		Artifacts: []Artifact{{ArtifactID: "a", Parts: []Part{TextPart("r")}}},
	}
	cases := []struct {
		name string
		got  any
		want string
	}{
		{"task", ToV03Task(task), `{"kind":"task","id":"t","contextId":"c","status":{"state":"input-required","message":{"kind":"message","messageId":"s","role":"agent","parts":[{"kind":"text","text":"need input"}],"contextId":"c","taskId":"t"},"timestamp":"2026-03-12T09:30:15.250Z"},` +
			`"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"r"}]}],` +
			`"history":[{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"},{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain","name":"a.txt"}},{"kind":"file","file":{"uri":"https://x/y.pdf","mimeType":"application/pdf"}},{"kind":"data","data":{"k":1}},{"kind":"data","data":{"value":[1,2]}}]}]}`},
		{"message", ToV03Message(status), `{"kind":"message","messageId":"s","role":"agent","parts":[{"kind":"text","text":"need input"}],"contextId":"c","taskId":"t"}`},
		{"final status update", ToV03StatusUpdate(&TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: TaskStatus{State: TaskStateCompleted}}, true),
			`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed"},"final":true}`},
		{"status update", ToV03StatusUpdate(&TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: TaskStatus{State: TaskStateWorking}}, false),
			`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}`},
		{"artifact update", ToV03ArtifactUpdate(&TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: Artifact{ArtifactID: "a", Parts: []Part{TextPart("x")}}, Append: true, LastChunk: true}),
			`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]},"append":true,"lastChunk":true}`},
		{"push config", ToV03PushConfig(fullPushConfig()),
			`{"taskId":"t1","pushNotificationConfig":{"id":"cfg-1","url":"https://client.example/cb","token":"opaque","authentication":{"schemes":["Bearer"],"credentials":"secret"}}}`},
		{"push config list", ToV03PushConfigList(&ListTaskPushNotificationConfigsResponse{Configs: []TaskPushNotificationConfig{{TaskID: "t", URL: "https://h"}}}),
			`[{"taskId":"t","pushNotificationConfig":{"url":"https://h"}}]`},
		{"empty push config list", ToV03PushConfigList(&ListTaskPushNotificationConfigsResponse{}), `[]`},
		{"send result task", ToV03SendResult(&SendMessageResponse{Task: &Task{ID: "t", ContextID: "c", Status: TaskStatus{State: TaskStateSubmitted}}}),
			`{"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"}}`},
		{"stream event message", ToV03StreamEvent(&StreamResponse{Message: status}, true), `{"kind":"message","messageId":"s","role":"agent","parts":[{"kind":"text","text":"need input"}],"contextId":"c","taskId":"t"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustJSON(t, c.got); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestV03ValuesReadBackIntoV1(t *testing.T) {
	task := fullTask()
	task.History[0].Parts = task.History[0].Parts[:4] // parts 0.3 can carry losslessly
	task.Artifacts[0].Parts = task.Artifacts[0].Parts[:1]
	r, final, err := FromV03StreamEvent([]byte(mustJSON(t, ToV03Task(task))))
	if err != nil || final {
		t.Fatal(err)
	}
	want := *task
	// 0.3 has no media type or file name on text and data parts.
	want.History[0].Parts[3].MediaType = ""
	if !reflect.DeepEqual(r.Task, &want) {
		t.Errorf("task came back as\n%s\nwant\n%s", mustJSON(t, r.Task), mustJSON(t, &want))
	}
}

func TestFromV03StreamEventTellsKindsApart(t *testing.T) {
	cases := []struct {
		name, in, kind string
		final          bool
	}{
		{"task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`, "task", false},
		{"message", `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"x"}]}`, "message", false},
		{"status update", `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed"},"final":true}`, "statusUpdate", true},
		{"artifact update", `{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]},"lastChunk":true}`, "artifactUpdate", false},
		{"no kind: task", `{"id":"t","status":{"state":"working"}}`, "task", false},
		{"no kind: status update", `{"taskId":"t","contextId":"c","status":{"state":"failed"},"final":true}`, "statusUpdate", true},
		{"no kind: artifact update", `{"taskId":"t","artifact":{"artifactId":"a"}}`, "artifactUpdate", false},
		{"no kind: message", `{"messageId":"m","role":"agent","parts":[]}`, "message", false},
		{"v1.0 wrapper", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`, "statusUpdate", false},
		{"v1.0 message wrapper", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`, "message", false},
		{"snake case", `{"kind":"status-update","task_id":"t","context_id":"c","status":{"state":"completed"},"final":true}`, "statusUpdate", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, final, err := FromV03StreamEvent([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind() != c.kind || final != c.final {
				t.Errorf("kind %q final %v", r.Kind(), final)
			}
		})
	}
	if _, _, err := FromV03StreamEvent([]byte(`[1]`)); err == nil {
		t.Error("array accepted")
	}
}

func TestV03ResultsReadIntoV1Types(t *testing.T) {
	// A 0.3 peer's results: send results through FromV03SendResult, the
	// others read leniently by Unmarshal into the v1.0 result types.
	cases := []struct {
		name  string
		in    string
		check func(t *testing.T, data []byte) bool
	}{
		{"send message", `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"hi"}]}`,
			func(t *testing.T, data []byte) bool {
				r, err := FromV03SendResult(data)
				return err == nil && r.Message != nil && r.Message.Text() == "hi"
			}},
		{"send task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}`,
			func(t *testing.T, data []byte) bool {
				r, err := FromV03SendResult(data)
				return err == nil && r.Task != nil && r.Task.Status.State == TaskStateCompleted
			}},
		{"task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"canceled"}}`,
			func(t *testing.T, data []byte) bool {
				var v Task
				return Unmarshal(data, &v) == nil && v.ID == "t" && v.Status.State == TaskStateCanceled
			}},
		{"push config", `{"taskId":"t","pushNotificationConfig":{"id":"p","url":"https://h","authentication":{"schemes":["Bearer"]}}}`,
			func(t *testing.T, data []byte) bool {
				var c TaskPushNotificationConfig
				return Unmarshal(data, &c) == nil && c.TaskID == "t" && c.ID == "p" && c.URL == "https://h" && c.Authentication.Scheme == "Bearer"
			}},
		{"extended card", `{"name":"A","description":"d","url":"https://a/rpc","version":"1","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`,
			func(t *testing.T, data []byte) bool {
				c, err := ParseAgentCard(data)
				return err == nil && c.SupportedInterfaces[0].ProtocolVersion == "0.3"
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.check(t, []byte(c.in)) {
				t.Errorf("%s not read into its v1.0 type", c.in)
			}
		})
	}
	if _, err := FromV03SendResult([]byte(`{"kind":"status-update","taskId":"t","status":{"state":"working"}}`)); err == nil {
		t.Error("status update accepted as a send result")
	}
}

func TestV1RequestsEncodeAsV03Params(t *testing.T) {
	m := Message{MessageID: "m", Role: RoleUser, Parts: []Part{TextPart("hi")}}
	cases := []struct {
		name   string
		params any
		want   string
	}{
		{"send, tenant dropped", ToV03SendParams(&SendMessageRequest{Tenant: "x", Message: m}), `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":true}}`},
		{"send, configured", ToV03SendParams(&SendMessageRequest{Message: m, Configuration: &SendMessageConfiguration{ReturnImmediately: true, HistoryLength: Int32(2), AcceptedOutputModes: []string{"text/plain"},
			TaskPushNotificationConfig: &TaskPushNotificationConfig{URL: "https://h", Authentication: &AuthenticationInfo{Scheme: "Bearer", Credentials: "s"}}}}),
			`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":2,"blocking":false,"pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["Bearer"],"credentials":"s"}}}}`},
		{"get task", (&GetTaskRequest{Tenant: "x", ID: "t", HistoryLength: Int32(0)}).V03(), `{"id":"t","historyLength":0}`},
		{"cancel task", (&CancelTaskRequest{ID: "t", Metadata: map[string]any{"a": 1}}).V03(), `{"id":"t","metadata":{"a":1}}`},
		{"subscribe", (&SubscribeToTaskRequest{ID: "t"}).V03(), `{"id":"t"}`},
		{"push config", ToV03PushConfig(&TaskPushNotificationConfig{TaskID: "t", ID: "p", URL: "https://h"}), `{"taskId":"t","pushNotificationConfig":{"id":"p","url":"https://h"}}`},
	}
	for _, c := range cases {
		if got := mustJSON(t, c.params); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestDecodeParamsReadsV1AndV03Shapes(t *testing.T) {
	cases := []struct {
		name   string
		op     Operation
		v03    bool
		params string
		want   any
	}{
		{"v1 send", OpSendMessage, false, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
			&SendMessageRequest{Message: Message{MessageID: "m", Role: RoleUser, Parts: []Part{TextPart("hi")}}}},
		{"0.3 send", OpSendMessage, true, `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":false}}`,
			&SendMessageRequest{Message: Message{MessageID: "m", Role: RoleUser, Parts: []Part{TextPart("hi")}}, Configuration: &SendMessageConfiguration{ReturnImmediately: true}}},
		{"0.3 get", OpGetTask, true, `{"id":"t","historyLength":3,"metadata":{}}`, &GetTaskRequest{ID: "t", HistoryLength: Int32(3)}},
		{"v1 get snake", OpGetTask, false, `{"id":"t","history_length":"3"}`, &GetTaskRequest{ID: "t", HistoryLength: Int32(3)}},
		{"v1 list", OpListTasks, false, `{"context_id":"c","status":"TASK_STATE_WORKING","page_size":10,"include_artifacts":true}`,
			&ListTasksRequest{ContextID: "c", Status: TaskStateWorking, PageSize: Int32(10), IncludeArtifacts: true}},
		{"0.3 cancel", OpCancelTask, true, `{"id":"t","metadata":{"k":"v"}}`, &CancelTaskRequest{ID: "t", Metadata: map[string]any{"k": "v"}}},
		{"0.3 resubscribe", OpSubscribeToTask, true, `{"id":"t"}`, &SubscribeToTaskRequest{ID: "t"}},
		{"v1 create push", OpCreatePushConfig, false, `{"task_id":"t","url":"https://h/cb","authentication":{"scheme":"Bearer","credentials":"s"}}`,
			&TaskPushNotificationConfig{TaskID: "t", URL: "https://h/cb", Authentication: &AuthenticationInfo{Scheme: "Bearer", Credentials: "s"}}},
		{"0.3 set push without id takes the task id", OpCreatePushConfig, true, `{"taskId":"t","pushNotificationConfig":{"url":"https://h/cb","token":"k"}}`,
			&TaskPushNotificationConfig{ID: "t", TaskID: "t", URL: "https://h/cb", Token: "k"}},
		{"v1 get push", OpGetPushConfig, false, `{"taskId":"t","id":"p"}`, &GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"0.3 get push", OpGetPushConfig, true, `{"id":"t","pushNotificationConfigId":"p"}`, &GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"0.3 get push by task id", OpGetPushConfig, true, `{"id":"t"}`, &GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "t"}},
		{"v1 list push", OpListPushConfigs, false, `{"taskId":"t","pageSize":"5"}`, &ListTaskPushNotificationConfigsRequest{TaskID: "t", PageSize: 5}},
		{"0.3 list push", OpListPushConfigs, true, `{"id":"t"}`, &ListTaskPushNotificationConfigsRequest{TaskID: "t"}},
		{"v1 delete push", OpDeletePushConfig, false, `{"taskId":"t","id":"p"}`, &DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"0.3 delete push", OpDeletePushConfig, true, `{"id":"t","pushNotificationConfigId":"p"}`, &DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"card without params", OpGetExtendedCard, false, ``, &GetExtendedAgentCardRequest{}},
		{"0.3 card", OpGetExtendedCard, true, `null`, &GetExtendedAgentCardRequest{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, e := DecodeParams(c.op, c.v03, json.RawMessage(c.params))
			if e != nil {
				t.Fatalf("error %v", e)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %s, want %s", mustJSON(t, got), mustJSON(t, c.want))
			}
		})
	}
}

func TestDecodeParamsRejectsInvalidParamsWithFieldNames(t *testing.T) {
	cases := []struct {
		name   string
		op     Operation
		v03    bool
		params string
		field  string
	}{
		{"missing parts", OpSendMessage, false, `{"message":{"messageId":"m","role":"ROLE_USER"}}`, "message.parts"},
		{"missing role", OpSendMessage, false, `{"message":{"messageId":"m","parts":[{"text":"x"}]}}`, "message.role"},
		{"empty part", OpSendMessage, false, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{}]}}`, "message.parts[0]"},
		{"bad role", OpSendMessage, false, `{"message":{"messageId":"m","role":"boss","parts":[{"text":"x"}]}}`, "message.role"},
		{"negative history", OpSendMessage, false, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":-1}}`, "configuration.historyLength"},
		{"bad push url", OpSendMessage, false, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"ftp://x"}}}`, "configuration.taskPushNotificationConfig.url"},
		{"params not an object", OpSendMessage, false, `[1]`, "params"},
		{"missing id", OpGetTask, false, `{}`, "id"},
		{"id wrong type", OpGetTask, false, `{"id":1}`, "id"},
		{"bad history string", OpGetTask, false, `{"id":"t","historyLength":"ten"}`, "historyLength"},
		{"page size too big", OpListTasks, false, `{"pageSize":150}`, "pageSize"},
		{"bad status", OpListTasks, false, `{"status":"DONE"}`, "status"},
		{"bad timestamp", OpListTasks, false, `{"statusTimestampAfter":"yesterday"}`, "statusTimestampAfter"},
		{"cancel without id", OpCancelTask, true, `{}`, "id"},
		{"push without url", OpCreatePushConfig, false, `{"taskId":"t"}`, "url"},
		{"push without task", OpCreatePushConfig, false, `{"url":"https://h"}`, "taskId"},
		{"push auth without scheme", OpCreatePushConfig, false, `{"taskId":"t","url":"https://h","authentication":{"credentials":"x"}}`, "authentication.scheme"},
		{"get push without id", OpGetPushConfig, false, `{"taskId":"t"}`, "id"},
		{"0.3 get push without task", OpGetPushConfig, true, `{}`, "id"},
		{"0.3 delete without config id", OpDeletePushConfig, true, `{"id":"t"}`, "pushNotificationConfigId"},
		{"bad raw", OpSendMessage, false, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"!!"}]}}`, "message.parts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, e := DecodeParams(c.op, c.v03, json.RawMessage(c.params))
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Code != CodeInvalidParams || e.Metadata["field"] != c.field || !strings.HasPrefix(e.Message, c.field+": ") {
				t.Errorf("got %d field %q message %q, want field %q", e.Code, e.Metadata["field"], e.Message, c.field)
			}
		})
	}
}

func TestTyped03ParamsConvertBackToV1(t *testing.T) {
	req := &SendMessageRequest{
		Message: Message{MessageID: "m", ContextID: "c", Role: RoleUser, Parts: []Part{TextPart("hi"), FilePart([]byte("x"), "text/plain", "x.txt"), URLPart("https://u", "", "")}},
		Configuration: &SendMessageConfiguration{ReturnImmediately: true, HistoryLength: Int32(1),
			TaskPushNotificationConfig: &TaskPushNotificationConfig{ID: "p", URL: "https://h", Authentication: &AuthenticationInfo{Scheme: "Bearer"}}},
		Metadata: map[string]any{"k": "v"},
	}
	back, err := ToV03SendParams(req).V1()
	if err != nil || !reflect.DeepEqual(back, req) {
		t.Errorf("send params round trip:\n got %s\nwant %s (%v)", mustJSON(t, back), mustJSON(t, req), err)
	}
	cfg := fullPushConfig()
	cfg.Tenant = "" // no 0.3 equivalent
	if got := ToV03PushConfig(cfg).(*TaskPushNotificationConfig03).V1(); !reflect.DeepEqual(got, cfg) {
		t.Errorf("push config round trip: %+v", got)
	}
	if got := (&TaskQueryParams{ID: "t", HistoryLength: Int32(2)}).V1(); got.ID != "t" || *got.HistoryLength != 2 {
		t.Errorf("task query: %+v", got)
	}
	p := &TaskIdParams{ID: "t", Metadata: map[string]any{"a": 1}}
	if p.CancelRequest().ID != "t" || p.CancelRequest().Metadata["a"] != 1 || p.SubscribeRequest().ID != "t" {
		t.Error("task id params")
	}
	if g := (&GetTaskPushNotificationConfigParams{ID: "t", PushNotificationConfigID: "p"}).V1(); g.TaskID != "t" || g.ID != "p" {
		t.Errorf("get push: %+v", g)
	}
	if d := (&DeleteTaskPushNotificationConfigParams{ID: "t", PushNotificationConfigID: "p"}).V1(); d.TaskID != "t" || d.ID != "p" {
		t.Errorf("delete push: %+v", d)
	}
}
