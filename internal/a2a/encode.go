package a2a

import (
	"encoding/base64"
	"slices"

	"github.com/a2a-plugin/a2a-plugin/internal/jsonenc"
)

// The types every answer and stream event carries (Task, Message, Part,
// Artifact, the status and artifact updates) are encoded here field by
// field instead of by encoding/json's reflection, at about a third of its
// cost (docs/performance.md, "The plugin's CPU outside the store"). The
// output is byte for byte what encoding/json writes for the same value
// with HTML escaping off (TestFastEncodingMatchesEncodingJSON and
// FuzzFastEncoding compare them): the fields in declaration order,
// omitempty as encoding/json reads it, enums by their MarshalText, map keys
// sorted. Free-form values (metadata other than strings, a data part's
// JSON) still go through encoding/json.

// appendFast appends the encoding of v if v is one of the types above and
// reports whether it did; otherwise dst is returned unchanged.
func appendFast(dst []byte, v any) ([]byte, bool, error) {
	var err error
	switch x := v.(type) {
	case *Task:
		if x == nil {
			return dst, false, nil
		}
		dst, err = appendTask(dst, x)
	case Task:
		dst, err = appendTask(dst, &x)
	case *SendMessageResponse:
		if x == nil {
			return dst, false, nil
		}
		dst, err = appendSendMessageResponse(dst, x)
	case SendMessageResponse:
		dst, err = appendSendMessageResponse(dst, &x)
	case *StreamResponse:
		if x == nil {
			return dst, false, nil
		}
		dst, err = appendStreamResponse(dst, x)
	case StreamResponse:
		dst, err = appendStreamResponse(dst, &x)
	case *Message:
		if x == nil {
			return dst, false, nil
		}
		dst, err = appendMessage(dst, x)
	case Message:
		dst, err = appendMessage(dst, &x)
	default:
		return dst, false, nil
	}
	return dst, true, err
}

// fields writes the separators of one JSON object: the first key gets
// none, later ones a comma.
type fields struct{ n int }

func (f *fields) key(dst []byte, k string) []byte {
	if f.n > 0 {
		dst = append(dst, ',')
	}
	f.n++
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"', ':')
}

