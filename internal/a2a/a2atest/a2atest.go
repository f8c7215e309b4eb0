// Package a2atest checks, in tests, that JSON emitted by this project is
// valid A2A v1.0. It validates documents against the protocol's own
// definition as the official Go SDK compiles it in
// (github.com/a2aproject/a2a-go/v2/a2apb/v1, the lf.a2a.v1 proto that the
// specification's JSON Schema is generated from): a strict protojson
// decode into the generated message (unknown keys, wrong types, enum
// names that do not exist, malformed timestamps fail) and a walk of the
// document along the message descriptors for what protojson lets
// through: fields annotated google.api.field_behavior = REQUIRED (lists
// and maps excepted, which proto3 JSON omits when empty), a oneof
// with none or several members, null where a value is due, URL-safe
// base64, snake_case keys (protojson accepts the proto names), enums as
// numbers and the 0.3 `kind` key. It also checks the JSON-RPC envelope.
//
// Everything it checks against comes from the module's dependency graph,
// so the tests need nothing outside the repository.
//
// It imports nothing of this project, so any package's tests — including
// those of internal/a2a itself — can use it.
package a2atest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// a2aFile is the lf.a2a.v1 proto file as the SDK registers it.
var a2aFile = (&a2apb.Task{}).ProtoReflect().Descriptor().ParentFile()

// wellKnown are the google.protobuf messages the A2A JSON Schema bundle
// also names as definitions.
var wellKnown = []protoreflect.MessageDescriptor{
	(&structpb.Struct{}).ProtoReflect().Descriptor(),
	(&structpb.Value{}).ProtoReflect().Descriptor(),
	(&timestamppb.Timestamp{}).ProtoReflect().Descriptor(),
}

// title spells a message name as the specification's JSON Schema titles
// its definitions: "AgentCard" → "Agent Card", "HTTPAuthSecurityScheme"
// → "HTTP Auth Security Scheme".
func title(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) ||
			(unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Definitions lists the names CheckJSON accepts, one per message of the
// lf.a2a.v1 proto plus Struct, Value and Timestamp ("Task", "Agent Card",
// "Stream Response", …).
func Definitions() []string {
	var out []string
	msgs := a2aFile.Messages()
	for i := range msgs.Len() {
		out = append(out, title(string(msgs.Get(i).Name())))
	}
	for _, md := range wellKnown {
		out = append(out, string(md.Name()))
	}
	slices.Sort(out)
	return out
}

// descriptor finds the message a definition names: its words run
// together are the message's name ("Agent Card" → lf.a2a.v1.AgentCard,
// "Authorization CodeO Auth Flow" as the schema bundle spells it →
// lf.a2a.v1.AuthorizationCodeOAuthFlow).
func descriptor(definition string) (protoreflect.MessageDescriptor, error) {
	name := protoreflect.Name(strings.ReplaceAll(definition, " ", ""))
	if md := a2aFile.Messages().ByName(name); md != nil {
		return md, nil
	}
	for _, md := range wellKnown {
		if md.Name() == name {
			return md, nil
		}
	}
	return nil, fmt.Errorf("a2atest: no definition %q in lf.a2a.v1 (have: %s)", definition, strings.Join(Definitions(), ", "))
}

// CheckJSON validates data as the A2A v1.0 message a definition names
// ("Task", "Message", "Stream Response", "Send Message Response", "List
// Tasks Response", "Agent Card", "Task Push Notification Config", "List
// Task Push Notification Configs Response", …) and returns every problem
// found, or nil.
func CheckJSON(definition string, data []byte) error {
	md, err := descriptor(definition)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if probs := problems(md, v, ""); len(probs) > 0 {
		return fmt.Errorf("does not validate against %q (%s): %s", definition, md.FullName(), strings.Join(probs, "; "))
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		return fmt.Errorf("a2atest: %s is not registered: %w", md.FullName(), err)
	}
	msg := mt.New().Interface()
	if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(data, msg); err != nil {
		return fmt.Errorf("does not validate against %q (%s): %w", definition, md.FullName(), err)
	}
	return nil
}

// ValidateJSON fails the test (without stopping it) unless data passes
// CheckJSON for definition.
func ValidateJSON(t testing.TB, definition string, data []byte) {
	t.Helper()
	if err := CheckJSON(definition, data); err != nil {
		t.Errorf("a2atest: %s: %v\n%s", definition, err, truncate(data))
	}
}

// isRequired reports whether the proto annotates a field
// google.api.field_behavior = REQUIRED.
func isRequired(fd protoreflect.FieldDescriptor) bool {
	bs, _ := proto.GetExtension(fd.Options(), annotations.E_FieldBehavior).([]annotations.FieldBehavior)
	return slices.Contains(bs, annotations.FieldBehavior_REQUIRED)
}

// stdBase64 is what the specification's schema allows for bytes: standard
// base64 (protojson also accepts the URL-safe alphabet).
var stdBase64 = regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)

