package a2a

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
)

// fixedTime is a timestamp with millisecond precision, so that it survives
// the wire unchanged.
var fixedTime = &Timestamp{Time: time.Date(2026, 3, 12, 9, 30, 15, 250_000_000, time.UTC)}

func fullMessage() Message {
	return Message{
		MessageID: "m1", ContextID: "c1", TaskID: "t1", Role: RoleUser,
		Parts: []Part{
			TextPart("hello"),
			FilePart([]byte("PNG…"), "image/png", "a.png"),
			URLPart("https://files.example/doc.pdf", "application/pdf", "doc.pdf"),
			DataPart(map[string]any{"k": "v", "n": 1.0}),
			{Data: json.RawMessage("null")},
			{Text: new(string), Metadata: map[string]any{"snake_key": true}},
		},
		Metadata:         map[string]any{"https://ext.example/v1": map[string]any{"x": 1.0}},
		Extensions:       []string{"https://ext.example/v1"},
		ReferenceTaskIDs: []string{"t0"},
	}
}

func fullArtifact() Artifact {
	return Artifact{
		ArtifactID: "a1", Name: "report", Description: "the report",
		Parts:      []Part{TextPart("body"), DataPart([]any{1.0, 2.0})},
		Metadata:   map[string]any{"pages": 3.0},
		Extensions: []string{"https://ext.example/v1"},
	}
}

func fullTask() *Task {
	m := fullMessage()
	agent := Message{MessageID: "m2", ContextID: "c1", TaskID: "t1", Role: RoleAgent, Parts: []Part{TextPart("done")}}
	return &Task{
		ID: "t1", ContextID: "c1",
		Status:    TaskStatus{State: TaskStateCompleted, Message: &agent, Timestamp: fixedTime},
		Artifacts: []Artifact{fullArtifact()},
		History:   []Message{m, agent},
		Metadata:  map[string]any{"owner": "me"},
	}
}

func fullPushConfig() *TaskPushNotificationConfig {
	return &TaskPushNotificationConfig{
		Tenant: "acme", ID: "cfg-1", TaskID: "t1", URL: "https://client.example/cb", Token: "opaque",
		Authentication: &AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	}
}

func fullCard() *AgentCard {
	return &AgentCard{
		Name: "Example", Description: "Does things",
		SupportedInterfaces: []AgentInterface{
			{URL: "https://agent.example/a2a", ProtocolBinding: BindingJSONRPC, ProtocolVersion: "1.0"},
			{URL: "https://agent.example/a2a", ProtocolBinding: BindingJSONRPC, ProtocolVersion: "0.3", Tenant: "t"},
		},
		Provider:         &AgentProvider{URL: "https://example.com", Organization: "Example Org"},
		Version:          "1.2.0",
		DocumentationURL: "https://example.com/docs",
		Capabilities: AgentCapabilities{
			Streaming: Bool(true), PushNotifications: Bool(false), ExtendedAgentCard: Bool(true),
			Extensions: []AgentExtension{{URI: "https://ext.example/v1", Description: "ext", Required: true, Params: map[string]any{"a_b": 1.0}}},
		},
		SecuritySchemes: map[string]SecurityScheme{
			"bearer_auth": {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
			"key":         {APIKey: &APIKeySecurityScheme{Location: "header", Name: "X-Key"}},
			"oauth": {OAuth2: &OAuth2SecurityScheme{Flows: OAuthFlows{
				ClientCredentials: &ClientCredentialsOAuthFlow{TokenURL: "https://auth.example/token", Scopes: map[string]string{"read:all": "read"}},
			}, OAuth2MetadataURL: "https://auth.example/.well-known/oauth-authorization-server"}},
			"oidc": {OpenIDConnect: &OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://auth.example/.well-known/openid-configuration"}},
			"mtls": {MTLS: &MutualTLSSecurityScheme{}},
		},
		SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{"bearer_auth": {}}}, {Schemes: map[string]StringList{"oauth": {List: []string{"read:all"}}}}},
		DefaultInputModes:    []string{"text/plain"},
		DefaultOutputModes:   []string{"text/plain", "application/json"},
		Skills: []AgentSkill{{
			ID: "echo", Name: "Echo", Description: "Echoes", Tags: []string{"demo"}, Examples: []string{"say hi"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"},
			SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{"key": {}}}},
		}},
		Signatures: []AgentCardSignature{{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "c2ln", Header: map[string]any{"kid": "k1"}}},
		IconURL:    "https://example.com/icon.png",
	}
}

