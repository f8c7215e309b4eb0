package grpcwire

import (
	"reflect"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// TestStatusCodesFollowTheV101Table checks the gRPC code of every A2A
// error against the specification's v1.0.1 mapping table.
func TestStatusCodesFollowTheV101Table(t *testing.T) {
	for _, tc := range []struct {
		err  *a2a.Error
		want codes.Code
	}{
		{a2a.ErrTaskNotFound("t"), codes.NotFound},
		{a2a.ErrTaskNotCancelable("t", a2a.TaskStateCompleted), codes.FailedPrecondition},
		{a2a.ErrPushNotSupported(), codes.FailedPrecondition},
		{a2a.ErrUnsupportedOperation(""), codes.FailedPrecondition},
		{a2a.ErrContentTypeNotSupported("x/y"), codes.InvalidArgument},
		{a2a.ErrInvalidAgentResponse(""), codes.Internal},
		{a2a.ErrExtendedCardNotConfigured(), codes.FailedPrecondition},
		{a2a.ErrExtensionSupportRequired("urn:x"), codes.FailedPrecondition},
		{a2a.ErrVersionNotSupported("9.9"), codes.FailedPrecondition},
		{a2a.ErrInvalidParams("message", "is required"), codes.InvalidArgument},
		{a2a.ErrInvalidRequest(""), codes.InvalidArgument},
		{a2a.ErrParse(""), codes.InvalidArgument},
		{a2a.ErrMethodNotFound("X"), codes.Unimplemented},
		{a2a.ErrInternal(""), codes.Internal},
		{a2a.NewError(a2a.CodeUnauthorized, "UNAUTHENTICATED", "no"), codes.Unauthenticated},
		{a2a.NewError(a2a.CodeRateLimited, "RATE_LIMITED", "slow down"), codes.ResourceExhausted},
		{a2a.NewError(a2a.CodeUntrusted, "UNTRUSTED", "no"), codes.PermissionDenied},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%d %s: code %v, want %v", tc.err.Code, tc.err.Reason, got, tc.want)
		}
	}
}

// TestStatusCarriesErrorInfoAndComesBack: the reason, domain, metadata and
// field violations travel in the status details, and the client reads the
// same *a2a.Error back.
func TestStatusCarriesErrorInfoAndComesBack(t *testing.T) {
	for _, e := range []*a2a.Error{
		a2a.ErrTaskNotFound("t-1"),
		a2a.ErrInvalidParams("message.parts[0]", "has no content"),
		a2a.ErrVersionNotSupported("2.0"),
		a2a.NewError(a2a.CodeRateLimited, "TOO_MANY_STREAMS", "close one"),
		a2a.NewError(a2a.CodeUnauthorized, "UNAUTHORIZED", "tier").WithMetadata("tier", "public"),
	} {
		st := ToStatus(e, Code(e))
		// Through the wire form of a status.
		st = status.FromProto(st.Proto())
		var info *errdetails.ErrorInfo
		for _, d := range st.Details() {
			if v, ok := d.(*errdetails.ErrorInfo); ok {
				info = v
			}
		}
		if info == nil || info.Reason != e.Reason || info.Domain != a2a.ErrorDomain || !reflect.DeepEqual(info.Metadata, e.Metadata) {
			t.Errorf("%s: ErrorInfo = %v, want reason %s, domain %s, metadata %v", e.Reason, info, e.Reason, a2a.ErrorDomain, e.Metadata)
		}
		back := FromStatus(st)
		if back.Code != e.Code || back.Reason != e.Reason || back.Message != e.Message || !reflect.DeepEqual(back.Metadata, e.Metadata) {
			t.Errorf("%s: read back as %+v, want %+v", e.Reason, back, e)
		}
		if !reflect.DeepEqual(back.Details, e.Details) {
			t.Errorf("%s: details %#v, want %#v", e.Reason, back.Details, e.Details)
		}
	}
}

// TestStatusWithoutErrorInfo: a peer that sends a bare status still gives
// an error with the code its status stands for.
func TestStatusWithoutErrorInfo(t *testing.T) {
	e := FromStatus(status.New(codes.NotFound, "no such task"))
	if e.Code != a2a.CodeTaskNotFound || e.Message != "no such task" {
		t.Errorf("got %+v", e)
	}
	if _, ok := Error(status.Error(codes.Internal, "x")); !ok {
		t.Error("Error did not read a status error")
	}
}
