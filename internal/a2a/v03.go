package a2a

import "encoding/json"

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
