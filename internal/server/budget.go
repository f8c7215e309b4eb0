package server

import (
	"fmt"
	"strconv"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The value budget bounds what a request costs once decoded by its size.
// Decoded, every JSON value (or protobuf field) costs a few hundred bytes
// whatever its size on the wire, so a body of tiny values — {"k":[null,
// null, …]} — cost about 30 times its size over JSON and 60 times over
// gRPC (issue 27). A request may hold jsonValuesBase values, plus one per
// jsonBytesPerValue bytes of its size: ordinary requests (text, files,
// records of named fields) are far below it, and a request of tiny values
// is refused by a scan that allocates nothing, before any decoder runs.
// Records of named fields ({"id":1,"ok":true}, about 6 bytes a value)
// pass; what a request within the budget costs is still about 20 bytes
// per byte in the worst case (encoding/json grows a decoded array by a
// quarter at a time; a Go map costs a few hundred bytes), against 30 to
// 140 before.
const (
	jsonValuesBase    = 1024
	jsonBytesPerValue = 6
)

// valueBudget is the number of values a request of n bytes may hold.
func valueBudget(n int) int { return jsonValuesBase + n/jsonBytesPerValue }

// errTooManyValues is -32600 REQUEST_TOO_LARGE (HTTP 413) for a request
// holding more values than its size allows.
func errTooManyValues(values, size int) *a2a.Error {
	limit := valueBudget(size)
	return a2a.NewError(a2a.CodeInvalidRequest, reasonTooLarge, fmt.Sprintf(
		"Invalid request: the request holds more than %d JSON values, more than a request of %d bytes may hold (%d, plus one per %d bytes); send bulk data as a file part, or as fewer and larger values",
		values, size, jsonValuesBase, jsonBytesPerValue)).
		WithMetadata("maxValues", strconv.Itoa(limit))
}

// scanJSON is one pass over a JSON body that only tracks strings and
// brackets: whether it nests objects and arrays deeper than depthLimit,
// and whether it holds more values than valueBudget allows (counted as
// the commas and opening brackets outside strings, an upper
// bound on the values a decoder makes; an object's key is part of its
// member). It stops at the first
// excess, so a hostile body is refused before any decoder allocates for
// it. tooMany is the count at which it stopped.
func scanJSON(b []byte, depthLimit int) (deep bool, tooMany int) {
	depth, values, budget := 0, 1, valueBudget(len(b))
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Skip the string, honouring escapes.
			for i++; i < len(b); i++ {
				if c := b[i]; c == '\\' {
					i++
				} else if c == '"' {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > depthLimit {
				return true, 0
			}
			values++
		case '}', ']':
			depth--
		case ',':
			values++
		default:
			continue
		}
		if values > budget {
			return false, values
		}
	}
	return false, 0
}

// protoValues counts what the decoder of the protobuf message b of type
// md allocates — two for every message (a google.protobuf.Value is a
// struct, a wrapper and then a model value), one for every list element
// and unknown field, recursing into message fields; a string costs its
// bytes, and a number or bool held in its message's struct is free — and
// stops as soon as
// the count passes budget (tooMany) or the wire does not parse (bad:
// left for the decoder to refuse with its own message). It allocates
// nothing.
func protoValues(b []byte, md protoreflect.MessageDescriptor, count *int, budget, depth int) (tooMany, bad bool) {
	if depth > protoMaxDepth {
		return false, true
	}
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false, true
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return false, true
		}
		val := b[:m]
		b = b[m:]
		fd := fields.ByNumber(num)
		if typ != protowire.BytesType || fd == nil {
			// A number: a field of its message's struct, or an element of
			// a list (an unknown field is kept as bytes of the message).
			if fd == nil || fd.IsList() {
				*count++
			}
			continue
		}
		inner, _ := protowire.ConsumeBytes(val)
		switch {
		case fd.Message() != nil:
			// A message costs its struct, its oneof wrapper and, once
			// converted, the model's value: twice a JSON value.
			*count += 2
			if tooMany, bad = protoValues(inner, fd.Message(), count, budget, depth+1); tooMany || bad {
				return tooMany, bad
			}
		case fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.BytesKind:
			// A string costs its bytes; one of a list also its element.
			if fd.IsList() {
				*count++
			}
		case fd.IsList():
			// A packed list: at most one element per byte.
			*count += len(inner)
		}
		if *count > budget {
			return true, false
		}
	}
	return false, false
}

// protoMaxDepth is protobuf-go's own recursion limit: a deeper message
// is refused by its decoder anyway.
const protoMaxDepth = 10_000

// budgetedRequest is the request message of a gRPC call as the binding
// reads it: grpcCodec counts its values before it decodes it, and
// decodes it only within the budget its size allows.
type budgetedRequest struct {
	msg proto.Message
	// tooMany is the count at which the scan stopped, when the message
	// holds more values than valueBudget allows (then msg is not
	// decoded); size is the message's size.
	tooMany, size int
}

// grpcCodec is the binding's server codec: gRPC's own protobuf codec,
// except that a budgetedRequest is counted (protoValues) before it is
// decoded.
type grpcCodec struct{ encoding.CodecV2 }

func newGRPCCodec() grpcCodec { return grpcCodec{encoding.GetCodecV2(grpcproto.Name)} }

// Unmarshal implements encoding.CodecV2.
func (c grpcCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*budgetedRequest)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	b := buf.ReadOnlyData()
	r.size = len(b)
	count, budget := 0, valueBudget(len(b))
	if tooMany, _ := protoValues(b, r.msg.ProtoReflect().Descriptor(), &count, budget, 0); tooMany {
		r.tooMany = count
		return nil
	}
	return proto.Unmarshal(b, r.msg)
}
