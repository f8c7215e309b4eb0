package a2a

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file holds the protocol 0.3 shapes, for the compatibility path in
// both directions: a server answering 0.3 method names, and a client
// talking to a 0.3 server. 0.3 objects carry a `kind` discriminator,
// lowercase/kebab enums, parts of kind text/file/data, `final` on status
// updates, nested push configs, and a card with url/preferredTransport.

// Kind discriminators of 0.3 objects.
const (
	KindTask           = "task"
	KindMessage        = "message"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
)

// Task03 is a 0.3 Task.
type Task03 struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus03   `json:"status"`
	Artifacts []Artifact03   `json:"artifacts,omitempty"`
	History   []Message03    `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatus03 is a 0.3 TaskStatus; State is a 0.3 name ("input-required").
type TaskStatus03 struct {
	State     string     `json:"state"`
	Message   *Message03 `json:"message,omitempty"`
	Timestamp *Timestamp `json:"timestamp,omitempty"`
}

// Message03 is a 0.3 Message; Role is "user" or "agent".
type Message03 struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	Role             string         `json:"role"`
	Parts            []Part03       `json:"parts"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// Part03 is a 0.3 TextPart, FilePart or DataPart, told apart by Kind.
type Part03 struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitempty"`
	File     *FileContent03  `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// FileContent03 is the `file` of a 0.3 FilePart: inline bytes (base64) or
// a URI.
type FileContent03 struct {
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Name     string `json:"name,omitempty"`
}

// Artifact03 is a 0.3 Artifact.
type Artifact03 struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part03       `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// TaskStatusUpdateEvent03 is a 0.3 status-update event; Final marks the
// last event of a stream.
type TaskStatusUpdateEvent03 struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus03   `json:"status"`
	Final     bool           `json:"final"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskArtifactUpdateEvent03 is a 0.3 artifact-update event.
type TaskArtifactUpdateEvent03 struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  Artifact03     `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// PushNotificationConfig03 is the webhook part of a 0.3 push config.
type PushNotificationConfig03 struct {
	ID             string                                `json:"id,omitempty"`
	URL            string                                `json:"url"`
	Token          string                                `json:"token,omitempty"`
	Authentication *PushNotificationAuthenticationInfo03 `json:"authentication,omitempty"`
}

// PushNotificationAuthenticationInfo03 is 0.3 webhook authentication: a
// list of schemes and a credential.
type PushNotificationAuthenticationInfo03 struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

// TaskPushNotificationConfig03 is the nested 0.3 push config: the params
// of tasks/pushNotificationConfig/set and the result of set and get.
type TaskPushNotificationConfig03 struct {
	TaskID                 string                   `json:"taskId"`
	PushNotificationConfig PushNotificationConfig03 `json:"pushNotificationConfig"`
}

// MessageSendConfiguration03 is the 0.3 send configuration. Blocking is
// always emitted, since 0.3 servers disagree on its default.
type MessageSendConfiguration03 struct {
	AcceptedOutputModes    []string                  `json:"acceptedOutputModes,omitempty"`
	HistoryLength          *int32                    `json:"historyLength,omitempty"`
	Blocking               bool                      `json:"blocking"`
	PushNotificationConfig *PushNotificationConfig03 `json:"pushNotificationConfig,omitempty"`
}

// MessageSendParams is the params of 0.3 message/send and message/stream.
type MessageSendParams struct {
	Message       Message03                   `json:"message"`
	Configuration *MessageSendConfiguration03 `json:"configuration,omitempty"`
	Metadata      map[string]any              `json:"metadata,omitempty"`
}

// TaskQueryParams is the params of 0.3 tasks/get.
type TaskQueryParams struct {
	ID            string         `json:"id"`
	HistoryLength *int32         `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// UnmarshalJSON accepts historyLength as a number or a numeric string.
func (p *TaskQueryParams) UnmarshalJSON(b []byte) error {
	type plain TaskQueryParams
	var w struct {
		plain
		HistoryLength *flexInt32 `json:"historyLength"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = TaskQueryParams(w.plain)
	p.HistoryLength = w.HistoryLength.ptr()
	return nil
}

