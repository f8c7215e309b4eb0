package grpcwire

import (
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

func (c *conv) partToProto(path string, p *a2a.Part) *a2apb.Part {
	out := &a2apb.Part{
		Metadata:  c.structToProto(join(path, "metadata"), p.Metadata),
		Filename:  p.Filename,
		MediaType: p.MediaType,
	}
	switch {
	case p.Text != nil:
		out.Content = &a2apb.Part_Text{Text: *p.Text}
	case p.Raw != nil:
		out.Content = &a2apb.Part_Raw{Raw: append([]byte{}, p.Raw...)}
	case p.URL != nil:
		out.Content = &a2apb.Part_Url{Url: *p.URL}
	case p.Data != nil:
		out.Content = &a2apb.Part_Data{Data: c.valueToProto(join(path, "data"), p.Data)}
	}
	return out
}

func (c *conv) partFromProto(path string, p *a2apb.Part) a2a.Part {
	out := a2a.Part{
		Metadata:  structFromProto(p.GetMetadata()),
		Filename:  p.GetFilename(),
		MediaType: p.GetMediaType(),
	}
	switch v := p.GetContent().(type) {
	case *a2apb.Part_Text:
		s := v.Text
		out.Text = &s
	case *a2apb.Part_Raw:
		out.Raw = append([]byte{}, v.Raw...)
	case *a2apb.Part_Url:
		s := v.Url
		out.URL = &s
	case *a2apb.Part_Data:
		out.Data = c.valueFromProto(join(path, "data"), v.Data)
	}
	return out
}

func (c *conv) partsToProto(path string, ps []a2a.Part) []*a2apb.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]*a2apb.Part, len(ps))
	for i := range ps {
		out[i] = c.partToProto(index(path, i), &ps[i])
	}
	return out
}

func (c *conv) partsFromProto(path string, ps []*a2apb.Part) []a2a.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]a2a.Part, len(ps))
	for i, p := range ps {
		out[i] = c.partFromProto(index(path, i), p)
	}
	return out
}

func (c *conv) messageToProto(path string, m *a2a.Message) *a2apb.Message {
	if m == nil {
		return nil
	}
	return &a2apb.Message{
		MessageId:        m.MessageID,
		ContextId:        m.ContextID,
		TaskId:           m.TaskID,
		Role:             roleToProto(m.Role),
		Parts:            c.partsToProto(join(path, "parts"), m.Parts),
		Metadata:         c.structToProto(join(path, "metadata"), m.Metadata),
		Extensions:       cloneStrings(m.Extensions),
		ReferenceTaskIds: cloneStrings(m.ReferenceTaskIDs),
	}
}

func (c *conv) messageFromProto(path string, m *a2apb.Message) a2a.Message {
	return a2a.Message{
		MessageID:        m.GetMessageId(),
		ContextID:        m.GetContextId(),
		TaskID:           m.GetTaskId(),
		Role:             roleFromProto(m.GetRole()),
		Parts:            c.partsFromProto(join(path, "parts"), m.GetParts()),
		Metadata:         structFromProto(m.GetMetadata()),
		Extensions:       cloneStrings(m.GetExtensions()),
		ReferenceTaskIDs: cloneStrings(m.GetReferenceTaskIds()),
	}
}

// messagePtrFromProto is messageFromProto for an optional message.
func (c *conv) messagePtrFromProto(path string, m *a2apb.Message) *a2a.Message {
	if m == nil {
		return nil
	}
	out := c.messageFromProto(path, m)
	return &out
}

func (c *conv) artifactToProto(path string, a *a2a.Artifact) *a2apb.Artifact {
	return &a2apb.Artifact{
		ArtifactId:  a.ArtifactID,
		Name:        a.Name,
		Description: a.Description,
		Parts:       c.partsToProto(join(path, "parts"), a.Parts),
		Metadata:    c.structToProto(join(path, "metadata"), a.Metadata),
		Extensions:  cloneStrings(a.Extensions),
	}
}

func (c *conv) artifactFromProto(path string, a *a2apb.Artifact) a2a.Artifact {
	return a2a.Artifact{
		ArtifactID:  a.GetArtifactId(),
		Name:        a.GetName(),
		Description: a.GetDescription(),
		Parts:       c.partsFromProto(join(path, "parts"), a.GetParts()),
		Metadata:    structFromProto(a.GetMetadata()),
		Extensions:  cloneStrings(a.GetExtensions()),
	}
}

func (c *conv) statusToProto(path string, s *a2a.TaskStatus) *a2apb.TaskStatus {
	return &a2apb.TaskStatus{
		State:     StateToProto(s.State),
		Message:   c.messageToProto(join(path, "message"), s.Message),
		Timestamp: timestampToProto(s.Timestamp),
	}
}

func (c *conv) statusFromProto(path string, s *a2apb.TaskStatus) a2a.TaskStatus {
	return a2a.TaskStatus{
		State:     StateFromProto(s.GetState()),
		Message:   c.messagePtrFromProto(join(path, "message"), s.GetMessage()),
		Timestamp: timestampFromProto(s.GetTimestamp()),
	}
}

