package a2a

import (
	"encoding/json"
	"fmt"
	"strings"
)

// JSON-RPC and A2A error codes (specification §4.1) and the codes this
// project adds in the A2A-specific range.
const (
	CodeParseError                     = -32700
	CodeInvalidRequest                 = -32600
	CodeMethodNotFound                 = -32601
	CodeInvalidParams                  = -32602
	CodeInternalError                  = -32603
	CodeTaskNotFound                   = -32001
	CodeTaskNotCancelable              = -32002
	CodePushNotificationNotSupported   = -32003
	CodeUnsupportedOperation           = -32004
	CodeContentTypeNotSupported        = -32005
	CodeInvalidAgentResponse           = -32006
	CodeExtendedAgentCardNotConfigured = -32007
	CodeExtensionSupportRequired       = -32008
	CodeVersionNotSupported            = -32009

	// CodeUnauthorized is this project's code for a missing or bad
	// credential.
	CodeUnauthorized = -32050
	// CodeRateLimited is this project's code for a caller over its rate.
	CodeRateLimited = -32051
	// CodeUntrusted is this project's code for a peer whose trust tier
	// does not allow the operation.
	CodeUntrusted = -32052
)

// ErrorDomain is the google.rpc.ErrorInfo domain of A2A errors.
const ErrorDomain = "a2a-protocol.org"

// Type URLs of the google.rpc detail messages carried in error data.
const (
	TypeErrorInfo  = "type.googleapis.com/google.rpc.ErrorInfo"
	TypeBadRequest = "type.googleapis.com/google.rpc.BadRequest"
)

// Error is a JSON-RPC error object as A2A v1.0 shapes it:
//
//	{"code": -32001, "message": "...", "data": [
//	  {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
//	   "domain": "a2a-protocol.org", "metadata": {"taskId": "t1"}}, ...Details]}
//
// It implements error. Reason and Metadata become the ErrorInfo entry;
// Details are appended after it (each should carry an "@type").
type Error struct {
	// Code is the JSON-RPC error code.
	Code int
	// Message tells the caller what went wrong and how to fix it.
	Message string
	// Reason is the ErrorInfo reason, UPPER_SNAKE_CASE ("TASK_NOT_FOUND").
	Reason string
	// Metadata is the ErrorInfo metadata: the offending values.
	Metadata map[string]string
	// Details are further @type objects for `data`, such as a BadRequest.
	Details []any
}

// Error returns the code, reason and message.
func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("a2a error %d %s: %s", e.Code, e.Reason, e.Message)
	}
	return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message)
}

// Is makes errors.Is match any *Error with the same code, so
// errors.Is(err, a2a.ErrTaskNotFound("")) asks "is it a task-not-found".
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// ErrorInfo is the google.rpc.ErrorInfo detail.
type ErrorInfo struct {
	// Type is TypeErrorInfo.
	Type string `json:"@type"`
	// Reason is the UPPER_SNAKE_CASE error reason.
	Reason string `json:"reason"`
	// Domain is ErrorDomain.
	Domain string `json:"domain"`
	// Metadata holds the offending values as strings.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// BadRequest is the google.rpc.BadRequest detail of an invalid-params
// error.
type BadRequest struct {
	// Type is TypeBadRequest.
	Type string `json:"@type"`
	// FieldViolations lists what is wrong with which field.
	FieldViolations []FieldViolation `json:"fieldViolations"`
}

// FieldViolation names one invalid field and says how to fix it.
type FieldViolation struct {
	// Field is the path of the field, e.g. "message.parts[0]".
	Field string `json:"field"`
	// Description says what is wrong and how to fix it.
	Description string `json:"description"`
}

// errorWire is the JSON form of Error.
type errorWire struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    []any  `json:"data,omitempty"`
}

// data returns the `data` array: the ErrorInfo, then the details.
func (e *Error) data() []any {
	if e.Reason == "" && len(e.Details) == 0 {
		return nil
	}
	out := make([]any, 0, 1+len(e.Details))
	if e.Reason != "" {
		out = append(out, ErrorInfo{Type: TypeErrorInfo, Reason: e.Reason, Domain: ErrorDomain, Metadata: e.Metadata})
	}
	return append(out, e.Details...)
}

// MarshalJSON emits {"code","message","data":[ErrorInfo, ...Details]}
// (a2av03.EncodeError writes the 0.3 shape).
func (e *Error) MarshalJSON() ([]byte, error) {
	return marshalPlain(errorWire{Code: e.Code, Message: e.Message, Data: e.data()})
}