// problems walks the decoded JSON value v of message md, listing what a
// strict protojson decode lets through. Well-known types (Struct, Value,
// Timestamp: user content or checked by protojson) are not looked into.
func problems(md protoreflect.MessageDescriptor, v any, path string) []string {
	if md.ParentFile().Package() == "google.protobuf" {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: %s must be a JSON object, not %s", orRoot(path), md.Name(), jsonType(v))}
	}
	var out []string
	seen := map[protoreflect.FullName]bool{}
	fields := md.Fields()
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		p := path + "." + k
		fd := fields.ByJSONName(k)
		if fd == nil {
			if fd = fields.ByName(protoreflect.Name(k)); fd != nil {
				out = append(out, fmt.Sprintf("%s: snake_case key (emit camelCase %q)", p, fd.JSONName()))
			}
		}
		switch {
		case fd == nil && k == "kind":
			out = append(out, fmt.Sprintf("%s: `kind` is a 0.3 key, never emitted in v1.0", p))
			continue
		case fd == nil:
			out = append(out, fmt.Sprintf("%s: unknown key (%s has no such field)", p, md.FullName()))
			continue
		}
		seen[fd.FullName()] = true
		if obj[k] == nil && !isValue(fd) {
			out = append(out, fmt.Sprintf("%s: null (omit the key instead)", p))
			continue
		}
		out = append(out, fieldProblems(fd, obj[k], p)...)
	}
	for i := range fields.Len() {
		// A required list or map may be left out: proto3 JSON cannot tell
		// an omitted list from an empty one, and protojson encoders (the
		// SDKs') omit empty ones. Every other required field must be there.
		fd := fields.Get(i)
		if isRequired(fd) && !fd.IsList() && !fd.IsMap() && !seen[fd.FullName()] {
			out = append(out, fmt.Sprintf("%s: required field %q is missing", orRoot(path), fd.JSONName()))
		}
	}
	oneofs := md.Oneofs()
	for i := range oneofs.Len() {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		var set []string
		for j := range od.Fields().Len() {
			if f := od.Fields().Get(j); seen[f.FullName()] {
				set = append(set, f.JSONName())
			}
		}
		if len(set) != 1 {
			out = append(out, fmt.Sprintf("%s: oneof %s must have exactly one of its members, has %d %v", orRoot(path), od.Name(), len(set), set))
		}
	}
	return out
}

// fieldProblems checks the JSON value v of field fd: lists and maps
// element by element, messages recursively, enums as names, bytes as
// standard base64.
func fieldProblems(fd protoreflect.FieldDescriptor, v any, path string) []string {
	switch {
	case fd.IsList():
		list, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: must be an array, not %s", path, jsonType(v))}
		}
		var out []string
		for i, e := range list {
			out = append(out, valueProblems(fd, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case fd.IsMap():
		m, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: must be an object, not %s", path, jsonType(v))}
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			// The keys are names the card's author chose.
			out = append(out, valueProblems(fd.MapValue(), m[k], path+"."+k)...)
		}
		return out
	}
	return valueProblems(fd, v, path)
}

// valueProblems checks one value (an element of a list or map, or a
// singular field's) of fd's kind.
func valueProblems(fd protoreflect.FieldDescriptor, v any, path string) []string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if v == nil && !isValue(fd) {
			return []string{fmt.Sprintf("%s: null (omit it instead)", path)}
		}
		return problems(fd.Message(), v, path)
	case protoreflect.EnumKind:
		if _, ok := v.(string); !ok {
			return []string{fmt.Sprintf("%s: enum must be emitted as its name string (%s), not %s", path, fd.Enum().FullName(), jsonType(v))}
		}
	case protoreflect.BytesKind:
		if s, ok := v.(string); ok && !stdBase64.MatchString(s) {
			return []string{fmt.Sprintf("%s: bytes must be standard base64 (A-Z a-z 0-9 + /, = padding)", path)}
		}
	}
	return nil
}

// isValue reports whether a field holds a google.protobuf.Value, the
// one message JSON null is a value of.
func isValue(fd protoreflect.FieldDescriptor) bool {
	return fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value"
}

