package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// Kind classifies why an outbound call failed. Every *Error carries one, and
// a Kind is itself an error so that callers can test with errors.Is:
//
//	if errors.Is(err, client.ErrRateLimited) { … }
type Kind string

// The failure kinds of an outbound call.
const (
	// ErrUnreachable: the peer could not be reached (DNS, refused
	// connection, TLS failure, connection reset, HTTP 502/503/504).
	ErrUnreachable Kind = "unreachable"
	// ErrTimeout: the peer did not answer within the call's timeout.
	ErrTimeout Kind = "timed out"
	// ErrBadCard: the agent card is missing, not JSON, lacks required
	// fields or offers no interface this client can use.
	ErrBadCard Kind = "unusable agent card"
	// ErrAuthRefused: the peer answered HTTP 401 or 403.
	ErrAuthRefused Kind = "authentication refused"
	// ErrRateLimited: the peer answered HTTP 429 (RetryAfter says how long
	// to wait when the peer told).
	ErrRateLimited Kind = "rate limited"
	// ErrRPC: the peer answered with a JSON-RPC error (over HTTP+JSON: a
	// google.rpc.Status error, mapped back to the same code); the
	// *a2a.Error is in the chain (errors.As) with its code, message and
	// ErrorInfo reason.
	ErrRPC Kind = "JSON-RPC error"
	// ErrStreamCut: an SSE stream ended before the task reached a terminal
	// or interrupted state.
	ErrStreamCut Kind = "stream cut"
	// ErrInvalidResponse: the peer answered something that is not a valid
	// A2A response (wrong status, not JSON, wrong id, no result).
	ErrInvalidResponse Kind = "invalid response"
	// ErrUnsupported: the operation is not available on this peer (e.g.
	// ListTasks on a 0.3 peer, streaming on a peer that does not stream).
	ErrUnsupported Kind = "unsupported"
	// ErrBlocked: the SSRF guard refused the URL or the address it
	// resolved to.
	ErrBlocked Kind = "blocked"
	// ErrUntrustedCard: the peer must present a signed card (Endpoint
	// CardKeys) and its card is unsigned, signed by an unknown key or does
	// not verify; the cardsign reason is in the chain (errors.Is).
	ErrUntrustedCard Kind = "untrusted agent card"
	// ErrCrossOrigin: the peer has credentials and its card (unsigned, or
	// not verified) names an interface URL on another origin (scheme, host
	// or port) than the peer's configured URL; credentials are never sent
	// there, so the call is refused before anything is sent.
	ErrCrossOrigin Kind = "interface on another origin"
)

// Error implements error so that a Kind can be the target of errors.Is.
func (k Kind) Error() string { return string(k) }

// Error is the error every Client method returns for a failed call. It says
// what failed (Op), with which peer and URL, why (Kind, Err) and — in its
// message — what to do about it.
type Error struct {
	// Kind classifies the failure.
	Kind Kind
	// Peer is the configured peer name, or the URL when the peer is not
	// configured.
	Peer string
	// URL is the URL that was requested.
	URL string
	// Op is the operation: "fetch agent card", "SendMessage", …
	Op string
	// HTTPStatus is the HTTP status code when the failure came with one.
	HTTPStatus int
	// RetryAfter is the delay a rate-limited (or unavailable) peer asked
	// for; zero when it did not say.
	RetryAfter time.Duration
	// Err is the underlying cause; for ErrRPC an *a2a.Error.
	Err error
}

// Error says what happened and what to do.
func (e *Error) Error() string {
	head, cause, hint := e.Parts()
	var b strings.Builder
	b.WriteString(head)
	if cause != "" {
		b.WriteString(": ")
		b.WriteString(cause)
	}
	if hint != "" {
		b.WriteString(" — ")
		b.WriteString(hint)
	}
	return b.String()
}

// Parts splits the message: head says what failed with which peer (the
// client's words), cause is the underlying error's text (for some kinds
// the peer's words, see PeerWrote), hint says what to do ("" when
// nothing useful can be said).
func (e *Error) Parts() (head, cause, hint string) {
	var b strings.Builder
	b.WriteString("a2a peer ")
	if e.Peer != "" && e.Peer != e.URL {
		fmt.Fprintf(&b, "%q (%s)", e.Peer, e.URL)
	} else {
		b.WriteString(e.URL)
	}
	if e.Op != "" {
		b.WriteString(": ")
		b.WriteString(e.Op)
	}
	b.WriteString(": ")
	b.WriteString(string(e.Kind))
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.HTTPStatus)
	}
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return b.String(), cause, e.hint()
}

