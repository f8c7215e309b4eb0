package a2av03

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// v1.0 values in their 0.3 shapes: what a server answers a 0.3 method
// with, and the params a client sends a 0.3 server.

// toPart converts a v1.0 part. Non-object data is wrapped as
// {"value": data}, since 0.3 data parts hold objects only; media type and
// file name of text and data parts have no 0.3 home and are dropped.
func toPart(p *a2a.Part) Part {
	out := Part{Metadata: p.Metadata}
	switch {
	case p.Text != nil:
		out.Kind, out.Text = "text", p.Text
	case p.Raw != nil:
		out.Kind = "file"
		out.File = &FileContent{Bytes: base64.StdEncoding.EncodeToString(p.Raw), MimeType: p.MediaType, Name: p.Filename}
	case p.URL != nil:
		out.Kind = "file"
		out.File = &FileContent{URI: *p.URL, MimeType: p.MediaType, Name: p.Filename}
	case p.Data != nil:
		out.Kind = "data"
		if d := trimLeftSpace(p.Data); len(d) > 0 && d[0] == '{' {
			out.Data = p.Data
		} else {
			w := make(json.RawMessage, 0, len(p.Data)+10)
			w = append(w, `{"value":`...)
			w = append(w, p.Data...)
			out.Data = append(w, '}')
		}
	default:
		empty := ""
		out.Kind, out.Text = "text", &empty
	}
	return out
}

func trimLeftSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

func toParts(ps []a2a.Part) []Part {
	out := make([]Part, len(ps))
	for i := range ps {
		out[i] = toPart(&ps[i])
	}
	return out
}

func toMessage(m *a2a.Message) Message {
	return Message{
		Kind:             KindMessage,
		MessageID:        m.MessageID,
		Role:             RoleName(m.Role),
		Parts:            toParts(m.Parts),
		ContextID:        m.ContextID,
		TaskID:           m.TaskID,
		ReferenceTaskIDs: m.ReferenceTaskIDs,
		Extensions:       m.Extensions,
		Metadata:         m.Metadata,
	}
}

func toStatus(s *a2a.TaskStatus) TaskStatus {
	out := TaskStatus{State: StateName(s.State), Timestamp: s.Timestamp}
	if s.Message != nil {
		m := toMessage(s.Message)
		out.Message = &m
	}
	return out
}

func toArtifact(a *a2a.Artifact) Artifact {
	return Artifact{
		ArtifactID:  a.ArtifactID,
		Name:        a.Name,
		Description: a.Description,
		Parts:       toParts(a.Parts),
		Metadata:    a.Metadata,
		Extensions:  a.Extensions,
	}
}

func toTask(t *a2a.Task) *Task {
	out := &Task{
		Kind:      KindTask,
		ID:        t.ID,
		ContextID: t.ContextID,
		Status:    toStatus(&t.Status),
		Metadata:  t.Metadata,
	}
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			out.Artifacts[i] = toArtifact(&t.Artifacts[i])
		}
	}
	if len(t.History) > 0 {
		out.History = make([]Message, len(t.History))
		for i := range t.History {
			out.History[i] = toMessage(&t.History[i])
		}
	}
	return out
}

// FromTask converts a task to its 0.3 shape.
func FromTask(t *a2a.Task) *Task {
	return toTask(t)
}

// FromMessage converts a message to its 0.3 shape.
func FromMessage(m *a2a.Message) *Message {
	out := toMessage(m)
	return &out
}

// FromStatusUpdate converts a status update to its 0.3 shape. final marks
// the last event of the stream; 0.3 clients stop reading at it.
func FromStatusUpdate(ev *a2a.TaskStatusUpdateEvent, final bool) *TaskStatusUpdateEvent {
	return &TaskStatusUpdateEvent{
		Kind:      KindStatusUpdate,
		TaskID:    ev.TaskID,
		ContextID: ev.ContextID,
		Status:    toStatus(&ev.Status),
		Final:     final,
		Metadata:  ev.Metadata,
	}
}

// FromArtifactUpdate converts an artifact update to its 0.3 shape.
func FromArtifactUpdate(ev *a2a.TaskArtifactUpdateEvent) *TaskArtifactUpdateEvent {
	return &TaskArtifactUpdateEvent{
		Kind:      KindArtifactUpdate,
		TaskID:    ev.TaskID,
		ContextID: ev.ContextID,
		Artifact:  toArtifact(&ev.Artifact),
		Append:    ev.Append,
		LastChunk: ev.LastChunk,
		Metadata:  ev.Metadata,
	}
}