// TaskIDParams is the params of 0.3 tasks/cancel, tasks/resubscribe and
// tasks/pushNotificationConfig/list: ID is the task id.
type TaskIDParams struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// GetTaskPushNotificationConfigParams is the params of 0.3
// tasks/pushNotificationConfig/get. ID is the task id (not the config id).
type GetTaskPushNotificationConfigParams struct {
	ID                       string         `json:"id"`
	PushNotificationConfigID string         `json:"pushNotificationConfigId,omitempty"`
	Metadata                 map[string]any `json:"metadata,omitempty"`
}

// DeleteTaskPushNotificationConfigParams is the params of 0.3
// tasks/pushNotificationConfig/delete. ID is the task id.
type DeleteTaskPushNotificationConfigParams struct {
	ID                       string         `json:"id"`
	PushNotificationConfigID string         `json:"pushNotificationConfigId"`
	Metadata                 map[string]any `json:"metadata,omitempty"`
}

// AgentCard03 is the 0.3 agent card.
type AgentCard03 struct {
	ProtocolVersion                   string                      `json:"protocolVersion"`
	Name                              string                      `json:"name"`
	Description                       string                      `json:"description"`
	URL                               string                      `json:"url"`
	PreferredTransport                string                      `json:"preferredTransport,omitempty"`
	AdditionalInterfaces              []AgentInterface03          `json:"additionalInterfaces,omitempty"`
	IconURL                           string                      `json:"iconUrl,omitempty"`
	Provider                          *AgentProvider              `json:"provider,omitempty"`
	Version                           string                      `json:"version"`
	DocumentationURL                  string                      `json:"documentationUrl,omitempty"`
	Capabilities                      AgentCapabilities03         `json:"capabilities"`
	SecuritySchemes                   map[string]SecurityScheme03 `json:"securitySchemes,omitempty"`
	Security                          []map[string][]string       `json:"security,omitempty"`
	DefaultInputModes                 []string                    `json:"defaultInputModes"`
	DefaultOutputModes                []string                    `json:"defaultOutputModes"`
	Skills                            []AgentSkill03              `json:"skills"`
	SupportsAuthenticatedExtendedCard bool                        `json:"supportsAuthenticatedExtendedCard,omitempty"`
	Signatures                        []AgentCardSignature        `json:"signatures,omitempty"`
}

// AgentInterface03 is an entry of a 0.3 card's additionalInterfaces.
type AgentInterface03 struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// AgentCapabilities03 is the 0.3 capabilities object.
type AgentCapabilities03 struct {
	Streaming              *bool            `json:"streaming,omitempty"`
	PushNotifications      *bool            `json:"pushNotifications,omitempty"`
	StateTransitionHistory *bool            `json:"stateTransitionHistory,omitempty"`
	Extensions             []AgentExtension `json:"extensions,omitempty"`
}

// AgentSkill03 is a 0.3 skill.
type AgentSkill03 struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Tags        []string              `json:"tags"`
	Examples    []string              `json:"examples,omitempty"`
	InputModes  []string              `json:"inputModes,omitempty"`
	OutputModes []string              `json:"outputModes,omitempty"`
	Security    []map[string][]string `json:"security,omitempty"`
}

// SecurityScheme03 is a 0.3 OpenAPI-style security scheme, discriminated
// by Type: apiKey, http, oauth2, openIdConnect or mutualTLS.
type SecurityScheme03 struct {
	Type              string      `json:"type"`
	Description       string      `json:"description,omitempty"`
	In                string      `json:"in,omitempty"`
	Name              string      `json:"name,omitempty"`
	Scheme            string      `json:"scheme,omitempty"`
	BearerFormat      string      `json:"bearerFormat,omitempty"`
	Flows             *OAuthFlows `json:"flows,omitempty"`
	OAuth2MetadataURL string      `json:"oauth2MetadataUrl,omitempty"`
	OpenIDConnectURL  string      `json:"openIdConnectUrl,omitempty"`
}

// ---- v1.0 → 0.3 values ----

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

// ---- v1.0 requests → 0.3 params (client talking to a 0.3 server) ----

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

