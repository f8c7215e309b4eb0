package grpcwire

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// roundTrip is one message type converted both ways: proto → model →
// proto, and the model's JSON (a2a.Marshal) for the ProtoJSON comparison.
type roundTrip struct {
	name string
	new  func() proto.Message
	// through converts a proto message to the model and back, returning
	// the model value as well.
	through func(proto.Message) (model any, back proto.Message, err error)
}

// roundTrips lists every message the A2AService carries, requests and
// answers, and the objects inside them.
var roundTrips = []roundTrip{
	{"Task", func() proto.Message { return &a2apb.Task{} }, func(m proto.Message) (any, proto.Message, error) {
		t, err := TaskFromProto(m.(*a2apb.Task))
		if err != nil {
			return nil, nil, err
		}
		back, err := TaskToProto(t)
		return t, back, err
	}},
	{"Message", func() proto.Message { return &a2apb.Message{} }, func(m proto.Message) (any, proto.Message, error) {
		v, err := MessageFromProto(m.(*a2apb.Message))
		if err != nil {
			return nil, nil, err
		}
		back, err := MessageToProto(v)
		return v, back, err
	}},
	{"StreamResponse", func() proto.Message { return &a2apb.StreamResponse{} }, func(m proto.Message) (any, proto.Message, error) {
		v, err := StreamResponseFromProto(m.(*a2apb.StreamResponse))
		if err != nil {
			return nil, nil, err
		}
		back, err := StreamResponseToProto(v)
		return v, back, err
	}},
	{"AgentCard", func() proto.Message { return &a2apb.AgentCard{} }, func(m proto.Message) (any, proto.Message, error) {
		v, err := AgentCardFromProto(m.(*a2apb.AgentCard))
		if err != nil {
			return nil, nil, err
		}
		back, err := AgentCardToProto(v)
		return v, back, err
	}},
	{"SendMessageRequest", func() proto.Message { return &a2apb.SendMessageRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v, err := SendMessageRequestFromProto(m.(*a2apb.SendMessageRequest))
		if err != nil {
			return nil, nil, err
		}
		back, err := SendMessageRequestToProto(v)
		return v, back, err
	}},
	{"SendMessageResponse", func() proto.Message { return &a2apb.SendMessageResponse{} }, func(m proto.Message) (any, proto.Message, error) {
		v, err := SendMessageResponseFromProto(m.(*a2apb.SendMessageResponse))
		if err != nil {
			return nil, nil, err
		}
		back, err := SendMessageResponseToProto(v)
		return v, back, err
	}},
	{"GetTaskRequest", func() proto.Message { return &a2apb.GetTaskRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := GetTaskRequestFromProto(m.(*a2apb.GetTaskRequest))
		return v, GetTaskRequestToProto(v), nil
	}},
	{"ListTasksRequest", func() proto.Message { return &a2apb.ListTasksRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := ListTasksRequestFromProto(m.(*a2apb.ListTasksRequest))
		return v, ListTasksRequestToProto(v), nil
	}},
	{"ListTasksResponse", func() proto.Message { return &a2apb.ListTasksResponse{} }, func(m proto.Message) (any, proto.Message, error) {
		v, err := ListTasksResponseFromProto(m.(*a2apb.ListTasksResponse))
		if err != nil {
			return nil, nil, err
		}
		back, err := ListTasksResponseToProto(v)
		return v, back, err
	}},
	{"CancelTaskRequest", func() proto.Message { return &a2apb.CancelTaskRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := CancelTaskRequestFromProto(m.(*a2apb.CancelTaskRequest))
		back, err := CancelTaskRequestToProto(v)
		return v, back, err
	}},
	{"SubscribeToTaskRequest", func() proto.Message { return &a2apb.SubscribeToTaskRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := SubscribeToTaskRequestFromProto(m.(*a2apb.SubscribeToTaskRequest))
		return v, SubscribeToTaskRequestToProto(v), nil
	}},
	{"TaskPushNotificationConfig", func() proto.Message { return &a2apb.TaskPushNotificationConfig{} }, func(m proto.Message) (any, proto.Message, error) {
		v := PushConfigFromProto(m.(*a2apb.TaskPushNotificationConfig))
		return v, PushConfigToProto(v), nil
	}},
	{"GetTaskPushNotificationConfigRequest", func() proto.Message { return &a2apb.GetTaskPushNotificationConfigRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := GetPushConfigRequestFromProto(m.(*a2apb.GetTaskPushNotificationConfigRequest))
		return v, GetPushConfigRequestToProto(v), nil
	}},
	{"ListTaskPushNotificationConfigsRequest", func() proto.Message { return &a2apb.ListTaskPushNotificationConfigsRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := ListPushConfigsRequestFromProto(m.(*a2apb.ListTaskPushNotificationConfigsRequest))
		return v, ListPushConfigsRequestToProto(v), nil
	}},
	{"ListTaskPushNotificationConfigsResponse", func() proto.Message { return &a2apb.ListTaskPushNotificationConfigsResponse{} }, func(m proto.Message) (any, proto.Message, error) {
		v := ListPushConfigsResponseFromProto(m.(*a2apb.ListTaskPushNotificationConfigsResponse))
		return v, ListPushConfigsResponseToProto(v), nil
	}},
	{"DeleteTaskPushNotificationConfigRequest", func() proto.Message { return &a2apb.DeleteTaskPushNotificationConfigRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := DeletePushConfigRequestFromProto(m.(*a2apb.DeleteTaskPushNotificationConfigRequest))
		return v, DeletePushConfigRequestToProto(v), nil
	}},
	{"GetExtendedAgentCardRequest", func() proto.Message { return &a2apb.GetExtendedAgentCardRequest{} }, func(m proto.Message) (any, proto.Message, error) {
		v := ExtendedCardRequestFromProto(m.(*a2apb.GetExtendedAgentCardRequest))
		return v, ExtendedCardRequestToProto(v), nil
	}},
}