// PeerWrote reports whether the cause may carry text the peer wrote: its
// JSON-RPC error, a snippet of its answer, its status line or
// WWW-Authenticate header, its card's fields. The causes of the other
// kinds — unreachable, timed out, blocked, a stream cut, an unsupported
// operation — are the client's own diagnostics.
func (e *Error) PeerWrote() bool {
	switch e.Kind {
	case ErrRPC, ErrInvalidResponse, ErrBadCard, ErrUntrustedCard, ErrAuthRefused, ErrRateLimited:
		return true
	}
	return e.HTTPStatus != 0
}

// hint is the "what to do" part of the message.
func (e *Error) hint() string {
	switch e.Kind {
	case ErrUnreachable:
		return "check that the agent is running and that its URL is right, then retry"
	case ErrTimeout:
		return "the peer may be slow or overloaded; retry later or allow a longer timeout"
	case ErrBadCard:
		return "check that the URL points at an A2A agent (its card is served at /.well-known/agent-card.json) that offers a JSONRPC interface for protocol 1.0 or 0.3, or an HTTP+JSON or GRPC one for 1.0"
	case ErrAuthRefused:
		return "configure a valid credential for this peer (token, token_file, token_command or header in a2a_agents) or ask its operator for access"
	case ErrRateLimited:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("wait %s before retrying", e.RetryAfter.Round(time.Second))
		}
		return "wait before retrying"
	case ErrRPC:
		var re *a2a.Error
		if errors.As(e.Err, &re) {
			if re.Code == a2a.CodeUnsupportedOperation && strings.TrimSpace(re.Message) != "" {
				// The peer's message says what it does not support; a
				// generic guess beside it would only contradict it.
				return ""
			}
			return rpcHint(re.Code)
		}
	case ErrStreamCut:
		return "the task may still be running on the peer; fetch it with GetTask (a2a_task action=get) to see its state"
	case ErrInvalidResponse:
		return "the peer does not speak A2A (JSON-RPC, HTTP+JSON or gRPC) as expected; check the URL and the peer's protocol version"
	case ErrBlocked:
		return "outbound calls to loopback, private and link-local addresses are refused unless the configuration allows them"
	case ErrUntrustedCard:
		return untrustedCardHint(e.Err)
	case ErrCrossOrigin:
		return "configure the peer with the URL of the interface its card names (after checking with the peer's operator that it is theirs), or require a signed card for it (signed: true with card_keys)"
	}
	return ""
}

// rpcHint suggests what to do for an A2A or JSON-RPC error code.
func rpcHint(code int) string {
	switch code {
	case -32001:
		return "check the task id; the peer does not know it (or it expired)"
	case -32002:
		return "the task already finished and cannot be canceled"
	case -32003:
		return "the peer does not support push notifications"
	case -32004:
		return "the peer does not support this operation (or the task is already finished; start a new task in the same context)"
	case -32005:
		return "send content types the peer accepts (see its card's input modes)"
	case -32008:
		return "the peer requires a protocol extension this client does not support"
	case -32009:
		return "the peer does not support the protocol version used"
	case -32601:
		return "the peer does not know this method; it may speak another protocol version"
	case -32602:
		return "the request was rejected as invalid; check the arguments"
	}
	return ""
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Kind, so errors.Is(err, ErrTimeout)
// works through wrapping.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// RPCError returns the JSON-RPC error carried by err, if any.
func RPCError(err error) (*a2a.Error, bool) {
	var re *a2a.Error
	if errors.As(err, &re) {
		return re, true
	}
	return nil, false
}

// KindOf returns the Kind of err, or "" when err is not a client error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// classifyTransport turns an error from http.Client.Do (or from reading a
// body) into a Kind. callCtx is the context with the call's own timeout,
// parent the caller's: a deadline of the call is a timeout, a cancelled
// caller is reported as the context error itself.
func classifyTransport(err error, callCtx context.Context) Kind {
	var ge guardError
	if errors.As(err, &ge) && ge.blocked() || errors.Is(err, security.ErrAddressNotAllowed) {
		return ErrBlocked
	}
	if errors.Is(err, context.DeadlineExceeded) || callCtx.Err() == context.DeadlineExceeded {
		return ErrTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout
	}
	return ErrUnreachable
}

// guardError is implemented by errors that an SSRF guard returns for a
// refused address; see isBlocked.
type guardError interface {
	error
	blocked() bool
}

// statusKind maps a non-2xx HTTP status to a Kind.
func statusKind(code int) Kind {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ErrAuthRefused
	case code == http.StatusTooManyRequests:
		return ErrRateLimited
	case code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		return ErrUnreachable
	}
	return ErrInvalidResponse
}

// parseRetryAfter reads a Retry-After header: delta seconds or an HTTP
// date. It returns 0 when absent or unreadable.
func parseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