// ToV03Params converts a v1.0 request (a pointer to one of the request
// types) to the params of the matching 0.3 method. ListTasks has no 0.3
// method and is an error.
func ToV03Params(req any) (any, error) {
	switch r := req.(type) {
	case *SendMessageRequest:
		return ToV03SendParams(r), nil
	case *GetTaskRequest:
		return &TaskQueryParams{ID: r.ID, HistoryLength: r.HistoryLength}, nil
	case *CancelTaskRequest:
		return &TaskIDParams{ID: r.ID, Metadata: r.Metadata}, nil
	case *SubscribeToTaskRequest:
		return &TaskIDParams{ID: r.ID}, nil
	case *TaskPushNotificationConfig:
		return ToV03PushConfig(r), nil
	case *GetTaskPushNotificationConfigRequest:
		return &GetTaskPushNotificationConfigParams{ID: r.TaskID, PushNotificationConfigID: r.ID}, nil
	case *ListTaskPushNotificationConfigsRequest:
		return &TaskIDParams{ID: r.TaskID}, nil
	case *DeleteTaskPushNotificationConfigRequest:
		return &DeleteTaskPushNotificationConfigParams{ID: r.TaskID, PushNotificationConfigID: r.ID}, nil
	case *GetExtendedAgentCardRequest:
		return nil, nil
	case *ListTasksRequest:
		return nil, errors.New("ListTasks has no protocol 0.3 JSON-RPC method: the peer only speaks 0.3")
	}
	return nil, fmt.Errorf("no 0.3 params for request type %T", req)
}

// ---- request params → v1.0 request structs (server side) ----

// DecodeParams decodes and validates the params of a request for op into
// a pointer to the v1.0 request type of that operation
// (*SendMessageRequest, *GetTaskRequest, *ListTasksRequest,
// *CancelTaskRequest, *SubscribeToTaskRequest,
// *TaskPushNotificationConfig, *GetTaskPushNotificationConfigRequest,
// *ListTaskPushNotificationConfigsRequest,
// *DeleteTaskPushNotificationConfigRequest or
// *GetExtendedAgentCardRequest). With v03 the params are read in their 0.3
// shape (TaskQueryParams, TaskIDParams, the nested push config, …). Every
// failure is a -32602 error.
//
// 0.3 push configs: a set without a config id, and a get without
// pushNotificationConfigId, get the task id as config id — what the 0.3
// SDKs did, so that a 0.3 client can fetch the config it set.
func DecodeParams(op Operation, v03 bool, params json.RawMessage) (any, *Error) {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	decode := func(v any) *Error {
		if err := Unmarshal(params, v); err != nil {
			return paramsDecodeError(err)
		}
		return nil
	}
	validated := func(v interface{ Validate() error }) (any, *Error) {
		if err := v.Validate(); err != nil {
			return nil, err.(*Error)
		}
		return v, nil
	}
	switch op {
	case OpSendMessage, OpSendStreamingMessage:
		var r SendMessageRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpGetTask:
		var r GetTaskRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpListTasks:
		var r ListTasksRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpCancelTask:
		var r CancelTaskRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpSubscribeToTask:
		var r SubscribeToTaskRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return validated(&r)
	case OpCreatePushConfig:
		var r TaskPushNotificationConfig
		if e := decode(&r); e != nil {
			return nil, e
		}
		if v03 && r.ID == "" {
			r.ID = r.TaskID
		}
		return validated(&r)
	case OpGetPushConfig:
		if !v03 {
			var r GetTaskPushNotificationConfigRequest
			if e := decode(&r); e != nil {
				return nil, e
			}
			return validated(&r)
		}
		var p GetTaskPushNotificationConfigParams
		if e := decode(&p); e != nil {
			return nil, e
		}
		r := GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
		if r.ID == "" {
			r.ID = r.TaskID
		}
		return validated03(&r, "id", r.TaskID)
	case OpListPushConfigs:
		if !v03 {
			var r ListTaskPushNotificationConfigsRequest
			if e := decode(&r); e != nil {
				return nil, e
			}
			return validated(&r)
		}
		var p TaskIDParams
		if e := decode(&p); e != nil {
			return nil, e
		}
		return validated03(&ListTaskPushNotificationConfigsRequest{TaskID: p.ID}, "id", p.ID)
	case OpDeletePushConfig:
		if !v03 {
			var r DeleteTaskPushNotificationConfigRequest
			if e := decode(&r); e != nil {
				return nil, e
			}
			return validated(&r)
		}
		var p DeleteTaskPushNotificationConfigParams
		if e := decode(&p); e != nil {
			return nil, e
		}
		if p.PushNotificationConfigID == "" {
			return nil, ErrInvalidParams("pushNotificationConfigId", "is required: give the id of the push notification config to delete")
		}
		return validated03(&DeleteTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}, "id", p.ID)
	case OpGetExtendedCard:
		var r GetExtendedAgentCardRequest
		if e := decode(&r); e != nil {
			return nil, e
		}
		return &r, nil
	}
	return nil, ErrInvalidParams("", fmt.Sprintf("unknown operation %v", op))
}