// TestEveryServiceMessageIsConverted checks that the table above covers
// every request and answer message of lf.a2a.v1.A2AService, so that a
// message added to the service cannot go unconverted.
func TestEveryServiceMessageIsConverted(t *testing.T) {
	covered := map[protoreflect.FullName]bool{}
	for _, rt := range roundTrips {
		covered[rt.new().ProtoReflect().Descriptor().FullName()] = true
	}
	svc := a2apb.File_a2av1_proto.Services().ByName("A2AService")
	if svc == nil {
		t.Fatal("the generated file has no A2AService")
	}
	methods := svc.Methods()
	if methods.Len() != 11 {
		t.Errorf("A2AService has %d RPCs, want the 11 of v1.0", methods.Len())
	}
	for i := 0; i < methods.Len(); i++ {
		m := methods.Get(i)
		for _, msg := range []protoreflect.MessageDescriptor{m.Input(), m.Output()} {
			if msg.FullName() == "google.protobuf.Empty" {
				continue
			}
			if !covered[msg.FullName()] {
				t.Errorf("%s: %s is not in the conversion table", m.Name(), msg.FullName())
			}
		}
	}
}

// TestConversionIsLosslessForEveryField fills every field of every
// service message (each oneof variant in turn) and checks that proto →
// model → proto gives the same message, and that the model's JSON equals
// the ProtoJSON of the message: the model holds every v1.0 field, and
// means by it what ProtoJSON means.
func TestConversionIsLosslessForEveryField(t *testing.T) {
	for _, rt := range roundTrips {
		t.Run(rt.name, func(t *testing.T) {
			for variant := 0; variant < 5; variant++ {
				msg := rt.new()
				fill(msg.ProtoReflect(), variant)
				model, back, err := rt.through(msg)
				if err != nil {
					t.Fatalf("variant %d: %v", variant, err)
				}
				if !proto.Equal(msg, back) {
					t.Fatalf("variant %d: proto → model → proto changed the message:\n in: %v\nout: %v", variant, msg, back)
				}
				want, err := protojson.Marshal(msg)
				if err != nil {
					t.Fatal(err)
				}
				got, err := a2a.Marshal(model)
				if err != nil {
					t.Fatal(err)
				}
				if !sameJSON(t, want, got) {
					t.Fatalf("variant %d: the model's JSON differs from the ProtoJSON of the message:\nprotojson: %s\n    model: %s", variant, want, got)
				}
				// And the JSON bindings' decoder reads the ProtoJSON into
				// the same model value.
				fresh := reflect.New(reflect.TypeOf(model).Elem()).Interface()
				if err := a2a.Unmarshal(want, fresh); err != nil {
					t.Fatalf("variant %d: a2a.Unmarshal(protojson): %v", variant, err)
				}
				again, _ := a2a.Marshal(fresh)
				if !sameJSON(t, want, again) {
					t.Fatalf("variant %d: decoding the ProtoJSON gives another value:\nprotojson: %s\n  decoded: %s", variant, want, again)
				}
			}
		})
	}
}

// sameJSON compares two JSON documents as values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// fill sets every field of m to a value that is not the default; of each
// oneof it sets the variant'th field (modulo their number). Repeated
// fields get two elements, maps one entry.
func fill(m protoreflect.Message, variant int) {
	switch m.Descriptor().FullName() {
	case "google.protobuf.Struct":
		proto.Merge(m.Interface(), sampleStruct())
		return
	case "google.protobuf.Value":
		proto.Merge(m.Interface(), structpb.NewStructValue(sampleStruct()))
		return
	case "google.protobuf.Timestamp":
		proto.Merge(m.Interface(), timestamppb.New(time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)))
		return
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if od.Fields().Get(variant%od.Fields().Len()) != fd {
				continue
			}
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			key := protoreflect.ValueOfString("key-" + string(fd.Name())).MapKey()
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v := mp.NewValue()
				fill(v.Message(), variant)
				mp.Set(key, v)
			} else {
				mp.Set(key, scalar(fd.MapValue(), variant))
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for k := 0; k < 2; k++ {
				if fd.Kind() == protoreflect.MessageKind {
					v := l.NewElement()
					fill(v.Message(), variant+k)
					l.Append(v)
				} else {
					l.Append(scalar(fd, variant+k))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			fill(m.Mutable(fd).Message(), variant)
		default:
			m.Set(fd, scalar(fd, variant))
		}
	}
}

