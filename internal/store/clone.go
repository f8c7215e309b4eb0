package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The Memory store deep-copies records on the way in and out, so that a
// caller mutating its copy never changes what is stored. The copies also
// normalise what a round trip through JSON would (timestamps to
// milliseconds, empty lists and maps to nil, metadata values to their JSON
// form), so that Memory hands out exactly what SQLite would.
//
// TestCloneCoversEveryField fails when a field is added to one of the
// copied a2a types: update these functions then.

// cloneRecord deep-copies a task record.
func cloneRecord(r *TaskRecord) (*TaskRecord, error) {
	t, err := cloneTask(&r.Task)
	if err != nil {
		return nil, err
	}
	return &TaskRecord{Task: t, Owner: r.Owner, Agent: r.Agent, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

func cloneTask(t *a2a.Task) (a2a.Task, error) {
	out := a2a.Task{ID: t.ID, ContextID: t.ContextID}
	var err error
	if out.Status, err = cloneStatus(&t.Status); err != nil {
		return out, err
	}
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]a2a.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			if out.Artifacts[i], err = cloneArtifact(&t.Artifacts[i]); err != nil {
				return out, err
			}
		}
	}
	if len(t.History) > 0 {
		out.History = make([]a2a.Message, len(t.History))
		for i := range t.History {
			if out.History[i], err = cloneMessage(&t.History[i]); err != nil {
				return out, err
			}
		}
	}
	out.Metadata, err = cloneMap(t.Metadata)
	return out, err
}

func cloneStatus(s *a2a.TaskStatus) (a2a.TaskStatus, error) {
	out := a2a.TaskStatus{State: s.State}
	if s.Message != nil {
		m, err := cloneMessage(s.Message)
		if err != nil {
			return out, err
		}
		out.Message = &m
	}
	if s.Timestamp != nil {
		out.Timestamp = &a2a.Timestamp{Time: s.Timestamp.UTC().Truncate(time.Millisecond)}
	}
	return out, nil
}

func cloneMessage(m *a2a.Message) (a2a.Message, error) {
	out := a2a.Message{
		MessageID:        m.MessageID,
		ContextID:        m.ContextID,
		TaskID:           m.TaskID,
		Role:             m.Role,
		Extensions:       cloneStrings(m.Extensions),
		ReferenceTaskIDs: cloneStrings(m.ReferenceTaskIDs),
	}
	var err error
	if out.Parts, err = cloneParts(m.Parts); err != nil {
		return out, err
	}
	out.Metadata, err = cloneMap(m.Metadata)
	return out, err
}

func cloneArtifact(a *a2a.Artifact) (a2a.Artifact, error) {
	out := a2a.Artifact{
		ArtifactID:  a.ArtifactID,
		Name:        a.Name,
		Description: a.Description,
		Extensions:  cloneStrings(a.Extensions),
	}
	var err error
	if out.Parts, err = cloneParts(a.Parts); err != nil {
		return out, err
	}
	out.Metadata, err = cloneMap(a.Metadata)
	return out, err
}

func cloneParts(ps []a2a.Part) ([]a2a.Part, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]a2a.Part, len(ps))
	for i := range ps {
		p := &ps[i]
		q := a2a.Part{MediaType: p.MediaType, Filename: p.Filename}
		if p.Text != nil {
			s := *p.Text
			q.Text = &s
		}
		if p.URL != nil {
			s := *p.URL
			q.URL = &s
		}
		if p.Raw != nil {
			q.Raw = append([]byte{}, p.Raw...)
		}
		if p.Data != nil {
			q.Data = append(json.RawMessage{}, p.Data...)
		}
		var err error
		if q.Metadata, err = cloneMap(p.Metadata); err != nil {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// cloneMap deep-copies free-form metadata.
func cloneMap(m map[string]any) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		c, err := cloneValue(v)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

// cloneValue deep-copies a JSON-like value. Values of other Go types (an
// int, a struct) are turned into their JSON form, which is what a durable
// store would hand back.
func cloneValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, float64, json.Number:
		return x, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := cloneValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := cloneValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// cloneEntry deep-copies a conversation entry.
func cloneEntry(e *ConversationEntry) (ConversationEntry, error) {
	out := *e
	var err error
	out.Parts, err = cloneParts(e.Parts)
	return out, err
}
