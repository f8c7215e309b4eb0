package a2av03

import "github.com/a2a-plugin/a2a-plugin/internal/a2a"

// The 0.3 names of things the core model names in v1.0 terms: JSON-RPC
// methods, task states, roles and the extensions header.

// HeaderExtensions is the 0.3 name of a2a.HeaderExtensions.
const HeaderExtensions = "X-A2A-Extensions"

// The 0.3 JSON-RPC method names. 0.3 has no ListTasks.
const (
	MethodSendMessage                      = "message/send"
	MethodSendStreamingMessage             = "message/stream"
	MethodGetTask                          = "tasks/get"
	MethodCancelTask                       = "tasks/cancel"
	MethodResubscribe                      = "tasks/resubscribe"
	MethodSetTaskPushNotificationConfig    = "tasks/pushNotificationConfig/set"
	MethodGetTaskPushNotificationConfig    = "tasks/pushNotificationConfig/get"
	MethodListTaskPushNotificationConfig   = "tasks/pushNotificationConfig/list"
	MethodDeleteTaskPushNotificationConfig = "tasks/pushNotificationConfig/delete"
	MethodGetAuthenticatedExtendedCard     = "agent/getAuthenticatedExtendedCard"
)

// methods holds the 0.3 name of each operation ("" where 0.3 has none).
var methods = [...]string{
	a2a.OpSendMessage:          MethodSendMessage,
	a2a.OpSendStreamingMessage: MethodSendStreamingMessage,
	a2a.OpGetTask:              MethodGetTask,
	a2a.OpListTasks:            "",
	a2a.OpCancelTask:           MethodCancelTask,
	a2a.OpSubscribeToTask:      MethodResubscribe,
	a2a.OpCreatePushConfig:     MethodSetTaskPushNotificationConfig,
	a2a.OpGetPushConfig:        MethodGetTaskPushNotificationConfig,
	a2a.OpListPushConfigs:      MethodListTaskPushNotificationConfig,
	a2a.OpDeletePushConfig:     MethodDeleteTaskPushNotificationConfig,
	a2a.OpGetExtendedCard:      MethodGetAuthenticatedExtendedCard,
}

// operations maps each 0.3 method name to its operation.
var operations = func() map[string]a2a.Operation {
	m := make(map[string]a2a.Operation, len(methods))
	for op, name := range methods {
		if name != "" {
			m[name] = a2a.Operation(op)
		}
	}
	return m
}()

// Method returns the 0.3 method name of the operation, or "" when 0.3 has
// none (ListTasks).
func Method(op a2a.Operation) string {
	if op >= a2a.OpSendMessage && int(op) < len(methods) {
		return methods[op]
	}
	return ""
}

// LookupMethod maps a 0.3 JSON-RPC method name (message/send, tasks/get,
// …) to its operation; ok is false for any other name, v1.0 names
// included (see a2a.LookupMethod).
func LookupMethod(name string) (op a2a.Operation, ok bool) {
	op, ok = operations[name]
	return op, ok
}

// StateName returns the 0.3 name of the state ("input-required");
// unspecified and unknown states map to "unknown".
func StateName(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateSubmitted:
		return "submitted"
	case a2a.TaskStateWorking:
		return "working"
	case a2a.TaskStateCompleted:
		return "completed"
	case a2a.TaskStateFailed:
		return "failed"
	case a2a.TaskStateCanceled:
		return "canceled"
	case a2a.TaskStateInputRequired:
		return "input-required"
	case a2a.TaskStateRejected:
		return "rejected"
	case a2a.TaskStateAuthRequired:
		return "auth-required"
	}
	return "unknown"
}

// RoleName returns the 0.3 name of the role: "user" or "agent"
// ("unspecified" otherwise, which 0.3 peers will reject).
func RoleName(r a2a.Role) string {
	switch r {
	case a2a.RoleUser:
		return "user"
	case a2a.RoleAgent:
		return "agent"
	}
	return "unspecified"
}
