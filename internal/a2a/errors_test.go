package a2a

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
)

func TestEveryErrorConstructorHasTheV1Envelope(t *testing.T) {
	cases := []struct {
		err      *Error
		code     int
		reason   string
		metadata map[string]string
		mention  string // the message tells the caller what to fix
	}{
		{ErrParse("syntax error at byte 3"), -32700, "PARSE_ERROR", nil, "JSON-RPC 2.0 request object"},
		{ErrInvalidRequest("jsonrpc must be \"2.0\""), -32600, "INVALID_REQUEST", nil, "jsonrpc"},
		{ErrMethodNotFound("tasks/send"), -32601, "METHOD_NOT_FOUND", map[string]string{"method": "tasks/send"}, "SendMessage"},
		{ErrInvalidParams("message.parts", "must contain at least one part"), -32602, "INVALID_PARAMS", map[string]string{"field": "message.parts"}, "message.parts: must contain"},
		{ErrInternal("store unavailable"), -32603, "INTERNAL_ERROR", nil, "store unavailable"},
		{ErrTaskNotFound("t1"), -32001, "TASK_NOT_FOUND", map[string]string{"taskId": "t1"}, "check the task id"},
		{ErrTaskNotCancelable("t1", TaskStateCompleted), -32002, "TASK_NOT_CANCELABLE", map[string]string{"taskId": "t1", "state": "TASK_STATE_COMPLETED"}, "new task"},
		{ErrPushNotSupported(), -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", nil, "GetTask"},
		{ErrUnsupportedOperation("streaming is not enabled: use SendMessage"), -32004, "UNSUPPORTED_OPERATION", nil, "use SendMessage"},
		{ErrContentTypeNotSupported("image/tiff"), -32005, "CONTENT_TYPE_NOT_SUPPORTED", map[string]string{"mediaType": "image/tiff"}, "input modes"},
		{ErrInvalidAgentResponse("task has no id"), -32006, "INVALID_AGENT_RESPONSE", nil, "task has no id"},
		{ErrExtendedCardNotConfigured(), -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", nil, "public agent card"},
		{ErrExtensionSupportRequired("https://ext/x"), -32008, "EXTENSION_SUPPORT_REQUIRED", map[string]string{"extension": "https://ext/x"}, "A2A-Extensions"},
		{ErrVersionNotSupported("99.0"), -32009, "VERSION_NOT_SUPPORTED", map[string]string{"version": "99.0", "supportedVersions": "1.0,0.3"}, "A2A-Version: 1.0"},
		{NewError(CodeRateLimited, "RATE_LIMITED", "too many requests: retry in 2s"), -32051, "RATE_LIMITED", nil, "retry"},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			e := c.err
			if e.Code != c.code || e.Reason != c.reason || !reflect.DeepEqual(e.Metadata, c.metadata) {
				t.Errorf("got code %d reason %s metadata %v", e.Code, e.Reason, e.Metadata)
			}
			if !strings.Contains(e.Message, c.mention) {
				t.Errorf("message %q does not mention %q", e.Message, c.mention)
			}
			body := EncodeError(json.RawMessage(`7`), e)
			a2atest.ValidateJSONRPCResponse(t, body, "")
			var env struct {
				Error struct {
					Code int              `json:"code"`
					Data []map[string]any `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatal(err)
			}
			info := env.Error.Data[0]
			if info["@type"] != TypeErrorInfo || info["domain"] != ErrorDomain || info["reason"] != c.reason {
				t.Errorf("ErrorInfo = %v", info)
			}
			// A peer decodes it back to the same error.
			back, err := ErrorFromJSON(mustField(t, body, "error"))
			if err != nil {
				t.Fatal(err)
			}
			if back.Code != e.Code || back.Reason != e.Reason || back.Message != e.Message || !reflect.DeepEqual(back.Metadata, e.Metadata) {
				t.Errorf("decoded %+v, want %+v", back, e)
			}
		})
	}
}

func mustField(t *testing.T, body []byte, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

func TestInvalidParamsCarriesBadRequestForEveryViolation(t *testing.T) {
	err := (&Message{}).Validate()
	e := err.(*Error)
	if !strings.HasPrefix(e.Message, "message.messageId: is required") || !strings.Contains(e.Message, "and 2 more") {
		t.Errorf("message = %q", e.Message)
	}
	br := e.Details[0].(BadRequest)
	if br.Type != TypeBadRequest || len(br.FieldViolations) != 3 || br.FieldViolations[2].Field != "message.parts" {
		t.Errorf("details = %+v", br)
	}
	b, _ := e.MarshalJSON()
	if !strings.Contains(string(b), `"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.messageId"`) {
		t.Errorf("json = %s", b)
	}
}

func TestErrorFromJSONAcceptsV03FreeFormData(t *testing.T) {
	cases := []struct {
		in      string
		code    int
		reason  string
		details []any
	}{
		{`{"code":-32001,"message":"Task not found","data":{"taskId":"t"}}`, -32001, "", []any{map[string]any{"taskId": "t"}}},
		{`{"code":-32603,"message":"boom","data":"stack trace"}`, -32603, "", []any{"stack trace"}},
		{`{"code":-32001,"message":"x"}`, -32001, "", nil},
		{`{"code":-32001.0,"message":"x","data":null}`, -32001, "", nil},
		{`{"code":-32001,"message":"x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"n":3}},{"@type":"other","x":1}, 5]}`,
			-32001, "TASK_NOT_FOUND", []any{map[string]any{"@type": "other", "x": 1.0}, 5.0}},
	}
	for _, c := range cases {
		e, err := ErrorFromJSON([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if e.Code != c.code || e.Reason != c.reason || !reflect.DeepEqual(e.Details, c.details) {
			t.Errorf("%s: got %+v", c.in, e)
		}
	}
	if e, _ := ErrorFromJSON([]byte(cases[4].in)); e.Metadata["n"] != "3" {
		t.Errorf("non-string metadata not stringified: %v", e.Metadata)
	}
	if _, err := ErrorFromJSON([]byte(`[`)); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestErrorsIsMatchesByCode(t *testing.T) {
	var err error = ErrTaskNotFound("a")
	if !errors.Is(err, ErrTaskNotFound("")) || errors.Is(err, ErrTaskNotCancelable("", "")) {
		t.Error("errors.Is by code")
	}
	var e *Error
	if !errors.As(err, &e) || e.Metadata["taskId"] != "a" {
		t.Error("errors.As")
	}
	if got := err.Error(); got != `a2a error -32001 TASK_NOT_FOUND: Task "a" not found: check the task id (use ListTasks to see the tasks you can access)` {
		t.Errorf("Error() = %s", got)
	}
}

func TestHTTPAndGRPCStatusMapping(t *testing.T) {
	cases := []struct {
		code   int
		http   int
		status string
	}{
		{CodeParseError, 400, "INVALID_ARGUMENT"},
		{CodeInvalidRequest, 400, "INVALID_ARGUMENT"},
		{CodeMethodNotFound, 404, "UNIMPLEMENTED"},
		{CodeInvalidParams, 400, "INVALID_ARGUMENT"},
		{CodeInternalError, 500, "INTERNAL"},
		{CodeTaskNotFound, 404, "NOT_FOUND"},
		{CodeTaskNotCancelable, 400, "FAILED_PRECONDITION"},
		{CodePushNotificationNotSupported, 400, "FAILED_PRECONDITION"},
		{CodeUnsupportedOperation, 400, "FAILED_PRECONDITION"},
		{CodeContentTypeNotSupported, 400, "INVALID_ARGUMENT"},
		{CodeInvalidAgentResponse, 500, "INTERNAL"},
		{CodeExtendedAgentCardNotConfigured, 400, "FAILED_PRECONDITION"},
		{CodeExtensionSupportRequired, 400, "FAILED_PRECONDITION"},
		{CodeVersionNotSupported, 400, "FAILED_PRECONDITION"},
		{CodeUnauthorized, 401, "UNAUTHENTICATED"},
		{CodeRateLimited, 429, "RESOURCE_EXHAUSTED"},
		{CodeUntrusted, 403, "PERMISSION_DENIED"},
		{-1, 500, "INTERNAL"},
	}
	for _, c := range cases {
		if HTTPStatus(c.code) != c.http || GRPCStatusName(c.code) != c.status {
			t.Errorf("%d: %d %s, want %d %s", c.code, HTTPStatus(c.code), GRPCStatusName(c.code), c.http, c.status)
		}
	}
}

func TestStatusJSONRoundTrips(t *testing.T) {
	for _, e := range []*Error{ErrTaskNotFound("t1"), ErrVersionNotSupported("2.0"), ErrInvalidParams("id", "is required"), NewError(CodeUntrusted, "", "peer not trusted"),
		NewError(CodeUnauthorized, "UNAUTHORIZED", "not for your tier"), NewError(CodeRateLimited, "TOO_MANY_STREAMS", "close one")} {
		b, err := e.StatusJSON()
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Error Status `json:"error"`
		}
		if err := json.Unmarshal(b, &env); err != nil || env.Error.Code != HTTPStatus(e.Code) || env.Error.Status != GRPCStatusName(e.Code) {
			t.Errorf("%s: %+v %v", b, env, err)
		}
		back, err := ErrorFromStatusJSON(b)
		if err != nil || back.Code != e.Code || back.Reason != e.Reason || back.Message != e.Message {
			t.Errorf("%s decoded to %+v, %v", b, back, err)
		}
	}
}
