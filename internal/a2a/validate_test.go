package a2a

import (
	"strings"
	"testing"
)

func TestValidateReportsTheFieldAndTheFix(t *testing.T) {
	okMsg := Message{MessageID: "m", Role: RoleAgent, Parts: []Part{TextPart("x")}}
	cases := []struct {
		name string
		v    interface{ Validate() error }
		want string // "" for valid
	}{
		{"valid message", &okMsg, ""},
		{"message without parts", &Message{MessageID: "m", Role: RoleUser}, "message.parts: must contain at least one part"},
		{"message without id", &Message{Role: RoleUser, Parts: []Part{TextPart("x")}}, "message.messageId: is required: set a unique id"},
		{"unspecified role", &Message{MessageID: "m", Role: RoleUnspecified, Parts: []Part{TextPart("x")}}, "message.role: must be ROLE_USER or ROLE_AGENT, got ROLE_UNSPECIFIED"},
		{"second part empty", &Message{MessageID: "m", Role: RoleUser, Parts: []Part{TextPart("x"), {}}}, "message.parts[1]: must have exactly one of"},
		{"valid artifact", &Artifact{ArtifactID: "a", Parts: []Part{TextPart("x")}}, ""},
		{"artifact without id", &Artifact{Parts: []Part{TextPart("x")}}, "artifact.artifactId: is required"},
		{"valid task", &Task{ID: "t", Status: TaskStatus{State: TaskStateWorking}}, ""},
		{"task without state", &Task{ID: "t"}, "task.status.state: must be a defined task state"},
		{"task with bad history", &Task{ID: "t", Status: TaskStatus{State: TaskStateWorking}, History: []Message{{}}}, "task.history[0].messageId"},
		{"task with bad status message", &Task{ID: "t", Status: TaskStatus{State: TaskStateFailed, Message: &Message{MessageID: "m", Role: RoleAgent}}}, "task.status.message.parts"},
		{"valid stream message", &StreamResponse{Message: &okMsg}, ""},
		{"empty stream response", &StreamResponse{}, "a stream response must carry exactly one of"},
		{"two stream fields", &StreamResponse{Message: &okMsg, Task: &Task{}}, "a stream response must carry exactly one of"},
		{"status update without ids", &StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{Status: TaskStatus{State: TaskStateWorking}}}, "statusUpdate.taskId: is required"},
		{"artifact update without parts", &StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: Artifact{ArtifactID: "a"}}}, "artifactUpdate.artifact.parts"},
		{"valid send response", &SendMessageResponse{Message: &okMsg}, ""},
		{"empty send response", &SendMessageResponse{}, "a send message response must carry exactly one of task or message"},
		{"valid get", &GetTaskRequest{ID: "t", HistoryLength: Int32(0)}, ""},
		{"get negative history", &GetTaskRequest{ID: "t", HistoryLength: Int32(-2)}, "historyLength: must be 0 or more"},
		{"list default page", &ListTasksRequest{PageSize: Int32(0)}, ""},
		{"list negative page", &ListTasksRequest{PageSize: Int32(-1)}, "pageSize: must be between 1 and 100"},
		{"cancel", &CancelTaskRequest{}, "id: is required: give the task id"},
		{"subscribe", &SubscribeToTaskRequest{ID: "t"}, ""},
		{"push relative url", &TaskPushNotificationConfig{TaskID: "t", URL: "/cb"}, `url: must be an absolute http or https URL, got "/cb"`},
		{"get push", &GetTaskPushNotificationConfigRequest{ID: "p"}, "taskId: is required"},
		{"list push", &ListTaskPushNotificationConfigsRequest{TaskID: "t", PageSize: -1}, "pageSize: must be 0"},
		{"delete push", &DeleteTaskPushNotificationConfigRequest{TaskID: "t"}, "id: is required: give the push notification config id"},
		{"extended card", &GetExtendedAgentCardRequest{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.v.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Code != CodeInvalidParams || !strings.HasPrefix(e.Message, c.want) {
				t.Fatalf("got %v, want -32602 starting %q", err, c.want)
			}
		})
	}
}
