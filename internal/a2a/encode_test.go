package a2a

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// reflectJSON is what encoding/json writes for v with HTML escaping off:
// the reference the hand-written encoder must match byte for byte.
func reflectJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func fastJSON(t testing.TB, v any) string {
	t.Helper()
	b, ok, err := appendFast(nil, v)
	if !ok {
		t.Fatalf("appendFast did not take %T", v)
	}
	if err != nil {
		t.Fatalf("appendFast: %v", err)
	}
	return string(b)
}

func strp(s string) *string { return &s }

// encodingSamples covers every field of the hand-encoded types, set and
// unset, empty but non-nil slices and maps, and the strings encoding/json
// escapes.
func encodingSamples() []any {
	ts := &Timestamp{Time: time.Date(2026, 12, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))}
	hard := "quote\" back\\ nl\n cr\r tab\t bs\b ff\f nul\x00 us\x1f del\x7f <&> é 日本 \u2028 \u2029 bad\xff\xfe end"
	msg := Message{MessageID: "m1", ContextID: "c1", TaskID: "t1", Role: RoleUser,
		Parts: []Part{
			{Text: strp(hard)},
			{Text: strp("")},
			{Raw: []byte{0, 1, 2, 250, 255}, MediaType: "image/png", Filename: "a.png"},
			{URL: strp("https://example.com/x?a=1&b=<2>")},
			{Data: json.RawMessage(`{ "b" : [1, 2, {"c":null}], "a":"<x>" }`), Metadata: map[string]any{"k": 1.5}},
			{},
		},
		Metadata:         map[string]any{"z": "last", "a": map[string]any{"n": 1, "s": []any{"x", true}}, "m": nil, hard: hard},
		Extensions:       []string{"https://ext/1", hard},
		ReferenceTaskIDs: []string{"t0"},
	}
	agent := Message{MessageID: "m2", Role: RoleAgent, Parts: []Part{{Text: strp("answer")}}}
	task := Task{ID: "t1", ContextID: "c1",
		Status: TaskStatus{State: TaskStateCompleted, Message: &agent, Timestamp: ts},
		Artifacts: []Artifact{
			{ArtifactID: "a1", Name: "answer", Description: hard, Parts: []Part{{Text: strp("x")}},
				Metadata: map[string]any{"k": "v"}, Extensions: []string{"e"}},
			{ArtifactID: "a2"},
		},
		History:  []Message{msg, agent},
		Metadata: map[string]any{"a2a-plugin/chain": "ch-1"},
	}
	return []any{
		&task,
		task,
		&Task{ID: ""},
		&Task{ID: "t", Artifacts: []Artifact{}, History: []Message{}, Metadata: map[string]any{}},
		&Task{ID: "t", Status: TaskStatus{State: TaskStateWorking, Timestamp: &Timestamp{}}},
		&msg,
		msg,
		&Message{Parts: []Part{}, Metadata: map[string]any{}, Extensions: []string{}, ReferenceTaskIDs: []string{}},
		&SendMessageResponse{Task: &task},
		&SendMessageResponse{Message: &agent},
		&SendMessageResponse{},
		SendMessageResponse{Task: &task, Message: &agent},
		&StreamResponse{Task: &task},
		&StreamResponse{Message: &msg},
		&StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: "t", ContextID: "c",
			Status: TaskStatus{State: TaskStateWorking, Timestamp: ts}, Metadata: map[string]any{"x": 1}}},
		&StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{}},
		&StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c",
			Artifact: task.Artifacts[0], Append: true, LastChunk: true, Metadata: map[string]any{"x": "y"}}},
		&StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{}},
		StreamResponse{},
	}
}

func TestFastEncodingMatchesEncodingJSON(t *testing.T) {
	for i, v := range encodingSamples() {
		if got, want := fastJSON(t, v), reflectJSON(t, v); got != want {
			t.Errorf("sample %d (%T):\n got %s\nwant %s", i, v, got, want)
		}
	}
}

func TestFastEncodingLeavesOtherTypesAndNilToEncodingJSON(t *testing.T) {
	for _, v := range []any{(*Task)(nil), (*Message)(nil), (*SendMessageResponse)(nil), (*StreamResponse)(nil),
		map[string]any{"a": 1}, []Task{}, &AgentCard{}} {
		if out, ok, _ := appendFast([]byte("x"), v); ok || string(out) != "x" {
			t.Errorf("appendFast took %T: %q, %v", v, out, ok)
		}
	}
	// Through Marshal, a nil *Task is still null.
	if b, err := Marshal((*Task)(nil)); err != nil || string(b) != "null" {
		t.Errorf("Marshal(nil *Task) = %s, %v", b, err)
	}
}

