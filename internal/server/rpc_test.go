package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

func TestV10MethodsAnswerInV10Shapes(t *testing.T) {
	e := newEnv(t)

	t.Run("SendMessage blocking returns the completed task", func(t *testing.T) {
		task := e.send(tokAlice, "hello there", nil)
		if task.Status.State != a2a.TaskStateCompleted || task.ContextID == "" || len(task.Artifacts) != 1 ||
			task.Artifacts[0].Text() != "echo: hello there" {
			t.Errorf("task = %s", mustJSON(task))
		}
		// The answer is the artifact only: not the status message, not in history.
		if len(task.History) != 1 || task.History[0].Role != a2a.RoleUser || task.Status.Message != nil {
			t.Errorf("history = %s, status = %s", mustJSON(task.History), mustJSON(task.Status))
		}
	})
	t.Run("SendMessage direct reply returns a message", func(t *testing.T) {
		raw := e.ok(tokAlice, "SendMessage", sendParams("direct hi", nil))
		r := decode[a2a.SendMessageResponse](t, raw)
		if r.Message == nil || r.Task != nil || r.Message.Text() != "direct: hi" || r.Message.ContextID == "" || r.Message.Role != a2a.RoleAgent {
			t.Errorf("result = %s", raw)
		}
	})
	t.Run("SendMessage returnImmediately returns at once", func(t *testing.T) {
		raw := e.ok(tokAlice, "SendMessage", sendParams("slow job", func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		}))
		task := decode[a2a.SendMessageResponse](t, raw).Task
		if task == nil || task.Status.State.Terminal() {
			t.Fatalf("result = %s", raw)
		}
		got := decode[a2a.Task](t, e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: task.ID}))
		if got.ID != task.ID || got.Status.State.Terminal() {
			t.Errorf("GetTask = %s", mustJSON(got))
		}
		canceled := decode[a2a.Task](t, e.ok(tokAlice, "CancelTask", &a2a.CancelTaskRequest{ID: task.ID}))
		if canceled.Status.State != a2a.TaskStateCanceled {
			t.Errorf("CancelTask = %s", mustJSON(canceled))
		}
		waitFor(t, "the host to be told", func() bool { return len(e.exec.cancelledIDs()) > 0 })
		if err := e.fails(tokAlice, "CancelTask", &a2a.CancelTaskRequest{ID: task.ID}); err.Code != a2a.CodeTaskNotCancelable {
			t.Errorf("second cancel: %v", err)
		}
	})
	t.Run("GetTask historyLength", func(t *testing.T) {
		task := e.send(tokAlice, "ask count", nil) // history: the request, the question
		for _, tc := range []struct {
			n    *int32
			want int
		}{{nil, 2}, {a2a.Int32(0), 0}, {a2a.Int32(1), 1}} {
			raw := e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: task.ID, HistoryLength: tc.n})
			got := decode[a2a.Task](t, raw)
			if len(got.History) != tc.want {
				t.Errorf("historyLength %v: %d messages", tc.n, len(got.History))
			}
			if tc.want == 0 && strings.Contains(string(raw), `"history"`) {
				t.Errorf("historyLength 0 still emits history: %s", raw)
			}
		}
	})
	t.Run("ListTasks", func(t *testing.T) {
		raw := e.ok(tokAlice, "ListTasks", &a2a.ListTasksRequest{})
		l := decode[a2a.ListTasksResponse](t, raw)
		if len(l.Tasks) == 0 || l.PageSize != 50 || !strings.Contains(string(raw), `"nextPageToken":""`) {
			t.Errorf("ListTasks = %s", raw)
		}
	})
	t.Run("input required then continuation", func(t *testing.T) {
		task := e.send(tokAlice, "ask me", nil)
		if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
			t.Fatalf("task = %s", mustJSON(task))
		}
		next := e.send(tokAlice, "blue", func(r *a2a.SendMessageRequest) { r.Message.TaskID = task.ID })
		if next.ID != task.ID || next.Status.State != a2a.TaskStateCompleted || next.Artifacts[0].Text() != "got: blue" {
			t.Errorf("continuation = %s", mustJSON(next))
		}
		if err := e.fails(tokAlice, "SendMessage", sendParams("more", func(r *a2a.SendMessageRequest) { r.Message.TaskID = task.ID })); err.Code != a2a.CodeUnsupportedOperation {
			t.Errorf("message to a terminal task: %v", err)
		}
	})
	t.Run("failed and rejected tasks", func(t *testing.T) {
		if task := e.send(tokAlice, "fail now", nil); task.Status.State != a2a.TaskStateFailed {
			t.Errorf("fail: %s", mustJSON(task))
		}
		if task := e.send(tokAlice, "reject it", nil); task.Status.State != a2a.TaskStateRejected {
			t.Errorf("reject: %s", mustJSON(task))
		}
	})
	t.Run("push config methods", func(t *testing.T) {
		task := e.send(tokAlice, "hello", nil)
		cfg := &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "cfg-1", URL: "https://hooks.example.com/a2a", Token: "opaque",
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"}}
		created := decode[a2a.TaskPushNotificationConfig](t, e.ok(tokAlice, "CreateTaskPushNotificationConfig", cfg))
		if created.ID != "cfg-1" || created.URL != cfg.URL || created.TaskID != task.ID {
			t.Errorf("created = %+v", created)
		}
		gen := decode[a2a.TaskPushNotificationConfig](t, e.ok(tokAlice, "CreateTaskPushNotificationConfig",
			&a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "https://hooks.example.com/other"}))
		if gen.ID == "" {
			t.Error("no id generated")
		}
		got := decode[a2a.TaskPushNotificationConfig](t, e.ok(tokAlice, "GetTaskPushNotificationConfig",
			&a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"}))
		if got.URL != cfg.URL || got.Authentication == nil || got.Authentication.Credentials != "secret" {
			t.Errorf("got = %+v", got)
		}
		list := decode[a2a.ListTaskPushNotificationConfigsResponse](t, e.ok(tokAlice, "ListTaskPushNotificationConfigs",
			&a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID}))
		if len(list.Configs) != 2 {
			t.Errorf("list = %+v", list)
		}
		for i := 0; i < 2; i++ { // idempotent
			raw := e.ok(tokAlice, "DeleteTaskPushNotificationConfig", &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
			if string(raw) != "{}" {
				t.Errorf("delete result = %s, want {}", raw)
			}
		}
		if err := e.fails(tokAlice, "GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"}); err.Code != a2a.CodeTaskNotFound {
			t.Errorf("get after delete: %v", err)
		}
	})
	t.Run("slash aliases take v1.0 shapes", func(t *testing.T) {
		raw := e.ok(tokAlice, "tasks/list", &a2a.ListTasksRequest{PageSize: a2a.Int32(1)})
		a2atest.ValidateJSON(t, "List Tasks Response", raw)
	})
}

