package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// The project's own error reasons (ErrorInfo.reason) besides the A2A ones.
const (
	reasonUnauthenticated = "UNAUTHENTICATED"
	reasonUnauthorized    = "UNAUTHORIZED"
	reasonRateLimited     = "RATE_LIMITED"
	reasonTooManyStreams  = "TOO_MANY_STREAMS"
	reasonUntrusted       = "UNTRUSTED"
	reasonTooLarge        = "REQUEST_TOO_LARGE"
	reasonTooDeep         = "REQUEST_TOO_DEEP"
	reasonTimeout         = "REQUEST_TIMEOUT"
	reasonCancelled       = "CLIENT_CANCELLED"
	reasonUnavailable     = "UNAVAILABLE"
	reasonServerBusy      = "SERVER_BUSY"
	reasonStreamDropped   = "STREAM_DROPPED"
	reasonInvalidContent  = "INVALID_CONTENT_TYPE"
)

// errUnauthenticated is -32050 for a request refused at HTTP level with
// 401: a bad token, or no token where one is required.
func errUnauthenticated(cause error) *a2a.Error {
	msg := "Unauthorized: send a valid token as \"Authorization: Bearer <token>\" (ask the agent's operator for one)"
	if cause != nil && !errors.Is(cause, security.ErrUnauthorized) {
		cause = nil
	}
	if cause != nil {
		// The security package's messages say what was wrong without
		// echoing the token.
		msg = "Unauthorized (" + cause.Error() + "): send a valid token as \"Authorization: Bearer <token>\" (ask the agent's operator for one)"
	}
	return a2a.NewError(a2a.CodeUnauthorized, reasonUnauthenticated, msg)
}

// errForbidden is -32050 for an operation the caller's tier may not use.
func errForbidden(method string, op a2a.Operation, perm security.Permission, tier security.Tier) *a2a.Error {
	return a2a.NewError(a2a.CodeUnauthorized, reasonUnauthorized, fmt.Sprintf(
		"%s (%s) is not allowed for callers of trust tier %q: it needs the %q permission; ask the agent's operator to trust your token or to grant that permission to the %s tier",
		method, op, tier, perm, tier)).
		WithMetadata("method", method).WithMetadata("tier", tier.String()).WithMetadata("permission", perm.String())
}

// errMissingScope is -32050 for an operation the caller's OAuth token
// has no scope for.
func errMissingScope(method string, op a2a.Operation, perm security.Permission, scope string) *a2a.Error {
	return a2a.NewError(a2a.CodeUnauthorized, reasonUnauthorized, fmt.Sprintf(
		"%s (%s) needs the OAuth scope %q, which the token does not carry; ask the issuer for a token with that scope (the Agent Card lists the scopes)",
		method, op, scope)).
		WithMetadata("method", method).WithMetadata("permission", perm.String()).WithMetadata("scope", scope)
}

// errRateLimited is -32051 for a caller over its request rate.
func errRateLimited(wait time.Duration) *a2a.Error {
	secs := retryAfter(wait)
	return a2a.NewError(a2a.CodeRateLimited, reasonRateLimited, fmt.Sprintf(
		"Too many requests: this caller is over its rate limit; retry after %s second(s)", secs)).
		WithMetadata("retryAfterSeconds", secs)
}

// errTooManyStreams is -32051 for a caller holding too many open streams.
func errTooManyStreams() *a2a.Error {
	return a2a.NewError(a2a.CodeRateLimited, reasonTooManyStreams,
		"Too many open streams: this caller already holds the maximum number of concurrent SSE streams; close one (or poll with GetTask) and try again")
}

// errStreamsFull is -32603 (HTTP 503) for a stream past the server's
// global cap (Limits.MaxStreams), whoever holds the others.
func errStreamsFull(max int) *a2a.Error {
	return a2a.NewError(a2a.CodeInternalError, reasonServerBusy, fmt.Sprintf(
		"The agent is serving its maximum of %d concurrent streams (max_streams, A2A_MAX_STREAMS) and opened no new one; "+
			"retry in a few seconds, or send the message with SendMessage (returnImmediately) and poll GetTask instead of streaming", max)).
		WithMetadata("maxStreams", strconv.Itoa(max))
}

// errUntrusted is -32052 for a caller the trust gate keeps from running
// tasks.
func errUntrusted(id security.Identity) *a2a.Error {
	return a2a.NewError(a2a.CodeUntrusted, reasonUntrusted, fmt.Sprintf(
		"This agent only runs tasks for trusted peers and %q is not one of them; ask the agent's operator to add it to the trust gate", id.ID)).
		WithMetadata("identity", id.ID)
}

// errTooLarge is -32600 for a body over the size limit (HTTP 413).
func errTooLarge(limit int64) *a2a.Error {
	return a2a.NewError(a2a.CodeInvalidRequest, reasonTooLarge, fmt.Sprintf(
		"Invalid request: the body is larger than %d bytes; send smaller messages (large files by URL rather than inline)", limit)).
		WithMetadata("maxBytes", strconv.FormatInt(limit, 10))
}

