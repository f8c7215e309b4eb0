package a2a

import (
	"encoding/base64"
	"encoding/json"
)

// v1.0 values in their 0.3 shapes: what a server answers a 0.3 method
// with, and the params a client sends a 0.3 server.

// toPart03 converts a v1.0 part. Non-object data is wrapped as
// {"value": data}, since 0.3 data parts hold objects only; media type and
// file name of text and data parts have no 0.3 home and are dropped.
func toPart03(p *Part) Part03 {
	out := Part03{Metadata: p.Metadata}
	switch {
	case p.Text != nil:
		out.Kind, out.Text = "text", p.Text
	case p.Raw != nil:
		out.Kind = "file"
		out.File = &FileContent03{Bytes: base64.StdEncoding.EncodeToString(p.Raw), MimeType: p.MediaType, Name: p.Filename}
	case p.URL != nil:
		out.Kind = "file"
		out.File = &FileContent03{URI: *p.URL, MimeType: p.MediaType, Name: p.Filename}
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

func toParts03(ps []Part) []Part03 {
	out := make([]Part03, len(ps))
	for i := range ps {
		out[i] = toPart03(&ps[i])
	}
	return out
}

func toMessage03(m *Message) Message03 {
	return Message03{
		Kind:             KindMessage,
		MessageID:        m.MessageID,
		Role:             m.Role.V03(),
		Parts:            toParts03(m.Parts),
		ContextID:        m.ContextID,
		TaskID:           m.TaskID,
		ReferenceTaskIDs: m.ReferenceTaskIDs,
		Extensions:       m.Extensions,
		Metadata:         m.Metadata,
	}
}

func toStatus03(s *TaskStatus) TaskStatus03 {
	out := TaskStatus03{State: s.State.V03(), Timestamp: s.Timestamp}
	if s.Message != nil {
		m := toMessage03(s.Message)
		out.Message = &m
	}
	return out
}

func toArtifact03(a *Artifact) Artifact03 {
	return Artifact03{
		ArtifactID:  a.ArtifactID,
		Name:        a.Name,
		Description: a.Description,
		Parts:       toParts03(a.Parts),
		Metadata:    a.Metadata,
		Extensions:  a.Extensions,
	}
}

func toTask03(t *Task) *Task03 {
	out := &Task03{
		Kind:      KindTask,
		ID:        t.ID,
		ContextID: t.ContextID,
		Status:    toStatus03(&t.Status),
		Metadata:  t.Metadata,
	}
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]Artifact03, len(t.Artifacts))
		for i := range t.Artifacts {
			out.Artifacts[i] = toArtifact03(&t.Artifacts[i])
		}
	}
	if len(t.History) > 0 {
		out.History = make([]Message03, len(t.History))
		for i := range t.History {
			out.History[i] = toMessage03(&t.History[i])
		}
	}
	return out
}

// ToV03Task converts a task to its 0.3 shape (a *Task03).
func ToV03Task(t *Task) any {
	return toTask03(t)
}

// ToV03Message converts a message to its 0.3 shape (a *Message03).
func ToV03Message(m *Message) any {
	out := toMessage03(m)
	return &out
}

// ToV03StatusUpdate converts a status update to its 0.3 shape (a
// *TaskStatusUpdateEvent03). final marks the last event of the stream;
// 0.3 clients stop reading at it.
func ToV03StatusUpdate(ev *TaskStatusUpdateEvent, final bool) any {
	return &TaskStatusUpdateEvent03{
		Kind:      KindStatusUpdate,
		TaskID:    ev.TaskID,
		ContextID: ev.ContextID,
		Status:    toStatus03(&ev.Status),
		Final:     final,
		Metadata:  ev.Metadata,
	}
}

// ToV03ArtifactUpdate converts an artifact update to its 0.3 shape (a
// *TaskArtifactUpdateEvent03).
func ToV03ArtifactUpdate(ev *TaskArtifactUpdateEvent) any {
	return &TaskArtifactUpdateEvent03{
		Kind:      KindArtifactUpdate,
		TaskID:    ev.TaskID,
		ContextID: ev.ContextID,
		Artifact:  toArtifact03(&ev.Artifact),
		Append:    ev.Append,
		LastChunk: ev.LastChunk,
		Metadata:  ev.Metadata,
	}
}

// ToV03StreamEvent converts one stream event to the bare 0.3 object that
// message/stream and tasks/resubscribe send as `result`. final is set on a
// status update (0.3 has no other end marker); pass true for the last
// event of the stream.
func ToV03StreamEvent(r *StreamResponse, final bool) any {
	switch {
	case r.Task != nil:
		return toTask03(r.Task)
	case r.Message != nil:
		return ToV03Message(r.Message)
	case r.StatusUpdate != nil:
		return ToV03StatusUpdate(r.StatusUpdate, final)
	case r.ArtifactUpdate != nil:
		return ToV03ArtifactUpdate(r.ArtifactUpdate)
	}
	return nil
}

// ToV03SendResult converts a SendMessage result to the bare 0.3 Task or
// Message that message/send returns.
func ToV03SendResult(r *SendMessageResponse) any {
	if r.Task != nil {
		return toTask03(r.Task)
	}
	if r.Message != nil {
		return ToV03Message(r.Message)
	}
	return nil
}

func toPushConfig03(c *TaskPushNotificationConfig) PushNotificationConfig03 {
	out := PushNotificationConfig03{ID: c.ID, URL: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &PushNotificationAuthenticationInfo03{Schemes: []string{a.Scheme}, Credentials: a.Credentials}
	}
	return out
}

// ToV03PushConfig converts a push config to the nested 0.3 shape (a
// *TaskPushNotificationConfig03), the result of 0.3 set and get and the
// params of a 0.3 set.
func ToV03PushConfig(c *TaskPushNotificationConfig) any {
	return &TaskPushNotificationConfig03{TaskID: c.TaskID, PushNotificationConfig: toPushConfig03(c)}
}