func appendSendMessageResponse(dst []byte, r *SendMessageResponse) ([]byte, error) {
	var err error
	var f fields
	dst = append(dst, '{')
	if r.Task != nil {
		if dst, err = appendTask(f.key(dst, "task"), r.Task); err != nil {
			return dst, err
		}
	}
	if r.Message != nil {
		if dst, err = appendMessage(f.key(dst, "message"), r.Message); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendStreamResponse(dst []byte, r *StreamResponse) ([]byte, error) {
	var err error
	var f fields
	dst = append(dst, '{')
	if r.Task != nil {
		if dst, err = appendTask(f.key(dst, "task"), r.Task); err != nil {
			return dst, err
		}
	}
	if r.Message != nil {
		if dst, err = appendMessage(f.key(dst, "message"), r.Message); err != nil {
			return dst, err
		}
	}
	if u := r.StatusUpdate; u != nil {
		dst = f.key(dst, "statusUpdate")
		dst = appendString(append(dst, `{"taskId":`...), u.TaskID)
		dst = appendString(append(dst, `,"contextId":`...), u.ContextID)
		if dst, err = appendStatus(append(dst, `,"status":`...), &u.Status); err != nil {
			return dst, err
		}
		if len(u.Metadata) > 0 {
			if dst, err = appendMap(append(dst, `,"metadata":`...), u.Metadata); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	}
	if u := r.ArtifactUpdate; u != nil {
		dst = f.key(dst, "artifactUpdate")
		dst = appendString(append(dst, `{"taskId":`...), u.TaskID)
		dst = appendString(append(dst, `,"contextId":`...), u.ContextID)
		if dst, err = appendArtifact(append(dst, `,"artifact":`...), &u.Artifact); err != nil {
			return dst, err
		}
		if u.Append {
			dst = append(dst, `,"append":true`...)
		}
		if u.LastChunk {
			dst = append(dst, `,"lastChunk":true`...)
		}
		if len(u.Metadata) > 0 {
			if dst, err = appendMap(append(dst, `,"metadata":`...), u.Metadata); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

func appendTask(dst []byte, t *Task) ([]byte, error) {
	var err error
	dst = appendString(append(dst, `{"id":`...), t.ID)
	if t.ContextID != "" {
		dst = appendString(append(dst, `,"contextId":`...), t.ContextID)
	}
	if dst, err = appendStatus(append(dst, `,"status":`...), &t.Status); err != nil {
		return dst, err
	}
	if len(t.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":[`...)
		for i := range t.Artifacts {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendArtifact(dst, &t.Artifacts[i]); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if len(t.History) > 0 {
		dst = append(dst, `,"history":[`...)
		for i := range t.History {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendMessage(dst, &t.History[i]); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if len(t.Metadata) > 0 {
		if dst, err = appendMap(append(dst, `,"metadata":`...), t.Metadata); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendStatus(dst []byte, s *TaskStatus) ([]byte, error) {
	dst = appendString(append(dst, `{"state":`...), s.State.String())
	if s.Message != nil {
		var err error
		if dst, err = appendMessage(append(dst, `,"message":`...), s.Message); err != nil {
			return dst, err
		}
	}
	if s.Timestamp != nil {
		dst = append(dst, `,"timestamp":"`...)
		dst = appendTimestamp(dst, s.Timestamp.Time)
		dst = append(dst, '"')
	}
	return append(dst, '}'), nil
}

func appendMessage(dst []byte, m *Message) ([]byte, error) {
	var err error
	dst = appendString(append(dst, `{"messageId":`...), m.MessageID)
	if m.ContextID != "" {
		dst = appendString(append(dst, `,"contextId":`...), m.ContextID)
	}
	if m.TaskID != "" {
		dst = appendString(append(dst, `,"taskId":`...), m.TaskID)
	}
	dst = appendString(append(dst, `,"role":`...), m.Role.String())
	if len(m.Parts) > 0 {
		if dst, err = appendParts(append(dst, `,"parts":`...), m.Parts); err != nil {
			return dst, err
		}
	}
	if len(m.Metadata) > 0 {
		if dst, err = appendMap(append(dst, `,"metadata":`...), m.Metadata); err != nil {
			return dst, err
		}
	}
	if len(m.Extensions) > 0 {
		dst = appendStrings(append(dst, `,"extensions":`...), m.Extensions)
	}
	if len(m.ReferenceTaskIDs) > 0 {
		dst = appendStrings(append(dst, `,"referenceTaskIds":`...), m.ReferenceTaskIDs)
	}
	return append(dst, '}'), nil
}

func appendArtifact(dst []byte, a *Artifact) ([]byte, error) {
	var err error
	dst = appendString(append(dst, `{"artifactId":`...), a.ArtifactID)
	if a.Name != "" {
		dst = appendString(append(dst, `,"name":`...), a.Name)
	}
	if a.Description != "" {
		dst = appendString(append(dst, `,"description":`...), a.Description)
	}
	if len(a.Parts) > 0 {
		if dst, err = appendParts(append(dst, `,"parts":`...), a.Parts); err != nil {
			return dst, err
		}
	}
	if len(a.Metadata) > 0 {
		if dst, err = appendMap(append(dst, `,"metadata":`...), a.Metadata); err != nil {
			return dst, err
		}
	}
	if len(a.Extensions) > 0 {
		dst = appendStrings(append(dst, `,"extensions":`...), a.Extensions)
	}
	return append(dst, '}'), nil
}

func appendParts(dst []byte, parts []Part) ([]byte, error) {
	var err error
	dst = append(dst, '[')
	for i := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		p := &parts[i]
		var f fields
		dst = append(dst, '{')
		if p.Text != nil {
			dst = appendString(f.key(dst, "text"), *p.Text)
		}
		if len(p.Raw) > 0 {
			dst = append(f.key(dst, "raw"), '"')
			dst = base64.StdEncoding.AppendEncode(dst, p.Raw)
			dst = append(dst, '"')
		}
		if p.URL != nil {
			dst = appendString(f.key(dst, "url"), *p.URL)
		}
		if len(p.Data) > 0 {
			// encoding/json checks and compacts a json.RawMessage.
			if dst, err = appendPlain(f.key(dst, "data"), p.Data); err != nil {
				return dst, err
			}
		}
		if p.MediaType != "" {
			dst = appendString(f.key(dst, "mediaType"), p.MediaType)
		}
		if p.Filename != "" {
			dst = appendString(f.key(dst, "filename"), p.Filename)
		}
		if len(p.Metadata) > 0 {
			if dst, err = appendMap(f.key(dst, "metadata"), p.Metadata); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// appendMap writes a free-form object with its keys sorted, as
// encoding/json does; string values directly, others through encoding/json.
func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	var stack [8]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendString(dst, k), ':')
		if s, ok := m[k].(string); ok {
			dst = appendString(dst, s)
			continue
		}
		var err error
		if dst, err = appendPlain(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping off (jsonenc.AppendString).
func appendString(dst []byte, s string) []byte { return jsonenc.AppendString(dst, s) }
