package a2av03

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// fixedTime is a timestamp with millisecond precision, so that it survives
// the wire unchanged.
var fixedTime = &a2a.Timestamp{Time: time.Date(2026, 3, 12, 9, 30, 15, 250_000_000, time.UTC)}

// fullTask is a task using every field 0.3 can carry, and a few it cannot.
func fullTask() *a2a.Task {
	m := a2a.Message{
		MessageID: "m1", ContextID: "c1", TaskID: "t1", Role: a2a.RoleUser,
		Parts: []a2a.Part{
			a2a.TextPart("hello"),
			a2a.FilePart([]byte("PNG…"), "image/png", "a.png"),
			a2a.URLPart("https://files.example/doc.pdf", "application/pdf", "doc.pdf"),
			a2a.DataPart(map[string]any{"k": "v", "n": 1.0}),
			{Data: json.RawMessage("null")},
			{Text: new(string), Metadata: map[string]any{"snake_key": true}},
		},
		Metadata:         map[string]any{"https://ext.example/v1": map[string]any{"x": 1.0}},
		Extensions:       []string{"https://ext.example/v1"},
		ReferenceTaskIDs: []string{"t0"},
	}
	agent := a2a.Message{MessageID: "m2", ContextID: "c1", TaskID: "t1", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("done")}}
	return &a2a.Task{
		ID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: &agent, Timestamp: fixedTime},
		Artifacts: []a2a.Artifact{{
			ArtifactID: "a1", Name: "report", Description: "the report",
			Parts:      []a2a.Part{a2a.TextPart("body"), a2a.DataPart([]any{1.0, 2.0})},
			Metadata:   map[string]any{"pages": 3.0},
			Extensions: []string{"https://ext.example/v1"},
		}},
		History:  []a2a.Message{m, agent},
		Metadata: map[string]any{"owner": "me"},
	}
}

func fullPushConfig() *a2a.TaskPushNotificationConfig {
	return &a2a.TaskPushNotificationConfig{
		Tenant: "acme", ID: "cfg-1", TaskID: "t1", URL: "https://client.example/cb", Token: "opaque",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	}
}

// fullCard is a card with a v1.0 and a 0.3 interface, every kind of
// security scheme and security requirements on the card and a skill.
func fullCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "Example", Description: "Does things",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://agent.example/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{URL: "https://agent.example/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3", Tenant: "t"},
		},
		Provider:         &a2a.AgentProvider{URL: "https://example.com", Organization: "Example Org"},
		Version:          "1.2.0",
		DocumentationURL: "https://example.com/docs",
		Capabilities: a2a.AgentCapabilities{
			Streaming: a2a.Bool(true), PushNotifications: a2a.Bool(false), ExtendedAgentCard: a2a.Bool(true),
			Extensions: []a2a.AgentExtension{{URI: "https://ext.example/v1", Description: "ext", Required: true, Params: map[string]any{"a_b": 1.0}}},
		},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer_auth": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
			"key":         {APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: "X-Key"}},
			"oauth": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{
				ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: "https://auth.example/token", Scopes: map[string]string{"read:all": "read"}},
			}, OAuth2MetadataURL: "https://auth.example/.well-known/oauth-authorization-server"}},
			"oidc": {OpenIDConnect: &a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://auth.example/.well-known/openid-configuration"}},
			"mtls": {MTLS: &a2a.MutualTLSSecurityScheme{}},
		},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer_auth": {}}}, {Schemes: map[string]a2a.StringList{"oauth": {List: []string{"read:all"}}}}},
		DefaultInputModes:    []string{"text/plain"},
		DefaultOutputModes:   []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "echo", Name: "Echo", Description: "Echoes", Tags: []string{"demo"}, Examples: []string{"say hi"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"},
			SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"key": {}}}},
		}},
		Signatures: []a2a.AgentCardSignature{{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "c2ln", Header: map[string]any{"kid": "k1"}}},
		IconURL:    "https://example.com/icon.png",
	}
}

