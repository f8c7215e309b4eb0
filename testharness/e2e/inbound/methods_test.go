package inbound_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// methodsHost is one host for the method-level tests: push notifications
// are off, so their capability refusal can be checked too.
func methodsHost(t *testing.T) *host {
	return startHost(t, map[string]any{"push_enabled": false}, nil)
}

// TestJSONRPCMethodsAnswerWithTheirV1Shapes calls every v1.0 task method
// and its slash-style alias through the binary; each result validates
// against its schema definition.
func TestJSONRPCMethodsAnswerWithTheirV1Shapes(t *testing.T) {
	t.Parallel()
	// Push is on, and webhooks may point at this machine.
	h := startHost(t, map[string]any{"allow_loopback_urls": true}, nil)
	ctx := within(t)
	c := newClient(h.url)

	done := c.sendTask(t, ctx, msg("hello methods"))
	if done.Status.State != stCompleted || done.answer() != "echo: hello methods" {
		t.Fatalf("SendMessage = %s %q", done.Status.State, done.answer())
	}

	t.Run("GetTask", func(t *testing.T) {
		got := c.getTask(t, ctx, done.ID)
		if got.ID != done.ID || got.Status.State != stCompleted || got.answer() != "echo: hello methods" {
			t.Errorf("GetTask = %+v", got)
		}
	})
	for _, method := range []string{"ListTasks", "tasks/list"} {
		t.Run(method, func(t *testing.T) {
			var l listResult
			c.call(t, ctx, method, map[string]any{"contextId": done.ContextID}).ok(t, &l)
			if len(l.Tasks) != 1 || l.Tasks[0].ID != done.ID || l.TotalSize != 1 || l.NextPageToken == nil || *l.NextPageToken != "" {
				t.Errorf("%s = %+v", method, l)
			}
		})
	}
	t.Run("SendStreamingMessage", func(t *testing.T) {
		s, r := c.openStream(t, ctx, "SendStreamingMessage", msg("progress streamed"))
		if r != nil {
			t.Fatalf("refused: %s", r.Body)
		}
		evs := s.all()
		if first, last := evs[0].label(), evs[len(evs)-1].label(); first != "task:"+stSubmitted || last != "status:"+stCompleted {
			t.Errorf("stream = %v", labels(evs))
		}
	})
	for _, method := range []string{"SubscribeToTask", "tasks/subscribe"} {
		t.Run(method, func(t *testing.T) {
			slow := c.sendTask(t, ctx, nonBlocking(msg("slow subscribed via "+method)))
			s, r := c.openStream(t, ctx, method, map[string]any{"id": slow.ID})
			if r != nil {
				t.Fatalf("refused: %s", r.Body)
			}
			first, err := s.next()
			if err != nil || first.Task == nil || first.Task.ID != slow.ID {
				t.Fatalf("first event = %v, %v", first.label(), err)
			}
			h.agent.release(slow.ID)
			rest := s.all()
			if len(rest) == 0 || rest[len(rest)-1].label() != "status:"+stCompleted {
				t.Errorf("%s events after the snapshot = %v", method, labels(rest))
			}
		})
	}
	t.Run("push config by its v1.0 name and slash alias", func(t *testing.T) {
		for _, method := range []string{"CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/create"} {
			var cfg struct {
				ID, TaskID, URL string
			}
			c.call(t, ctx, method, map[string]any{"taskId": done.ID, "id": "cfg-" + method, "url": "http://127.0.0.1:9/hook"}).ok(t, &cfg)
			if cfg.ID != "cfg-"+method || cfg.TaskID != done.ID || cfg.URL != "http://127.0.0.1:9/hook" {
				t.Errorf("%s = %+v", method, cfg)
			}
		}
		var l struct {
			Configs []struct{ ID string } `json:"configs"`
		}
		c.call(t, ctx, "ListTaskPushNotificationConfigs", map[string]any{"taskId": done.ID}).ok(t, &l)
		if len(l.Configs) != 2 {
			t.Errorf("configs = %+v", l.Configs)
		}
	})
	t.Run("CancelTask", func(t *testing.T) {
		slow := c.sendTask(t, ctx, nonBlocking(msg("slow canceled")))
		var got task
		c.call(t, ctx, "CancelTask", map[string]any{"id": slow.ID}).ok(t, &got)
		if got.ID != slow.ID || got.Status.State != stCanceled {
			t.Errorf("CancelTask = %s", got.Status.State)
		}
	})
}

