package a2av03

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// 0.3 shapes read back as v1.0 values: the results and events of a 0.3
// server, and the typed 0.3 params.

// probe reads the discriminating keys of a 0.3 result or event (and of
// a v1.0 wrapper, for servers that answer 0.3 methods with v1.0 shapes).
type probe struct {
	Kind           string          `json:"kind"`
	Task           json.RawMessage `json:"task"`
	Message        json.RawMessage `json:"message"`
	StatusUpdate   json.RawMessage `json:"statusUpdate"`
	ArtifactUpdate json.RawMessage `json:"artifactUpdate"`
	Status         json.RawMessage `json:"status"`
	Artifact       json.RawMessage `json:"artifact"`
	TaskID         string          `json:"taskId"`
	Final          bool            `json:"final"`
}

// kind returns the 0.3 kind of the probed object, guessing from its keys
// when `kind` is absent, or "wrapper" for a v1.0 StreamResponse.
func (p *probe) kind() string {
	switch strings.ToLower(p.Kind) {
	case KindTask, KindMessage, KindStatusUpdate, KindArtifactUpdate:
		return strings.ToLower(p.Kind)
	}
	switch {
	case p.Task != nil || p.StatusUpdate != nil || p.ArtifactUpdate != nil,
		p.Message != nil && p.Status == nil:
		// {"message": {...}} alone is a v1.0 wrapper; a 0.3 object never
		// has a top-level `message` key.
		return "wrapper"
	case p.Artifact != nil:
		return KindArtifactUpdate
	case p.Status != nil && p.TaskID != "":
		return KindStatusUpdate
	case p.Status != nil:
		return KindTask
	}
	return KindMessage
}

// ParseStreamEvent decodes one `result` of a 0.3 message/stream or
// tasks/resubscribe stream (a bare Task, Message, status-update or
// artifact-update) into a v1.0 StreamResponse, reading it leniently
// (a2a.Unmarshal: snake_case keys, 0.3 enums and parts). final reports the
// 0.3 `final` flag of a status update.
func ParseStreamEvent(data []byte) (r *a2a.StreamResponse, final bool, err error) {
	var p probe
	if err := a2a.Unmarshal(data, &p); err != nil {
		return nil, false, fmt.Errorf("0.3 stream event is not a JSON object: %w", err)
	}
	r = &a2a.StreamResponse{}
	switch p.kind() {
	case "wrapper":
		err = a2a.Unmarshal(data, r)
	case KindTask:
		r.Task = new(a2a.Task)
		err = a2a.Unmarshal(data, r.Task)
	case KindMessage:
		r.Message = new(a2a.Message)
		err = a2a.Unmarshal(data, r.Message)
	case KindStatusUpdate:
		r.StatusUpdate = new(a2a.TaskStatusUpdateEvent)
		err = a2a.Unmarshal(data, r.StatusUpdate)
		final = p.Final
	case KindArtifactUpdate:
		r.ArtifactUpdate = new(a2a.TaskArtifactUpdateEvent)
		err = a2a.Unmarshal(data, r.ArtifactUpdate)
	}
	if err != nil {
		return nil, false, fmt.Errorf("decode 0.3 %s: %w", p.kind(), err)
	}
	return r, final, nil
}

// ParseSendResult decodes the result of 0.3 message/send — a bare Task
// or Message told apart by `kind` — into a v1.0 SendMessageResponse.
func ParseSendResult(data []byte) (*a2a.SendMessageResponse, error) {
	r, _, err := ParseStreamEvent(data)
	if err != nil {
		return nil, err
	}
	if r.Task == nil && r.Message == nil {
		return nil, fmt.Errorf("0.3 message/send result is a %s, want a task or a message", r.Kind())
	}
	return &a2a.SendMessageResponse{Task: r.Task, Message: r.Message}, nil
}

// TaskIdParams is TaskIDParams spelled as in the 0.3 specification.
type TaskIdParams = TaskIDParams

// V1 converts the 0.3 send params to a v1.0 SendMessageRequest
// (blocking → returnImmediately inverted, nested push config flattened,
// 0.3 parts and enums converted). It fails only if the message cannot be
// encoded.
func (p *MessageSendParams) V1() (*a2a.SendMessageRequest, error) {
	b, err := a2a.Marshal(p)
	if err != nil {
		return nil, err
	}
	var r a2a.SendMessageRequest
	if err := a2a.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// V1 converts 0.3 tasks/get params to a v1.0 GetTaskRequest.
func (p *TaskQueryParams) V1() *a2a.GetTaskRequest {
	return &a2a.GetTaskRequest{ID: p.ID, HistoryLength: p.HistoryLength}
}

// CancelRequest converts 0.3 tasks/cancel params to a v1.0
// CancelTaskRequest.
func (p *TaskIDParams) CancelRequest() *a2a.CancelTaskRequest {
	return &a2a.CancelTaskRequest{ID: p.ID, Metadata: p.Metadata}
}

// SubscribeRequest converts 0.3 tasks/resubscribe params to a v1.0
// SubscribeToTaskRequest.
func (p *TaskIDParams) SubscribeRequest() *a2a.SubscribeToTaskRequest {
	return &a2a.SubscribeToTaskRequest{ID: p.ID}
}

// V1 converts a nested 0.3 push config to the flat v1.0 form.
func (c *TaskPushNotificationConfig) V1() *a2a.TaskPushNotificationConfig {
	n := c.PushNotificationConfig
	out := &a2a.TaskPushNotificationConfig{ID: n.ID, TaskID: c.TaskID, URL: n.URL, Token: n.Token}
	if a := n.Authentication; a != nil && len(a.Schemes) > 0 {
		out.Authentication = &a2a.AuthenticationInfo{Scheme: a.Schemes[0], Credentials: a.Credentials}
	}
	return out
}

// V1 converts 0.3 get params (ID is the task id) to a v1.0
// GetTaskPushNotificationConfigRequest.
func (p *GetTaskPushNotificationConfigParams) V1() *a2a.GetTaskPushNotificationConfigRequest {
	return &a2a.GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
}

// V1 converts 0.3 delete params (ID is the task id) to a v1.0
// DeleteTaskPushNotificationConfigRequest.
func (p *DeleteTaskPushNotificationConfigParams) V1() *a2a.DeleteTaskPushNotificationConfigRequest {
	return &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
}
