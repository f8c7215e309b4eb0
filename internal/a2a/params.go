package a2a

import (
	"encoding/json"
	"fmt"
)

// The one decoder of request params, for every binding: JSON-RPC params
// and the HTTP+JSON binding's request objects become the v1.0 request
// structs. (The params of 0.3 methods are read by package a2av03, which
// calls this for the operations whose params 0.3 shapes alike.)

// DecodeParams decodes and validates the params of a request for op into
// a pointer to the v1.0 request type of that operation
// (*SendMessageRequest, *GetTaskRequest, *ListTasksRequest,
// *CancelTaskRequest, *SubscribeToTaskRequest,
// *TaskPushNotificationConfig, *GetTaskPushNotificationConfigRequest,
// *ListTaskPushNotificationConfigsRequest,
// *DeleteTaskPushNotificationConfigRequest or
// *GetExtendedAgentCardRequest). Every failure is a -32602 error.
func DecodeParams(op Operation, params json.RawMessage) (any, *Error) {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	decode := func(v any) *Error {
		if err := Unmarshal(params, v); err != nil {
			return paramsDecodeError(err)
		}
		return nil
	}
	validated := func(v interface{ Validate() error }) (any, *Error) {
		if err := v.Validate(); err != nil {
			return nil, err.(*Error)
		}
		return v, nil
	}
	switch op {
	case OpSendMessage, OpSendStreamingMessage:
		var r SendMessageRequest
		if !decodeSendFast(normalizeKeys(params), &r) {
			if e := decode(&r); e != nil {
				return nil, e
			}
		}
		return validated(&r)
	case OpGetTask:
		var r GetTaskRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpListTasks:
		var r ListTasksRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpCancelTask:
		var r CancelTaskRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpSubscribeToTask:
		var r SubscribeToTaskRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpCreatePushConfig:
		var r TaskPushNotificationConfig
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpGetPushConfig:
		var r GetTaskPushNotificationConfigRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpListPushConfigs:
		var r ListTaskPushNotificationConfigsRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpDeletePushConfig:
		var r DeleteTaskPushNotificationConfigRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpGetExtendedCard:
		var r GetExtendedAgentCardRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return &r, nil
	}
	return nil, ErrInvalidParams("", fmt.Sprintf("unknown operation %v", op))
}
