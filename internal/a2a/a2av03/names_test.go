package a2av03

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

func TestMethodNamesRoundTrip(t *testing.T) {
	for op := a2a.OpSendMessage; op <= a2a.OpGetExtendedCard; op++ {
		n := Method(op)
		if n == "" {
			if op != a2a.OpListTasks {
				t.Errorf("%v has no 0.3 name", op)
			}
			continue
		}
		if back, ok := LookupMethod(n); !ok || back != op {
			t.Errorf("Method(%v) = %q does not round trip", op, n)
		}
		if _, ok := a2a.LookupMethod(n); ok {
			t.Errorf("the core knows the 0.3 name %q", n)
		}
	}
	if Method(0) != "" || Method(a2a.OpGetExtendedCard+1) != "" {
		t.Error("Method of no operation")
	}
	for _, bad := range []string{"", "SendMessage", "tasks/list", "tasks/send", "message/Send"} {
		if _, ok := LookupMethod(bad); ok {
			t.Errorf("LookupMethod(%q) found", bad)
		}
	}
}

func TestStateAndRoleNamesReadBack(t *testing.T) {
	states := map[a2a.TaskState]string{
		a2a.TaskStateUnspecified: "unknown", a2a.TaskStateSubmitted: "submitted", a2a.TaskStateWorking: "working",
		a2a.TaskStateCompleted: "completed", a2a.TaskStateFailed: "failed", a2a.TaskStateCanceled: "canceled",
		a2a.TaskStateInputRequired: "input-required", a2a.TaskStateRejected: "rejected",
		a2a.TaskStateAuthRequired: "auth-required", "": "unknown",
	}
	for s, want := range states {
		if got := StateName(s); got != want {
			t.Errorf("StateName(%q) = %q, want %q", s, got, want)
		}
		if s == "" || s == a2a.TaskStateUnspecified {
			continue
		}
		// The core's lenient reader takes the 0.3 name back.
		if back, err := a2a.ParseTaskState(want); err != nil || back != s {
			t.Errorf("ParseTaskState(%q) = %q, %v", want, back, err)
		}
	}
	if RoleName(a2a.RoleUser) != "user" || RoleName(a2a.RoleAgent) != "agent" || RoleName(a2a.RoleUnspecified) != "unspecified" {
		t.Error("role names")
	}
	for _, r := range []a2a.Role{a2a.RoleUser, a2a.RoleAgent} {
		if back, err := a2a.ParseRole(RoleName(r)); err != nil || back != r {
			t.Errorf("ParseRole(%q) = %q, %v", RoleName(r), back, err)
		}
	}
}

func TestEncodeErrorHasTheV03DataObject(t *testing.T) {
	cases := []struct {
		name string
		id   json.RawMessage
		e    *a2a.Error
		want string
	}{
		{"reason and metadata", json.RawMessage(`7`), a2a.ErrTaskNotFound("t1"), ""},
		{"no reason", nil, &a2a.Error{Code: -32603, Message: "boom"}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"boom"}}`},
		{"details only", json.RawMessage(`"x"`), &a2a.Error{Code: -32602, Message: "bad", Details: []any{map[string]any{"@type": "t"}}},
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad","data":{"details":[{"@type":"t"}]}}}`},
		{"unencodable detail dropped", json.RawMessage(`1`), &a2a.Error{Code: -32603, Message: "m", Reason: "R", Details: []any{func() {}}},
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m","data":{"reason":"R","domain":"a2a-protocol.org"}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := EncodeError(c.id, c.e)
			if c.want != "" && string(got) != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
			// It reads back, as a peer's 0.3 error, into the same error.
			r, err := a2a.ParseResponse(got)
			if err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			if r.Error.Code != c.e.Code || r.Error.Reason != c.e.Reason || !reflect.DeepEqual(r.Error.Metadata, c.e.Metadata) {
				t.Errorf("read back as %+v from %s", r.Error, got)
			}
			var shape struct {
				Error struct {
					Data json.RawMessage `json:"data"`
				} `json:"error"`
			}
			if json.Unmarshal(got, &shape) != nil || (len(shape.Error.Data) > 0 && shape.Error.Data[0] != '{') {
				t.Errorf("data is not an object: %s", got)
			}
		})
	}
	// The task-not-found error carries its reason, domain and metadata.
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":` + mustJSON(t, a2a.ErrTaskNotFound("t1").Message) +
		`,"data":{"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}}}`
	if got := string(EncodeError(json.RawMessage(`7`), a2a.ErrTaskNotFound("t1"))); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}
