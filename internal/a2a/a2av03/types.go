package a2av03

import (
	"encoding/json"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The protocol 0.3 shapes, for the compatibility path in both directions:
// a server answering 0.3 method names, and a client talking to a 0.3
// server. 0.3 objects carry a `kind` discriminator, lowercase/kebab enums,
// parts of kind text/file/data, `final` on status updates, nested push
// configs, and a card with url/preferredTransport.

// Kind discriminators of 0.3 objects.
const (
	KindTask           = "task"
	KindMessage        = "message"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
)

// Task is a 0.3 Task.
type Task struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatus is a 0.3 TaskStatus; State is a 0.3 name ("input-required").
type TaskStatus struct {
	State     string         `json:"state"`
	Message   *Message       `json:"message,omitempty"`
	Timestamp *a2a.Timestamp `json:"timestamp,omitempty"`
}

// Message is a 0.3 Message; Role is "user" or "agent".
type Message struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	Role             string         `json:"role"`
	Parts            []Part         `json:"parts"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// Part is a 0.3 TextPart, FilePart or DataPart, told apart by Kind.
type Part struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitempty"`
	File     *FileContent    `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// FileContent is the `file` of a 0.3 FilePart: inline bytes (base64) or
// a URI.
type FileContent struct {
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Name     string `json:"name,omitempty"`
}

// Artifact is a 0.3 Artifact.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// TaskStatusUpdateEvent is a 0.3 status-update event; Final marks the
// last event of a stream.
type TaskStatusUpdateEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Final     bool           `json:"final"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskArtifactUpdateEvent is a 0.3 artifact-update event.
type TaskArtifactUpdateEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  Artifact       `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// PushNotificationConfig is the webhook part of a 0.3 push config.
type PushNotificationConfig struct {
	ID             string                              `json:"id,omitempty"`
	URL            string                              `json:"url"`
	Token          string                              `json:"token,omitempty"`
	Authentication *PushNotificationAuthenticationInfo `json:"authentication,omitempty"`
}

// PushNotificationAuthenticationInfo is 0.3 webhook authentication: a
// list of schemes and a credential.
type PushNotificationAuthenticationInfo struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

// TaskPushNotificationConfig is the nested 0.3 push config: the params
// of tasks/pushNotificationConfig/set and the result of set and get.
type TaskPushNotificationConfig struct {
	TaskID                 string                 `json:"taskId"`
	PushNotificationConfig PushNotificationConfig `json:"pushNotificationConfig"`
}

// MessageSendConfiguration is the 0.3 send configuration. Blocking is
// always emitted, since 0.3 servers disagree on its default.
type MessageSendConfiguration struct {
	AcceptedOutputModes    []string                `json:"acceptedOutputModes,omitempty"`
	HistoryLength          *int32                  `json:"historyLength,omitempty"`
	Blocking               bool                    `json:"blocking"`
	PushNotificationConfig *PushNotificationConfig `json:"pushNotificationConfig,omitempty"`
}

// MessageSendParams is the params of 0.3 message/send and message/stream.
type MessageSendParams struct {
	Message       Message                   `json:"message"`
	Configuration *MessageSendConfiguration `json:"configuration,omitempty"`
	Metadata      map[string]any            `json:"metadata,omitempty"`
}

// TaskQueryParams is the params of 0.3 tasks/get.
type TaskQueryParams struct {
	ID            string         `json:"id"`
	HistoryLength *int32         `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// UnmarshalJSON accepts historyLength as a number or a numeric string,
// as GetTaskRequest does.
func (p *TaskQueryParams) UnmarshalJSON(b []byte) error {
	var r a2a.GetTaskRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	var m struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*p = TaskQueryParams{ID: r.ID, HistoryLength: r.HistoryLength, Metadata: m.Metadata}
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

// AgentCard is the 0.3 agent card.
type AgentCard struct {
	ProtocolVersion                   string                    `json:"protocolVersion"`
	Name                              string                    `json:"name"`
	Description                       string                    `json:"description"`
	URL                               string                    `json:"url"`
	PreferredTransport                string                    `json:"preferredTransport,omitempty"`
	AdditionalInterfaces              []AgentInterface          `json:"additionalInterfaces,omitempty"`
	IconURL                           string                    `json:"iconUrl,omitempty"`
	Provider                          *a2a.AgentProvider        `json:"provider,omitempty"`
	Version                           string                    `json:"version"`
	DocumentationURL                  string                    `json:"documentationUrl,omitempty"`
	Capabilities                      AgentCapabilities         `json:"capabilities"`
	SecuritySchemes                   map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	Security                          []map[string][]string     `json:"security,omitempty"`
	DefaultInputModes                 []string                  `json:"defaultInputModes"`
	DefaultOutputModes                []string                  `json:"defaultOutputModes"`
	Skills                            []AgentSkill              `json:"skills"`
	SupportsAuthenticatedExtendedCard bool                      `json:"supportsAuthenticatedExtendedCard,omitempty"`
	Signatures                        []a2a.AgentCardSignature  `json:"signatures,omitempty"`
}

// AgentInterface is an entry of a 0.3 card's additionalInterfaces.
type AgentInterface struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// AgentCapabilities is the 0.3 capabilities object.
type AgentCapabilities struct {
	Streaming              *bool                `json:"streaming,omitempty"`
	PushNotifications      *bool                `json:"pushNotifications,omitempty"`
	StateTransitionHistory *bool                `json:"stateTransitionHistory,omitempty"`
	Extensions             []a2a.AgentExtension `json:"extensions,omitempty"`
}

// AgentSkill is a 0.3 skill.
type AgentSkill struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Tags        []string              `json:"tags"`
	Examples    []string              `json:"examples,omitempty"`
	InputModes  []string              `json:"inputModes,omitempty"`
	OutputModes []string              `json:"outputModes,omitempty"`
	Security    []map[string][]string `json:"security,omitempty"`
}

// SecurityScheme is a 0.3 OpenAPI-style security scheme, discriminated
// by Type: apiKey, http, oauth2, openIdConnect or mutualTLS.
type SecurityScheme struct {
	Type              string          `json:"type"`
	Description       string          `json:"description,omitempty"`
	In                string          `json:"in,omitempty"`
	Name              string          `json:"name,omitempty"`
	Scheme            string          `json:"scheme,omitempty"`
	BearerFormat      string          `json:"bearerFormat,omitempty"`
	Flows             *a2a.OAuthFlows `json:"flows,omitempty"`
	OAuth2MetadataURL string          `json:"oauth2MetadataUrl,omitempty"`
	OpenIDConnectURL  string          `json:"openIdConnectUrl,omitempty"`
}
