package a2a

import (
	"fmt"
	"strings"
)

// Task is the unit of work an agent performs for a client.
type Task struct {
	// ID is the server-generated task id.
	ID string `json:"id"`
	// ContextID groups related tasks and messages into one conversation.
	ContextID string `json:"contextId,omitempty"`
	// Status is the current state, with an optional explaining message.
	Status TaskStatus `json:"status"`
	// Artifacts are the task's outputs. Nil is omitted on the wire, which
	// ListTasks needs when includeArtifacts is false.
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// History holds the messages of the task, oldest first.
	History []Message `json:"history,omitempty"`
	// Metadata is free-form data attached to the task.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// WithHistoryLength returns a shallow copy of t keeping at most n of the
// most recent history messages (none when n is 0, all when n is nil), as
// the historyLength request field asks.
func (t Task) WithHistoryLength(n *int32) Task {
	if n == nil {
		return t
	}
	if *n <= 0 {
		t.History = nil
		return t
	}
	if k := int(*n); len(t.History) > k {
		t.History = t.History[len(t.History)-k:]
	}
	return t
}

// TaskStatus is the state of a task at a point in time.
type TaskStatus struct {
	// State is the lifecycle state.
	State TaskState `json:"state"`
	// Message optionally explains the state, usually from the agent.
	Message *Message `json:"message,omitempty"`
	// Timestamp is when the status was recorded.
	Timestamp *Timestamp `json:"timestamp,omitempty"`
}

// Message is one turn of communication between client and agent.
type Message struct {
	// MessageID is set by the sender, unique per message.
	MessageID string `json:"messageId"`
	// ContextID is the conversation the message belongs to.
	ContextID string `json:"contextId,omitempty"`
	// TaskID is the task the message belongs to, if any.
	TaskID string `json:"taskId,omitempty"`
	// Role says who sent the message.
	Role Role `json:"role"`
	// Parts is the content; at least one part is required.
	Parts []Part `json:"parts,omitempty"`
	// Metadata is free-form data, by convention keyed by extension URI.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Extensions lists the URIs of extensions used in this message.
	Extensions []string `json:"extensions,omitempty"`
	// ReferenceTaskIDs points at related earlier tasks.
	ReferenceTaskIDs []string `json:"referenceTaskIds,omitempty"`
}

// NewMessage returns a message with a fresh message id.
func NewMessage(role Role, parts ...Part) Message {
	return Message{MessageID: NewID(), Role: role, Parts: parts}
}

// Text returns the text parts of the message joined by newlines.
func (m *Message) Text() string {
	return partsText(m.Parts)
}

// partsText joins the text parts of ps with newlines.
func partsText(ps []Part) string {
	var b strings.Builder
	for i := range ps {
		if ps[i].Text == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(*ps[i].Text)
	}
	return b.String()
}

// FlattenParts renders parts as text for readers of text only — a host
// that reads the flattened text, a model reading a tool result: text parts
// verbatim, files and data as short bracketed notes, one part a line.
func FlattenParts(parts []Part) string {
	var sb strings.Builder
	for i := range parts {
		p := &parts[i]
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		switch p.Kind() {
		case PartText:
			sb.WriteString(*p.Text)
		case PartRaw:
			fmt.Fprintf(&sb, "[file %s (%s, %d bytes)]", orDash(p.Filename), orDash(p.MediaType), len(p.Raw))
		case PartURL:
			fmt.Fprintf(&sb, "[file %s (%s) at %s]", orDash(p.Filename), orDash(p.MediaType), *p.URL)
		case PartData:
			d := string(p.Data)
			if len(d) > 2000 {
				d = d[:2000] + "…"
			}
			fmt.Fprintf(&sb, "[data %s]", d)
		}
	}
	return sb.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Artifact is an output of a task: a document, an image, a data set.
type Artifact struct {
	// ArtifactID is unique within the task.
	ArtifactID string `json:"artifactId"`
	// Name is a human-readable name.
	Name string `json:"name,omitempty"`
	// Description says what the artifact is.
	Description string `json:"description,omitempty"`
	// Parts is the content; at least one part is required.
	Parts []Part `json:"parts,omitempty"`
	// Metadata is free-form data attached to the artifact.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Extensions lists the URIs of extensions that contributed to it.
	Extensions []string `json:"extensions,omitempty"`
}

// Text returns the text parts of the artifact joined by newlines.
func (a *Artifact) Text() string {
	return partsText(a.Parts)
}

// TaskStatusUpdateEvent reports a change of a task's status in a stream or
// a push notification. v1.0 has no `final` flag: the stream's end says it.
type TaskStatusUpdateEvent struct {
	// TaskID is the task whose status changed.
	TaskID string `json:"taskId"`
	// ContextID is the task's context.
	ContextID string `json:"contextId"`
	// Status is the new status.
	Status TaskStatus `json:"status"`
	// Metadata is free-form data attached to the event.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TaskArtifactUpdateEvent delivers an artifact, whole or as a chunk, in a
// stream or a push notification.
type TaskArtifactUpdateEvent struct {
	// TaskID is the task the artifact belongs to.
	TaskID string `json:"taskId"`
	// ContextID is the task's context.
	ContextID string `json:"contextId"`
	// Artifact is the artifact or chunk.
	Artifact Artifact `json:"artifact"`
	// Append says to append the parts to the artifact with the same id
	// sent before, rather than replace it.
	Append bool `json:"append,omitempty"`
	// LastChunk marks the final chunk of the artifact.
	LastChunk bool `json:"lastChunk,omitempty"`
	// Metadata is free-form data attached to the event.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// StreamResponse is one event of an SSE stream and the body of a push
// notification: exactly one of its fields is set.
type StreamResponse struct {
	// Task is a full task snapshot; the first event of a task stream.
	Task *Task `json:"task,omitempty"`
	// Message is a direct reply that needs no task.
	Message *Message `json:"message,omitempty"`
	// StatusUpdate reports a status change.
	StatusUpdate *TaskStatusUpdateEvent `json:"statusUpdate,omitempty"`
	// ArtifactUpdate delivers an artifact or a chunk of one.
	ArtifactUpdate *TaskArtifactUpdateEvent `json:"artifactUpdate,omitempty"`
}

// Kind names the set field: "task", "message", "statusUpdate",
// "artifactUpdate", or "" when none or several are set.
func (r *StreamResponse) Kind() string {
	kind, n := "", 0
	if r.Task != nil {
		kind, n = "task", n+1
	}
	if r.Message != nil {
		kind, n = "message", n+1
	}
	if r.StatusUpdate != nil {
		kind, n = "statusUpdate", n+1
	}
	if r.ArtifactUpdate != nil {
		kind, n = "artifactUpdate", n+1
	}
	if n != 1 {
		return ""
	}
	return kind
}

// TaskID returns the id of the task the event is about ("" for a message
// without a task).
func (r *StreamResponse) TaskID() string {
	switch {
	case r.Task != nil:
		return r.Task.ID
	case r.Message != nil:
		return r.Message.TaskID
	case r.StatusUpdate != nil:
		return r.StatusUpdate.TaskID
	case r.ArtifactUpdate != nil:
		return r.ArtifactUpdate.TaskID
	}
	return ""
}

// ContextID returns the context id of the event.
func (r *StreamResponse) ContextID() string {
	switch {
	case r.Task != nil:
		return r.Task.ContextID
	case r.Message != nil:
		return r.Message.ContextID
	case r.StatusUpdate != nil:
		return r.StatusUpdate.ContextID
	case r.ArtifactUpdate != nil:
		return r.ArtifactUpdate.ContextID
	}
	return ""
}
