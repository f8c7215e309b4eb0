package a2a

import "strconv"

// Operation is an A2A operation, independent of the method name (v1.0 or
// 0.3) that asked for it. The zero value is no operation.
type Operation int

// The A2A operations.
const (
	OpSendMessage Operation = iota + 1
	OpSendStreamingMessage
	OpGetTask
	OpListTasks
	OpCancelTask
	OpSubscribeToTask
	OpCreatePushConfig
	OpGetPushConfig
	OpListPushConfigs
	OpDeletePushConfig
	OpGetExtendedCard
)

// v1.0 JSON-RPC method names.
const (
	MethodSendMessage                      = "SendMessage"
	MethodSendStreamingMessage             = "SendStreamingMessage"
	MethodGetTask                          = "GetTask"
	MethodListTasks                        = "ListTasks"
	MethodCancelTask                       = "CancelTask"
	MethodSubscribeToTask                  = "SubscribeToTask"
	MethodCreateTaskPushNotificationConfig = "CreateTaskPushNotificationConfig"
	MethodGetTaskPushNotificationConfig    = "GetTaskPushNotificationConfig"
	MethodListTaskPushNotificationConfigs  = "ListTaskPushNotificationConfigs"
	MethodDeleteTaskPushNotificationConfig = "DeleteTaskPushNotificationConfig"
	MethodGetExtendedAgentCard             = "GetExtendedAgentCard"
)

// opNames holds the v1.0 name of each operation, indexed by Operation.
var opNames = [...]string{
	OpSendMessage:          MethodSendMessage,
	OpSendStreamingMessage: MethodSendStreamingMessage,
	OpGetTask:              MethodGetTask,
	OpListTasks:            MethodListTasks,
	OpCancelTask:           MethodCancelTask,
	OpSubscribeToTask:      MethodSubscribeToTask,
	OpCreatePushConfig:     MethodCreateTaskPushNotificationConfig,
	OpGetPushConfig:        MethodGetTaskPushNotificationConfig,
	OpListPushConfigs:      MethodListTaskPushNotificationConfigs,
	OpDeletePushConfig:     MethodDeleteTaskPushNotificationConfig,
	OpGetExtendedCard:      MethodGetExtendedAgentCard,
}

// opNamesV03 holds the 0.3 name of each operation ("" where 0.3 has none).
var opNamesV03 = [...]string{
	OpSendMessage:          "message/send",
	OpSendStreamingMessage: "message/stream",
	OpGetTask:              "tasks/get",
	OpListTasks:            "",
	OpCancelTask:           "tasks/cancel",
	OpSubscribeToTask:      "tasks/resubscribe",
	OpCreatePushConfig:     "tasks/pushNotificationConfig/set",
	OpGetPushConfig:        "tasks/pushNotificationConfig/get",
	OpListPushConfigs:      "tasks/pushNotificationConfig/list",
	OpDeletePushConfig:     "tasks/pushNotificationConfig/delete",
	OpGetExtendedCard:      "agent/getAuthenticatedExtendedCard",
}

// methodEntry is what a method name resolves to.
type methodEntry struct {
	// name is the method name itself, so that ParseRequest's fast path
	// sets Request.Method without allocating a string per request.
	name string
	op   Operation
	v03  bool
}

// aliases are the slash-style and pre-release method names some 1.0-era
// peers use; they take v1.0 shapes.
var aliases = map[string]Operation{
	"tasks/list":                          OpListTasks,
	"tasks/subscribe":                     OpSubscribeToTask,
	"tasks/pushNotificationConfig/create": OpCreatePushConfig,
	"ListTaskPushNotificationConfig":      OpListPushConfigs,
	"SetTaskPushNotificationConfig":       OpCreatePushConfig,
}

// methodTable maps every accepted method name to its operation and
// whether it selects 0.3 shapes: the one table of method names, for
// LookupMethod and ParseRequest alike.
var methodTable = func() map[string]methodEntry {
	m := make(map[string]methodEntry, 32)
	for op := OpSendMessage; op <= OpGetExtendedCard; op++ {
		m[opNames[op]] = methodEntry{opNames[op], op, false}
		if n := opNamesV03[op]; n != "" {
			m[n] = methodEntry{n, op, true}
		}
	}
	for name, op := range aliases {
		m[name] = methodEntry{name, op, false}
	}
	return m
}()

// LookupMethod maps a JSON-RPC method name to its operation. v03 is true
// for the 0.3 names (message/send, tasks/get, …), whose params and results
// use 0.3 shapes. The v1.0 names, and the aliases tasks/list,
// tasks/subscribe, tasks/pushNotificationConfig/create,
// ListTaskPushNotificationConfig and SetTaskPushNotificationConfig, give
// v03 false. ok is false for an unknown name.
func LookupMethod(name string) (op Operation, v03 bool, ok bool) {
	e, ok := methodTable[name]
	return e.op, e.v03, ok
}

// String returns the v1.0 method name of the operation.
func (op Operation) String() string {
	if op >= OpSendMessage && op <= OpGetExtendedCard {
		return opNames[op]
	}
	return "Operation(" + strconv.Itoa(int(op)) + ")"
}

// Streaming reports whether the operation answers with an SSE stream.
func (op Operation) Streaming() bool {
	return op == OpSendStreamingMessage || op == OpSubscribeToTask
}

// MethodV03 returns the 0.3 method name of the operation, or "" when 0.3
// has none (ListTasks).
func MethodV03(op Operation) string {
	if op >= OpSendMessage && op <= OpGetExtendedCard {
		return opNamesV03[op]
	}
	return ""
}
