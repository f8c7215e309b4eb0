package a2a

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSnakeToCamelConvertsProtocolKeys(t *testing.T) {
	cases := []struct {
		in, want string
		changed  bool
	}{
		{"task_id", "taskId", true},
		{"reference_task_ids", "referenceTaskIds", true},
		{"oauth2_metadata_url", "oauth2MetadataUrl", true},
		{"api_key_security_scheme", "apiKeySecurityScheme", true},
		{"page_2_token", "page2Token", true},
		{"taskId", "taskId", true}, // no underscore: copied unchanged
		{"_private", "_private", false},
		{"trailing_", "trailing_", false},
		{"double__under", "double__under", false},
		{"Upper_Case", "Upper_Case", false},
	}
	for _, c := range cases {
		got, changed := snakeToCamel([]byte(c.in))
		if string(got) != c.want || changed != c.changed {
			t.Errorf("snakeToCamel(%q) = %q, %v; want %q, %v", c.in, got, changed, c.want, c.changed)
		}
	}
}

func TestNormalizeKeysRewritesOnlyProtocolKeys(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"no underscore is returned as is", `{"taskId":"a_b"}`, `{"taskId":"a_b"}`},
		{"nested protocol keys", `{"message":{"message_id":"m","parts":[{"media_type":"x"}]}}`, `{"message":{"messageId":"m","parts":[{"mediaType":"x"}]}}`},
		{"metadata kept", `{"task_id":"t","metadata":{"my_key":{"inner_key":1}}}`, `{"taskId":"t","metadata":{"my_key":{"inner_key":1}}}`},
		{"data kept", `{"parts":[{"data":{"a_b":[{"c_d":2}]},"media_type":"m"}]}`, `{"parts":[{"data":{"a_b":[{"c_d":2}]},"mediaType":"m"}]}`},
		{"params and header kept", `{"params":{"x_y":1},"header":{"k_id":"1"},"icon_url":"u"}`, `{"params":{"x_y":1},"header":{"k_id":"1"},"iconUrl":"u"}`},
		{"scheme names kept, bodies rewritten", `{"security_schemes":{"my_auth":{"http_auth_security_scheme":{"bearer_format":"JWT"}}}}`, `{"securitySchemes":{"my_auth":{"httpAuthSecurityScheme":{"bearerFormat":"JWT"}}}}`},
		{"requirement and scope names kept", `{"schemes":{"my_auth":{"list":["read_all"]}},"scopes":{"read_all":"x"}}`, `{"schemes":{"my_auth":{"list":["read_all"]}},"scopes":{"read_all":"x"}}`},
		{"0.3 security names kept", `{"security":[{"my_auth":["a_b"]}]}`, `{"security":[{"my_auth":["a_b"]}]}`},
		{"escaped key untouched", `{"task\u005fid":"t","context_id":"c"}`, `{"task\u005fid":"t","contextId":"c"}`},
		{"strings with braces", `{"text":"{\"a_b\":1}","task_id":"x"}`, `{"text":"{\"a_b\":1}","taskId":"x"}`},
		{"whitespace", "{ \"task_id\" : 1 ,\n\"x\":[ ] }", "{ \"taskId\" : 1 ,\n\"x\":[ ] }"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(normalizeKeys([]byte(c.in))); got != c.want {
				t.Errorf("normalizeKeys(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
}

func TestNormalizeKeysLeavesMalformedInputAlone(t *testing.T) {
	for _, in := range []string{`{"task_id":`, `{"task_id" 1}`, `[1,2`, `{"a_b":"unterminated`, `{"a_b":1,}`, strings.Repeat("[", 2000) + `"a_b"`} {
		if got := normalizeKeys([]byte(in)); string(got) != in {
			t.Errorf("normalizeKeys(%.40q) changed malformed input to %.40q", in, got)
		}
	}
}

func TestUnmarshalAcceptsLenientSendMessage(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		check func(t *testing.T, r *SendMessageRequest)
	}{
		{"snake_case params", `{"message":{"message_id":"m","context_id":"c","task_id":"t","reference_task_ids":["r"],"role":"ROLE_USER","parts":[{"text":"x","media_type":"text/plain"}]},"configuration":{"history_length":2,"return_immediately":true,"accepted_output_modes":["text/plain"],"task_push_notification_config":{"url":"https://h/cb","task_id":"t"}}}`,
			func(t *testing.T, r *SendMessageRequest) {
				m := r.Message
				if m.MessageID != "m" || m.ContextID != "c" || m.TaskID != "t" || !reflect.DeepEqual(m.ReferenceTaskIDs, []string{"r"}) || m.Parts[0].MediaType != "text/plain" {
					t.Errorf("message = %+v", m)
				}
				c := r.Configuration
				if *c.HistoryLength != 2 || !c.ReturnImmediately || c.AcceptedOutputModes[0] != "text/plain" || c.TaskPushNotificationConfig.URL != "https://h/cb" {
					t.Errorf("configuration = %+v", c)
				}
			}},
		{"unknown fields ignored", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","bogus":1}],"extra":{"deep":[1]}},"whatever":true}`,
			func(t *testing.T, r *SendMessageRequest) {
				if r.Message.Parts[0].TextValue() != "x" {
					t.Errorf("parts = %+v", r.Message.Parts)
				}
			}},
		{"integer enums", `{"message":{"messageId":"m","role":1,"parts":[{"text":"x"}]}}`,
			func(t *testing.T, r *SendMessageRequest) {
				if r.Message.Role != RoleUser {
					t.Errorf("role = %q", r.Message.Role)
				}
			}},
		{"0.3 message and parts", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"},{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain","name":"a.txt"}},{"kind":"file","file":{"uri":"https://x/y.pdf","mimeType":"application/pdf"}},{"kind":"data","data":{"k":"v"}}]}}`,
			func(t *testing.T, r *SendMessageRequest) {
				p := r.Message.Parts
				if p[0].Kind() != PartText || string(p[1].Raw) != "hi" || p[1].MediaType != "text/plain" || p[1].Filename != "a.txt" ||
					p[2].URLValue() != "https://x/y.pdf" || p[2].MediaType != "application/pdf" || string(p[3].Data) != `{"k":"v"}` {
					t.Errorf("parts = %+v", p)
				}
			}},
		{"0.3 blocking false means return immediately", `{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]},"configuration":{"blocking":false}}`,
			func(t *testing.T, r *SendMessageRequest) {
				if !r.Configuration.ReturnImmediately || r.Configuration.Blocking() {
					t.Errorf("configuration = %+v", r.Configuration)
				}
			}},
		{"0.3 blocking true means wait", `{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]},"configuration":{"blocking":true}}`,
			func(t *testing.T, r *SendMessageRequest) {
				if r.Configuration.ReturnImmediately {
					t.Errorf("configuration = %+v", r.Configuration)
				}
			}},
		{"returnImmediately wins over blocking", `{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]},"configuration":{"blocking":true,"returnImmediately":true}}`,
			func(t *testing.T, r *SendMessageRequest) {
				if !r.Configuration.ReturnImmediately {
					t.Errorf("configuration = %+v", r.Configuration)
				}
			}},
		{"0.3 push config converted", `{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]},"configuration":{"pushNotificationConfig":{"id":"p","url":"https://h/cb","token":"tok","authentication":{"schemes":["Bearer","Basic"],"credentials":"s"}}}}`,
			func(t *testing.T, r *SendMessageRequest) {
				want := &TaskPushNotificationConfig{ID: "p", URL: "https://h/cb", Token: "tok", Authentication: &AuthenticationInfo{Scheme: "Bearer", Credentials: "s"}}
				if !reflect.DeepEqual(r.Configuration.TaskPushNotificationConfig, want) {
					t.Errorf("push config = %+v", r.Configuration.TaskPushNotificationConfig)
				}
			}},
		{"null means unset", `{"tenant":null,"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","url":null,"raw":null}],"contextId":null,"metadata":null},"configuration":null,"metadata":null}`,
			func(t *testing.T, r *SendMessageRequest) {
				if r.Configuration != nil || r.Message.ContextID != "" || r.Message.Parts[0].Kind() != PartText {
					t.Errorf("request = %+v", r)
				}
			}},
		{"data null is a data part", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":null}]}}`,
			func(t *testing.T, r *SendMessageRequest) {
				if p := r.Message.Parts[0]; p.Kind() != PartData || string(p.Data) != "null" {
					t.Errorf("part = %+v (%s)", p, p.Data)
				}
			}},
		{"historyLength as string", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":"5"}}`,
			func(t *testing.T, r *SendMessageRequest) {
				if *r.Configuration.HistoryLength != 5 {
					t.Errorf("historyLength = %d", *r.Configuration.HistoryLength)
				}
			}},
		{"metadata keys kept verbatim", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"trace_id":"1"}},"metadata":{"snake_key":{"inner_key":true}}}`,
			func(t *testing.T, r *SendMessageRequest) {
				if r.Message.Metadata["trace_id"] != "1" || r.Metadata["snake_key"].(map[string]any)["inner_key"] != true {
					t.Errorf("metadata = %v / %v", r.Message.Metadata, r.Metadata)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r SendMessageRequest
			if err := Unmarshal([]byte(c.in), &r); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			c.check(t, &r)
		})
	}
}

func TestUnmarshalDecodesRawInBothBase64Alphabets(t *testing.T) {
	want := []byte{0xfb, 0xff, 0xbf, 0x00}
	for _, enc := range []string{"+/+/AA==", "+/+/AA", "-_-_AA==", "-_-_AA", "+/+/\nAA=="} {
		var p Part
		if err := Unmarshal([]byte(`{"raw":"`+strings.ReplaceAll(enc, "\n", `\n`)+`"}`), &p); err != nil {
			t.Errorf("raw %q: %v", enc, err)
			continue
		}
		if !reflect.DeepEqual(p.Raw, want) {
			t.Errorf("raw %q decoded to %x, want %x", enc, p.Raw, want)
		}
	}
	var p Part
	if err := Unmarshal([]byte(`{"raw":"not base64!"}`), &p); err == nil || !strings.Contains(err.Error(), "base64") {
		t.Errorf("bad base64: err = %v", err)
	}
}

func TestUnmarshalRejectsUnknownEnumNames(t *testing.T) {
	var s TaskStatus
	err := Unmarshal([]byte(`{"state":"TASK_STATE_DONE"}`), &s)
	if err == nil || !strings.Contains(err.Error(), "TASK_STATE_WORKING") {
		t.Fatalf("err = %v, want one listing the valid states", err)
	}
}

func TestMarshalEmitsStrictOutput(t *testing.T) {
	ts := &Timestamp{Time: time.Date(2026, 1, 1, 2, 0, 0, 123456789, time.FixedZone("CET", 3600))}
	task := &Task{
		ID: "t", ContextID: "c",
		Status:  TaskStatus{State: TaskStateInputRequired, Timestamp: ts},
		History: []Message{{MessageID: "m", Role: RoleAgent, Parts: []Part{TextPart("<b> & </b>"), FilePart([]byte{0xfb, 0xff}, "image/png", "x.png")}}},
	}
	b, err := Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	want := `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-01-01T01:00:00.123Z"},"history":[{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"<b> & </b>"},{"raw":"+/8=","mediaType":"image/png","filename":"x.png"}]}]}`
	if got != want {
		t.Errorf("Marshal(task)\n got %s\nwant %s", got, want)
	}
	for _, bad := range []string{`"kind"`, `_id"`, `"artifacts"`, `\u003c`} {
		if strings.Contains(got, bad) {
			t.Errorf("output contains %s: %s", bad, got)
		}
	}
}