// ToV03PushConfigList converts a list result to the bare array 0.3
// tasks/pushNotificationConfig/list returns (a
// []*TaskPushNotificationConfig03, [] when empty).
func ToV03PushConfigList(r *ListTaskPushNotificationConfigsResponse) any {
	out := make([]*TaskPushNotificationConfig03, 0, len(r.Configs))
	for i := range r.Configs {
		out = append(out, ToV03PushConfig(&r.Configs[i]).(*TaskPushNotificationConfig03))
	}
	return out
}

// ToV03Card converts a card to the 0.3 shape (an *AgentCard03): url and
// preferredTransport come from the first 0.3 interface (else the first
// interface), additionalInterfaces list the interfaces of that version,
// protocolVersion is "0.3.0", security schemes get a `type`.
func ToV03Card(c *AgentCard) any {
	out := &AgentCard03{
		ProtocolVersion:    "0.3.0",
		Name:               c.Name,
		Description:        c.Description,
		IconURL:            c.IconURL,
		Provider:           c.Provider,
		Version:            c.Version,
		DocumentationURL:   c.DocumentationURL,
		Security:           requirementsToV03(c.SecurityRequirements),
		DefaultInputModes:  nonNil(c.DefaultInputModes),
		DefaultOutputModes: nonNil(c.DefaultOutputModes),
		Signatures:         c.Signatures,
		Capabilities: AgentCapabilities03{
			Streaming:         c.Capabilities.Streaming,
			PushNotifications: c.Capabilities.PushNotifications,
			Extensions:        c.Capabilities.Extensions,
		},
		SupportsAuthenticatedExtendedCard: c.Capabilities.SupportsExtendedAgentCard(),
	}
	version := ProtocolVersion
	for _, in := range c.SupportedInterfaces {
		if majorMinor(in.ProtocolVersion) == ProtocolVersionV03 {
			version = ProtocolVersionV03
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
		out.AdditionalInterfaces = append(out.AdditionalInterfaces, AgentInterface03{URL: in.URL, Transport: in.ProtocolBinding})
	}
	if len(out.AdditionalInterfaces) == 1 {
		out.AdditionalInterfaces = nil
	}
	if len(c.SecuritySchemes) > 0 {
		out.SecuritySchemes = make(map[string]SecurityScheme03, len(c.SecuritySchemes))
		for name, s := range c.SecuritySchemes {
			out.SecuritySchemes[name] = toSecurityScheme03(s)
		}
	}
	out.Skills = make([]AgentSkill03, len(c.Skills))
	for i, s := range c.Skills {
		out.Skills[i] = AgentSkill03{
			ID: s.ID, Name: s.Name, Description: s.Description, Tags: nonNil(s.Tags),
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes,
			Security: requirementsToV03(s.SecurityRequirements),
		}
	}
	return out
}

func toSecurityScheme03(s SecurityScheme) SecurityScheme03 {
	switch {
	case s.APIKey != nil:
		return SecurityScheme03{Type: "apiKey", In: s.APIKey.Location, Name: s.APIKey.Name, Description: s.APIKey.Description}
	case s.HTTPAuth != nil:
		return SecurityScheme03{Type: "http", Scheme: s.HTTPAuth.Scheme, BearerFormat: s.HTTPAuth.BearerFormat, Description: s.HTTPAuth.Description}
	case s.OAuth2 != nil:
		flows := s.OAuth2.Flows
		return SecurityScheme03{Type: "oauth2", Flows: &flows, OAuth2MetadataURL: s.OAuth2.OAuth2MetadataURL, Description: s.OAuth2.Description}
	case s.OpenIDConnect != nil:
		return SecurityScheme03{Type: "openIdConnect", OpenIDConnectURL: s.OpenIDConnect.OpenIDConnectURL, Description: s.OpenIDConnect.Description}
	case s.MTLS != nil:
		return SecurityScheme03{Type: "mutualTLS", Description: s.MTLS.Description}
	}
	return SecurityScheme03{}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ToV03SendParams converts SendMessage params to 0.3 MessageSendParams:
// returnImmediately becomes blocking (inverted), the push config is nested.
// The tenant has no 0.3 equivalent and is dropped.
func ToV03SendParams(r *SendMessageRequest) *MessageSendParams {
	out := &MessageSendParams{Message: toMessage03(&r.Message), Metadata: r.Metadata}
	c := r.Configuration
	if c == nil {
		c = &SendMessageConfiguration{}
	}
	out.Configuration = &MessageSendConfiguration03{
		AcceptedOutputModes: c.AcceptedOutputModes,
		HistoryLength:       c.HistoryLength,
		Blocking:            !c.ReturnImmediately,
	}
	if c.TaskPushNotificationConfig != nil {
		pc := toPushConfig03(c.TaskPushNotificationConfig)
		out.Configuration.PushNotificationConfig = &pc
	}
	return out
}

// V03 returns the params of the 0.3 tasks/get method for r: the tenant
// has no 0.3 equivalent and is dropped.
func (r *GetTaskRequest) V03() *TaskQueryParams {
	return &TaskQueryParams{ID: r.ID, HistoryLength: r.HistoryLength}
}

// V03 returns the params of the 0.3 tasks/cancel method for r.
func (r *CancelTaskRequest) V03() *TaskIDParams {
	return &TaskIDParams{ID: r.ID, Metadata: r.Metadata}
}

// V03 returns the params of the 0.3 tasks/resubscribe method for r.
func (r *SubscribeToTaskRequest) V03() *TaskIDParams {
	return &TaskIDParams{ID: r.ID}
}