func TestV03MethodsAnswerInV03Shapes(t *testing.T) {
	e := newEnv(t)
	v03 := map[string]string{"A2A-Version": ""}
	msg03 := func(text string, extra map[string]any) map[string]any {
		m := map[string]any{"kind": "message", "messageId": a2a.NewID(), "role": "user",
			"parts": []any{map[string]any{"kind": "text", "text": text}}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	obj := func(raw json.RawMessage) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		return m
	}

	task := obj(e.ok(tokAlice, "message/send", map[string]any{"message": msg03("hello", nil),
		"configuration": map[string]any{"blocking": true}}, v03))
	status := task["status"].(map[string]any)
	if task["kind"] != "task" || status["state"] != "completed" {
		t.Fatalf("message/send = %v", task)
	}
	art := task["artifacts"].([]any)[0].(map[string]any)
	part := art["parts"].([]any)[0].(map[string]any)
	if part["kind"] != "text" || part["text"] != "echo: hello" {
		t.Errorf("artifact part = %v", part)
	}
	hist := task["history"].([]any)[0].(map[string]any)
	if hist["kind"] != "message" || hist["role"] != "user" {
		t.Errorf("history[0] = %v", hist)
	}
	taskID := task["id"].(string)

	direct := obj(e.ok(tokAlice, "message/send", map[string]any{"message": msg03("direct yo", nil)}, v03))
	if direct["kind"] != "message" || direct["role"] != "agent" {
		t.Errorf("direct reply = %v", direct)
	}

	got := obj(e.ok(tokAlice, "tasks/get", map[string]any{"id": taskID, "historyLength": 1}, v03))
	if got["kind"] != "task" || got["id"] != taskID || len(got["history"].([]any)) != 1 {
		t.Errorf("tasks/get = %v", got)
	}

	slow := obj(e.ok(tokAlice, "message/send", map[string]any{"message": msg03("slow work", nil),
		"configuration": map[string]any{"blocking": false}}, v03))
	if slow["kind"] != "task" {
		t.Fatalf("non-blocking = %v", slow)
	}
	canceled := obj(e.ok(tokAlice, "tasks/cancel", map[string]any{"id": slow["id"]}, v03))
	if canceled["status"].(map[string]any)["state"] != "canceled" {
		t.Errorf("tasks/cancel = %v", canceled)
	}

	// Push configs: nested shapes, the task id as default config id,
	// list → array, delete → null.
	set := obj(e.ok(tokAlice, "tasks/pushNotificationConfig/set", map[string]any{"taskId": taskID,
		"pushNotificationConfig": map[string]any{"url": "https://hooks.example.com/03",
			"authentication": map[string]any{"schemes": []string{"Bearer"}, "credentials": "c"}}}, v03))
	pnc := set["pushNotificationConfig"].(map[string]any)
	if set["taskId"] != taskID || pnc["id"] != taskID || pnc["url"] != "https://hooks.example.com/03" ||
		pnc["authentication"].(map[string]any)["schemes"].([]any)[0] != "Bearer" {
		t.Errorf("set = %v", set)
	}
	gotCfg := obj(e.ok(tokAlice, "tasks/pushNotificationConfig/get", map[string]any{"id": taskID}, v03))
	if gotCfg["pushNotificationConfig"].(map[string]any)["url"] != "https://hooks.example.com/03" {
		t.Errorf("get = %v", gotCfg)
	}
	list := e.ok(tokAlice, "tasks/pushNotificationConfig/list", map[string]any{"id": taskID}, v03)
	var arr []map[string]any
	if err := json.Unmarshal(list, &arr); err != nil || len(arr) != 1 {
		t.Errorf("list = %s", list)
	}
	del := e.ok(tokAlice, "tasks/pushNotificationConfig/delete", map[string]any{"id": taskID, "pushNotificationConfigId": taskID}, v03)
	if string(del) != "null" {
		t.Errorf("delete = %s, want null", del)
	}

	// Streaming: bare 0.3 objects, final on the last status update.
	s := e.openStream(tokAlice, "message/stream", map[string]any{"message": msg03("progress now", nil)}, v03)
	evs := s.raw03()
	var seq []string
	for _, ev := range evs {
		seq = append(seq, ev["kind"].(string))
	}
	if len(evs) < 3 || evs[0]["kind"] != "task" {
		t.Fatalf("0.3 stream = %v", seq)
	}
	last := evs[len(evs)-1]
	if last["kind"] != "status-update" || last["final"] != true || last["status"].(map[string]any)["state"] != "completed" {
		t.Errorf("last 0.3 event = %v", last)
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev["kind"] == "status-update" && ev["final"] != false {
			t.Errorf("non-final status update carries final: %v", ev)
		}
	}

	// Errors answer in the v1.0 error shape (ErrorInfo in data) for 0.3 too.
	r := e.rpc(tokAlice, "tasks/get", map[string]any{"id": "nope"}, v03)
	if r.err == nil || r.err.Code != a2a.CodeTaskNotFound || r.err.Reason != "TASK_NOT_FOUND" {
		t.Errorf("0.3 not found = %s", r.body)
	}
}

func TestVersionNegotiation(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name    string
		method  string
		version string
		query   string
		code    int // 0: success
	}{
		{"v1 method with 1.0", "ListTasks", "1.0", "", 0},
		{"v1 method with patch", "ListTasks", "1.0.7", "", 0},
		{"v1 method without header (lenient)", "ListTasks", "", "", 0},
		{"0.3 method without header", "tasks/get", "", "", a2a.CodeTaskNotFound},
		{"0.3 method with 0.3", "tasks/get", "0.3", "", a2a.CodeTaskNotFound},
		{"0.3 method with 0.3.0", "tasks/get", "0.3.0", "", a2a.CodeTaskNotFound},
		{"unsupported major", "ListTasks", "99.0", "", a2a.CodeVersionNotSupported},
		{"unsupported minor", "ListTasks", "1.1", "", a2a.CodeVersionNotSupported},
		{"garbage", "ListTasks", "latest", "", a2a.CodeVersionNotSupported},
		{"query parameter", "ListTasks", "", "?A2A-Version=1.0", 0},
		{"bad query parameter", "ListTasks", "", "?A2A-Version=2.0", a2a.CodeVersionNotSupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			params := map[string]any{}
			if strings.Contains(tc.method, "/") {
				params["id"] = "missing"
			}
			body, _ := a2a.MarshalRequest(1, tc.method, params)
			req, _ := http.NewRequest(http.MethodPost, e.url+"/"+tc.query, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tokAlice)
			if tc.version != "" {
				req.Header.Set("A2A-Version", tc.version)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			def := ""
			if tc.method == "ListTasks" {
				def = "List Tasks Response"
			}
			if strings.Contains(tc.method, "/") {
				a2atest.ValidateJSONRPCResponseV03(t, b)
			} else {
				a2atest.ValidateJSONRPCResponse(t, b, def)
			}
			r, _ := a2a.ParseResponse(b)
			code := 0
			if r.Error != nil {
				code = r.Error.Code
			}
			if code != tc.code || resp.StatusCode != 200 {
				t.Errorf("HTTP %d code %d, want 200 and %d: %s", resp.StatusCode, code, tc.code, b)
			}
			if tc.code == a2a.CodeVersionNotSupported && (r.Error.Reason != "VERSION_NOT_SUPPORTED" || r.Error.Metadata["version"] == "") {
				t.Errorf("ErrorInfo = %+v", r.Error)
			}
		})
	}
}