// roundTrip encodes v with Marshal, decodes it with Unmarshal into a new
// value of the same type and reports whether it came back equal.
func roundTrip(t *testing.T, v any) []byte {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatalf("Marshal(%T): %v", v, err)
	}
	back := reflect.New(reflect.TypeOf(v).Elem())
	if err := Unmarshal(b, back.Interface()); err != nil {
		t.Fatalf("Unmarshal(%T): %v\n%s", v, err, b)
	}
	if !reflect.DeepEqual(back.Interface(), v) {
		t.Errorf("%T did not survive a round trip:\n got %#v\nwant %#v\njson %s", v, back.Interface(), v, b)
	}
	return b
}

func TestEveryTypeSurvivesARoundTrip(t *testing.T) {
	m := fullMessage()
	a := fullArtifact()
	values := []any{
		fullTask(),
		&Task{ID: "t", Status: TaskStatus{State: TaskStateSubmitted}},
		&m,
		&a,
		&TaskStatus{State: TaskStateWorking, Timestamp: fixedTime},
		&TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: TaskStatus{State: TaskStateFailed}, Metadata: map[string]any{"x": "y"}},
		&TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: a, Append: true, LastChunk: true, Metadata: map[string]any{"x": "y"}},
		&StreamResponse{Task: fullTask()},
		&StreamResponse{Message: &m},
		&StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: TaskStatus{State: TaskStateAuthRequired}}},
		&StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: a}},
		&SendMessageRequest{Tenant: "acme", Message: m, Metadata: map[string]any{"k": "v"}, Configuration: &SendMessageConfiguration{
			AcceptedOutputModes: []string{"text/plain"}, TaskPushNotificationConfig: &TaskPushNotificationConfig{URL: "https://h/cb"},
			HistoryLength: Int32(0), ReturnImmediately: true,
		}},
		&SendMessageResponse{Task: fullTask()},
		&SendMessageResponse{Message: &m},
		&GetTaskRequest{Tenant: "x", ID: "t", HistoryLength: Int32(3)},
		&ListTasksRequest{Tenant: "x", ContextID: "c", Status: TaskStateWorking, PageSize: Int32(10), PageToken: "p", HistoryLength: Int32(0), StatusTimestampAfter: fixedTime, IncludeArtifacts: true},
		&ListTasksResponse{Tasks: []Task{*fullTask()}, NextPageToken: "n", PageSize: 1, TotalSize: 2},
		&ListTasksResponse{Tasks: []Task{}},
		&CancelTaskRequest{Tenant: "x", ID: "t", Metadata: map[string]any{"why": "done"}},
		&SubscribeToTaskRequest{Tenant: "x", ID: "t"},
		fullPushConfig(),
		&GetTaskPushNotificationConfigRequest{Tenant: "x", TaskID: "t", ID: "c"},
		&ListTaskPushNotificationConfigsRequest{Tenant: "x", TaskID: "t", PageSize: 5, PageToken: "p"},
		&ListTaskPushNotificationConfigsResponse{Configs: []TaskPushNotificationConfig{*fullPushConfig()}, NextPageToken: "n"},
		&ListTaskPushNotificationConfigsResponse{Configs: []TaskPushNotificationConfig{}},
		&DeleteTaskPushNotificationConfigRequest{Tenant: "x", TaskID: "t", ID: "c"},
		&GetExtendedAgentCardRequest{Tenant: "x"},
		fullCard(),
		fixedTime,
	}
	for _, v := range values {
		t.Run(reflect.TypeOf(v).Elem().Name(), func(t *testing.T) { roundTrip(t, v) })
	}
}