// validated03 checks the task id of a 0.3 push-config request, naming the
// 0.3 field in the error, and returns v.
func validated03(v any, field, taskID string) (any, *Error) {
	if taskID == "" {
		return nil, ErrInvalidParams(field, "is required: give the task id")
	}
	return v, nil
}

// ---- 0.3 results → v1.0 values (client talking to a 0.3 server) ----

// probe03 reads the discriminating keys of a 0.3 result or event (and of
// a v1.0 wrapper, for servers that answer 0.3 methods with v1.0 shapes).
type probe03 struct {
	Kind           string          `json:"kind"`
	Task           json.RawMessage `json:"task"`
	Message        json.RawMessage `json:"message"`
	StatusUpdate   json.RawMessage `json:"statusUpdate"`
	ArtifactUpdate json.RawMessage `json:"artifactUpdate"`
	Status         json.RawMessage `json:"status"`
	Artifact       json.RawMessage `json:"artifact"`
	TaskID         string          `json:"taskId"`
	Final          bool            `json:"final"`
}

// kind returns the 0.3 kind of the probed object, guessing from its keys
// when `kind` is absent, or "wrapper" for a v1.0 StreamResponse.
func (p *probe03) kind() string {
	switch strings.ToLower(p.Kind) {
	case KindTask, KindMessage, KindStatusUpdate, KindArtifactUpdate:
		return strings.ToLower(p.Kind)
	}
	switch {
	case p.Task != nil || p.StatusUpdate != nil || p.ArtifactUpdate != nil,
		p.Message != nil && p.Status == nil:
		// {"message": {...}} alone is a v1.0 wrapper; a 0.3 object never
		// has a top-level `message` key.
		return "wrapper"
	case p.Artifact != nil:
		return KindArtifactUpdate
	case p.Status != nil && p.TaskID != "":
		return KindStatusUpdate
	case p.Status != nil:
		return KindTask
	}
	return KindMessage
}

// FromV03StreamEvent decodes one `result` of a 0.3 message/stream or
// tasks/resubscribe stream (a bare Task, Message, status-update or
// artifact-update) into a v1.0 StreamResponse. final reports the 0.3
// `final` flag of a status update.
func FromV03StreamEvent(data []byte) (r *StreamResponse, final bool, err error) {
	data = normalizeKeys(data)
	var p probe03
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, false, fmt.Errorf("0.3 stream event is not a JSON object: %w", err)
	}
	r = &StreamResponse{}
	switch p.kind() {
	case "wrapper":
		err = json.Unmarshal(data, r)
	case KindTask:
		r.Task = new(Task)
		err = json.Unmarshal(data, r.Task)
	case KindMessage:
		r.Message = new(Message)
		err = json.Unmarshal(data, r.Message)
	case KindStatusUpdate:
		r.StatusUpdate = new(TaskStatusUpdateEvent)
		err = json.Unmarshal(data, r.StatusUpdate)
		final = p.Final
	case KindArtifactUpdate:
		r.ArtifactUpdate = new(TaskArtifactUpdateEvent)
		err = json.Unmarshal(data, r.ArtifactUpdate)
	}
	if err != nil {
		return nil, false, fmt.Errorf("decode 0.3 %s: %w", p.kind(), err)
	}
	return r, final, nil
}

// FromV03SendResult decodes the result of 0.3 message/send — a bare Task
// or Message told apart by `kind` — into a v1.0 SendMessageResponse.
func FromV03SendResult(data []byte) (*SendMessageResponse, error) {
	r, _, err := FromV03StreamEvent(data)
	if err != nil {
		return nil, err
	}
	if r.Task == nil && r.Message == nil {
		return nil, fmt.Errorf("0.3 message/send result is a %s, want a task or a message", r.Kind())
	}
	return &SendMessageResponse{Task: r.Task, Message: r.Message}, nil
}