func TestFastEncodingReportsBadFreeFormValues(t *testing.T) {
	for _, v := range []any{
		&Task{ID: "t", Metadata: map[string]any{"f": func() {}}},
		&Message{Parts: []Part{{Data: json.RawMessage(`{"unterminated"`)}}},
		&StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{Metadata: map[string]any{"c": make(chan int)}}},
	} {
		if _, err := Marshal(v); err == nil {
			t.Errorf("Marshal(%T) with an unencodable value did not fail", v)
		}
		if _, err := json.Marshal(v); err == nil {
			t.Errorf("encoding/json accepted %T too: the sample is wrong", v)
		}
	}
}

// FuzzFastEncoding checks the hand-written encoder against encoding/json
// on arbitrary strings in every string position and as metadata keys.
func FuzzFastEncoding(f *testing.F) {
	f.Add("hello", "ctx", "k", "v", []byte(nil), false)
	f.Add("q\"\\\n\x00\x7f\u2028\u2029\xff", "", "", "", []byte{1, 2, 3}, true)
	f.Add("<html>&amp;", "日本", "é", "\t", []byte("raw"), false)
	f.Fuzz(func(t *testing.T, text, ctx, key, val string, raw []byte, withData bool) {
		part := Part{Text: &text, Raw: raw, MediaType: val, Filename: key, Metadata: map[string]any{key: val, val: 1}}
		if withData {
			if json.Valid([]byte(text)) {
				part.Data = json.RawMessage(text)
			}
		}
		msg := Message{MessageID: text, ContextID: ctx, TaskID: key, Role: Role(val),
			Parts: []Part{part, {URL: &ctx}}, Metadata: map[string]any{key: text, ctx: nil},
			Extensions: []string{text, ctx}, ReferenceTaskIDs: []string{val}}
		task := Task{ID: text, ContextID: ctx, Status: TaskStatus{State: TaskState(key), Message: &msg},
			Artifacts: []Artifact{{ArtifactID: val, Name: text, Description: ctx, Parts: []Part{part}, Extensions: []string{key}}},
			History:   []Message{msg}, Metadata: map[string]any{key: text, text: val}}
		for _, v := range []any{&task, &SendMessageResponse{Task: &task, Message: &msg},
			&StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: text, ContextID: ctx, Status: task.Status, Metadata: map[string]any{key: val}}},
			&StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: key, ContextID: val, Artifact: task.Artifacts[0], Append: withData}},
		} {
			if got, want := fastJSON(t, v), reflectJSON(t, v); got != want {
				t.Fatalf("%T:\n got %s\nwant %s", v, got, want)
			}
		}
	})
}

func BenchmarkEncodeTaskFastVsReflect(b *testing.B) {
	task := encodingSamples()[0].(*Task)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 8192)
		for b.Loop() {
			buf, _ = appendPlain(buf[:0], task)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			_ = enc.Encode(task)
		}
	})
}

// TestFastEncodingKnowsEveryField fails when one of the hand-encoded types
// gains a field: encode.go must then write it too (and this list, and the
// samples above, must name it).
func TestFastEncodingKnowsEveryField(t *testing.T) {
	for v, want := range map[reflect.Type]string{
		reflect.TypeFor[Task]():                    "ID ContextID Status Artifacts History Metadata",
		reflect.TypeFor[TaskStatus]():              "State Message Timestamp",
		reflect.TypeFor[Message]():                 "MessageID ContextID TaskID Role Parts Metadata Extensions ReferenceTaskIDs",
		reflect.TypeFor[Part]():                    "Text Raw URL Data MediaType Filename Metadata",
		reflect.TypeFor[Artifact]():                "ArtifactID Name Description Parts Metadata Extensions",
		reflect.TypeFor[TaskStatusUpdateEvent]():   "TaskID ContextID Status Metadata",
		reflect.TypeFor[TaskArtifactUpdateEvent](): "TaskID ContextID Artifact Append LastChunk Metadata",
		reflect.TypeFor[SendMessageResponse]():     "Task Message",
		reflect.TypeFor[StreamResponse]():          "Task Message StatusUpdate ArtifactUpdate",
	} {
		typ := v
		var names []string
		for i := range typ.NumField() {
			names = append(names, typ.Field(i).Name)
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("%s has fields %q; encode.go writes %q", typ.Name(), got, want)
		}
	}
}