// FromStreamEvent converts one stream event to the bare 0.3 object that
// message/stream and tasks/resubscribe send as `result`. final is set on a
// status update (0.3 has no other end marker); pass true for the last
// event of the stream.
func FromStreamEvent(r *a2a.StreamResponse, final bool) any {
	switch {
	case r.Task != nil:
		return toTask(r.Task)
	case r.Message != nil:
		return FromMessage(r.Message)
	case r.StatusUpdate != nil:
		return FromStatusUpdate(r.StatusUpdate, final)
	case r.ArtifactUpdate != nil:
		return FromArtifactUpdate(r.ArtifactUpdate)
	}
	return nil
}

// FromSendResult converts a SendMessage result to the bare 0.3 Task or
// Message that message/send returns.
func FromSendResult(r *a2a.SendMessageResponse) any {
	if r.Task != nil {
		return toTask(r.Task)
	}
	if r.Message != nil {
		return FromMessage(r.Message)
	}
	return nil
}

func toPushConfig(c *a2a.TaskPushNotificationConfig) PushNotificationConfig {
	out := PushNotificationConfig{ID: c.ID, URL: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &PushNotificationAuthenticationInfo{Schemes: []string{a.Scheme}, Credentials: a.Credentials}
	}
	return out
}

// FromPushConfig converts a push config to the nested 0.3 shape, the
// result of 0.3 set and get and the params of a 0.3 set.
func FromPushConfig(c *a2a.TaskPushNotificationConfig) *TaskPushNotificationConfig {
	return &TaskPushNotificationConfig{TaskID: c.TaskID, PushNotificationConfig: toPushConfig(c)}
}

// FromPushConfigList converts a list result to the bare array 0.3
// tasks/pushNotificationConfig/list returns ([] when empty).
func FromPushConfigList(r *a2a.ListTaskPushNotificationConfigsResponse) []*TaskPushNotificationConfig {
	out := make([]*TaskPushNotificationConfig, 0, len(r.Configs))
	for i := range r.Configs {
		out = append(out, FromPushConfig(&r.Configs[i]))
	}
	return out
}

// FromCard converts a card to the 0.3 shape: url and
// preferredTransport come from the first 0.3 interface (else the first
// interface), additionalInterfaces list the interfaces of that version,
// protocolVersion is "0.3.0", security schemes get a `type`.
func FromCard(c *a2a.AgentCard) *AgentCard {
	out := &AgentCard{
		ProtocolVersion:    "0.3.0",
		Name:               c.Name,
		Description:        c.Description,
		IconURL:            c.IconURL,
		Provider:           c.Provider,
		Version:            c.Version,
		DocumentationURL:   c.DocumentationURL,
		Security:           requirements(c.SecurityRequirements),
		DefaultInputModes:  nonNil(c.DefaultInputModes),
		DefaultOutputModes: nonNil(c.DefaultOutputModes),
		Signatures:         c.Signatures,
		Capabilities: AgentCapabilities{
			Streaming:         c.Capabilities.Streaming,
			PushNotifications: c.Capabilities.PushNotifications,
			Extensions:        c.Capabilities.Extensions,
		},
		SupportsAuthenticatedExtendedCard: c.Capabilities.SupportsExtendedAgentCard(),
	}
	version := a2a.ProtocolVersion
	for _, in := range c.SupportedInterfaces {
		if majorMinor(in.ProtocolVersion) == a2a.ProtocolVersionV03 {
			version = a2a.ProtocolVersionV03
			break
		}
	}
	for _, in := range c.SupportedInterfaces {
		if majorMinor(in.ProtocolVersion) != version {
			continue
		}
		if out.URL == "" {
			out.URL, out.PreferredTransport = in.URL, in.ProtocolBinding
		}
		out.AdditionalInterfaces = append(out.AdditionalInterfaces, AgentInterface{URL: in.URL, Transport: in.ProtocolBinding})
	}
	if len(out.AdditionalInterfaces) == 1 {
		out.AdditionalInterfaces = nil
	}
	if len(c.SecuritySchemes) > 0 {
		out.SecuritySchemes = make(map[string]SecurityScheme, len(c.SecuritySchemes))
		for name, s := range c.SecuritySchemes {
			out.SecuritySchemes[name] = toSecurityScheme(s)
		}
	}
	out.Skills = make([]AgentSkill, len(c.Skills))
	for i, s := range c.Skills {
		out.Skills[i] = AgentSkill{
			ID: s.ID, Name: s.Name, Description: s.Description, Tags: nonNil(s.Tags),
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes,
			Security: requirements(s.SecurityRequirements),
		}
	}
	return out
}

