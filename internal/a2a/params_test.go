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

func TestDecodeParamsReadsV1Shapes(t *testing.T) {
	cases := []struct {
		name   string
		op     Operation
		params string
		want   any
	}{
		{"v1 send", OpSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
			&SendMessageRequest{Message: Message{MessageID: "m", Role: RoleUser, Parts: []Part{TextPart("hi")}}}},
		{"v1 get snake", OpGetTask, `{"id":"t","history_length":"3"}`, &GetTaskRequest{ID: "t", HistoryLength: Int32(3)}},
		{"v1 list", OpListTasks, `{"context_id":"c","status":"TASK_STATE_WORKING","page_size":10,"include_artifacts":true}`,
			&ListTasksRequest{ContextID: "c", Status: TaskStateWorking, PageSize: Int32(10), IncludeArtifacts: true}},
		{"v1 create push", OpCreatePushConfig, `{"task_id":"t","url":"https://h/cb","authentication":{"scheme":"Bearer","credentials":"s"}}`,
			&TaskPushNotificationConfig{TaskID: "t", URL: "https://h/cb", Authentication: &AuthenticationInfo{Scheme: "Bearer", Credentials: "s"}}},
		{"v1 get push", OpGetPushConfig, `{"taskId":"t","id":"p"}`, &GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"v1 list push", OpListPushConfigs, `{"taskId":"t","pageSize":"5"}`, &ListTaskPushNotificationConfigsRequest{TaskID: "t", PageSize: 5}},
		{"v1 delete push", OpDeletePushConfig, `{"taskId":"t","id":"p"}`, &DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"card without params", OpGetExtendedCard, ``, &GetExtendedAgentCardRequest{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, e := DecodeParams(c.op, json.RawMessage(c.params))
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
		params string
		field  string
	}{
		{"missing parts", OpSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER"}}`, "message.parts"},
		{"missing role", OpSendMessage, `{"message":{"messageId":"m","parts":[{"text":"x"}]}}`, "message.role"},
		{"empty part", OpSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{}]}}`, "message.parts[0]"},
		{"bad role", OpSendMessage, `{"message":{"messageId":"m","role":"boss","parts":[{"text":"x"}]}}`, "message.role"},
		{"negative history", OpSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":-1}}`, "configuration.historyLength"},
		{"bad push url", OpSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"ftp://x"}}}`, "configuration.taskPushNotificationConfig.url"},
		{"params not an object", OpSendMessage, `[1]`, "params"},
		{"missing id", OpGetTask, `{}`, "id"},
		{"id wrong type", OpGetTask, `{"id":1}`, "id"},
		{"bad history string", OpGetTask, `{"id":"t","historyLength":"ten"}`, "historyLength"},
		{"page size too big", OpListTasks, `{"pageSize":150}`, "pageSize"},
		{"bad status", OpListTasks, `{"status":"DONE"}`, "status"},
		{"bad timestamp", OpListTasks, `{"statusTimestampAfter":"yesterday"}`, "statusTimestampAfter"},
		{"push without url", OpCreatePushConfig, `{"taskId":"t"}`, "url"},
		{"push without task", OpCreatePushConfig, `{"url":"https://h"}`, "taskId"},
		{"push auth without scheme", OpCreatePushConfig, `{"taskId":"t","url":"https://h","authentication":{"credentials":"x"}}`, "authentication.scheme"},
		{"get push without id", OpGetPushConfig, `{"taskId":"t"}`, "id"},
		{"bad raw", OpSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"!!"}]}}`, "message.parts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, e := DecodeParams(c.op, json.RawMessage(c.params))
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Code != CodeInvalidParams || e.Metadata["field"] != c.field || !strings.HasPrefix(e.Message, c.field+": ") {
				t.Errorf("got %d field %q message %q, want field %q", e.Code, e.Metadata["field"], e.Message, c.field)
			}
		})
	}
}
