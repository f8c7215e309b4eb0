// Package a2a is the wire model of the A2A (Agent2Agent) protocol v1.0 for
// the JSON-RPC binding: tasks, messages, parts, artifacts, streaming events,
// the agent card, push-notification configs, the JSON-RPC envelope and the
// A2A error codes. It imports nothing else of this project.
//
// The package follows one rule throughout: parse leniently, emit strictly.
//
// [Unmarshal] accepts what real peers send: camelCase and snake_case keys
// for protocol fields, enums as full names, integers or 0.3 lowercase
// names, 0.3 part shapes ({"kind":"file","file":{...}}), the legacy
// `blocking` and `pushNotificationConfig` send options, unknown fields and
// `null` for unset. Keys inside user content (metadata, data parts,
// extension params, signature headers) and inside name-keyed maps
// (security schemes, scopes) are never rewritten.
//
// [Marshal] emits ProtoJSON as the v1.0 specification wants it: camelCase
// keys, enum names, proto3 defaults omitted, UTC timestamps with
// millisecond precision, and never a 0.3 `kind`.
//
// Peers still on protocol 0.3 are served through the conversion functions
// in v03.go (ToV03Task, ToV03Message, …) and the 0.3 request types
// (MessageSendParams, TaskQueryParams, …), and read through FromV03Result
// and FromV03StreamEvent.
package a2a