// TestV03MethodNamesAnswerWithV03Shapes checks that 0.3 peers get the 0.3
// shapes: bare results with kind, lowercase states, kind-tagged parts, and
// streams whose last status update says final.
func TestV03MethodNamesAnswerWithV03Shapes(t *testing.T) {
	t.Parallel()
	h := methodsHost(t)
	ctx := within(t)
	c := newClient(h.url)
	v03 := []string{"A2A-Version", ""} // a 0.3 client sends no version header
	msg03 := func(text string) map[string]any {
		return map[string]any{"message": map[string]any{"kind": "message", "role": "user", "messageId": newID("m03"),
			"parts": []any{map[string]any{"kind": "text", "text": text}}}}
	}
	decode := func(t *testing.T, raw json.RawMessage) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("0.3 result: %v\n%s", err, raw)
		}
		return m
	}
	state := func(m map[string]any) string {
		st, _ := m["status"].(map[string]any)
		s, _ := st["state"].(string)
		return s
	}

	r := c.call(t, ctx, "message/send", msg03("hello 0.3"), v03...)
	r.ok(t, nil)
	tk := decode(t, r.Result)
	if tk["kind"] != "task" || state(tk) != "completed" {
		t.Fatalf("message/send = %s", r.Result)
	}
	id := tk["id"].(string)
	arts, _ := tk["artifacts"].([]any)
	if len(arts) != 1 || !strings.Contains(string(r.Result), `{"kind":"text","text":"echo: hello 0.3"}`) {
		t.Errorf("0.3 artifact parts = %s", r.Result)
	}

	t.Run("message/send direct reply", func(t *testing.T) {
		r := c.call(t, ctx, "message/send", msg03("direct 0.3"), v03...)
		r.ok(t, nil)
		m := decode(t, r.Result)
		if m["kind"] != "message" || m["role"] != "agent" {
			t.Errorf("direct reply = %s", r.Result)
		}
	})
	t.Run("tasks/get", func(t *testing.T) {
		r := c.call(t, ctx, "tasks/get", map[string]any{"id": id, "historyLength": 1}, v03...)
		r.ok(t, nil)
		m := decode(t, r.Result)
		hist, _ := m["history"].([]any)
		if m["kind"] != "task" || m["id"] != id || state(m) != "completed" || len(hist) != 1 {
			t.Errorf("tasks/get = %s", r.Result)
		}
	})
	t.Run("tasks/cancel", func(t *testing.T) {
		r := c.call(t, ctx, "message/send", map[string]any{"message": msg03("slow 0.3")["message"],
			"configuration": map[string]any{"blocking": false}}, v03...)
		r.ok(t, nil)
		slow := decode(t, r.Result)
		if st := state(slow); st != "submitted" && st != "working" {
			t.Fatalf("non-blocking 0.3 send = %s", r.Result)
		}
		r = c.call(t, ctx, "tasks/cancel", map[string]any{"id": slow["id"]}, v03...)
		r.ok(t, nil)
		if m := decode(t, r.Result); m["kind"] != "task" || state(m) != "canceled" {
			t.Errorf("tasks/cancel = %s", r.Result)
		}
		// Errors of 0.3 methods carry ErrorInfo too.
		c.call(t, ctx, "tasks/cancel", map[string]any{"id": slow["id"]}, v03...).wantError(t, -32002, "TASK_NOT_CANCELABLE")
	})
	t.Run("message/stream", func(t *testing.T) {
		s, r := c.openStream(t, ctx, "message/stream", msg03("progress 0.3"), v03...)
		if r != nil {
			t.Fatalf("refused: %s", r.Body)
		}
		evs := s.all()
		var kinds []string
		for _, e := range evs {
			m := decode(t, e.Raw)
			k, _ := m["kind"].(string)
			if k == "status-update" {
				k += ":" + state(m)
				if m["final"] == true {
					k += ":final"
				}
			}
			kinds = append(kinds, k)
		}
		want := []string{"task", "status-update:working", "status-update:working", "artifact-update", "artifact-update", "artifact-update", "status-update:completed:final"}
		if !equal(kinds, want) {
			t.Errorf("message/stream kinds = %v\nwant %v", kinds, want)
		}
	})
	t.Run("tasks/resubscribe", func(t *testing.T) {
		r := c.call(t, ctx, "message/send", map[string]any{"message": msg03("slow resubscribe 0.3")["message"],
			"configuration": map[string]any{"blocking": false}}, v03...)
		r.ok(t, nil)
		slowID := decode(t, r.Result)["id"].(string)
		s, rr := c.openStream(t, ctx, "tasks/resubscribe", map[string]any{"id": slowID}, v03...)
		if rr != nil {
			t.Fatalf("refused: %s", rr.Body)
		}
		first, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if m := decode(t, first.Raw); m["kind"] != "task" || m["id"] != slowID {
			t.Fatalf("first resubscribe event = %s", first.Raw)
		}
		h.agent.release(slowID)
		rest := s.all()
		last := decode(t, rest[len(rest)-1].Raw)
		if last["kind"] != "status-update" || state(last) != "completed" || last["final"] != true {
			t.Errorf("last resubscribe event = %s", rest[len(rest)-1].Raw)
		}
	})
}