// scalar is a non-default value for a scalar field.
func scalar(fd protoreflect.FieldDescriptor, variant int) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if fd.Name() == "protocol_version" {
			// The JSON decoder cuts versions to Major.Minor.
			return protoreflect.ValueOfString([]string{"1.0", "0.3"}[variant%2])
		}
		return protoreflect.ValueOfString(fmt.Sprintf("%s-%d", fd.Name(), variant))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(fmt.Sprintf("bytes \x00\xff %d", variant)))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(7 + variant))
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(1 + variant%(vals.Len()-1)).Number())
	}
	panic(fmt.Sprintf("no sample for %s (%s)", fd.FullName(), fd.Kind()))
}

func sampleStruct() *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{
		"text": "hé", "n": 2.5, "yes": true, "none": nil,
		"list": []any{"a", 1.0}, "obj": map[string]any{"snake_case_key": "kept"},
	})
	if err != nil {
		panic(err)
	}
	return s
}

// TestModelValuesSurviveTheWire converts model values as the server builds
// them (with what the JSON form omits) to proto and back.
func TestModelValuesSurviveTheWire(t *testing.T) {
	ts := a2a.NewTimestamp(time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC))
	text := "hello"
	task := &a2a.Task{
		ID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: ts, Message: &a2a.Message{
			MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("which one?")}}},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Parts: []a2a.Part{
			{Text: &text},
			a2a.FilePart([]byte{}, "application/octet-stream", "empty.bin"),
			a2a.URLPart("https://example.com/x.pdf", "application/pdf", "x.pdf"),
			{Data: json.RawMessage(`null`)},
			{Data: json.RawMessage(`[1,"two",{"three":3}]`), MediaType: "application/json"},
		}}},
		History:  []a2a.Message{{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}, Metadata: map[string]any{"k": "v"}}},
		Metadata: map[string]any{"tags": []string{"go", "values"}, "count": 3},
	}
	pb, err := TaskToProto(task)
	if err != nil {
		t.Fatal(err)
	}
	back, err := TaskFromProto(pb)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := a2a.Marshal(task)
	got, _ := a2a.Marshal(back)
	if !sameJSON(t, want, got) {
		t.Fatalf("task changed on the way:\nwant %s\n got %s", want, got)
	}
	if k := back.Artifacts[0].Parts[1].Kind(); k != a2a.PartRaw {
		t.Errorf("an empty file part came back as a %v part", k)
	}
	// The JSON form drops an empty raw (omitempty on a []byte), which
	// ProtoJSON keeps as "raw": ""; compare without that part.
	task.Artifacts[0].Parts = slices.Delete(task.Artifacts[0].Parts, 1, 2)
	if pb, err = TaskToProto(task); err != nil {
		t.Fatal(err)
	}
	want, _ = a2a.Marshal(task)
	if k := back.Artifacts[0].Parts[3].Kind(); k != a2a.PartData {
		t.Errorf("a data part holding null came back as a %v part", k)
	}
	pj, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, pj, want) {
		t.Fatalf("protojson of the converted task differs from the task's JSON:\nprotojson %s\n     json %s", pj, want)
	}
}

// TestConversionErrorsNameTheField checks the values that have no
// ProtoJSON meaning.
func TestConversionErrorsNameTheField(t *testing.T) {
	bad := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Parts: []*a2apb.Part{
		{Content: &a2apb.Part_Text{Text: "ok"}},
		{Content: &a2apb.Part_Data{Data: structpb.NewNumberValue(math.NaN())}},
	}}}
	_, err := SendMessageRequestFromProto(bad)
	var fe *FieldError
	if !asFieldError(err, &fe) || fe.Field != "message.parts[1].data" {
		t.Fatalf("err = %v, want a FieldError on message.parts[1].data", err)
	}
	_, err = SendMessageRequestToProto(&a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Parts: []a2a.Part{{Data: json.RawMessage(`{"x":`)}}}})
	if !asFieldError(err, &fe) || !strings.HasPrefix(fe.Field, "message.parts[0].data") {
		t.Fatalf("err = %v, want a FieldError on message.parts[0].data", err)
	}
}

func asFieldError(err error, fe **FieldError) bool {
	e, ok := err.(*FieldError)
	if ok {
		*fe = e
	}
	return ok
}

// TestUnknownEnumValuesReadAsUnspecified: a peer on a later minor may send
// states this version does not know.
func TestUnknownEnumValuesReadAsUnspecified(t *testing.T) {
	task, err := TaskFromProto(&a2apb.Task{Id: "t", Status: &a2apb.TaskStatus{State: 99}})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateUnspecified {
		t.Errorf("state = %q, want unspecified", task.Status.State)
	}
	if got := StateToProto("TASK_STATE_FROM_THE_FUTURE"); got != a2apb.TaskState_TASK_STATE_UNSPECIFIED {
		t.Errorf("StateToProto(unknown) = %v", got)
	}
}
