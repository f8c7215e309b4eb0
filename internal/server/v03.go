package server

import (
	"encoding/json"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
)

// The JSON-RPC binding's protocol 0.3 compatibility (see doc.go): a 0.3
// method name selects 0.3 params, results, stream events and errors,
// converted by package a2av03 at these few points; the handler behind
// sees the v1.0 types only. The 0.3 card is served by cardHandler
// (legacyCardPath, wantsV03Card, encodeServedCard).

// lookupMethod resolves a JSON-RPC method name: a v1.0 name or alias
// (a2a.LookupMethod), else a 0.3 name (a2av03.LookupMethod), for which
// v03 is true.
func lookupMethod(name string) (op a2a.Operation, v03, ok bool) {
	if op, ok = a2a.LookupMethod(name); ok {
		return op, false, true
	}
	op, ok = a2av03.LookupMethod(name)
	return op, ok, ok
}

// decodeParams decodes and validates the params of op, in their 0.3
// shape for a 0.3 method.
func decodeParams(op a2a.Operation, v03 bool, params json.RawMessage) (any, *a2a.Error) {
	if v03 {
		return a2av03.DecodeParams(op, params)
	}
	return a2a.DecodeParams(op, params)
}

// encodeRPCError encodes a JSON-RPC error response, in the 0.3 shape for
// a 0.3 method: 0.3 clients decode `data` as an object.
func encodeRPCError(id json.RawMessage, e *a2a.Error, v03 bool) []byte {
	if v03 {
		return a2av03.EncodeError(id, e)
	}
	return a2a.EncodeError(id, e)
}

// v03Result converts a v1.0 result to its 0.3 shape.
func v03Result(res any) any {
	switch v := res.(type) {
	case *a2a.SendMessageResponse:
		if v.Task != nil {
			return a2av03.FromTask(v.Task)
		}
		return a2av03.FromMessage(v.Message)
	case *a2a.Task:
		return a2av03.FromTask(v)
	case *a2a.TaskPushNotificationConfig:
		return a2av03.FromPushConfig(v)
	case *a2a.ListTaskPushNotificationConfigsResponse:
		return a2av03.FromPushConfigList(v)
	case *a2a.AgentCard:
		return a2av03.FromCard(v)
	case json.RawMessage:
		return nil // Delete answers null in 0.3
	}
	return res
}
