package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/pluginpb"

	agentpluginv1 "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// run runs the generator on files (the last one generated) and returns
// what it writes, or its error.
func run(t *testing.T, files ...*descriptorpb.FileDescriptorProto) (string, string) {
	t.Helper()
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: []string{files[len(files)-1].GetName()}, ProtoFile: files}
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range gen.Files {
		if f.Generate {
			if err := generate(gen, f); err != nil {
				return "", err.Error()
			}
		}
	}
	resp := gen.Response()
	if resp.Error != nil {
		return "", resp.GetError()
	}
	if len(resp.File) != 1 {
		t.Fatalf("the generator wrote %d files, want 1", len(resp.File))
	}
	return resp.File[0].GetContent(), ""
}

// withoutComments drops comment lines: the descriptors compiled into the
// Go code carry no comments, the committed file does.
func withoutComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/**") || strings.HasPrefix(t, "*") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// The committed TypeScript is what the generator writes from the contract
// compiled into proto/agentplugin/v1 (make proto-check compares it, with
// its comments, against buf generate's output; this catches a stale file
// in go test alone).
func TestCommittedNodeTypesMatchTheContract(t *testing.T) {
	got, errText := run(t,
		protodesc.ToFileDescriptorProto(structpb.File_google_protobuf_struct_proto),
		protodesc.ToFileDescriptorProto(agentpluginv1.File_agentplugin_v1_agentplugin_proto))
	if errText != "" {
		t.Fatal(errText)
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "host-sdk", "node", "src", "gen", "agentplugin", "v1", "agentplugin.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if withoutComments(got) != withoutComments(string(committed)) {
		t.Errorf("host-sdk/node/src/gen/agentplugin/v1/agentplugin.ts is not what protoc-gen-a2a-ts writes from the contract: run make proto and commit")
	}
	for _, want := range []string{
		"export interface HandleMessageRequest {\n  platform: string;\n  chatId: string;\n  sender: Sender | null;\n  trustTier: TrustTier;",
		"  parts: Part[];\n",
		"  metadata: JsonObject | null;\n",
		"  data?: JsonValue;\n",
		"  content?: \"text\" | \"raw\" | \"url\" | \"data\";\n",
		"export interface SendRequestInit {\n  platform?: string;\n",
		"  artifact?: ArtifactInit | null;\n",
		"  configJson: Buffer;\n",
		"  configJson?: Uint8Array;\n",
		"  callId: number;\n",
		"export type Outcome = \"OUTCOME_UNSPECIFIED\" | \"OUTCOME_SUCCESS\" |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the generated types lack %q", want)
		}
	}
}

func file(name string, deps []string, msgs ...*descriptorpb.DescriptorProto) *descriptorpb.FileDescriptorProto {
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String(name), Package: proto.String("t.v1"), Syntax: proto.String("proto3"), Dependency: deps,
		Options:     &descriptorpb.FileOptions{GoPackage: proto.String("example.com/t/v1;tv1")},
		MessageType: msgs,
	}
}

func field(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string, repeated bool) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(),
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	if repeated {
		f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	}
	return f
}

// What the contract does not use yet gets its proto-loader shape too: maps,
// nested messages, 64-bit integers, a message in a oneof.
func TestShapesBeyondTheContract(t *testing.T) {
	entry := &descriptorpb.DescriptorProto{
		Name: proto.String("LabelsEntry"), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
		Field: []*descriptorpb.FieldDescriptorProto{
			field("key", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, "", false),
			field("value", 2, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.v1.Outer.Inner", false),
		},
	}
	inner := &descriptorpb.DescriptorProto{Name: proto.String("Inner"), Field: []*descriptorpb.FieldDescriptorProto{
		field("big_count", 1, descriptorpb.FieldDescriptorProto_TYPE_SINT64, "", false),
	}}
	choice := field("inner_choice", 3, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.v1.Outer.Inner", false)
	choice.OneofIndex = proto.Int32(0)
	other := field("other_choice", 4, descriptorpb.FieldDescriptorProto_TYPE_STRING, "", false)
	other.OneofIndex = proto.Int32(0)
	outer := &descriptorpb.DescriptorProto{
		Name:       proto.String("Outer"),
		NestedType: []*descriptorpb.DescriptorProto{inner, entry},
		Field: []*descriptorpb.FieldDescriptorProto{
			field("labels", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.v1.Outer.LabelsEntry", true),
			field("inners", 2, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.v1.Outer.Inner", true),
			choice, other,
			field("a_b_1_c", 5, descriptorpb.FieldDescriptorProto_TYPE_FIXED64, "", true),
		},
		OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("the_choice")}},
	}
	got, errText := run(t, file("t/v1/t.proto", nil, outer))
	if errText != "" {
		t.Fatal(errText)
	}
	for _, want := range []string{
		"export interface Outer {\n  labels: { [key: string]: Outer_Inner };\n  inners: Outer_Inner[];\n" +
			"  innerChoice?: Outer_Inner;\n  otherChoice?: string;\n  aB_1C: number[];\n" +
			"  /** Which member of the oneof the_choice is set (absent: none). */\n  theChoice?: \"innerChoice\" | \"otherChoice\";\n}\n",
		"export interface OuterInit {\n  labels?: { [key: string]: Outer_InnerInit };\n  inners?: Outer_InnerInit[];\n" +
			"  innerChoice?: Outer_InnerInit | null;\n  otherChoice?: string;\n  aB_1C?: number[];\n}\n",
		"export interface Outer_Inner {\n  bigCount: number;\n}\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the generated types lack\n%s\nin\n%s", want, got)
		}
	}
	if strings.Contains(got, "LabelsEntry") {
		t.Errorf("a map's entry message got a type of its own:\n%s", got)
	}
}

