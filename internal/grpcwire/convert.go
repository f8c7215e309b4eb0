package grpcwire

import (
	"encoding/json"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// FieldError says which field of a message could not be converted and why.
// Conversions fail only on values that have no ProtoJSON meaning: a number
// that is NaN or infinite in a google.protobuf.Value, a data part whose
// JSON does not parse.
type FieldError struct {
	// Field is the path of the field, e.g. "message.parts[0].data".
	Field string
	// Problem says what is wrong with it.
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// conv carries the first error of a conversion, so that the conversion
// functions read as plain field assignments.
type conv struct{ err error }

func (c *conv) fail(field string, err error) {
	if c.err == nil {
		c.err = &FieldError{Field: field, Problem: err.Error()}
	}
}

// index renders path[i].
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// join renders path.field (or field when path is empty).
func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// structToProto converts free-form metadata. The model's maps hold what
// encoding/json decodes (float64, string, bool, nil, []any, map[string]any)
// and sometimes Go values set by this process ([]string, int, a struct);
// those go through their JSON encoding, as they would on the JSON wire.
func (c *conv) structToProto(path string, m map[string]any) *structpb.Struct {
	if len(m) == 0 {
		return nil
	}
	if s, err := structpb.NewStruct(m); err == nil {
		return s
	}
	b, err := json.Marshal(m)
	if err != nil {
		c.fail(path, err)
		return nil
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err != nil {
		c.fail(path, err)
		return nil
	}
	return s
}

// structFromProto converts a google.protobuf.Struct to free-form metadata
// (nil when it is empty, as the JSON form omits it).
func structFromProto(s *structpb.Struct) map[string]any {
	if len(s.GetFields()) == 0 {
		return nil
	}
	return s.AsMap()
}

// valueToProto converts the JSON of a data part to a google.protobuf.Value.
func (c *conv) valueToProto(path string, raw json.RawMessage) *structpb.Value {
	v := &structpb.Value{}
	if err := protojson.Unmarshal(raw, v); err != nil {
		c.fail(path, fmt.Errorf("the data is not a JSON value: %w", err))
		return nil
	}
	return v
}

// valueFromProto converts a google.protobuf.Value to JSON; a missing value
// is JSON null (a data part always has content).
func (c *conv) valueFromProto(path string, v *structpb.Value) json.RawMessage {
	if v == nil || v.Kind == nil {
		return json.RawMessage("null")
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		c.fail(path, err)
		return json.RawMessage("null")
	}
	return b
}

func timestampToProto(t *a2a.Timestamp) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(t.Time)
}

func timestampFromProto(t *timestamppb.Timestamp) *a2a.Timestamp {
	if t == nil {
		return nil
	}
	return a2a.NewTimestamp(t.AsTime())
}

// StateToProto converts a task state; the zero value and names this
// version does not know are TASK_STATE_UNSPECIFIED.
func StateToProto(s a2a.TaskState) a2apb.TaskState {
	return a2apb.TaskState(a2apb.TaskState_value[string(s)])
}

// StateFromProto converts a task state; values this version does not know
// are TaskStateUnspecified.
func StateFromProto(s a2apb.TaskState) a2a.TaskState {
	if name, ok := a2apb.TaskState_name[int32(s)]; ok {
		return a2a.TaskState(name)
	}
	return a2a.TaskStateUnspecified
}

func roleToProto(r a2a.Role) a2apb.Role { return a2apb.Role(a2apb.Role_value[string(r)]) }

func roleFromProto(r a2apb.Role) a2a.Role {
	if name, ok := a2apb.Role_name[int32(r)]; ok {
		return a2a.Role(name)
	}
	return a2a.RoleUnspecified
}

// optString is an `optional string` field: set when s is not empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optTrue is an `optional bool` field: set when b is true.
func optTrue(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

// cloneInt32 copies an optional int32 so that the two messages share no
// memory.
func cloneInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneBool copies an optional bool.
func cloneBool(p *bool) *bool {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// strings copies a repeated string field (nil when empty, as the JSON form
// omits it).
func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}
