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
// [DecodeParams] (params.go) reads the params of every v1.0 request.
//
// Protocol 0.3 lives in package a2av03 (internal/a2a/a2av03): its object
// shapes with their `kind`, its method names, params, error shape and
// card, converted to and from this package's v1.0 types. What stays here
// is reading: the lenient decoders of the v1.0 types also take the 0.3
// spellings of the same values (lowercase enums, `kind` parts, a 0.3 card
// or error, `blocking`, nested push configs), because any peer may send
// them — a v1.0 card, part, enum or error can arrive in its 0.3 form —
// and a2av03 decodes 0.3 answers through them. The version constants
// (ProtocolVersionV03, NegotiateVersion, the interface choice of
// AgentCard.PreferredInterface) stay too: they say which version a peer
// speaks, not how that version is shaped.
package a2a
