package a2av03

import (
	"encoding/json"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// DecodeParams decodes and validates the params of a 0.3 method for op
// into a pointer to the v1.0 request type of that operation, as
// a2a.DecodeParams does for the v1.0 methods. The params that 0.3 shapes
// differently are read in their 0.3 form: tasks/pushNotificationConfig/get
// (GetTaskPushNotificationConfigParams), …/list (TaskIDParams) and
// …/delete (DeleteTaskPushNotificationConfigParams), whose `id` is the
// task id; the others are read by a2a.DecodeParams, whose lenient reader
// takes their 0.3 forms (`kind` parts, lowercase enums, `blocking`, the
// nested push config). Every failure is a -32602 error.
//
// 0.3 push configs: a set without a config id, and a get without
// pushNotificationConfigId, get the task id as config id — what the 0.3
// SDKs did, so that a 0.3 client can fetch the config it set.
func DecodeParams(op a2a.Operation, params json.RawMessage) (any, *a2a.Error) {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	req := a2a.Request{Params: params}
	switch op {
	case a2a.OpCreatePushConfig:
		v, e := a2a.DecodeParams(op, params)
		if e != nil {
			return nil, e
		}
		// Validate does not look at the config id, so setting it after
		// validation is the same as before.
		if r := v.(*a2a.TaskPushNotificationConfig); r.ID == "" {
			r.ID = r.TaskID
		}
		return v, nil
	case a2a.OpGetPushConfig:
		var p GetTaskPushNotificationConfigParams
		if e := req.DecodeParams(&p); e != nil {
			return nil, e
		}
		r := p.V1()
		if r.ID == "" {
			r.ID = r.TaskID
		}
		return validated(r, "id", r.TaskID)
	case a2a.OpListPushConfigs:
		var p TaskIDParams
		if e := req.DecodeParams(&p); e != nil {
			return nil, e
		}
		return validated(&a2a.ListTaskPushNotificationConfigsRequest{TaskID: p.ID}, "id", p.ID)
	case a2a.OpDeletePushConfig:
		var p DeleteTaskPushNotificationConfigParams
		if e := req.DecodeParams(&p); e != nil {
			return nil, e
		}
		if p.PushNotificationConfigID == "" {
			return nil, a2a.ErrInvalidParams("pushNotificationConfigId", "is required: give the id of the push notification config to delete")
		}
		return validated(p.V1(), "id", p.ID)
	}
	return a2a.DecodeParams(op, params)
}

// validated checks the task id of a 0.3 push-config request, naming the
// 0.3 field in the error, and returns v.
func validated(v any, field, taskID string) (any, *a2a.Error) {
	if taskID == "" {
		return nil, a2a.ErrInvalidParams(field, "is required: give the task id")
	}
	return v, nil
}
