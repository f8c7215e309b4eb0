package a2a

import (
	"encoding/json"
	"fmt"
	"strings"
)

// 0.3 shapes read back as v1.0 values: the results and events of a 0.3
// server, and the typed 0.3 params.

// probe03 reads the discriminating keys of a 0.3 result or event (and of
// a v1.0 wrapper, for servers that answer 0.3 methods with v1.0 shapes).
type probe03 struct {
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
func (p *probe03) kind() string {
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

// FromV03StreamEvent decodes one `result` of a 0.3 message/stream or
// tasks/resubscribe stream (a bare Task, Message, status-update or
// artifact-update) into a v1.0 StreamResponse. final reports the 0.3
// `final` flag of a status update.
func FromV03StreamEvent(data []byte) (r *StreamResponse, final bool, err error) {
	data = normalizeKeys(data)
	var p probe03
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, false, fmt.Errorf("0.3 stream event is not a JSON object: %w", err)
	}
	r = &StreamResponse{}
	switch p.kind() {
	case "wrapper":
		err = json.Unmarshal(data, r)
	case KindTask:
		r.Task = new(Task)
		err = json.Unmarshal(data, r.Task)
	case KindMessage:
		r.Message = new(Message)
		err = json.Unmarshal(data, r.Message)
	case KindStatusUpdate:
		r.StatusUpdate = new(TaskStatusUpdateEvent)
		err = json.Unmarshal(data, r.StatusUpdate)
		final = p.Final
	case KindArtifactUpdate:
		r.ArtifactUpdate = new(TaskArtifactUpdateEvent)
		err = json.Unmarshal(data, r.ArtifactUpdate)
	}
	if err != nil {
		return nil, false, fmt.Errorf("decode 0.3 %s: %w", p.kind(), err)
	}
	return r, final, nil
}

// FromV03SendResult decodes the result of 0.3 message/send — a bare Task
// or Message told apart by `kind` — into a v1.0 SendMessageResponse.
func FromV03SendResult(data []byte) (*SendMessageResponse, error) {
	r, _, err := FromV03StreamEvent(data)
	if err != nil {
		return nil, err
	}
	if r.Task == nil && r.Message == nil {
		return nil, fmt.Errorf("0.3 message/send result is a %s, want a task or a message", r.Kind())
	}
	return &SendMessageResponse{Task: r.Task, Message: r.Message}, nil
}

// TaskIdParams is TaskIDParams spelled as in the 0.3 specification.
type TaskIdParams = TaskIDParams

// V1 converts the 0.3 send params to a v1.0 SendMessageRequest
// (blocking → returnImmediately inverted, nested push config flattened,
// 0.3 parts and enums converted). It fails only if the message cannot be
// encoded.
func (p *MessageSendParams) V1() (*SendMessageRequest, error) {
	b, err := marshalPlain(p)
	if err != nil {
		return nil, err
	}
	var r SendMessageRequest
	if err := Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// V1 converts 0.3 tasks/get params to a v1.0 GetTaskRequest.
func (p *TaskQueryParams) V1() *GetTaskRequest {
	return &GetTaskRequest{ID: p.ID, HistoryLength: p.HistoryLength}
}

// CancelRequest converts 0.3 tasks/cancel params to a v1.0
// CancelTaskRequest.
func (p *TaskIDParams) CancelRequest() *CancelTaskRequest {
	return &CancelTaskRequest{ID: p.ID, Metadata: p.Metadata}
}

// SubscribeRequest converts 0.3 tasks/resubscribe params to a v1.0
// SubscribeToTaskRequest.
func (p *TaskIDParams) SubscribeRequest() *SubscribeToTaskRequest {
	return &SubscribeToTaskRequest{ID: p.ID}
}

// V1 converts a nested 0.3 push config to the flat v1.0 form.
func (c *TaskPushNotificationConfig03) V1() *TaskPushNotificationConfig {
	n := c.PushNotificationConfig
	out := &TaskPushNotificationConfig{ID: n.ID, TaskID: c.TaskID, URL: n.URL, Token: n.Token}
	if a := n.Authentication; a != nil && len(a.Schemes) > 0 {
		out.Authentication = &AuthenticationInfo{Scheme: a.Schemes[0], Credentials: a.Credentials}
	}
	return out
}

// V1 converts 0.3 get params (ID is the task id) to a v1.0
// GetTaskPushNotificationConfigRequest.
func (p *GetTaskPushNotificationConfigParams) V1() *GetTaskPushNotificationConfigRequest {
	return &GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
}

// V1 converts 0.3 delete params (ID is the task id) to a v1.0
// DeleteTaskPushNotificationConfigRequest.
func (p *DeleteTaskPushNotificationConfigParams) V1() *DeleteTaskPushNotificationConfigRequest {
	return &DeleteTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
}