// What the generator cannot describe is refused, not guessed.
func TestRefusesWhatItCannotDescribe(t *testing.T) {
	opt := field("maybe", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, "", false)
	opt.Proto3Optional = proto.Bool(true)
	opt.OneofIndex = proto.Int32(0)
	withOptional := &descriptorpb.DescriptorProto{Name: proto.String("M"), Field: []*descriptorpb.FieldDescriptorProto{opt},
		OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_maybe")}}}
	if _, errText := run(t, file("t/v1/o.proto", nil, withOptional)); !strings.Contains(errText, "proto3 optional") {
		t.Errorf("a proto3 optional field: error %q", errText)
	}

	a := file("t/v1/a.proto", nil, &descriptorpb.DescriptorProto{Name: proto.String("A")})
	b := file("t/v1/b.proto", []string{"t/v1/a.proto"}, &descriptorpb.DescriptorProto{Name: proto.String("B"),
		Field: []*descriptorpb.FieldDescriptorProto{field("a", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.v1.A", false)}})
	if _, errText := run(t, a, b); !strings.Contains(errText, "of another file") {
		t.Errorf("a message of another file: error %q", errText)
	}

	dup := file("t/v1/d.proto", nil, &descriptorpb.DescriptorProto{Name: proto.String("X")}, &descriptorpb.DescriptorProto{Name: proto.String("XInit")})
	if _, errText := run(t, dup); !strings.Contains(errText, "would both be the TypeScript type XInit") {
		t.Errorf("X and XInit: error %q", errText)
	}
}

func TestLowerCamelIsProtobufjsCamelCase(t *testing.T) {
	for in, want := range map[string]string{
		"chat_id": "chatId", "parameters_json_schema": "parametersJsonSchema", "_x": "_x", "a__b": "a_B",
		"a_1": "a_1", "a_B": "a_B", "x_": "x_", "id": "id",
	} {
		if got := lowerCamel(in); got != want {
			t.Errorf("lowerCamel(%q) = %q, want %q", in, got, want)
		}
	}
}
