package a2a

import "encoding/json"

// SendMessageRequest is the params of SendMessage and SendStreamingMessage.
type SendMessageRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// Message is the message to send.
	Message Message `json:"message"`
	// Configuration tunes how the server handles the send.
	Configuration *SendMessageConfiguration `json:"configuration,omitempty"`
	// Metadata is free-form data attached to the request.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// SendMessageConfiguration tunes a send.
type SendMessageConfiguration struct {
	// AcceptedOutputModes lists the media types the client accepts.
	AcceptedOutputModes []string `json:"acceptedOutputModes,omitempty"`
	// TaskPushNotificationConfig registers a webhook along with the send;
	// its TaskID is left empty.
	TaskPushNotificationConfig *TaskPushNotificationConfig `json:"taskPushNotificationConfig,omitempty"`
	// HistoryLength caps the history returned with the task (nil: no cap).
	HistoryLength *int32 `json:"historyLength,omitempty"`
	// ReturnImmediately makes the send non-blocking. The default, false,
	// waits until the task is terminal or interrupted.
	ReturnImmediately bool `json:"returnImmediately,omitempty"`
}

// UnmarshalJSON accepts, besides the v1.0 fields, the legacy `blocking`
// flag (0.3 and v1.0-rc; inverted into ReturnImmediately) and the legacy
// `pushNotificationConfig` (0.3 and v1.0-rc shapes). An explicit
// `returnImmediately` wins over `blocking`. An absent `blocking` means
// blocking, as in final v1.0 and the 0.3 SDKs — note that v1.0-rc
// defaulted to non-blocking, which an rc peer relying on the default will
// not get. historyLength may be a number or a numeric string.
func (c *SendMessageConfiguration) UnmarshalJSON(b []byte) error {
	if handled, err := c.decodeFast(b); handled {
		return err
	}
	return c.decodeSlow(b)
}

// decodeSlow decodes a configuration with encoding/json.
func (c *SendMessageConfiguration) decodeSlow(b []byte) error {
	var w struct {
		AcceptedOutputModes        []string                    `json:"acceptedOutputModes"`
		TaskPushNotificationConfig *TaskPushNotificationConfig `json:"taskPushNotificationConfig"`
		PushNotificationConfig     *TaskPushNotificationConfig `json:"pushNotificationConfig"`
		HistoryLength              *flexInt32                  `json:"historyLength"`
		ReturnImmediately          *bool                       `json:"returnImmediately"`
		Blocking                   *bool                       `json:"blocking"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	c.merge(w.AcceptedOutputModes, w.TaskPushNotificationConfig, w.PushNotificationConfig, w.HistoryLength.ptr(), w.ReturnImmediately, w.Blocking)
	return nil
}

// merge sets c from the decoded fields, applying the legacy rules.
func (c *SendMessageConfiguration) merge(modes []string, push, legacyPush *TaskPushNotificationConfig, history *int32, returnImmediately, blocking *bool) {
	out := SendMessageConfiguration{
		AcceptedOutputModes:        modes,
		TaskPushNotificationConfig: push,
		HistoryLength:              history,
	}
	if out.TaskPushNotificationConfig == nil {
		out.TaskPushNotificationConfig = legacyPush
	}
	switch {
	case returnImmediately != nil:
		out.ReturnImmediately = *returnImmediately
	case blocking != nil:
		out.ReturnImmediately = !*blocking
	}
	*c = out
}

// sendConfigKeys are the keys decodeFast understands.
var sendConfigKeys = [...]string{"acceptedOutputModes", "taskPushNotificationConfig", "pushNotificationConfig", "historyLength", "returnImmediately", "blocking"}

// decodeFast decodes the common configuration shapes without reflection;
// handled=false sends b to encoding/json.
func (c *SendMessageConfiguration) decodeFast(b []byte) (handled bool, err error) {
	var (
		modes               []string
		push, legacyPush    *TaskPushNotificationConfig
		history             *int32
		returnNow, blocking *bool
	)
	boolean := func(val []byte) (*bool, bool) {
		switch string(val) {
		case "true":
			v := true
			return &v, true
		case "false":
			v := false
			return &v, true
		case "null":
			return nil, true
		}
		return nil, false
	}
	handled, err = objectMembers(b, func(key, val []byte) (bool, error) {
		ok := true
		switch string(key) {
		case "acceptedOutputModes":
			modes, ok = plainStrings(val)
		case "taskPushNotificationConfig", "pushNotificationConfig":
			var p *TaskPushNotificationConfig
			if string(val) != "null" {
				p = new(TaskPushNotificationConfig)
				if err := p.UnmarshalJSON(val); err != nil {
					return false, nil
				}
			}
			if string(key) == "pushNotificationConfig" {
				legacyPush = p
			} else {
				push = p
			}
		case "historyLength":
			if string(val) == "null" {
				history = nil
				break
			}
			var f flexInt32
			if err := f.UnmarshalJSON(val); err != nil {
				return false, nil
			}
			history = f.ptr()
		case "returnImmediately":
			returnNow, ok = boolean(val)
		case "blocking":
			blocking, ok = boolean(val)
		default:
			ok = !foldsToAny(key, sendConfigKeys[:])
		}
		return ok, nil
	})
	if handled && err == nil {
		c.merge(modes, push, legacyPush, history, returnNow, blocking)
	}
	return handled, err
}

// plainStrings decodes a JSON array of plain strings (see plainString) or
// null; ok is false for anything else.
func plainStrings(val []byte) ([]string, bool) {
	if string(val) == "null" {
		return nil, true
	}
	out := []string{}
	ok := arrayElems(val, func(v []byte) bool {
		str, ok := plainString(v)
		out = append(out, str)
		return ok
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// arrayElems calls elem with each element of the JSON array val, in
// order; ok is false when val is not exactly one array (surrounding space
// aside) or elem refuses an element.
func arrayElems(val []byte, elem func(v []byte) bool) bool {
	if len(val) < 2 || val[0] != '[' {
		return false
	}
	i := skipWS(val, 1)
	if i < len(val) && val[i] == ']' {
		return skipWS(val, i+1) == len(val)
	}
	for {
		end, ok := skipValue(val, i)
		if !ok || !elem(val[i:end]) {
			return false
		}
		i = skipWS(val, end)
		if i >= len(val) {
			return false
		}
		switch val[i] {
		case ',':
			i = skipWS(val, i+1)
		case ']':
			return skipWS(val, i+1) == len(val)
		default:
			return false
		}
	}
}

// Blocking reports whether the send should wait for a terminal or
// interrupted state; true for a nil configuration.
func (c *SendMessageConfiguration) Blocking() bool {
	return c == nil || !c.ReturnImmediately
}

// SendMessageResponse is the result of SendMessage: exactly one of Task and
// Message is set.
type SendMessageResponse struct {
	// Task is the task the message created or continued.
	Task *Task `json:"task,omitempty"`
	// Message is a direct reply that needs no task.
	Message *Message `json:"message,omitempty"`
}

// GetTaskRequest is the params of GetTask.
type GetTaskRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// ID is the task id.
	ID string `json:"id"`
	// HistoryLength caps the history returned (nil: server default).
	HistoryLength *int32 `json:"historyLength,omitempty"`
}

// UnmarshalJSON accepts historyLength as a number or a numeric string.
func (r *GetTaskRequest) UnmarshalJSON(b []byte) error {
	type plain GetTaskRequest
	var w struct {
		plain
		HistoryLength *flexInt32 `json:"historyLength"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = GetTaskRequest(w.plain)
	r.HistoryLength = w.HistoryLength.ptr()
	return nil
}

// ListTasksRequest is the params of ListTasks; every field is optional.
type ListTasksRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// ContextID keeps only the tasks of this context.
	ContextID string `json:"contextId,omitempty"`
	// Status keeps only tasks in this state.
	Status TaskState `json:"status,omitempty"`
	// PageSize is the page size, 1–100 (nil: server default, 50).
	PageSize *int32 `json:"pageSize,omitempty"`
	// PageToken is the nextPageToken of the previous page.
	PageToken string `json:"pageToken,omitempty"`
	// HistoryLength caps each task's history.
	HistoryLength *int32 `json:"historyLength,omitempty"`
	// StatusTimestampAfter keeps tasks whose status timestamp is at or
	// after this time.
	StatusTimestampAfter *Timestamp `json:"statusTimestampAfter,omitempty"`
	// IncludeArtifacts asks for the tasks' artifacts (omitted otherwise).
	IncludeArtifacts bool `json:"includeArtifacts,omitempty"`
}