// mustJSON marshals v or fails the test.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := a2a.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFromShapesCarryKindAndLegacyNames(t *testing.T) {
	status := &a2a.Message{MessageID: "s", ContextID: "c", TaskID: "t", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("need input")}}
	task := &a2a.Task{
		ID: "t", ContextID: "c",
		Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: status, Timestamp: fixedTime},
		History: []a2a.Message{{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{
			a2a.TextPart("hi"),
			a2a.FilePart([]byte("hi"), "text/plain", "a.txt"),
			a2a.URLPart("https://x/y.pdf", "application/pdf", ""),
			a2a.DataPart(map[string]any{"k": 1}),
			a2a.DataPart([]int{1, 2}),
		}}},
		Artifacts: []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("r")}}},
	}
	cases := []struct {
		name string
		got  any
		want string
	}{
		{"task", FromTask(task), `{"kind":"task","id":"t","contextId":"c","status":{"state":"input-required","message":{"kind":"message","messageId":"s","role":"agent","parts":[{"kind":"text","text":"need input"}],"contextId":"c","taskId":"t"},"timestamp":"2026-03-12T09:30:15.250Z"},` +
			`"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"r"}]}],` +
			`"history":[{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"},{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain","name":"a.txt"}},{"kind":"file","file":{"uri":"https://x/y.pdf","mimeType":"application/pdf"}},{"kind":"data","data":{"k":1}},{"kind":"data","data":{"value":[1,2]}}]}]}`},
		{"message", FromMessage(status), `{"kind":"message","messageId":"s","role":"agent","parts":[{"kind":"text","text":"need input"}],"contextId":"c","taskId":"t"}`},
		{"final status update", FromStatusUpdate(&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}, true),
			`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed"},"final":true}`},
		{"status update", FromStatusUpdate(&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, false),
			`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}`},
		{"artifact update", FromArtifactUpdate(&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x")}}, Append: true, LastChunk: true}),
			`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]},"append":true,"lastChunk":true}`},
		{"push config", FromPushConfig(fullPushConfig()),
			`{"taskId":"t1","pushNotificationConfig":{"id":"cfg-1","url":"https://client.example/cb","token":"opaque","authentication":{"schemes":["Bearer"],"credentials":"secret"}}}`},
		{"push config list", FromPushConfigList(&a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{{TaskID: "t", URL: "https://h"}}}),
			`[{"taskId":"t","pushNotificationConfig":{"url":"https://h"}}]`},
		{"empty push config list", FromPushConfigList(&a2a.ListTaskPushNotificationConfigsResponse{}), `[]`},
		{"send result task", FromSendResult(&a2a.SendMessageResponse{Task: &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}}),
			`{"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"}}`},
		{"stream event message", FromStreamEvent(&a2a.StreamResponse{Message: status}, true), `{"kind":"message","messageId":"s","role":"agent","parts":[{"kind":"text","text":"need input"}],"contextId":"c","taskId":"t"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustJSON(t, c.got); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestV03ValuesReadBackIntoV1(t *testing.T) {
	task := fullTask()
	task.History[0].Parts = task.History[0].Parts[:4] // parts 0.3 can carry losslessly
	task.Artifacts[0].Parts = task.Artifacts[0].Parts[:1]
	r, final, err := ParseStreamEvent([]byte(mustJSON(t, FromTask(task))))
	if err != nil || final {
		t.Fatal(err)
	}
	want := *task
	// 0.3 has no media type or file name on text and data parts.
	want.History[0].Parts[3].MediaType = ""
	if !reflect.DeepEqual(r.Task, &want) {
		t.Errorf("task came back as\n%s\nwant\n%s", mustJSON(t, r.Task), mustJSON(t, &want))
	}
}

func TestParseStreamEventTellsKindsApart(t *testing.T) {
	cases := []struct {
		name, in, kind string
		final          bool
	}{
		{"task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`, "task", false},
		{"message", `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"x"}]}`, "message", false},
		{"status update", `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed"},"final":true}`, "statusUpdate", true},
		{"artifact update", `{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]},"lastChunk":true}`, "artifactUpdate", false},
		{"no kind: task", `{"id":"t","status":{"state":"working"}}`, "task", false},
		{"no kind: status update", `{"taskId":"t","contextId":"c","status":{"state":"failed"},"final":true}`, "statusUpdate", true},
		{"no kind: artifact update", `{"taskId":"t","artifact":{"artifactId":"a"}}`, "artifactUpdate", false},
		{"no kind: message", `{"messageId":"m","role":"agent","parts":[]}`, "message", false},
		{"v1.0 wrapper", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`, "statusUpdate", false},
		{"v1.0 message wrapper", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`, "message", false},
		{"snake case", `{"kind":"status-update","task_id":"t","context_id":"c","status":{"state":"completed"},"final":true}`, "statusUpdate", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, final, err := ParseStreamEvent([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind() != c.kind || final != c.final {
				t.Errorf("kind %q final %v", r.Kind(), final)
			}
		})
	}
	if _, _, err := ParseStreamEvent([]byte(`[1]`)); err == nil {
		t.Error("array accepted")
	}
}

