package plugin

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestErrorsMapToOneCodeEach is the rule for the codes the other side of
// the contract sees: a sentinel wrapped with %w or marked with Mark gives
// its code and keeps the message whole; a marked error wins over a status
// it wraps; anything else is Unknown; the client half matches the code's
// sentinel again.
func TestErrorsMapToOneCodeEach(t *testing.T) {
	hostFailed := fmt.Errorf("the host's HandleMessage failed: %w", status.Error(codes.Unavailable, "gone"))
	cases := []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{fmt.Errorf("no tool %q: %w", "x", ErrUnknownTool), codes.NotFound, `no tool "x": unknown tool`},
		{Mark(ErrUnknownTool, errors.New(`unknown tool "x"`)), codes.NotFound, `unknown tool "x"`},
		{Mark(ErrInvalidArgument, errors.New("config: port -1")), codes.InvalidArgument, "config: port -1"},
		{Mark(ErrNotReady, errors.New("not configured")), codes.FailedPrecondition, "not configured"},
		{Mark(ErrInternal, errors.New("disk full")), codes.Internal, "disk full"},
		{fmt.Errorf("optional: %w", ErrUnimplemented), codes.Unimplemented, "optional: not implemented"},
		{Mark(ErrInternal, hostFailed), codes.Internal, hostFailed.Error()},
		{status.Error(codes.PermissionDenied, "no"), codes.PermissionDenied, "no"},
		{context.DeadlineExceeded, codes.DeadlineExceeded, "context deadline exceeded"},
		{errors.New("something"), codes.Unknown, "something"},
	}
	sentinelOf := map[codes.Code]error{codes.NotFound: ErrUnknownTool, codes.InvalidArgument: ErrInvalidArgument,
		codes.FailedPrecondition: ErrNotReady, codes.Internal: ErrInternal, codes.Unimplemented: ErrUnimplemented}
	for _, c := range cases {
		st, _ := status.FromError(toStatus(c.err))
		if st.Code() != c.code || st.Message() != c.msg {
			t.Errorf("%v: %s %q, want %s %q", c.err, st.Code(), st.Message(), c.code, c.msg)
		}
		if s, ok := sentinelOf[c.code]; ok && !errors.Is(fromStatus(st.Err()), s) {
			t.Errorf("%v: the client half does not match %v", c.err, s)
		}
	}
	if Mark(ErrInternal, nil) != nil {
		t.Error("Mark of nil is not nil")
	}
}