func (c *conv) taskToProto(path string, t *a2a.Task) *a2apb.Task {
	if t == nil {
		return nil
	}
	out := &a2apb.Task{
		Id:        t.ID,
		ContextId: t.ContextID,
		Status:    c.statusToProto(join(path, "status"), &t.Status),
		Metadata:  c.structToProto(join(path, "metadata"), t.Metadata),
	}
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]*a2apb.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			out.Artifacts[i] = c.artifactToProto(index(join(path, "artifacts"), i), &t.Artifacts[i])
		}
	}
	if len(t.History) > 0 {
		out.History = make([]*a2apb.Message, len(t.History))
		for i := range t.History {
			out.History[i] = c.messageToProto(index(join(path, "history"), i), &t.History[i])
		}
	}
	return out
}

func (c *conv) taskFromProto(path string, t *a2apb.Task) a2a.Task {
	out := a2a.Task{
		ID:        t.GetId(),
		ContextID: t.GetContextId(),
		Status:    c.statusFromProto(join(path, "status"), t.GetStatus()),
		Metadata:  structFromProto(t.GetMetadata()),
	}
	if as := t.GetArtifacts(); len(as) > 0 {
		out.Artifacts = make([]a2a.Artifact, len(as))
		for i, a := range as {
			out.Artifacts[i] = c.artifactFromProto(index(join(path, "artifacts"), i), a)
		}
	}
	if hs := t.GetHistory(); len(hs) > 0 {
		out.History = make([]a2a.Message, len(hs))
		for i, m := range hs {
			out.History[i] = c.messageFromProto(index(join(path, "history"), i), m)
		}
	}
	return out
}

func (c *conv) streamToProto(r *a2a.StreamResponse) *a2apb.StreamResponse {
	out := &a2apb.StreamResponse{}
	switch {
	case r.Task != nil:
		out.Payload = &a2apb.StreamResponse_Task{Task: c.taskToProto("task", r.Task)}
	case r.Message != nil:
		out.Payload = &a2apb.StreamResponse_Message{Message: c.messageToProto("message", r.Message)}
	case r.StatusUpdate != nil:
		u := r.StatusUpdate
		out.Payload = &a2apb.StreamResponse_StatusUpdate{StatusUpdate: &a2apb.TaskStatusUpdateEvent{
			TaskId:    u.TaskID,
			ContextId: u.ContextID,
			Status:    c.statusToProto("statusUpdate.status", &u.Status),
			Metadata:  c.structToProto("statusUpdate.metadata", u.Metadata),
		}}
	case r.ArtifactUpdate != nil:
		u := r.ArtifactUpdate
		out.Payload = &a2apb.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2apb.TaskArtifactUpdateEvent{
			TaskId:    u.TaskID,
			ContextId: u.ContextID,
			Artifact:  c.artifactToProto("artifactUpdate.artifact", &u.Artifact),
			Append:    u.Append,
			LastChunk: u.LastChunk,
			Metadata:  c.structToProto("artifactUpdate.metadata", u.Metadata),
		}}
	}
	return out
}

func (c *conv) streamFromProto(r *a2apb.StreamResponse) a2a.StreamResponse {
	var out a2a.StreamResponse
	switch v := r.GetPayload().(type) {
	case *a2apb.StreamResponse_Task:
		t := c.taskFromProto("task", v.Task)
		out.Task = &t
	case *a2apb.StreamResponse_Message:
		out.Message = c.messagePtrFromProto("message", v.Message)
		if out.Message == nil {
			out.Message = &a2a.Message{}
		}
	case *a2apb.StreamResponse_StatusUpdate:
		u := v.StatusUpdate
		out.StatusUpdate = &a2a.TaskStatusUpdateEvent{
			TaskID:    u.GetTaskId(),
			ContextID: u.GetContextId(),
			Status:    c.statusFromProto("statusUpdate.status", u.GetStatus()),
			Metadata:  structFromProto(u.GetMetadata()),
		}
	case *a2apb.StreamResponse_ArtifactUpdate:
		u := v.ArtifactUpdate
		out.ArtifactUpdate = &a2a.TaskArtifactUpdateEvent{
			TaskID:    u.GetTaskId(),
			ContextID: u.GetContextId(),
			Artifact:  c.artifactFromProto("artifactUpdate.artifact", u.GetArtifact()),
			Append:    u.GetAppend(),
			LastChunk: u.GetLastChunk(),
			Metadata:  structFromProto(u.GetMetadata()),
		}
	}
	return out
}

// TaskToProto converts a task.
func TaskToProto(t *a2a.Task) (*a2apb.Task, error) {
	var c conv
	out := c.taskToProto("", t)
	return out, c.err
}

// TaskFromProto converts a task.
func TaskFromProto(t *a2apb.Task) (*a2a.Task, error) {
	var c conv
	out := c.taskFromProto("", t)
	return &out, c.err
}

// MessageToProto converts a message.
func MessageToProto(m *a2a.Message) (*a2apb.Message, error) {
	var c conv
	out := c.messageToProto("", m)
	return out, c.err
}

// MessageFromProto converts a message.
func MessageFromProto(m *a2apb.Message) (*a2a.Message, error) {
	var c conv
	out := c.messageFromProto("", m)
	return &out, c.err
}

// StreamResponseToProto converts one stream event.
func StreamResponseToProto(r *a2a.StreamResponse) (*a2apb.StreamResponse, error) {
	var c conv
	out := c.streamToProto(r)
	return out, c.err
}

// StreamResponseFromProto converts one stream event.
func StreamResponseFromProto(r *a2apb.StreamResponse) (*a2a.StreamResponse, error) {
	var c conv
	out := c.streamFromProto(r)
	return &out, c.err
}