func TestMarshalEmitsZeroEnumsAsUnspecified(t *testing.T) {
	b, _ := Marshal(Message{MessageID: "m", Parts: []Part{TextPart("")}})
	if want := `{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":""}]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	b, _ = Marshal(TaskStatus{})
	if want := `{"state":"TASK_STATE_UNSPECIFIED"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestMarshalKeepsEmptyListsOfListResponses(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{ListTasksResponse{}, `{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}`},
		{&ListTasksResponse{PageSize: 50}, `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}`},
		{ListTaskPushNotificationConfigsResponse{}, `{"configs":[],"nextPageToken":""}`},
	} {
		b, err := Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%T) = %s, %v; want %s", c.v, b, err, c.want)
		}
	}
}

func TestUnmarshalListTasksResponseAcceptsStringSizes(t *testing.T) {
	var r ListTasksResponse
	if err := Unmarshal([]byte(`{"tasks":[],"next_page_token":"n","page_size":"50","total_size":7}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.PageSize != 50 || r.TotalSize != 7 || r.NextPageToken != "n" {
		t.Errorf("got %+v", r)
	}
	if err := Unmarshal([]byte(`{"pageSize":1.5}`), &r); err == nil {
		t.Error("fractional pageSize accepted")
	}
}

func TestDataPartKeepsAnyJSONValue(t *testing.T) {
	for _, v := range []any{map[string]any{"a": 1.0}, []any{1.0, "x"}, "s", 3.5, true, nil, json.RawMessage(`{"raw":true}`)} {
		p := DataPart(v)
		if p.Kind() != PartData || p.MediaType != "application/json" {
			t.Errorf("DataPart(%v) = %+v", v, p)
		}
		b, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Part
		if err := Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, p) {
			t.Errorf("round trip of %s: %+v, %v", b, back, err)
		}
	}
	if p := DataPart(make(chan int)); p.Kind() != PartInvalid {
		t.Errorf("DataPart(chan) kind = %v, want invalid", p.Kind())
	}
}