func TestErrorCodes(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxParts = 4 })
	done := e.send(tokAlice, "hello", nil)
	raw := func(s string) []byte { return []byte(s) }
	cases := []struct {
		name   string
		body   []byte
		hdr    map[string]string
		status int
		code   int
		nullID bool
	}{
		{"parse error", raw(`{"jsonrpc":"2.0","id":1,"method":`), nil, 200, a2a.CodeParseError, true},
		{"empty body", raw(``), nil, 200, a2a.CodeParseError, true},
		{"batch", raw(`[{"jsonrpc":"2.0","id":1,"method":"ListTasks"}]`), nil, 200, a2a.CodeInvalidRequest, true},
		{"not an object", raw(`42`), nil, 200, a2a.CodeInvalidRequest, true},
		{"wrong jsonrpc", raw(`{"jsonrpc":"1.0","id":1,"method":"ListTasks"}`), nil, 200, a2a.CodeInvalidRequest, false},
		{"missing method", raw(`{"jsonrpc":"2.0","id":1}`), nil, 200, a2a.CodeInvalidRequest, false},
		{"unknown method", raw(`{"jsonrpc":"2.0","id":1,"method":"tasks/send"}`), nil, 200, a2a.CodeMethodNotFound, false},
		{"params not an object", raw(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":"x"}`), nil, 200, a2a.CodeInvalidRequest, false},
		{"missing task id", raw(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`), nil, 200, a2a.CodeInvalidParams, false},
		{"wrong field type", raw(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":7}}`), nil, 200, a2a.CodeInvalidParams, false},
		{"negative historyLength", raw(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":-1}}`), nil, 200, a2a.CodeInvalidParams, false},
		{"pageSize out of range", raw(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":150}}`), nil, 200, a2a.CodeInvalidParams, false},
		{"unknown task", raw(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`), nil, 200, a2a.CodeTaskNotFound, false},
		{"cancel terminal", raw(`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"` + done.ID + `"}}`), nil, 200, a2a.CodeTaskNotCancelable, false},
		{"subscribe terminal", raw(`{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"` + done.ID + `"}}`), nil, 200, a2a.CodeUnsupportedOperation, false},
		{"message without parts", raw(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}`), nil, 200, a2a.CodeInvalidParams, false},
		{"part with two contents", raw(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"https://x.y/z"}]}}}`), nil, 200, a2a.CodeInvalidParams, false},
		{"unsupported part media type", raw(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"AAEC","mediaType":"video/mp4"}]}}}`), nil, 200, a2a.CodeContentTypeNotSupported, false},
		{"too many parts", raw(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"1"},{"text":"2"},{"text":"3"},{"text":"4"},{"text":"5"}]}}}`), nil, 200, a2a.CodeInvalidParams, false},
		{"wrong content type", raw(`{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`), map[string]string{"Content-Type": "text/plain"}, 200, a2a.CodeContentTypeNotSupported, false},
		{"unsupported version", raw(`{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`), map[string]string{"A2A-Version": "3.0"}, 200, a2a.CodeVersionNotSupported, false},
		{"string id echoed", raw(`{"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{"id":"nope"}}`), nil, 200, a2a.CodeTaskNotFound, false},
		{"null id", raw(`{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"nope"}}`), nil, 200, a2a.CodeTaskNotFound, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, _, b := e.post(tokAlice, tc.body, tc.hdr)
			if status != tc.status {
				t.Fatalf("HTTP %d, want %d: %s", status, tc.status, b)
			}
			a2atest.ValidateJSONRPCResponse(t, b, "")
			r, err := a2a.ParseResponse(b)
			if err != nil || r.Error == nil {
				t.Fatalf("not an error response: %s", b)
			}
			if r.Error.Code != tc.code || r.Error.Reason == "" || r.Error.Message == "" {
				t.Errorf("error = %d %s %q, want code %d", r.Error.Code, r.Error.Reason, r.Error.Message, tc.code)
			}
			if gotNull := string(r.ID) == "null"; gotNull != tc.nullID {
				t.Errorf("id = %s", r.ID)
			}
			if tc.name == "string id echoed" && string(r.ID) != `"abc"` {
				t.Errorf("id = %s", r.ID)
			}
			if tc.code == a2a.CodeInvalidParams && !strings.Contains(string(b), "google.rpc.BadRequest") {
				t.Errorf("validation error without BadRequest: %s", b)
			}
		})
	}
}