// FromV03Result decodes the result of the 0.3 method for op into the v1.0
// result type: *SendMessageResponse (send), *Task (get, cancel),
// *TaskPushNotificationConfig (set, get), *ListTaskPushNotificationConfigsResponse
// (list; 0.3 returns a bare array), *AgentCard (extended card), or nil
// (delete). Streaming operations use FromV03StreamEvent per event.
func FromV03Result(op Operation, data []byte) (any, error) {
	switch op {
	case OpSendMessage:
		return FromV03SendResult(data)
	case OpGetTask, OpCancelTask:
		var t Task
		if err := Unmarshal(data, &t); err != nil {
			return nil, fmt.Errorf("decode 0.3 task: %w", err)
		}
		return &t, nil
	case OpCreatePushConfig, OpGetPushConfig:
		var c TaskPushNotificationConfig
		if err := Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("decode 0.3 push notification config: %w", err)
		}
		return &c, nil
	case OpListPushConfigs:
		var list ListTaskPushNotificationConfigsResponse
		if d := trimLeftSpace(data); len(d) > 0 && d[0] == '{' {
			// A v1.0-shaped answer from a server that mixes versions.
			var r struct {
				Configs       []TaskPushNotificationConfig `json:"configs"`
				NextPageToken string                       `json:"nextPageToken"`
			}
			if err := Unmarshal(data, &r); err != nil {
				return nil, fmt.Errorf("decode push notification config list: %w", err)
			}
			list.Configs, list.NextPageToken = r.Configs, r.NextPageToken
			return &list, nil
		}
		if err := Unmarshal(data, &list.Configs); err != nil {
			return nil, fmt.Errorf("decode 0.3 push notification config list: %w", err)
		}
		return &list, nil
	case OpDeletePushConfig:
		return nil, nil
	case OpGetExtendedCard:
		return ParseAgentCard(data)
	}
	return nil, fmt.Errorf("no 0.3 result shape for %v", op)
}

// ---- typed 0.3 params → v1.0 requests ----

// TaskIdParams is TaskIDParams spelled as in the 0.3 specification.
type TaskIdParams = TaskIDParams

// V1 converts the 0.3 send params to a v1.0 SendMessageRequest
// (blocking → returnImmediately inverted, nested push config flattened,
// 0.3 parts and enums converted). It fails only if the message cannot be
// encoded.
func (p *MessageSendParams) V1() (*SendMessageRequest, error) {
	b, err := marshalPlain(p)
	if err != nil {
		return nil, err
	}
	var r SendMessageRequest
	if err := Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// V1 converts 0.3 tasks/get params to a v1.0 GetTaskRequest.
func (p *TaskQueryParams) V1() *GetTaskRequest {
	return &GetTaskRequest{ID: p.ID, HistoryLength: p.HistoryLength}
}

// CancelRequest converts 0.3 tasks/cancel params to a v1.0
// CancelTaskRequest.
func (p *TaskIDParams) CancelRequest() *CancelTaskRequest {
	return &CancelTaskRequest{ID: p.ID, Metadata: p.Metadata}
}

// SubscribeRequest converts 0.3 tasks/resubscribe params to a v1.0
// SubscribeToTaskRequest.
func (p *TaskIDParams) SubscribeRequest() *SubscribeToTaskRequest {
	return &SubscribeToTaskRequest{ID: p.ID}
}

// V1 converts a nested 0.3 push config to the flat v1.0 form.
func (c *TaskPushNotificationConfig03) V1() *TaskPushNotificationConfig {
	n := c.PushNotificationConfig
	out := &TaskPushNotificationConfig{ID: n.ID, TaskID: c.TaskID, URL: n.URL, Token: n.Token}
	if a := n.Authentication; a != nil && len(a.Schemes) > 0 {
		out.Authentication = &AuthenticationInfo{Scheme: a.Schemes[0], Credentials: a.Credentials}
	}
	return out
}

// V1 converts 0.3 get params (ID is the task id) to a v1.0
// GetTaskPushNotificationConfigRequest.
func (p *GetTaskPushNotificationConfigParams) V1() *GetTaskPushNotificationConfigRequest {
	return &GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
}

// V1 converts 0.3 delete params (ID is the task id) to a v1.0
// DeleteTaskPushNotificationConfigRequest.
func (p *DeleteTaskPushNotificationConfigParams) V1() *DeleteTaskPushNotificationConfigRequest {
	return &DeleteTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
}
