// Package a2av03 is protocol 0.3 of A2A, kept for peers that still speak
// it, as conversions to and from the v1.0 model of package a2a: the 0.3
// object shapes (Task, Message, Part, … with their `kind` discriminator,
// lowercase enums and nested push configs), the 0.3 JSON-RPC method names
// (message/send, tasks/get, …), the 0.3 params, the 0.3 error shape
// (`data` an object) and the 0.3 agent card (url, preferredTransport).
//
// A server answering a 0.3 method resolves it with LookupMethod, reads its
// params with DecodeParams, and writes its result with FromTask,
// FromSendResult, FromStreamEvent, FromPushConfig, FromCard, … and its
// errors with EncodeError. A client calling a 0.3 server sends
// FromSendRequest, FromGetTaskRequest, … under the Method names and reads
// the answers with ParseSendResult and ParseStreamEvent; other results
// read leniently into the v1.0 types with a2a.Unmarshal.
//
// Reading 0.3 values is shared with package a2a, whose lenient decoders
// accept 0.3 spellings of v1.0 values wherever they arrive (see its
// documentation); this package adds what only a 0.3 exchange needs.
package a2av03