func toSecurityScheme(s a2a.SecurityScheme) SecurityScheme {
	switch {
	case s.APIKey != nil:
		return SecurityScheme{Type: "apiKey", In: s.APIKey.Location, Name: s.APIKey.Name, Description: s.APIKey.Description}
	case s.HTTPAuth != nil:
		return SecurityScheme{Type: "http", Scheme: s.HTTPAuth.Scheme, BearerFormat: s.HTTPAuth.BearerFormat, Description: s.HTTPAuth.Description}
	case s.OAuth2 != nil:
		flows := s.OAuth2.Flows
		return SecurityScheme{Type: "oauth2", Flows: &flows, OAuth2MetadataURL: s.OAuth2.OAuth2MetadataURL, Description: s.OAuth2.Description}
	case s.OpenIDConnect != nil:
		return SecurityScheme{Type: "openIdConnect", OpenIDConnectURL: s.OpenIDConnect.OpenIDConnectURL, Description: s.OpenIDConnect.Description}
	case s.MTLS != nil:
		return SecurityScheme{Type: "mutualTLS", Description: s.MTLS.Description}
	}
	return SecurityScheme{}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// FromSendRequest converts SendMessage params to 0.3 MessageSendParams:
// returnImmediately becomes blocking (inverted), the push config is nested.
// The tenant has no 0.3 equivalent and is dropped.
func FromSendRequest(r *a2a.SendMessageRequest) *MessageSendParams {
	out := &MessageSendParams{Message: toMessage(&r.Message), Metadata: r.Metadata}
	c := r.Configuration
	if c == nil {
		c = &a2a.SendMessageConfiguration{}
	}
	out.Configuration = &MessageSendConfiguration{
		AcceptedOutputModes: c.AcceptedOutputModes,
		HistoryLength:       c.HistoryLength,
		Blocking:            !c.ReturnImmediately,
	}
	if c.TaskPushNotificationConfig != nil {
		pc := toPushConfig(c.TaskPushNotificationConfig)
		out.Configuration.PushNotificationConfig = &pc
	}
	return out
}

// FromGetTaskRequest returns the params of the 0.3 tasks/get method for
// r: the tenant has no 0.3 equivalent and is dropped.
func FromGetTaskRequest(r *a2a.GetTaskRequest) *TaskQueryParams {
	return &TaskQueryParams{ID: r.ID, HistoryLength: r.HistoryLength}
}

// FromCancelTaskRequest returns the params of the 0.3 tasks/cancel method
// for r.
func FromCancelTaskRequest(r *a2a.CancelTaskRequest) *TaskIDParams {
	return &TaskIDParams{ID: r.ID, Metadata: r.Metadata}
}

// FromSubscribeToTaskRequest returns the params of the 0.3
// tasks/resubscribe method for r.
func FromSubscribeToTaskRequest(r *a2a.SubscribeToTaskRequest) *TaskIDParams {
	return &TaskIDParams{ID: r.ID}
}

// requirements converts v1.0 security requirements to the 0.3 form
// ([{"name": ["scope"]}]).
func requirements(in []a2a.SecurityRequirement) []map[string][]string {
	if len(in) == 0 {
		return nil
	}
	out := make([]map[string][]string, 0, len(in))
	for _, req := range in {
		r := make(map[string][]string, len(req.Schemes))
		for name, scopes := range req.Schemes {
			list := scopes.List
			if list == nil {
				list = []string{}
			}
			r[name] = list
		}
		out = append(out, r)
	}
	return out
}

// majorMinor cuts a version string to Major.Minor, as a2a's card reader
// does: "0.3.0" → "0.3", "1" → "1.0", "v1.0" → "1.0".
func majorMinor(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) == 1 {
		return parts[0] + ".0"
	}
	return parts[0] + "." + parts[1]
}
