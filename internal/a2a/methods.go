package a2a

import "strconv"

// Operation is an A2A operation, independent of the method name (v1.0,
// an alias, or a 0.3 name of package a2av03) that asked for it. The zero
// value is no operation.
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

// methodEntry is what a method name resolves to.
type methodEntry struct {
	// name is the method name itself, so that ParseRequest's fast path
	// sets Request.Method without allocating a string per request.
	name string
	op   Operation
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

// methodTable maps every v1.0 method name and alias to its operation: the
// one table of method names, for LookupMethod and ParseRequest alike.
var methodTable = func() map[string]methodEntry {
	m := make(map[string]methodEntry, 32)
	for op := OpSendMessage; op <= OpGetExtendedCard; op++ {
		m[opNames[op]] = methodEntry{opNames[op], op}
	}
	for name, op := range aliases {
		m[name] = methodEntry{name, op}
	}
	return m
}()

// LookupMethod maps a v1.0 JSON-RPC method name, or one of the aliases
// tasks/list, tasks/subscribe, tasks/pushNotificationConfig/create,
// ListTaskPushNotificationConfig and SetTaskPushNotificationConfig (v1.0
// shapes too), to its operation. ok is false for any other name; the 0.3
// names (message/send, tasks/get, …) are a2av03.LookupMethod's.
func LookupMethod(name string) (op Operation, ok bool) {
	e, ok := methodTable[name]
	return e.op, ok
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