func TestV03ResultsReadIntoV1Types(t *testing.T) {
	// A 0.3 peer's results: send results through ParseSendResult, the
	// others read leniently by a2a.Unmarshal into the v1.0 result types.
	cases := []struct {
		name  string
		in    string
		check func(t *testing.T, data []byte) bool
	}{
		{"send message", `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"hi"}]}`,
			func(t *testing.T, data []byte) bool {
				r, err := ParseSendResult(data)
				return err == nil && r.Message != nil && r.Message.Text() == "hi"
			}},
		{"send task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}`,
			func(t *testing.T, data []byte) bool {
				r, err := ParseSendResult(data)
				return err == nil && r.Task != nil && r.Task.Status.State == a2a.TaskStateCompleted
			}},
		{"task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"canceled"}}`,
			func(t *testing.T, data []byte) bool {
				var v a2a.Task
				return a2a.Unmarshal(data, &v) == nil && v.ID == "t" && v.Status.State == a2a.TaskStateCanceled
			}},
		{"push config", `{"taskId":"t","pushNotificationConfig":{"id":"p","url":"https://h","authentication":{"schemes":["Bearer"]}}}`,
			func(t *testing.T, data []byte) bool {
				var c a2a.TaskPushNotificationConfig
				return a2a.Unmarshal(data, &c) == nil && c.TaskID == "t" && c.ID == "p" && c.URL == "https://h" && c.Authentication.Scheme == "Bearer"
			}},
		{"extended card", `{"name":"A","description":"d","url":"https://a/rpc","version":"1","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`,
			func(t *testing.T, data []byte) bool {
				c, err := a2a.ParseAgentCard(data)
				return err == nil && c.SupportedInterfaces[0].ProtocolVersion == "0.3"
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.check(t, []byte(c.in)) {
				t.Errorf("%s not read into its v1.0 type", c.in)
			}
		})
	}
	if _, err := ParseSendResult([]byte(`{"kind":"status-update","taskId":"t","status":{"state":"working"}}`)); err == nil {
		t.Error("status update accepted as a send result")
	}
}