// UnmarshalJSON accepts pageSize and historyLength as numbers or numeric
// strings.
func (r *ListTasksRequest) UnmarshalJSON(b []byte) error {
	type plain ListTasksRequest
	var w struct {
		plain
		PageSize      *flexInt32 `json:"pageSize"`
		HistoryLength *flexInt32 `json:"historyLength"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ListTasksRequest(w.plain)
	r.PageSize = w.PageSize.ptr()
	r.HistoryLength = w.HistoryLength.ptr()
	return nil
}

// ListTasksResponse is the result of ListTasks. All four keys are always
// emitted, `tasks` as [] when empty and `nextPageToken` as "" on the last
// page, as the specification requires.
type ListTasksResponse struct {
	// Tasks is the page of tasks, newest status first.
	Tasks []Task `json:"tasks"`
	// NextPageToken fetches the next page; "" on the last page.
	NextPageToken string `json:"nextPageToken"`
	// PageSize is the page size used.
	PageSize int32 `json:"pageSize"`
	// TotalSize is the number of matching tasks before paging.
	TotalSize int32 `json:"totalSize"`
}

// MarshalJSON emits all four fields, `tasks` as [] when empty.
func (r ListTasksResponse) MarshalJSON() ([]byte, error) {
	type plain ListTasksResponse
	p := plain(r)
	if p.Tasks == nil {
		p.Tasks = []Task{}
	}
	return marshalPlain(p)
}

// UnmarshalJSON accepts the sizes as numbers or numeric strings.
func (r *ListTasksResponse) UnmarshalJSON(b []byte) error {
	type plain ListTasksResponse
	var w struct {
		plain
		PageSize  *flexInt32 `json:"pageSize"`
		TotalSize *flexInt32 `json:"totalSize"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ListTasksResponse(w.plain)
	r.PageSize = w.PageSize.value()
	r.TotalSize = w.TotalSize.value()
	return nil
}

// CancelTaskRequest is the params of CancelTask.
type CancelTaskRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// ID is the task id.
	ID string `json:"id"`
	// Metadata is free-form data attached to the request.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// SubscribeToTaskRequest is the params of SubscribeToTask.
type SubscribeToTaskRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// ID is the task id.
	ID string `json:"id"`
}

// GetExtendedAgentCardRequest is the (optional) params of
// GetExtendedAgentCard.
type GetExtendedAgentCardRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
}
