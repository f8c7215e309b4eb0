package a2a

import (
	"net/http"
	"testing"
	"time"
)

// TestRESTRequestFollowsTheSpecificationsRoutes pins the HTTP+JSON routes
// the client calls and the tests use against the specification's table,
// written out here by hand, and checks that the server's matcher reads
// every one of them back as the same operation.
func TestRESTRequestFollowsTheSpecificationsRoutes(t *testing.T) {
	n := int32(3)
	after := NewTimestamp(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	msg := NewMessage(RoleUser, TextPart("hi <b>"))
	msg.MessageID = "m1"
	cases := []struct {
		op         Operation
		req        any
		method     string
		url        string
		body       string
		pathParams []PathParam
	}{
		{OpSendMessage, &SendMessageRequest{Message: msg}, "POST", "/message:send",
			`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi <b>"}]}}`, nil},
		{OpSendStreamingMessage, &SendMessageRequest{Message: msg}, "POST", "/message:stream",
			`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi <b>"}]}}`, nil},
		{OpGetTask, &GetTaskRequest{ID: "t/1", HistoryLength: &n}, "GET", "/tasks/t%2F1?historyLength=3", "", []PathParam{{"id", "t/1"}}},
		{OpListTasks, &ListTasksRequest{ContextID: "c1", Status: TaskStateWorking, PageSize: &n, PageToken: "p",
			StatusTimestampAfter: after, IncludeArtifacts: true}, "GET",
			"/tasks?contextId=c1&includeArtifacts=true&pageSize=3&pageToken=p&status=TASK_STATE_WORKING&statusTimestampAfter=2025-01-02T03%3A04%3A05.000Z", "", nil},
		{OpCancelTask, &CancelTaskRequest{ID: "t1"}, "POST", "/tasks/t1:cancel", "", []PathParam{{"id", "t1"}}},
		{OpCancelTask, &CancelTaskRequest{ID: "t1", Metadata: map[string]any{"why": "<done>"}}, "POST", "/tasks/t1:cancel",
			`{"metadata":{"why":"<done>"}}`, []PathParam{{"id", "t1"}}},
		{OpSubscribeToTask, &SubscribeToTaskRequest{ID: "t1"}, "POST", "/tasks/t1:subscribe", "", []PathParam{{"id", "t1"}}},
		{OpCreatePushConfig, &TaskPushNotificationConfig{TaskID: "t1", ID: "c1", URL: "https://h/"}, "POST",
			"/tasks/t1/pushNotificationConfigs", `{"id":"c1","url":"https://h/"}`, []PathParam{{"taskId", "t1"}}},
		{OpGetPushConfig, &GetTaskPushNotificationConfigRequest{TaskID: "t1", ID: "c1"}, "GET",
			"/tasks/t1/pushNotificationConfigs/c1", "", []PathParam{{"taskId", "t1"}, {"id", "c1"}}},
		{OpListPushConfigs, &ListTaskPushNotificationConfigsRequest{TaskID: "t1", PageSize: 2}, "GET",
			"/tasks/t1/pushNotificationConfigs?pageSize=2", "", []PathParam{{"taskId", "t1"}}},
		{OpDeletePushConfig, &DeleteTaskPushNotificationConfigRequest{TaskID: "t1", ID: "c1"}, "DELETE",
			"/tasks/t1/pushNotificationConfigs/c1", "", []PathParam{{"taskId", "t1"}, {"id", "c1"}}},
		{OpGetExtendedCard, &GetExtendedAgentCardRequest{}, "GET", "/extendedAgentCard", "", nil},
		{OpGetTask, &GetTaskRequest{Tenant: "acme", ID: "t1"}, "GET", "/acme/tasks/t1", "", []PathParam{{"id", "t1"}}},
	}
	for _, c := range cases {
		call, err := RESTRequest(c.op, c.req)
		if err != nil {
			t.Errorf("%v: %v", c.op, err)
			continue
		}
		if call.Method != c.method || call.URL("") != c.url || string(call.Body) != c.body {
			t.Errorf("%v: %s %s %s\nwant %s %s %s", c.op, call.Method, call.URL(""), call.Body, c.method, c.url, c.body)
		}
		m, allow, found := MatchREST(call.Method, call.Path)
		if !found || m.Op != c.op || allow != "" || m.HasBody != (call.Method == http.MethodPost) ||
			len(m.Path) != len(c.pathParams) {
			t.Errorf("%v: MatchREST(%s %s) = %+v %q %v", c.op, call.Method, call.Path, m, allow, found)
			continue
		}
		for i := range m.Path {
			if m.Path[i] != c.pathParams[i] {
				t.Errorf("%v: path parameters %v, want %v", c.op, m.Path, c.pathParams)
			}
		}
	}
	// The proto's GET for SubscribeToTask is served too.
	if m, _, _ := MatchREST("GET", "/tasks/t1:subscribe"); m.Op != OpSubscribeToTask {
		t.Errorf("GET :subscribe = %+v", m)
	}
	if _, err := RESTRequest(OpGetTask, &GetTaskRequest{}); err == nil {
		t.Error("a GetTask without an id built a route")
	}
}