func TestV1RequestsEncodeAsV03Params(t *testing.T) {
	m := a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}}
	cases := []struct {
		name   string
		params any
		want   string
	}{
		{"send, tenant dropped", FromSendRequest(&a2a.SendMessageRequest{Tenant: "x", Message: m}), `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":true}}`},
		{"send, configured", FromSendRequest(&a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true, HistoryLength: a2a.Int32(2), AcceptedOutputModes: []string{"text/plain"},
			TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://h", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "s"}}}}),
			`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":2,"blocking":false,"pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["Bearer"],"credentials":"s"}}}}`},
		{"get task", FromGetTaskRequest(&a2a.GetTaskRequest{Tenant: "x", ID: "t", HistoryLength: a2a.Int32(0)}), `{"id":"t","historyLength":0}`},
		{"cancel task", FromCancelTaskRequest(&a2a.CancelTaskRequest{ID: "t", Metadata: map[string]any{"a": 1}}), `{"id":"t","metadata":{"a":1}}`},
		{"subscribe", FromSubscribeToTaskRequest(&a2a.SubscribeToTaskRequest{ID: "t"}), `{"id":"t"}`},
		{"push config", FromPushConfig(&a2a.TaskPushNotificationConfig{TaskID: "t", ID: "p", URL: "https://h"}), `{"taskId":"t","pushNotificationConfig":{"id":"p","url":"https://h"}}`},
	}
	for _, c := range cases {
		if got := mustJSON(t, c.params); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestDecodeParamsReadsV03Shapes(t *testing.T) {
	cases := []struct {
		name   string
		op     a2a.Operation
		params string
		want   any
	}{
		{"0.3 send", a2a.OpSendMessage, `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":false}}`,
			&a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}}, Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}}},
		{"0.3 get", a2a.OpGetTask, `{"id":"t","historyLength":3,"metadata":{}}`, &a2a.GetTaskRequest{ID: "t", HistoryLength: a2a.Int32(3)}},
		{"0.3 cancel", a2a.OpCancelTask, `{"id":"t","metadata":{"k":"v"}}`, &a2a.CancelTaskRequest{ID: "t", Metadata: map[string]any{"k": "v"}}},
		{"0.3 resubscribe", a2a.OpSubscribeToTask, `{"id":"t"}`, &a2a.SubscribeToTaskRequest{ID: "t"}},
		{"0.3 set push without id takes the task id", a2a.OpCreatePushConfig, `{"taskId":"t","pushNotificationConfig":{"url":"https://h/cb","token":"k"}}`,
			&a2a.TaskPushNotificationConfig{ID: "t", TaskID: "t", URL: "https://h/cb", Token: "k"}},
		{"0.3 get push", a2a.OpGetPushConfig, `{"id":"t","pushNotificationConfigId":"p"}`, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"0.3 get push by task id", a2a.OpGetPushConfig, `{"id":"t"}`, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "t"}},
		{"0.3 list push", a2a.OpListPushConfigs, `{"id":"t"}`, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t"}},
		{"0.3 delete push", a2a.OpDeletePushConfig, `{"id":"t","pushNotificationConfigId":"p"}`, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"0.3 card", a2a.OpGetExtendedCard, `null`, &a2a.GetExtendedAgentCardRequest{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, e := DecodeParams(c.op, json.RawMessage(c.params))
			if e != nil {
				t.Fatalf("error %v", e)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %s, want %s", mustJSON(t, got), mustJSON(t, c.want))
			}
		})
	}
}

func TestDecodeParamsRejectsInvalidV03ParamsWithFieldNames(t *testing.T) {
	cases := []struct {
		name   string
		op     a2a.Operation
		params string
		field  string
	}{
		{"cancel without id", a2a.OpCancelTask, `{}`, "id"},
		{"0.3 get push without task", a2a.OpGetPushConfig, `{}`, "id"},
		{"0.3 delete without config id", a2a.OpDeletePushConfig, `{"id":"t"}`, "pushNotificationConfigId"},
		{"0.3 delete without task", a2a.OpDeletePushConfig, `{"pushNotificationConfigId":"p"}`, "id"},
		{"0.3 list push without task", a2a.OpListPushConfigs, `{}`, "id"},
		{"0.3 set push without url", a2a.OpCreatePushConfig, `{"taskId":"t","pushNotificationConfig":{}}`, "url"},
		{"0.3 get push id wrong type", a2a.OpGetPushConfig, `{"id":1}`, "id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, e := DecodeParams(c.op, json.RawMessage(c.params))
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Code != a2a.CodeInvalidParams || e.Metadata["field"] != c.field || !strings.HasPrefix(e.Message, c.field+": ") {
				t.Errorf("got %d field %q message %q, want field %q", e.Code, e.Metadata["field"], e.Message, c.field)
			}
		})
	}
}