// TestA2AVersionHeaderIsNegotiated checks the A2A-Version header (and
// query parameter): 1.0 and 0.3 are served, the patch is ignored, a
// missing header with a v1.0 method is read as 1.0, and anything else is
// -32009 with an ErrorInfo naming the version.
func TestA2AVersionHeaderIsNegotiated(t *testing.T) {
	t.Parallel()
	h := methodsHost(t)
	ctx := within(t)
	c := newClient(h.url)
	done := c.sendTask(t, ctx, msg("versioned"))
	cases := []struct {
		name    string
		method  string
		version string
		query   string
		code    int
	}{
		{"1.0", "GetTask", "1.0", "", 0},
		{"1.0 with a patch", "GetTask", "1.0.7", "", 0},
		{"missing with a v1.0 method", "GetTask", "", "", 0},
		{"0.3 with a 0.3 method", "tasks/get", "0.3", "", 0},
		{"99.0", "GetTask", "99.0", "", -32009},
		{"1.1", "GetTask", "1.1", "", -32009},
		{"garbage", "GetTask", "v1", "", -32009},
		{"99.0 on a 0.3 method", "tasks/get", "99.0", "", -32009},
		{"99.0 as query parameter", "GetTask", "", "99.0", -32009},
		{"1.0 as query parameter", "GetTask", "", "1.0", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := within(t)
			url := h.url + "/"
			if tc.query != "" {
				url += "?A2A-Version=" + tc.query
			}
			body := mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 7, "method": tc.method, "params": map[string]any{"id": done.ID}})
			req := c.postTo(t, ctx, url, body, "", headers("A2A-Version", tc.version))
			if tc.code == 0 {
				req.ok(t, nil)
				return
			}
			e := req.wantError(t, tc.code, "VERSION_NOT_SUPPORTED")
			v := tc.version + tc.query
			if md, _ := e.info()["metadata"].(map[string]any); md["version"] != v {
				t.Errorf("ErrorInfo metadata = %v, want version %q", md, v)
			}
			if !strings.Contains(e.Message, v) {
				t.Errorf("message %q does not name %q", e.Message, v)
			}
		})
	}
}

