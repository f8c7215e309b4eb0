package a2a

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
)

func TestParseRequestAcceptsValidRequests(t *testing.T) {
	cases := []struct {
		name, body, id, method, params string
	}{
		{"number id", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"a":1}}`, `1`, "SendMessage", `{"a":1}`},
		{"string id", ` {"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{}} `, `"abc"`, "GetTask", `{}`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"GetTask"}`, `null`, "GetTask", ``},
		{"no params", `{"jsonrpc":"2.0","id":2,"method":"GetExtendedAgentCard"}`, `2`, "GetExtendedAgentCard", ``},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"GetExtendedAgentCard","params":null}`, `2`, "GetExtendedAgentCard", ``},
		{"notification", `{"jsonrpc":"2.0","method":"GetTask","params":{}}`, ``, "GetTask", `{}`},
		{"escaped method", `{"jsonrpc":"2.0","id":-3,"method":"message\/send","params":{}}`, `-3`, "message/send", `{}`},
		{"byte order mark", "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\"}", `1`, "GetTask", ``},
		{"extra members", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{},"extra":true}`, `1`, "GetTask", `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, e := ParseRequest([]byte(c.body))
			if e != nil {
				t.Fatalf("error %v", e)
			}
			if string(r.ID) != c.id || r.Method != c.method || string(r.Params) != c.params || r.JSONRPC != "2.0" {
				t.Errorf("got %+v", r)
			}
			if r.IsNotification() != (c.id == "") {
				t.Errorf("IsNotification = %v", r.IsNotification())
			}
		})
	}
}

func TestParseRequestRejectsBadRequests(t *testing.T) {
	cases := []struct {
		name, body string
		code       int
		echoID     string // id the error response carries
		mention    string
	}{
		{"empty body", ``, -32700, "null", "empty"},
		{"not json", `{"jsonrpc":"2.0",`, -32700, "null", "not valid JSON"},
		{"garbage", `hello`, -32700, "null", "not valid JSON"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"GetTask"} x`, -32700, "null", "not valid JSON"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`, -32600, "null", "batch"},
		{"string body", `"SendMessage"`, -32600, "null", "object"},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"GetTask"}`, -32600, "1", `"2.0"`},
		{"missing version", `{"id":1,"method":"GetTask"}`, -32600, "1", `"2.0"`},
		{"numeric version", `{"jsonrpc":2.0,"id":1,"method":"GetTask"}`, -32600, "1", `"2.0"`},
		{"missing method", `{"jsonrpc":"2.0","id":"x"}`, -32600, `"x"`, "method is missing"},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600, "1", "method must be a string"},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, -32600, "1", "non-empty"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"GetTask"}`, -32600, "null", "id must be"},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"GetTask"}`, -32600, "null", "id must be"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"GetTask"}`, -32600, "null", "id must be"},
		{"string params", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":"x"}`, -32600, "1", "params must be an object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, e := ParseRequest([]byte(c.body))
			if e == nil {
				t.Fatalf("accepted: %+v", r)
			}
			if e.Code != c.code || !strings.Contains(e.Message, c.mention) {
				t.Errorf("got %d %q, want %d mentioning %q", e.Code, e.Message, c.code, c.mention)
			}
			if got := string(r.ResponseID()); got != c.echoID {
				t.Errorf("response id %s, want %s", got, c.echoID)
			}
			a2atest.ValidateJSONRPCResponse(t, EncodeError(r.ResponseID(), e), "")
		})
	}
}

func TestRequestDecodeParamsReportsTheBadField(t *testing.T) {
	r, _ := ParseRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`))
	var p GetTaskRequest
	e := r.DecodeParams(&p)
	if e == nil || e.Code != CodeInvalidParams || e.Metadata["field"] != "id" {
		t.Fatalf("err = %+v", e)
	}
	r, _ = ParseRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`))
	var c GetExtendedAgentCardRequest
	if e := r.DecodeParams(&c); e != nil {
		t.Fatalf("absent params: %v", e)
	}
}

func TestResponseEncodingWritesTheEnvelopeOnce(t *testing.T) {
	task := &Task{ID: "t", Status: TaskStatus{State: TaskStateWorking}}
	cases := []struct {
		name string
		r    Response
		want string
	}{
		{"typed result", Response{ID: json.RawMessage(`1`), Result: task}, `{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`},
		{"raw result", Response{ID: json.RawMessage(`"a"`), Result: json.RawMessage(`{"x":1}`)}, `{"jsonrpc":"2.0","id":"a","result":{"x":1}}`},
		{"null result", Response{ID: json.RawMessage(`2`)}, `{"jsonrpc":"2.0","id":2,"result":null}`},
		{"empty object result", Response{ID: json.RawMessage(`2`), Result: struct{}{}}, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"error wins", Response{Result: task, Error: NewError(-32001, "", "gone")}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"gone"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, enc := range []func() ([]byte, error){
				func() ([]byte, error) { return Marshal(&c.r) },
				func() ([]byte, error) { return Marshal(c.r) },
				func() ([]byte, error) { return json.Marshal(c.r) },
			} {
				b, err := enc()
				if err != nil || string(b) != c.want {
					t.Errorf("got %s, %v\nwant %s", b, err, c.want)
				}
			}
		})
	}
	b, _ := EncodeResult(json.RawMessage(`9`), &SendMessageResponse{Task: task})
	a2atest.ValidateJSONRPCResponse(t, b, "Send Message Response")
}

func TestParseResponseAndDecodeResult(t *testing.T) {
	r, err := ParseResponse([]byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","context_id":"c","status":{"state":"completed"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var res SendMessageResponse
	if err := r.DecodeResult(&res); err != nil || res.Task.ContextID != "c" || res.Task.Status.State != TaskStateCompleted {
		t.Fatalf("res = %+v, %v", res, err)
	}
	r, err = ParseResponse([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"nope","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DecodeResult(&res); err == nil || err.(*Error).Reason != "TASK_NOT_FOUND" {
		t.Fatalf("err = %v", err)
	}
	r, err = ParseResponse([]byte(`{"jsonrpc":"2.0","id":1,"result":null}`))
	if err != nil || r.Result == nil {
		t.Fatalf("null result: %+v, %v", r, err)
	}
	for _, bad := range []string{`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"1.0","id":1,"result":1}`, `[]`} {
		if _, err := ParseResponse([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestMarshalRequestBuildsAValidRequest(t *testing.T) {
	for _, id := range []any{7, int64(8), "req-1", json.RawMessage(`"raw"`)} {
		b, err := MarshalRequest(id, MethodGetTask, &GetTaskRequest{ID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		r, e := ParseRequest(b)
		if e != nil || r.Method != "GetTask" || string(r.Params) != `{"id":"t"}` {
			t.Errorf("%s: %+v %v", b, r, e)
		}
	}
	b, _ := MarshalRequest(1, MethodGetExtendedAgentCard, nil)
	if string(b) != `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}` {
		t.Errorf("got %s", b)
	}
}
