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
// in v03_encode.go (ToV03Task, ToV03Message, …) and the 0.3 request types
// of v03.go (MessageSendParams, TaskQueryParams, …); a client calls them
// with the typed conversions (ToV03SendParams, GetTaskRequest.V03, …) and
// reads their answers through FromV03SendResult and FromV03StreamEvent
// (v03_decode.go). [DecodeParams]
// (params.go) reads the params of every request, of either version.
//
// The 0.3 shapes stay in this package rather than a package of their own
// (as the official Go SDK's a2acompat/a2av0): reading them is part of
// reading v1.0 leniently — a v1.0 card, part, enum or error may arrive in
// its 0.3 form from any peer — so a separate package would need this
// one's decoding internals exported or copied.
package a2a