func orRoot(path string) string {
	if path == "" {
		return "(document)"
	}
	return path
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// CheckJSONRPCResponse checks a JSON-RPC response envelope as A2A v1.0
// wants it — an object with exactly jsonrpc "2.0", an id (string, number
// or null) and exactly one of result and error; an error with only code
// (integer), message (string) and data (an array of objects with "@type",
// including a google.rpc.ErrorInfo of domain a2a-protocol.org) — and,
// when definition is not "", validates the result with CheckJSON. It
// returns the raw result (nil for an error response).
func CheckJSONRPCResponse(data []byte, definition string) (json.RawMessage, error) {
	return checkResponse(data, definition, checkErrorObject)
}

// CheckJSONRPCResponseV03 is CheckJSONRPCResponse for an answer to a 0.3
// method: an error's data is one object (the shape 0.3 clients decode)
// naming the ErrorInfo reason and domain a2a-protocol.org, not the v1.0
// array. Results are not checked against a schema.
func CheckJSONRPCResponseV03(data []byte) (json.RawMessage, error) {
	return checkResponse(data, "", checkErrorObjectV03)
}

// ValidateJSONRPCResponseV03 fails the test (without stopping it) unless
// data passes CheckJSONRPCResponseV03; it returns the raw result.
func ValidateJSONRPCResponseV03(t testing.TB, data []byte) json.RawMessage {
	t.Helper()
	res, err := CheckJSONRPCResponseV03(data)
	if err != nil {
		t.Errorf("a2atest: 0.3 JSON-RPC response: %v\n%s", err, truncate(data))
	}
	return res
}

func checkResponse(data []byte, definition string, checkError func(json.RawMessage) error) (json.RawMessage, error) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("response is not a JSON object: %w", err)
	}
	for k := range env {
		switch k {
		case "jsonrpc", "id", "result", "error":
		default:
			return nil, fmt.Errorf("response has unexpected member %q", k)
		}
	}
	if string(env["jsonrpc"]) != `"2.0"` {
		return nil, fmt.Errorf("jsonrpc is %s, want \"2.0\"", env["jsonrpc"])
	}
	id, ok := env["id"]
	if !ok {
		return nil, errors.New("response has no id")
	}
	if c := id[0]; !(c == '"' || c == '-' || (c >= '0' && c <= '9') || string(id) == "null") {
		return nil, fmt.Errorf("id %s is not a string, number or null", id)
	}
	res, hasResult := env["result"]
	errObj, hasError := env["error"]
	if hasResult == hasError {
		return nil, errors.New("response must have exactly one of result and error")
	}
	if hasError {
		return nil, checkError(errObj)
	}
	if definition != "" {
		if err := CheckJSON(definition, res); err != nil {
			return res, fmt.Errorf("result: %w", err)
		}
	}
	return res, nil
}

// checkErrorObjectV03 checks a JSON-RPC error object in the 0.3 shape:
// data is an object with the ErrorInfo reason and domain as members.
func checkErrorObjectV03(raw json.RawMessage) error {
	var e struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("error is not a 0.3 error object: %w", err)
	}
	if e.Code == nil || e.Message == nil {
		return errors.New("error lacks code or message")
	}
	var d map[string]any
	if err := json.Unmarshal(e.Data, &d); err != nil || d == nil {
		return fmt.Errorf("error.data is not an object, as 0.3 clients decode it: %s", truncate(e.Data))
	}
	if r, _ := d["reason"].(string); r == "" || d["domain"] != "a2a-protocol.org" {
		return fmt.Errorf("error.data names no reason of domain a2a-protocol.org: %s", truncate(e.Data))
	}
	return nil
}

// checkErrorObject checks a JSON-RPC error object in the v1.0 shape.
func checkErrorObject(raw json.RawMessage) error {
	var e map[string]json.RawMessage
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("error is not an object: %w", err)
	}
	for k := range e {
		if k != "code" && k != "message" && k != "data" {
			return fmt.Errorf("error has unexpected member %q (only code, message, data)", k)
		}
	}
	var code json.Number
	if err := json.Unmarshal(e["code"], &code); err != nil || strings.ContainsAny(string(code), ".eE") {
		return fmt.Errorf("error.code %s is not an integer", e["code"])
	}
	var msg string
	if err := json.Unmarshal(e["message"], &msg); err != nil {
		return fmt.Errorf("error.message %s is not a string", e["message"])
	}
	data, ok := e["data"]
	if !ok {
		return errors.New("error has no data: A2A errors carry [google.rpc.ErrorInfo]")
	}
	var items []map[string]any
	if err := json.Unmarshal(data, &items); err != nil {
		return fmt.Errorf("error.data is not an array of objects: %s", truncate(data))
	}
	haveInfo := false
	for i, it := range items {
		typ, _ := it["@type"].(string)
		if typ == "" {
			return fmt.Errorf("error.data[%d] has no @type", i)
		}
		if strings.HasSuffix(typ, "/google.rpc.ErrorInfo") {
			haveInfo = true
			if it["domain"] != "a2a-protocol.org" {
				return fmt.Errorf("error.data[%d] ErrorInfo domain is %v, want a2a-protocol.org", i, it["domain"])
			}
			if r, _ := it["reason"].(string); r == "" {
				return fmt.Errorf("error.data[%d] ErrorInfo has no reason", i)
			}
			if md, ok := it["metadata"]; ok {
				m, ok := md.(map[string]any)
				if !ok {
					return fmt.Errorf("error.data[%d] ErrorInfo metadata is not an object", i)
				}
				for k, v := range m {
					if !isString(v) {
						return fmt.Errorf("error.data[%d] ErrorInfo metadata %q is not a string", i, k)
					}
				}
			}
		}
	}
	if !haveInfo {
		return errors.New("error.data has no google.rpc.ErrorInfo")
	}
	return nil
}