func TestNotificationIsNotProcessed(t *testing.T) {
	e := newEnv(t)
	status, _, b := e.post(tokAlice, []byte(`{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`), nil)
	if status != http.StatusNoContent || len(b) != 0 {
		t.Fatalf("HTTP %d %s", status, b)
	}
	l := decode[a2a.ListTasksResponse](t, e.ok(tokAlice, "ListTasks", &a2a.ListTasksRequest{}))
	if len(l.Tasks) != 0 {
		t.Errorf("a notification created %d task(s)", len(l.Tasks))
	}
}

func TestLenientInput(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name   string
		params string
		method string
		check  func(t *testing.T, raw json.RawMessage)
	}{
		{"snake_case keys", `{"message":{"message_id":"m1","role":"ROLE_USER","parts":[{"text":"snake"}]},"configuration":{"history_length":1,"return_immediately":false}}`, "SendMessage",
			func(t *testing.T, raw json.RawMessage) {
				task := decode[a2a.SendMessageResponse](t, raw).Task
				if task == nil || task.Status.State != a2a.TaskStateCompleted || len(task.History) != 1 {
					t.Errorf("result = %s", raw)
				}
			}},
		{"unknown fields ignored", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"x","futureField":1}],"novel":{"a":1}},"somethingNew":true}`, "SendMessage",
			func(t *testing.T, raw json.RawMessage) {
				if decode[a2a.SendMessageResponse](t, raw).Task == nil {
					t.Errorf("result = %s", raw)
				}
			}},
		{"0.3 parts and role under a v1.0 method", `{"message":{"kind":"message","messageId":"m3","role":"user","parts":[{"kind":"text","text":"old"},{"kind":"file","file":{"bytes":"aGVsbG8=","mimeType":"text/plain","name":"a.txt"}},{"kind":"data","data":{"k":"v"}}]}}`, "SendMessage",
			func(t *testing.T, raw json.RawMessage) {
				task := decode[a2a.SendMessageResponse](t, raw).Task
				if task == nil || len(task.History[0].Parts) != 3 || string(task.History[0].Parts[1].Raw) != "hello" {
					t.Errorf("result = %s", raw)
				}
			}},
		{"legacy blocking false", `{"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"text":"slow lenient"}]},"configuration":{"blocking":false}}`, "SendMessage",
			func(t *testing.T, raw json.RawMessage) {
				task := decode[a2a.SendMessageResponse](t, raw).Task
				if task == nil || task.Status.State.Terminal() {
					t.Errorf("blocking:false should return at once: %s", raw)
				}
				e.exec.release(task.ID)
			}},
		{"enum as integer and numeric string", `{"message":{"messageId":"m5","role":1,"parts":[{"text":"int enum"}]},"configuration":{"historyLength":"1"}}`, "SendMessage",
			func(t *testing.T, raw json.RawMessage) {
				if decode[a2a.SendMessageResponse](t, raw).Task == nil {
					t.Errorf("result = %s", raw)
				}
			}},
		{"null means unset", `{"message":{"messageId":"m6","role":"ROLE_USER","parts":[{"text":"nulls"}],"contextId":null,"metadata":null},"configuration":null}`, "SendMessage",
			func(t *testing.T, raw json.RawMessage) {
				if decode[a2a.SendMessageResponse](t, raw).Task == nil {
					t.Errorf("result = %s", raw)
				}
			}},
		{"snake_case list params", `{"page_size":2,"include_artifacts":true,"history_length":0}`, "ListTasks",
			func(t *testing.T, raw json.RawMessage) {
				// The task released above may still be finishing, so only
				// completed tasks are expected to carry their artifact.
				l := decode[a2a.ListTasksResponse](t, raw)
				if l.PageSize != 2 || len(l.Tasks) != 2 {
					t.Fatalf("result = %s", raw)
				}
				completed := 0
				for _, task := range l.Tasks {
					if len(task.History) != 0 {
						t.Errorf("historyLength 0 ignored: %s", raw)
					}
					if task.Status.State == a2a.TaskStateCompleted {
						completed++
						if len(task.Artifacts) == 0 {
							t.Errorf("include_artifacts ignored: %s", raw)
						}
					}
				}
				if completed == 0 {
					t.Errorf("no completed task on the first page: %s", raw)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + tc.method + `","params":` + tc.params + `}`)
			status, _, b := e.post(tokAlice, body, nil)
			def := resultDefs[tc.method]
			raw := a2atest.ValidateJSONRPCResponse(t, b, def)
			if status != 200 || raw == nil {
				t.Fatalf("HTTP %d %s", status, b)
			}
			tc.check(t, raw)
		})
	}
}