// TestErrorsUseExactCodesWithErrorInfo provokes every A2A error the inbound
// side can give and checks the code, the ErrorInfo reason and domain (the
// envelope checks of a2atest require data with an ErrorInfo).
func TestErrorsUseExactCodesWithErrorInfo(t *testing.T) {
	t.Parallel()
	h := methodsHost(t)
	ctx := within(t)
	c := newClient(h.url)
	done := c.sendTask(t, ctx, msg("finished"))
	asking := c.sendTask(t, ctx, msg("ask for the error test"))
	if asking.Status.State != stInputRequired {
		t.Fatalf("ask = %s", asking.Status.State)
	}
	other := c.sendTask(t, ctx, msg("in another context"))
	env := func(method string, params any) []byte {
		return mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": "e1", "method": method, "params": params})
	}
	user := func(text string, kv ...any) map[string]any { return msg(text, kv...)["message"].(map[string]any) }
	cases := []struct {
		name   string
		body   []byte
		hdr    []string
		code   int
		reason string
	}{
		{"body is not JSON", []byte(`{"jsonrpc":"2.0","id":1,`), nil, -32700, "PARSE_ERROR"},
		{"batch", []byte(`[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`), nil, -32600, "INVALID_REQUEST"},
		{"not JSON-RPC 2.0", []byte(`{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}`), nil, -32600, "INVALID_REQUEST"},
		{"unknown method", env("tasks/frobnicate", map[string]any{}), nil, -32601, "METHOD_NOT_FOUND"},
		{"send without a message", env("SendMessage", map[string]any{}), nil, -32602, "INVALID_PARAMS"},
		{"message without parts", env("SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "p0", "parts": []any{}}}), nil, -32602, "INVALID_PARAMS"},
		{"page size out of range", env("ListTasks", map[string]any{"pageSize": 500}), nil, -32602, "INVALID_PARAMS"},
		{"negative history length", env("GetTask", map[string]any{"id": done.ID, "historyLength": -1}), nil, -32602, "INVALID_PARAMS"},
		{"unknown status filter", env("ListTasks", map[string]any{"status": "TASK_STATE_SLEEPING"}), nil, -32602, "INVALID_PARAMS"},
		{"GetTask unknown", env("GetTask", map[string]any{"id": "no-such-task"}), nil, -32001, "TASK_NOT_FOUND"},
		{"CancelTask unknown", env("CancelTask", map[string]any{"id": "no-such-task"}), nil, -32001, "TASK_NOT_FOUND"},
		{"SubscribeToTask unknown", env("SubscribeToTask", map[string]any{"id": "no-such-task"}), nil, -32001, "TASK_NOT_FOUND"},
		{"message to unknown task", env("SendMessage", map[string]any{"message": user("hi", "taskId", "no-such-task")}), nil, -32001, "TASK_NOT_FOUND"},
		{"cancel a completed task", env("CancelTask", map[string]any{"id": done.ID}), nil, -32002, "TASK_NOT_CANCELABLE"},
		{"push config while push is off", env("CreateTaskPushNotificationConfig", map[string]any{"taskId": done.ID, "url": "https://example.com/hook"}), nil, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{"inline push config while push is off", env("SendMessage", map[string]any{"message": user("hi"),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": "https://example.com/hook"}}}), nil, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{"message to a completed task", env("SendMessage", map[string]any{"message": user("more", "taskId", done.ID)}), nil, -32004, "UNSUPPORTED_OPERATION"},
		{"subscribe to a completed task", env("SubscribeToTask", map[string]any{"id": done.ID}), nil, -32004, "UNSUPPORTED_OPERATION"},
		{"extended card not offered", env("GetExtendedAgentCard", map[string]any{}), nil, -32004, "UNSUPPORTED_OPERATION"},
		{"part media type not accepted", env("SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "mt1",
			"parts": []any{map[string]any{"url": "https://example.com/a.mp4", "mediaType": "video/mp4"}}}}), nil, -32005, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"request Content-Type not JSON", env("GetTask", map[string]any{"id": done.ID}), []string{"Content-Type", "text/plain"}, -32005, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"context of another task", env("SendMessage", map[string]any{"message": user("answer", "taskId", asking.ID, "contextId", other.ContextID)}), nil, -32602, "INVALID_PARAMS"},
		{"version not supported", env("GetTask", map[string]any{"id": done.ID}), []string{"A2A-Version", "99.0"}, -32009, "VERSION_NOT_SUPPORTED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := within(t)
			r := c.post(t, ctx, tc.body, "", headers(tc.hdr...))
			if r.Status != http.StatusOK {
				t.Errorf("HTTP status %d, want 200 for a JSON-RPC error", r.Status)
			}
			e := r.wantError(t, tc.code, tc.reason)
			if tc.code == -32700 && string(r.ID) != "null" {
				t.Errorf("parse error id = %s, want null", r.ID)
			}
			if tc.code == -32602 {
				hasBadRequest := false
				for _, d := range e.Data {
					if typ, _ := d["@type"].(string); strings.HasSuffix(typ, "google.rpc.BadRequest") {
						hasBadRequest = true
					}
				}
				if !hasBadRequest {
					t.Errorf("invalid params without google.rpc.BadRequest: %s", r.Body)
				}
			}
			if tc.code == -32001 && !strings.Contains(string(r.Body), "no-such-task") {
				t.Errorf("not-found error does not name the task: %s", r.Body)
			}
		})
	}
	// The refused continuation left the question open.
	if got := c.getTask(t, ctx, asking.ID); got.Status.State != stInputRequired {
		t.Errorf("the asking task is %s after a refused continuation", got.Status.State)
	}
}

// TestLenientInputIsAccepted sends what peers really send — snake_case
// keys, unknown fields, 0.3 part shapes inside a v1.0 request, the legacy
// blocking flag — and checks the host receives the message intact.
func TestLenientInputIsAccepted(t *testing.T) {
	t.Parallel()
	h := methodsHost(t)
	c := newClient(h.url)

	t.Run("snake_case keys and unknown fields", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		first := c.sendTask(t, ctx, msg("ask snake"))
		mid := newID("snake")
		params := map[string]any{
			"message": map[string]any{"role": "ROLE_USER", "message_id": mid, "task_id": first.ID, "context_id": first.ContextID,
				"parts": []any{map[string]any{"text": "blue", "media_type": "text/plain", "shiny": true}}, "unknown_field": 1},
			"configuration": map[string]any{"history_length": 1, "accepted_output_modes": []string{"text/plain"}, "futureOption": "x"},
			"somethingNew":  map[string]any{"nested": true},
		}
		got := c.sendTask(t, ctx, params)
		if got.ID != first.ID || got.Status.State != stCompleted || got.answer() != "got: blue" || len(got.History) != 1 {
			t.Errorf("snake_case continuation = %s %q history %d", got.Status.State, got.answer(), len(got.History))
		}
		hm := h.handleMessageWith(t, ctx, "blue").HandleMessage()
		if hm.GetMessageId() != mid || !hm.GetContinuation() {
			t.Errorf("host got message id %q continuation %t", hm.GetMessageId(), hm.GetContinuation())
		}
		var l listResult
		c.call(t, ctx, "ListTasks", map[string]any{"context_id": first.ContextID, "page_size": 5, "include_artifacts": true}).ok(t, &l)
		if len(l.Tasks) != 1 || l.PageSize != 5 || len(l.Tasks[0].Artifacts) == 0 {
			t.Errorf("snake_case ListTasks = %+v", l)
		}
	})

	t.Run("0.3 parts in a v1.0 request", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		params := map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": newID("p03"), "parts": []any{
			map[string]any{"kind": "text", "text": "legacy parts"},
			map[string]any{"kind": "file", "file": map[string]any{"bytes": "aGVsbG8=", "mimeType": "text/plain", "name": "hello.txt"}},
			map[string]any{"kind": "file", "file": map[string]any{"uri": "https://example.com/doc.pdf", "mimeType": "application/pdf"}},
			map[string]any{"kind": "data", "data": map[string]any{"k": "v"}},
		}}}
		got := c.sendTask(t, ctx, params)
		if got.Status.State != stCompleted || got.answer() != "echo: legacy parts" {
			t.Errorf("0.3 parts = %s %q", got.Status.State, got.answer())
		}
		parts := h.handleMessage(t, ctx, got.ID).HandleMessage().GetParts()
		if len(parts) != 4 || string(parts[1].GetRaw()) != "hello" || parts[1].GetFilename() != "hello.txt" || parts[1].GetMediaType() != "text/plain" ||
			parts[2].GetUrl() != "https://example.com/doc.pdf" || parts[2].GetMediaType() != "application/pdf" ||
			parts[3].GetData().GetStructValue().GetFields()["k"].GetStringValue() != "v" {
			t.Errorf("the host got parts %v", parts)
		}
		// The stored history speaks v1.0 (schema-checked by GetTask).
		stored := c.getTask(t, ctx, got.ID)
		if p := stored.History[0].Parts; len(p) != 4 || string(p[1].Raw) != "hello" || p[2].URL == "" || p[3].Data == nil {
			t.Errorf("stored parts = %+v", p)
		}
	})

	t.Run("legacy blocking flag", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		p := msg("slow legacy non-blocking")
		p["configuration"] = map[string]any{"blocking": false}
		got := c.sendTask(t, ctx, p)
		if got.Status.State == stCompleted {
			t.Fatalf("blocking:false waited for the answer")
		}
		h.agent.release(got.ID)
		c.waitState(t, ctx, got.ID, stCompleted)

		p = msg("legacy blocking")
		p["configuration"] = map[string]any{"blocking": true}
		if got := c.sendTask(t, ctx, p); got.Status.State != stCompleted {
			t.Errorf("blocking:true returned %s", got.Status.State)
		}
	})

	t.Run("0.3 role and enum integers", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		p := map[string]any{"message": map[string]any{"role": "user", "messageId": newID("r"), "parts": []any{map[string]any{"text": "lower role"}}}}
		if got := c.sendTask(t, ctx, p); got.Status.State != stCompleted {
			t.Errorf("role user = %s", got.Status.State)
		}
		p = map[string]any{"message": map[string]any{"role": 1, "messageId": newID("r"), "parts": []any{map[string]any{"text": "numeric role"}}}}
		if got := c.sendTask(t, ctx, p); got.Status.State != stCompleted {
			t.Errorf("role 1 = %s", got.Status.State)
		}
		hm := h.handleMessageWith(t, ctx, "numeric role").HandleMessage()
		if hm.GetPlatform() != "a2a" || len(hm.GetParts()) != 1 {
			t.Errorf("host got %v", hm)
		}
	})
}
