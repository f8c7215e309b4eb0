// Package grpcwire is the one seam between the A2A model (package a2a) and
// the gRPC binding's wire types, the official generated lf.a2a.v1 messages
// of github.com/a2aproject/a2a-go/v2/a2apb/v1: conversions both ways for
// every message the A2AService carries, the mapping of *a2a.Error to a
// gRPC status (the specification's v1.0.1 code table, with a
// google.rpc.ErrorInfo — and a google.rpc.BadRequest for invalid params —
// in the status details) and back, and the request metadata names.
//
// The inbound binding (internal/server) and the outbound client
// (internal/client) both go through it, so a message means the same thing
// in both directions. The conversions are lossless for every field of the
// v1.0 messages, in the sense of the ProtoJSON mapping both bindings
// define: the JSON encoding of a converted value equals the ProtoJSON
// encoding of the proto message (tests check it field by field). The
// model is narrower in three places, where ProtoJSON makes no difference
// either: an `optional` field set to its default (include_artifacts false,
// documentation_url "") reads as unset, and of the several OAuth flows a
// 0.3 card may carry only the first survives the proto's oneof.
package grpcwire