func TestPanicInAHandlerBecomesInternalError(t *testing.T) {
	e := newEnv(t)
	h := e.srv.recoverer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("kaboom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(`{}`)))
	b := rec.Body.Bytes()
	a2atest.ValidateJSONRPCResponse(t, b, "")
	if rec.Code != 200 || !strings.Contains(string(b), "-32603") || strings.Contains(string(b), "kaboom") || strings.Contains(string(b), "goroutine") {
		t.Errorf("HTTP %d %s", rec.Code, b)
	}
}

func TestExtensionsAreNegotiated(t *testing.T) {
	const required, optional = "https://ext.example/required/v1", "https://ext.example/optional/v1"
	e := newEnv(t, func(o *Options) {
		o.Card.Extensions = []a2a.AgentExtension{{URI: required, Required: true, Description: "must be on"}, {URI: optional}}
	})
	_, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if card, _ := splitCard(t, body); len(card.Capabilities.Extensions) != 2 {
		t.Errorf("card extensions = %+v", card.Capabilities.Extensions)
	}
	list := &a2a.ListTasksRequest{}
	if err := e.fails(tokAlice, "ListTasks", list); err.Code != a2a.CodeExtensionSupportRequired || err.Metadata["extension"] != required {
		t.Errorf("without the required extension: %+v", err)
	}
	r := e.rpc(tokAlice, "ListTasks", list, map[string]string{"A2A-Extensions": required + ", " + optional + ", https://unknown.example/x"})
	if r.err != nil || r.header.Get("A2A-Extensions") != required+", "+optional {
		t.Errorf("activated = %q, err %v", r.header.Get("A2A-Extensions"), r.err)
	}
	r = e.rpc(tokAlice, "ListTasks", list, map[string]string{"X-A2A-Extensions": required})
	if r.err != nil || r.header.Get("A2A-Extensions") != required {
		t.Errorf("0.3 header: activated = %q, err %v", r.header.Get("A2A-Extensions"), r.err)
	}
}

func TestContextIDRules(t *testing.T) {
	e := newEnv(t)
	asked := e.send(tokAlice, "ask me", nil)
	err := e.fails(tokAlice, "SendMessage", sendParams("blue", func(r *a2a.SendMessageRequest) {
		r.Message.TaskID = asked.ID
		r.Message.ContextID = "another-context"
	}))
	if err.Code != a2a.CodeInvalidParams {
		t.Errorf("mismatched contextId: %v", err)
	}
	// Only taskId: the context is inferred.
	done := e.send(tokAlice, "blue", func(r *a2a.SendMessageRequest) { r.Message.TaskID = asked.ID })
	if done.ContextID != asked.ContextID {
		t.Errorf("context %q, want %q", done.ContextID, asked.ContextID)
	}
	// A peer may name only a conversation this agent opened for it: a
	// context it chose is refused (never replaced by another id) ...
	if err := e.fails(tokAlice, "SendMessage", sendParams("hi", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "my-own-context" })); err.Code != a2a.CodeInvalidParams ||
		!strings.Contains(err.Message, "omit contextId") {
		t.Errorf("a peer-chosen context: %v", err)
	}
	// ... and one the agent returned is taken.
	if task := e.send(tokAlice, "again", func(r *a2a.SendMessageRequest) { r.Message.ContextID = asked.ContextID }); task.ContextID != asked.ContextID {
		t.Errorf("context = %q, want %q", task.ContextID, asked.ContextID)
	}
	// The Local operator's chosen context id is kept.
	local := newEnv(t, func(o *Options) { o.Auth = testAuth(t, true) })
	if task := local.send("", "hi", func(r *a2a.SendMessageRequest) { r.Message.ContextID = "my-own-context" }); task.ContextID != "my-own-context" {
		t.Errorf("context = %q", task.ContextID)
	}
}