// UnmarshalJSON reads an error object from a peer: the v1.0 form with a
// `data` array (its ErrorInfo fills Reason and Metadata, the rest goes to
// Details) and the 0.3 form with free-form `data` (kept as the single
// element of Details).
func (e *Error) UnmarshalJSON(b []byte) error {
	var w struct {
		Code    json.Number     `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := Error{Message: w.Message}
	if w.Code != "" {
		if n, err := w.Code.Int64(); err == nil {
			out.Code = int(n)
		} else if f, err := w.Code.Float64(); err == nil {
			out.Code = int(f)
		}
	}
	out.readDetails(w.Data)
	*e = out
	return nil
}

// readDetails fills Reason, Metadata and Details from a `data` value.
func (e *Error) readDetails(data json.RawMessage) {
	if len(data) == 0 || string(data) == "null" {
		return
	}
	if data[0] != '[' {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		// The 0.3 shape this project emits (see a2av03.EncodeError)
		// names the reason and metadata as members; any other object is
		// kept whole.
		if m, ok := v.(map[string]any); ok {
			if r, _ := m["reason"].(string); r != "" && m["domain"] == ErrorDomain {
				e.Reason = r
				e.readMetadata(m["metadata"])
				if ds, ok := m["details"].([]any); ok {
					e.Details = append(e.Details, ds...)
				}
				return
			}
		}
		e.Details = append(e.Details, v)
		return
	}
	var items []json.RawMessage
	if json.Unmarshal(data, &items) != nil {
		return
	}
	for _, it := range items {
		var m map[string]any
		if json.Unmarshal(it, &m) != nil {
			var v any
			_ = json.Unmarshal(it, &v)
			e.Details = append(e.Details, v)
			continue
		}
		if t, _ := m["@type"].(string); e.Reason == "" && strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			e.Reason, _ = m["reason"].(string)
			e.readMetadata(m["metadata"])
			continue
		}
		e.Details = append(e.Details, m)
	}
}

// readMetadata fills Metadata from an ErrorInfo metadata object.
func (e *Error) readMetadata(v any) {
	md, ok := v.(map[string]any)
	if !ok || len(md) == 0 {
		return
	}
	e.Metadata = make(map[string]string, len(md))
	for k, v := range md {
		if s, ok := v.(string); ok {
			e.Metadata[k] = s
		} else {
			e.Metadata[k] = fmt.Sprint(v)
		}
	}
}

// ErrorFromJSON decodes a JSON-RPC error object received from a peer,
// accepting both the v1.0 and the 0.3 shape of `data`.
func ErrorFromJSON(data []byte) (*Error, error) {
	var e Error
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("error object is not valid JSON: %w", err)
	}
	return &e, nil
}

// NewError returns an error with the given code, ErrorInfo reason and
// message; for codes without a constructor here, such as the project's
// CodeUnauthorized, CodeRateLimited and CodeUntrusted.
func NewError(code int, reason, message string) *Error {
	return &Error{Code: code, Reason: reason, Message: message}
}

// WithMetadata sets an ErrorInfo metadata entry and returns e.
func (e *Error) WithMetadata(key, value string) *Error {
	if e.Metadata == nil {
		e.Metadata = make(map[string]string, 2)
	}
	e.Metadata[key] = value
	return e
}

// ErrParse is -32700: the body is not valid JSON. Respond with id null.
func ErrParse(detail string) *Error {
	msg := "Parse error: the request body is not valid JSON; send a single JSON-RPC 2.0 request object"
	if detail != "" {
		msg += " (" + detail + ")"
	}
	return &Error{Code: CodeParseError, Reason: "PARSE_ERROR", Message: msg}
}

// ErrInvalidRequest is -32600: the JSON is not a valid JSON-RPC request
// object; detail says which rule it breaks.
func ErrInvalidRequest(detail string) *Error {
	msg := "Invalid request"
	if detail != "" {
		msg += ": " + detail
	}
	return &Error{Code: CodeInvalidRequest, Reason: "INVALID_REQUEST", Message: msg}
}

// ErrMethodNotFound is -32601 for an unknown method name.
func ErrMethodNotFound(method string) *Error {
	return &Error{
		Code:   CodeMethodNotFound,
		Reason: "METHOD_NOT_FOUND",
		Message: fmt.Sprintf("Method %q not found: use a v1.0 method (SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, "+
			"SubscribeToTask, CreateTaskPushNotificationConfig, GetTaskPushNotificationConfig, ListTaskPushNotificationConfigs, "+
			"DeleteTaskPushNotificationConfig, GetExtendedAgentCard) or its 0.3 name (message/send, tasks/get, ...)", method),
		Metadata: map[string]string{"method": method},
	}
}

// ErrInvalidParams is -32602 for an invalid field: the message is
// "<field>: <description>" and data carries a google.rpc.BadRequest.
// description should say how to fix the field.
func ErrInvalidParams(field, description string) *Error {
	return invalidParams([]FieldViolation{{Field: field, Description: description}})
}

// invalidParams builds a -32602 error from one or more violations.
func invalidParams(vs []FieldViolation) *Error {
	msg := vs[0].Description
	if vs[0].Field != "" {
		msg = vs[0].Field + ": " + msg
	}
	if len(vs) > 1 {
		msg += fmt.Sprintf(" (and %d more problem(s), see data)", len(vs)-1)
	}
	e := &Error{
		Code:    CodeInvalidParams,
		Reason:  "INVALID_PARAMS",
		Message: msg,
		Details: []any{BadRequest{Type: TypeBadRequest, FieldViolations: vs}},
	}
	if vs[0].Field != "" {
		e.Metadata = map[string]string{"field": vs[0].Field}
	}
	return e
}

// ErrInternal is -32603. detail is shown to the caller, so keep secrets
// out of it.
func ErrInternal(detail string) *Error {
	msg := "Internal error"
	if detail != "" {
		msg += ": " + detail
	}
	return &Error{Code: CodeInternalError, Reason: "INTERNAL_ERROR", Message: msg}
}

// ErrTaskNotFound is -32001: the task does not exist or the caller may not
// see it.
func ErrTaskNotFound(taskID string) *Error {
	return &Error{
		Code:     CodeTaskNotFound,
		Reason:   "TASK_NOT_FOUND",
		Message:  fmt.Sprintf("Task %q not found: check the task id (use ListTasks to see the tasks you can access)", taskID),
		Metadata: map[string]string{"taskId": taskID},
	}
}

// ErrTaskNotCancelable is -32002: the task is already in state, a
// terminal state.
func ErrTaskNotCancelable(taskID string, state TaskState) *Error {
	return &Error{
		Code:     CodeTaskNotCancelable,
		Reason:   "TASK_NOT_CANCELABLE",
		Message:  fmt.Sprintf("Task %q cannot be canceled: it is already %s, a final state; start a new task to continue", taskID, state),
		Metadata: map[string]string{"taskId": taskID, "state": state.String()},
	}
}

// ErrTaskRunNotCancelable is -32002 for a task whose turn the agent's host
// is running and cannot stop (the host declared it has no abort): the task
// goes on and ends by itself, so reporting it canceled would be false.
func ErrTaskRunNotCancelable(taskID string, state TaskState) *Error {
	return &Error{
		Code:   CodeTaskNotCancelable,
		Reason: "TASK_NOT_CANCELABLE",
		Message: fmt.Sprintf("Task %q cannot be canceled while the agent works on it: its host cannot stop a running turn, "+
			"so the task (now %s) goes on and ends by itself; follow it with GetTask or SubscribeToTask", taskID, state),
		Metadata: map[string]string{"taskId": taskID, "state": state.String(), "why": "host-cannot-stop-running-turn"},
	}
}

// ErrTaskNotInChain is -32002 for a cancel that names a delegation chain
// (the a2a-plugin/chain-id key of its metadata: a cancel cascading down a
// delegation tree) and a task of another chain: a cascade reaches only the
// tasks of its own tree.
func ErrTaskNotInChain(taskID, chainID, taskChain string) *Error {
	return &Error{
		Code:   CodeTaskNotCancelable,
		Reason: "TASK_NOT_CANCELABLE",
		Message: fmt.Sprintf("Task %q was not canceled: the cancel is for the tasks of delegation chain %q, and this task belongs to chain %q; "+
			"send CancelTask without the chain id to cancel it anyway", taskID, chainID, taskChain),
		Metadata: map[string]string{"taskId": taskID, "why": "not-in-delegation-chain"},
	}
}

// ErrPushNotSupported is -32003: the agent does not support push
// notifications.
func ErrPushNotSupported() *Error {
	return &Error{
		Code:    CodePushNotificationNotSupported,
		Reason:  "PUSH_NOTIFICATION_NOT_SUPPORTED",
		Message: "Push notifications are not supported by this agent (its card does not set capabilities.pushNotifications): poll GetTask or use SubscribeToTask instead",
	}
}

// ErrUnsupportedOperation is -32004; msg says which operation and why
// (streaming not declared, task already terminal, …).
func ErrUnsupportedOperation(msg string) *Error {
	if msg == "" {
		msg = "This operation is not supported by this agent"
	}
	return &Error{Code: CodeUnsupportedOperation, Reason: "UNSUPPORTED_OPERATION", Message: msg}
}

// ErrContentTypeNotSupported is -32005: a part's media type is not
// accepted.
func ErrContentTypeNotSupported(mediaType string) *Error {
	return &Error{
		Code:     CodeContentTypeNotSupported,
		Reason:   "CONTENT_TYPE_NOT_SUPPORTED",
		Message:  fmt.Sprintf("Media type %q is not supported by this agent: send parts in one of the input modes listed on its agent card", mediaType),
		Metadata: map[string]string{"mediaType": mediaType},
	}
}

// ErrInvalidAgentResponse is -32006: an agent's answer violates the
// protocol; msg says how.
func ErrInvalidAgentResponse(msg string) *Error {
	if msg == "" {
		msg = "The agent returned a response that violates the A2A protocol"
	}
	return &Error{Code: CodeInvalidAgentResponse, Reason: "INVALID_AGENT_RESPONSE", Message: msg}
}

// ErrExtendedCardNotConfigured is -32007: the extended card is declared but
// none is configured.
func ErrExtendedCardNotConfigured() *Error {
	return &Error{
		Code:    CodeExtendedAgentCardNotConfigured,
		Reason:  "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
		Message: "The extended agent card is declared but not configured on this agent: use the public agent card at /.well-known/agent-card.json",
	}
}

// ErrExtensionSupportRequired is -32008: the agent requires extension uri
// and the client did not request it.
func ErrExtensionSupportRequired(uri string) *Error {
	return &Error{
		Code:     CodeExtensionSupportRequired,
		Reason:   "EXTENSION_SUPPORT_REQUIRED",
		Message:  fmt.Sprintf("Extension %q is required by this agent: list it in the A2A-Extensions request header", uri),
		Metadata: map[string]string{"extension": uri},
	}
}

// ErrVersionNotSupported is -32009: the requested A2A-Version is not
// served here.
func ErrVersionNotSupported(version string) *Error {
	return &Error{
		Code:     CodeVersionNotSupported,
		Reason:   "VERSION_NOT_SUPPORTED",
		Message:  fmt.Sprintf("A2A protocol version %q is not supported: send the header A2A-Version: 1.0 (0.3 is also served)", version),
		Metadata: map[string]string{"version": version, "supportedVersions": ProtocolVersion + "," + ProtocolVersionV03},
	}
}

// HTTPStatus maps a JSON-RPC/A2A error code to the HTTP status of the
// HTTP+JSON binding (the v1.0.1 mapping table, plus this project's codes).
func HTTPStatus(code int) int {
	switch code {
	case CodeParseError, CodeInvalidRequest, CodeInvalidParams, CodeContentTypeNotSupported,
		CodeTaskNotCancelable, CodePushNotificationNotSupported, CodeUnsupportedOperation,
		CodeExtendedAgentCardNotConfigured, CodeExtensionSupportRequired, CodeVersionNotSupported:
		return 400
	case CodeMethodNotFound, CodeTaskNotFound:
		return 404
	case CodeUnauthorized:
		return 401
	case CodeUntrusted:
		return 403
	case CodeRateLimited:
		return 429
	}
	return 500
}

// GRPCStatusName maps a JSON-RPC/A2A error code to the google.rpc.Code
// name of the gRPC binding and of the google.rpc.Status JSON form.
func GRPCStatusName(code int) string {
	switch code {
	case CodeParseError, CodeInvalidRequest, CodeInvalidParams, CodeContentTypeNotSupported:
		return "INVALID_ARGUMENT"
	case CodeMethodNotFound:
		return "UNIMPLEMENTED"
	case CodeTaskNotFound:
		return "NOT_FOUND"
	case CodeTaskNotCancelable, CodePushNotificationNotSupported, CodeUnsupportedOperation,
		CodeExtendedAgentCardNotConfigured, CodeExtensionSupportRequired, CodeVersionNotSupported:
		return "FAILED_PRECONDITION"
	case CodeUnauthorized:
		return "UNAUTHENTICATED"
	case CodeUntrusted:
		return "PERMISSION_DENIED"
	case CodeRateLimited:
		return "RESOURCE_EXHAUSTED"
	}
	return "INTERNAL"
}

// reasonCodes maps ErrorInfo reasons back to JSON-RPC codes, for errors
// read from the HTTP+JSON binding.
var reasonCodes = map[string]int{
	"PARSE_ERROR":                        CodeParseError,
	"INVALID_REQUEST":                    CodeInvalidRequest,
	"METHOD_NOT_FOUND":                   CodeMethodNotFound,
	"INVALID_PARAMS":                     CodeInvalidParams,
	"INTERNAL_ERROR":                     CodeInternalError,
	"TASK_NOT_FOUND":                     CodeTaskNotFound,
	"TASK_NOT_CANCELABLE":                CodeTaskNotCancelable,
	"PUSH_NOTIFICATION_NOT_SUPPORTED":    CodePushNotificationNotSupported,
	"UNSUPPORTED_OPERATION":              CodeUnsupportedOperation,
	"CONTENT_TYPE_NOT_SUPPORTED":         CodeContentTypeNotSupported,
	"INVALID_AGENT_RESPONSE":             CodeInvalidAgentResponse,
	"EXTENDED_AGENT_CARD_NOT_CONFIGURED": CodeExtendedAgentCardNotConfigured,
	"EXTENSION_SUPPORT_REQUIRED":         CodeExtensionSupportRequired,
	"VERSION_NOT_SUPPORTED":              CodeVersionNotSupported,
	// This project's reasons (internal/server), so that its refusals keep
	// their codes across the HTTP+JSON binding.
	"UNAUTHENTICATED":   CodeUnauthorized,
	"UNAUTHORIZED":      CodeUnauthorized,
	"RATE_LIMITED":      CodeRateLimited,
	"TOO_MANY_STREAMS":  CodeRateLimited,
	"UNTRUSTED":         CodeUntrusted,
	"REQUEST_TOO_LARGE": CodeInvalidRequest,
	"REQUEST_TOO_DEEP":  CodeInvalidRequest,
	"REQUEST_TIMEOUT":   CodeInvalidRequest,
	"CLIENT_CANCELLED":  CodeInvalidRequest,
	"UNAVAILABLE":       CodeInternalError,
	"SERVER_BUSY":       CodeInternalError,
	"STREAM_DROPPED":    CodeInternalError,
}

// Status is the body of the google.rpc.Status JSON form the HTTP+JSON
// binding uses for errors: {"error": Status}.
type Status struct {
	// Code is the HTTP status.
	Code int `json:"code"`
	// Status is the google.rpc.Code name, e.g. "NOT_FOUND".
	Status string `json:"status"`
	// Message is the error message.
	Message string `json:"message"`
	// Details are the @type detail objects (ErrorInfo first).
	Details []any `json:"details,omitempty"`
}

// Status returns the google.rpc.Status form of e.
func (e *Error) Status() Status {
	return Status{Code: HTTPStatus(e.Code), Status: GRPCStatusName(e.Code), Message: e.Message, Details: e.data()}
}

// StatusJSON returns {"error": <google.rpc.Status>} for the HTTP+JSON
// binding; send it with HTTPStatus(e.Code).
func (e *Error) StatusJSON() ([]byte, error) {
	return marshalPlain(struct {
		Error Status `json:"error"`
	}{e.Status()})
}

// ErrorFromStatusJSON decodes a google.rpc.Status error body
// ({"error": {...}}) from the HTTP+JSON binding. The JSON-RPC code is
// recovered from the ErrorInfo reason, else from the status name.
func ErrorFromStatusJSON(data []byte) (*Error, error) {
	var w struct {
		Error struct {
			Code    int             `json:"code"`
			Status  string          `json:"status"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("error body is not a google.rpc.Status JSON object: %w", err)
	}
	e := &Error{Message: w.Error.Message}
	e.readDetails(w.Error.Details)
	e.Code = CodeForStatus(e.Reason, w.Error.Status)
	return e, nil
}

// CodeForStatus returns the JSON-RPC code of an error read from the
// HTTP+JSON or the gRPC binding: the code of its ErrorInfo reason when the
// reason is known, else the one its google.rpc.Code name ("NOT_FOUND")
// stands for.
func CodeForStatus(reason, statusName string) int {
	if c, ok := reasonCodes[reason]; ok {
		return c
	}
	switch statusName {
	case "INVALID_ARGUMENT":
		return CodeInvalidParams
	case "NOT_FOUND":
		return CodeTaskNotFound
	case "UNIMPLEMENTED", "FAILED_PRECONDITION":
		return CodeUnsupportedOperation
	case "UNAUTHENTICATED":
		return CodeUnauthorized
	case "PERMISSION_DENIED":
		return CodeUntrusted
	case "RESOURCE_EXHAUSTED":
		return CodeRateLimited
	}
	return CodeInternalError
}