// errTooDeep is -32600 for JSON nested deeper than the limit.
func errTooDeep(limit int) *a2a.Error {
	return a2a.NewError(a2a.CodeInvalidRequest, reasonTooDeep, fmt.Sprintf(
		"Invalid request: the JSON is nested deeper than %d levels; flatten the data you send", limit)).
		WithMetadata("maxDepth", strconv.Itoa(limit))
}

// errClientCancelled is the record of an exchange the client canceled
// (statusCancelled): no client reads it.
func errClientCancelled() *a2a.Error {
	return a2a.NewError(a2a.CodeInvalidRequest, reasonCancelled, "Cancelled: the client canceled the call before it was answered")
}

// errBodyTimeout is -32600 for a body that did not arrive in time (HTTP 408).
func errBodyTimeout(d time.Duration) *a2a.Error {
	return a2a.NewError(a2a.CodeInvalidRequest, reasonTimeout, fmt.Sprintf(
		"Invalid request: the body did not arrive within %s", d))
}

// errContentType is -32005 for a request whose HTTP Content-Type is not
// JSON (what the conformance kit expects, see doc.go).
func errContentType(ct string) *a2a.Error {
	e := a2a.ErrContentTypeNotSupported(ct)
	e.Message = fmt.Sprintf("Content-Type %q is not supported: send JSON-RPC requests with \"Content-Type: application/json\"", ct)
	return e
}

// errMisdirected refuses a loopback caller that names a DNS host.
func errMisdirected(host string) *a2a.Error {
	return a2a.NewError(a2a.CodeUnauthorized, "MISDIRECTED_REQUEST", fmt.Sprintf(
		"loopback callers must address the agent as 127.0.0.1, [::1] or localhost (or the configured public_url host), not %q; "+
			"this protects the local agent from DNS-rebinding web pages", host))
}

// errCrossSite refuses a request a browser sent from another origin.
func errCrossSite(origin string) *a2a.Error {
	return a2a.NewError(a2a.CodeUnauthorized, "CROSS_SITE_REQUEST", fmt.Sprintf(
		"requests from web pages of another origin (%q) are refused: call the agent from an A2A client, not a browser page", origin))
}

// errUnavailable is -32603 for a request that arrives while the server
// shuts down (HTTP 503).
func errUnavailable() *a2a.Error {
	return a2a.NewError(a2a.CodeInternalError, reasonUnavailable,
		"The agent is shutting down and takes no new requests; retry shortly")
}

// errInternal is -32603 without details: they are logged, never sent.
func errInternal() *a2a.Error {
	return a2a.ErrInternal("the agent failed while handling the request; the failure was logged for its operator")
}

// toA2AError maps an error from the task manager to a protocol error.
func toA2AError(err error) *a2a.Error {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return a2a.ErrInternal("the request was canceled before the agent answered; the task continues, fetch it with GetTask")
	}
	return errInternal()
}

// Header names in canonical form (so lookups need no conversion) and
// shared header values. The value slices are never modified.
var (
	hdrAuthorization = "Authorization"
	hdrVersion       = textproto.CanonicalMIMEHeaderKey(a2a.HeaderVersion)
	hdrExtensions    = textproto.CanonicalMIMEHeaderKey(a2a.HeaderExtensions)
	hdrExtensionsV03 = textproto.CanonicalMIMEHeaderKey(a2av03.HeaderExtensions)

	valJSON    = []string{"application/json"}
	valNoStore = []string{"no-store"}
)

// setJSONHeaders sets the headers of a JSON response of n bytes without
// the per-call allocations of Header.Set.
func setJSONHeaders(h http.Header, n int) {
	h["Content-Type"] = valJSON
	h["Content-Length"] = contentLength(n)
	h["Cache-Control"] = valNoStore
}

// contentLengths holds the Content-Length values of bodies shorter than
// 4 KiB, each made the first time a body of that size is answered and
// shared afterwards, read-only like valJSON (net/http copies the header
// map at WriteHeader; Header.Add would reallocate a one-element slice):
// two allocations less per answer.
var contentLengths [4096]atomic.Pointer[[]string]

// contentLength is the Content-Length header value of an n-byte body.
func contentLength(n int) []string {
	if n < 0 || n >= len(contentLengths) {
		return []string{strconv.Itoa(n)}
	}
	if v := contentLengths[n].Load(); v != nil {
		return *v
	}
	v := []string{strconv.Itoa(n)}
	contentLengths[n].Store(&v)
	return v
}

// writeJSONRPCError writes a JSON-RPC error response with the given HTTP
// status. id nil is written as null.
func writeJSONRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *a2a.Error) int {
	return writeJSONRPCBody(w, status, a2a.EncodeError(id, e))
}

// writeJSONRPCBody writes an encoded JSON-RPC response b with the given
// HTTP status and returns the bytes written.
func writeJSONRPCBody(w http.ResponseWriter, status int, b []byte) int {
	setJSONHeaders(w.Header(), len(b))
	w.WriteHeader(status)
	n, _ := w.Write(b)
	return n
}
