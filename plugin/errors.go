package plugin

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Errors an implementation returns (wrapped with %w and a message saying what
// to fix, or marked with Mark) so the other side sees the right gRPC code:
// the one rule for the codes a peer of the contract sees. Implementations
// never build a status by hand. The client halves turn those codes back
// into errors that match these values with errors.Is, and that still carry
// the gRPC status for status.Code.
var (
	// ErrUnknownTool: CallTool named a tool the toolset does not have
	// (codes.NotFound).
	ErrUnknownTool = errors.New("unknown tool")
	// ErrInvalidArgument: a request, its arguments or the configuration are
	// wrong (codes.InvalidArgument).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotReady: the call needs an earlier step first, e.g. Send before
	// Connect or anything before Configure (codes.FailedPrecondition).
	ErrNotReady = errors.New("not ready")
	// ErrUnimplemented: an optional RPC the implementation does not offer,
	// e.g. Host.Complete on a host without a model (codes.Unimplemented).
	ErrUnimplemented = errors.New("not implemented")
	// ErrInternal: the implementation failed on its own side, not because
	// of the request (codes.Internal).
	ErrInternal = errors.New("internal error")
)

// Mark returns err marked as kind, one of the errors above: its message
// stays err's own (nothing is appended), and errors.Is(…, kind) holds, so
// the other side sees kind's code with err's message. A nil err stays nil.
func Mark(kind, err error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, kind: kind}
}

// marked is an error of Mark.
type marked struct{ err, kind error }

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.kind} }

// sentinels maps the exported errors to the gRPC codes that carry them.
var sentinels = []struct {
	err  error
	code codes.Code
}{
	{ErrUnknownTool, codes.NotFound},
	{ErrInvalidArgument, codes.InvalidArgument},
	{ErrNotReady, codes.FailedPrecondition},
	{ErrUnimplemented, codes.Unimplemented},
	{ErrInternal, codes.Internal},
	{context.Canceled, codes.Canceled},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
}

// toStatus turns an implementation's error into a gRPC status error on the
// server half. An error marked with Mark has its kind's code; one that
// already carries a status keeps its code; the sentinels above and context
// errors map to their codes; anything else is codes.Unknown. The message is
// always the full err.Error().
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var m *marked
	if errors.As(err, &m) {
		for _, s := range sentinels {
			if m.kind == s.err {
				return status.Error(s.code, err.Error())
			}
		}
	}
	if st, ok := status.FromError(err); ok {
		return st.Err()
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return status.Error(s.code, err.Error())
		}
	}
	return status.Error(codes.Unknown, err.Error())
}

// remoteError is an error that came back over gRPC. It keeps the status (so
// status.Code works) and matches the sentinel of its code with errors.Is.
type remoteError struct {
	st *status.Status
}

// Error is the status message alone: what the other side said, without
// gRPC's "rpc error: code = … desc =" wrapping (status.Code still tells the
// code).
// Transport and runtime codes keep a word of the code ("unavailable: …"),
// which says more than their message alone.
func (e *remoteError) Error() string {
	switch e.st.Code() {
	case codes.Unknown, codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.AlreadyExists:
		return e.st.Message()
	}
	return codeWords(e.st.Code()) + ": " + e.st.Message()
}

// codeWords spells a code in lower-case words: "permission denied".
func codeWords(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte(' ')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// GRPCStatus lets status.FromError and status.Code see the original status.
func (e *remoteError) GRPCStatus() *status.Status { return e.st }

// Is reports whether target is the sentinel of this error's code.
func (e *remoteError) Is(target error) bool {
	for _, s := range sentinels {
		if s.code == e.st.Code() && target == s.err {
			return true
		}
	}
	return false
}

// fromStatus is the client-half counterpart of toStatus.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	return &remoteError{st: st}
}