func TestEmittedJSONValidatesAgainstTheSchema(t *testing.T) {
	m := fullMessage()
	cases := []struct {
		definition string
		value      any
	}{
		{"Task", fullTask()},
		{"Task", &Task{ID: "t", Status: TaskStatus{State: TaskStateSubmitted}}},
		{"Message", &m},
		{"Artifact", fullArtifact()},
		{"Stream Response", &StreamResponse{Task: fullTask()}},
		{"Stream Response", &StreamResponse{Message: &m}},
		{"Stream Response", &StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: TaskStatus{State: TaskStateWorking, Timestamp: Now()}}}},
		{"Stream Response", &StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: fullArtifact(), Append: true, LastChunk: true}}},
		{"Send Message Response", &SendMessageResponse{Task: fullTask()}},
		{"Send Message Response", &SendMessageResponse{Message: &m}},
		{"Send Message Request", &SendMessageRequest{Message: m, Configuration: &SendMessageConfiguration{HistoryLength: Int32(2), TaskPushNotificationConfig: fullPushConfig()}}},
		{"List Tasks Response", &ListTasksResponse{}},
		{"List Tasks Response", &ListTasksResponse{Tasks: []Task{*fullTask()}, NextPageToken: "n", PageSize: 50, TotalSize: 51}},
		{"List Tasks Request", &ListTasksRequest{Status: TaskStateCompleted, StatusTimestampAfter: fixedTime, PageSize: Int32(5)}},
		{"Agent Card", fullCard()},
		{"Task Push Notification Config", fullPushConfig()},
		{"List Task Push Notification Configs Response", &ListTaskPushNotificationConfigsResponse{}},
		{"List Task Push Notification Configs Response", &ListTaskPushNotificationConfigsResponse{Configs: []TaskPushNotificationConfig{*fullPushConfig()}}},
		{"Get Task Request", &GetTaskRequest{ID: "t", HistoryLength: Int32(1)}},
		{"Cancel Task Request", &CancelTaskRequest{ID: "t"}},
	}
	for _, c := range cases {
		t.Run(c.definition, func(t *testing.T) {
			b, err := Marshal(c.value)
			if err != nil {
				t.Fatal(err)
			}
			a2atest.ValidateJSON(t, c.definition, b)
		})
	}
}

func TestTaskWithHistoryLengthKeepsTheMostRecentMessages(t *testing.T) {
	task := fullTask()
	if got := task.WithHistoryLength(nil); len(got.History) != 2 {
		t.Errorf("nil: %d messages", len(got.History))
	}
	if got := task.WithHistoryLength(Int32(0)); got.History != nil {
		t.Errorf("0: %d messages", len(got.History))
	}
	if got := task.WithHistoryLength(Int32(1)); len(got.History) != 1 || got.History[0].MessageID != "m2" {
		t.Errorf("1: %+v", got.History)
	}
	if len(task.History) != 2 {
		t.Error("WithHistoryLength changed the original")
	}
}

func TestStreamResponseKindAndIDs(t *testing.T) {
	m := Message{TaskID: "t2", ContextID: "c2"}
	cases := []struct {
		r               StreamResponse
		kind, task, ctx string
	}{
		{StreamResponse{Task: &Task{ID: "t1", ContextID: "c1"}}, "task", "t1", "c1"},
		{StreamResponse{Message: &m}, "message", "t2", "c2"},
		{StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: "t3", ContextID: "c3"}}, "statusUpdate", "t3", "c3"},
		{StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: "t4", ContextID: "c4"}}, "artifactUpdate", "t4", "c4"},
		{StreamResponse{}, "", "", ""},
		{StreamResponse{Task: &Task{ID: "t"}, Message: &m}, "", "t", ""},
	}
	for _, c := range cases {
		if k := c.r.Kind(); k != c.kind {
			t.Errorf("Kind() = %q, want %q", k, c.kind)
		}
		if c.kind != "" && (c.r.TaskID() != c.task || c.r.ContextID() != c.ctx) {
			t.Errorf("%s: ids %q %q", c.kind, c.r.TaskID(), c.r.ContextID())
		}
	}
}

func TestMessageTextJoinsTextParts(t *testing.T) {
	m := NewMessage(RoleAgent, TextPart("a"), DataPart(1), TextPart("b"))
	if m.MessageID == "" || m.Text() != "a\nb" {
		t.Errorf("message = %+v, text %q", m, m.Text())
	}
}

// TestFlattenPartsDescribesFilesAndData pins the one text rendering of
// parts that the bridge gives hosts and the tools give the model.
func TestFlattenPartsDescribesFilesAndData(t *testing.T) {
	u := "https://example.com/a.pdf"
	parts := []Part{
		TextPart("hello"),
		{Raw: []byte("0123456789"), Filename: "notes.txt", MediaType: "text/plain"},
		{URL: &u, MediaType: "application/pdf"},
		DataPart(map[string]any{"k": 1}),
	}
	want := "hello\n[file notes.txt (text/plain, 10 bytes)]\n[file - (application/pdf) at https://example.com/a.pdf]\n[data {\"k\":1}]"
	if got := FlattenParts(parts); got != want {
		t.Errorf("FlattenParts =\n%s\nwant\n%s", got, want)
	}
}