func TestTyped03ParamsConvertBackToV1(t *testing.T) {
	req := &a2a.SendMessageRequest{
		Message: a2a.Message{MessageID: "m", ContextID: "c", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi"), a2a.FilePart([]byte("x"), "text/plain", "x.txt"), a2a.URLPart("https://u", "", "")}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true, HistoryLength: a2a.Int32(1),
			TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{ID: "p", URL: "https://h", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer"}}},
		Metadata: map[string]any{"k": "v"},
	}
	back, err := FromSendRequest(req).V1()
	if err != nil || !reflect.DeepEqual(back, req) {
		t.Errorf("send params round trip:\n got %s\nwant %s (%v)", mustJSON(t, back), mustJSON(t, req), err)
	}
	cfg := fullPushConfig()
	cfg.Tenant = "" // no 0.3 equivalent
	if got := FromPushConfig(cfg).V1(); !reflect.DeepEqual(got, cfg) {
		t.Errorf("push config round trip: %+v", got)
	}
	if got := (&TaskQueryParams{ID: "t", HistoryLength: a2a.Int32(2)}).V1(); got.ID != "t" || *got.HistoryLength != 2 {
		t.Errorf("task query: %+v", got)
	}
	p := &TaskIdParams{ID: "t", Metadata: map[string]any{"a": 1}}
	if p.CancelRequest().ID != "t" || p.CancelRequest().Metadata["a"] != 1 || p.SubscribeRequest().ID != "t" {
		t.Error("task id params")
	}
	if g := (&GetTaskPushNotificationConfigParams{ID: "t", PushNotificationConfigID: "p"}).V1(); g.TaskID != "t" || g.ID != "p" {
		t.Errorf("get push: %+v", g)
	}
	if d := (&DeleteTaskPushNotificationConfigParams{ID: "t", PushNotificationConfigID: "p"}).V1(); d.TaskID != "t" || d.ID != "p" {
		t.Errorf("delete push: %+v", d)
	}
}

func TestFromCardEmitsTheLegacyShape(t *testing.T) {
	got := mustJSON(t, FromCard(fullCard()))
	for _, want := range []string{
		`"protocolVersion":"0.3.0"`,
		`"url":"https://agent.example/a2a","preferredTransport":"JSONRPC"`,
		`"supportsAuthenticatedExtendedCard":true`,
		`"bearer_auth":{"type":"http","scheme":"Bearer","bearerFormat":"JWT"}`,
		`"key":{"type":"apiKey","in":"header","name":"X-Key"}`,
		`"mtls":{"type":"mutualTLS"}`,
		`"oidc":{"type":"openIdConnect","openIdConnectUrl":`,
		`"oauth":{"type":"oauth2","flows":{"clientCredentials":`,
		`"security":[{"bearer_auth":[]},{"oauth":["read:all"]}]`,
		`"skills":[{"id":"echo","name":"Echo","description":"Echoes","tags":["demo"],"examples":["say hi"],"inputModes":["text/plain"],"outputModes":["text/plain"],"security":[{"key":[]}]}]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("0.3 card lacks %s\n%s", want, got)
		}
	}
	if strings.Contains(got, "supportedInterfaces") || strings.Contains(got, "securityRequirements") || strings.Contains(got, "additionalInterfaces") {
		t.Errorf("0.3 card has v1.0 keys: %s", got)
	}
	back, err := a2a.ParseAgentCard([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.SecuritySchemes, fullCard().SecuritySchemes) || back.SupportedInterfaces[0].ProtocolVersion != "0.3" {
		t.Errorf("0.3 card read back as %+v", back)
	}
}