// ValidateJSONRPCResponse fails the test (without stopping it) unless
// data is a well-formed A2A JSON-RPC response (see CheckJSONRPCResponse)
// whose result, when definition is not "", validates against definition.
// It returns the raw result, nil for an error response.
func ValidateJSONRPCResponse(t testing.TB, data []byte, definition string) json.RawMessage {
	t.Helper()
	res, err := CheckJSONRPCResponse(data, definition)
	if err != nil {
		t.Errorf("a2atest: JSON-RPC response: %v\n%s", err, truncate(data))
	}
	return res
}

// ValidateSSE fails the test unless body is an SSE stream whose every
// event's data is a well-formed JSON-RPC response, each result validating
// against definition (usually "Stream Response"). It returns the raw
// results (error events excluded).
func ValidateSSE(t testing.TB, body []byte, definition string) []json.RawMessage {
	t.Helper()
	return validateSSE(t, body, func(data []byte) json.RawMessage { return ValidateJSONRPCResponse(t, data, definition) })
}

// ValidateSSEV03 is ValidateSSE for the stream of a 0.3 method: each
// event passes ValidateJSONRPCResponseV03.
func ValidateSSEV03(t testing.TB, body []byte) []json.RawMessage {
	t.Helper()
	return validateSSE(t, body, func(data []byte) json.RawMessage { return ValidateJSONRPCResponseV03(t, data) })
}

func validateSSE(t testing.TB, body []byte, validate func([]byte) json.RawMessage) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	text := strings.ReplaceAll(string(body), "\r\n", "\n")
	for _, block := range strings.Split(text, "\n\n") {
		var data []string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if len(data) == 0 {
			continue
		}
		res := validate([]byte(strings.Join(data, "\n")))
		if res != nil {
			out = append(out, res)
		}
	}
	return out
}

func truncate(b []byte) string {
	const max = 2000
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// uuidRE matches the UUIDs servers and tests generate.
var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// chainRE matches the delegation chain ids the plugin makes for tasks that
// start a tree (security.NewChainID).
var chainRE = regexp.MustCompile(`chain-[a-z2-7]{26}`)

// ReplaceIDs replaces every UUID in s with "<id>", for comparing messages
// that name different ids.
func ReplaceIDs(s string) string { return uuidRE.ReplaceAllString(s, "<id>") }

// Normalize rewrites a JSON document so that two runs of one scenario (in
// two bindings, say) can be compared: every UUID becomes <id1>, <id2>, …
// in order of first appearance, walking objects in key order (so the same
// id stays the same placeholder), and every new delegation chain id
// <chain1>, <chain2>, … likewise; timestamps ("timestamp",
// "statusTimestampAfter") become <ts>, non-empty page tokens <token>;
// keys come out sorted.
func Normalize(t testing.TB, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("normalize: %v\n%s", err, raw)
	}
	ids, chains := map[string]string{}, map[string]string{}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				switch tok, _ := x[k].(string); {
				case k == "timestamp" || k == "statusTimestampAfter":
					x[k] = "<ts>"
				case k == "nextPageToken" && tok != "":
					x[k] = "<token>" // opaque
				default:
					x[k] = walk(x[k])
				}
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
			return x
		case string:
			x = chainRE.ReplaceAllStringFunc(x, func(id string) string {
				if p, ok := chains[id]; ok {
					return p
				}
				p := fmt.Sprintf("<chain%d>", len(chains)+1)
				chains[id] = p
				return p
			})
			return uuidRE.ReplaceAllStringFunc(x, func(id string) string {
				if p, ok := ids[id]; ok {
					return p
				}
				p := fmt.Sprintf("<id%d>", len(ids)+1)
				ids[id] = p
				return p
			})
		}
		return v
	}
	// encoding/json sorts map keys, so the output is canonical.
	b, err := json.Marshal(walk(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
