package grpcwire

import (
	"encoding/json"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// Code is the gRPC status code of an A2A error by the specification's
// v1.0.1 table (NOT_FOUND for -32001; FAILED_PRECONDITION for -32002,
// -32003, -32004, -32007, -32008, -32009; INVALID_ARGUMENT for -32005 and
// the JSON-RPC request errors; INTERNAL for -32006 and -32603) and this
// project's codes (-32050 UNAUTHENTICATED, -32051 RESOURCE_EXHAUSTED,
// -32052 PERMISSION_DENIED) — the same names the HTTP+JSON binding's
// google.rpc.Status bodies carry (a2a.GRPCStatusName).
func Code(e *a2a.Error) codes.Code {
	return codes.Code(code.Code_value[a2a.GRPCStatusName(e.Code)])
}

// ToStatus is the gRPC status of e with code c (usually Code(e); a server
// refusing at the transport level — a caller's tier, a full server —
// picks another). Its details are a google.rpc.ErrorInfo (reason, domain
// a2a-protocol.org, metadata) when e has a reason, then e's details: a
// google.rpc.BadRequest for an invalid-params error, any other detail as
// a google.protobuf.Struct of its JSON.
func ToStatus(e *a2a.Error, c codes.Code) *status.Status {
	st := status.New(c, e.Message)
	var details []protoadapt.MessageV1
	if e.Reason != "" {
		details = append(details, &errdetails.ErrorInfo{Reason: e.Reason, Domain: a2a.ErrorDomain, Metadata: e.Metadata})
	}
	for _, d := range e.Details {
		if m := detailToProto(d); m != nil {
			details = append(details, m)
		}
	}
	if len(details) == 0 {
		return st
	}
	if withDetails, err := st.WithDetails(details...); err == nil {
		return withDetails
	}
	return st
}

// detailToProto converts one detail of an *a2a.Error.
func detailToProto(d any) protoadapt.MessageV1 {
	if br, ok := d.(a2a.BadRequest); ok {
		out := &errdetails.BadRequest{}
		for _, v := range br.FieldViolations {
			out.FieldViolations = append(out.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description})
		}
		return out
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	if t, _ := m["@type"].(string); strings.HasSuffix(t, "google.rpc.BadRequest") {
		var br a2a.BadRequest
		if json.Unmarshal(b, &br) == nil {
			return detailToProto(br)
		}
	}
	s := &structpb.Struct{}
	if protojson.Unmarshal(b, s) != nil {
		return nil
	}
	return s
}

// FromStatus reads the A2A error a peer sent as a gRPC status: the
// ErrorInfo's reason and metadata, a BadRequest as a2a.BadRequest detail,
// other details as their JSON objects, and the JSON-RPC code of the reason
// (else of the status code).
func FromStatus(st *status.Status) *a2a.Error {
	e := &a2a.Error{Message: st.Message()}
	for _, d := range st.Details() {
		switch v := d.(type) {
		case *errdetails.ErrorInfo:
			if e.Reason == "" {
				e.Reason = v.GetReason()
				if len(v.GetMetadata()) > 0 {
					e.Metadata = v.GetMetadata()
				}
			}
		case *errdetails.BadRequest:
			br := a2a.BadRequest{Type: a2a.TypeBadRequest}
			for _, fv := range v.GetFieldViolations() {
				br.FieldViolations = append(br.FieldViolations, a2a.FieldViolation{Field: fv.GetField(), Description: fv.GetDescription()})
			}
			e.Details = append(e.Details, br)
		case *structpb.Struct:
			e.Details = append(e.Details, v.AsMap())
		case error:
			// A detail whose type this process does not know.
			e.Details = append(e.Details, map[string]any{"error": v.Error()})
		}
	}
	e.Code = a2a.CodeForStatus(e.Reason, code.Code_name[int32(st.Code())])
	return e
}

// Error is FromStatus for an error returned by a gRPC call; ok is false
// when err carries no gRPC status.
func Error(err error) (*a2a.Error, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, false
	}
	return FromStatus(st), true
}

// Request metadata (service parameters of the specification, §3.2) and the
// credential, as gRPC metadata keys (lower case).
const (
	// MetadataVersion is the A2A-Version service parameter.
	MetadataVersion = "a2a-version"
	// MetadataExtensions is the A2A-Extensions service parameter.
	MetadataExtensions = "a2a-extensions"
	// MetadataAuthorization carries "Bearer <token>".
	MetadataAuthorization = "authorization"
	// MetadataTraceparent and MetadataTracestate carry W3C trace context.
	MetadataTraceparent = "traceparent"
	MetadataTracestate  = "tracestate"
)
