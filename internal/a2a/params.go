package a2a

import (
	"encoding/json"
	"fmt"
)

// The one decoder of request params, for every binding and both protocol
// versions: JSON-RPC params (v1.0 or 0.3 shapes) and the HTTP+JSON
// binding's request objects become the v1.0 request structs.

// DecodeParams decodes and validates the params of a request for op into
// a pointer to the v1.0 request type of that operation
// (*SendMessageRequest, *GetTaskRequest, *ListTasksRequest,
// *CancelTaskRequest, *SubscribeToTaskRequest,
// *TaskPushNotificationConfig, *GetTaskPushNotificationConfigRequest,
// *ListTaskPushNotificationConfigsRequest,
// *DeleteTaskPushNotificationConfigRequest or
// *GetExtendedAgentCardRequest). With v03 the params are read in their 0.3
// shape (TaskQueryParams, TaskIDParams, the nested push config, …). Every
// failure is a -32602 error.
//
// 0.3 push configs: a set without a config id, and a get without
// pushNotificationConfigId, get the task id as config id — what the 0.3
// SDKs did, so that a 0.3 client can fetch the config it set.
func DecodeParams(op Operation, v03 bool, params json.RawMessage) (any, *Error) {
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
		if v03 && r.ID == "" {
			r.ID = r.TaskID
		}
		return validated(&r)
	case OpGetPushConfig:
		if !v03 {
			var r GetTaskPushNotificationConfigRequest
			if e := decode(&r); e != nil {
				return nil, e
			}
			return validated(&r)
		}
		var p GetTaskPushNotificationConfigParams
		if e := decode(&p); e != nil {
			return nil, e
		}
		r := GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
		if r.ID == "" {
			r.ID = r.TaskID
		}
		return validated03(&r, "id", r.TaskID)
	case OpListPushConfigs:
		if !v03 {
			var r ListTaskPushNotificationConfigsRequest
			if e := decode(&r); e != nil {
				return nil, e
			}
			return validated(&r)
		}
		var p TaskIDParams
		if e := decode(&p); e != nil {
			return nil, e
		}
		return validated03(&ListTaskPushNotificationConfigsRequest{TaskID: p.ID}, "id", p.ID)
	case OpDeletePushConfig:
		if !v03 {
			var r DeleteTaskPushNotificationConfigRequest
			if e := decode(&r); e != nil {
				return nil, e
			}
			return validated(&r)
		}
		var p DeleteTaskPushNotificationConfigParams
		if e := decode(&p); e != nil {
			return nil, e
		}
		if p.PushNotificationConfigID == "" {
			return nil, ErrInvalidParams("pushNotificationConfigId", "is required: give the id of the push notification config to delete")
		}
		return validated03(&DeleteTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}, "id", p.ID)
	case OpGetExtendedCard:
		var r GetExtendedAgentCardRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return &r, nil
	}
	return nil, ErrInvalidParams("", fmt.Sprintf("unknown operation %v", op))
}

// validated03 checks the task id of a 0.3 push-config request, naming the
// 0.3 field in the error, and returns v.
func validated03(v any, field, taskID string) (any, *Error) {
	if taskID == "" {
		return nil, ErrInvalidParams(field, "is required: give the task id")
	}
	return v, nil
}