func TestLogLinesAboutATaskNameTaskContextAndPeer(t *testing.T) {
	var buf syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Debug})
	e := newEnv(t, func(o *Options) { o.Logger = logger })
	task := e.startGated(tokAlice, "slow logged")
	e.ok(tokAlice, "CancelTask", &a2a.CancelTaskRequest{ID: task.ID})
	found := false
	for _, line := range strings.Split(buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m["@message"] == "task canceled by its client" {
			found = m["task_id"] == task.ID && m["context_id"] == task.ContextID && m["peer"] == "peer:alice"
		}
	}
	if !found {
		t.Errorf("no cancel line with task_id, context_id and peer:\n%s", buf.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A caller that hangs up during a blocking send is not a failure of the
// server: it is logged at info, not as "task manager failed", and the task
// carries on to its end.
func TestCallerHangingUpIsNotLoggedAsAFailure(t *testing.T) {
	var buf syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Info})
	e := newEnv(t, func(o *Options) { o.Logger = logger })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": sendParams("slow hang-up", nil)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	var turn *tasks.Turn
	select {
	case turn = <-e.exec.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not start")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the canceled request got an answer")
	}
	lines := func() []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(buf.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				out = append(out, m)
			}
		}
		return out
	}
	waitFor(t, "the hang-up to be logged", func() bool {
		for _, m := range lines() {
			if m["@message"] == "the caller went away before the answer; the task carries on" && m["@level"] == "info" && m["task_id"] == turn.TaskID {
				return true
			}
		}
		return false
	})
	e.exec.release(turn.TaskID)
	waitFor(t, "the task to complete", func() bool {
		return decode[a2a.Task](t, e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: turn.TaskID})).Status.State == a2a.TaskStateCompleted
	})
	for _, m := range lines() {
		if m["@level"] == "error" {
			t.Errorf("error logged for a caller that hung up: %v", m)
		}
	}
}
