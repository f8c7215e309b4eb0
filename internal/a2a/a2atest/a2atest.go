// Package a2atest checks, in tests, that JSON emitted by this project is
// valid A2A v1.0: it validates documents against the v1.0.1 JSON Schema
// bundle (shared/spec/a2a-v1.0.1.schema.json, found next to the
// repository) and checks the JSON-RPC envelope and the strict-output rules
// the schema does not express (camelCase keys, no 0.3 `kind`, enums as
// names).
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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaEnv names an environment variable that, when set, overrides the
// location of the schema bundle.
const SchemaEnv = "A2A_SCHEMA_PATH"

// schemaBase is the base URL the bundle's definitions are registered
// under; the bundle's $refs ("lf.a2a.v1.Task.jsonschema.json") resolve
// against it.
const schemaBase = "https://a2a-schema.invalid/"

// schemaSet is the compiled bundle, loaded once per test binary.
type schemaSet struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	names    []string
	compiled map[string]*jsonschema.Schema
}

var (
	loadOnce sync.Once
	loaded   *schemaSet
	loadErr  error
)

// SchemaPath returns the path of the schema bundle: $A2A_SCHEMA_PATH if
// set, else ../shared/spec/a2a-v1.0.1.schema.json relative to the
// directory holding go.mod, found by walking up from the working
// directory.
func SchemaPath() (string, error) {
	if p := os.Getenv(SchemaEnv); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "spec", "a2a-v1.0.1.schema.json"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("a2atest: no go.mod above the working directory; set " + SchemaEnv)
		}
		dir = parent
	}
}

// refName is the file name under which the bundle's $refs name a
// definition: "Agent Card" → "lf.a2a.v1.AgentCard.jsonschema.json",
// "Struct" → "google.protobuf.Struct.jsonschema.json".
func refName(title string) string {
	switch title {
	case "Struct", "Timestamp", "Value":
		return "google.protobuf." + title + ".jsonschema.json"
	}
	return "lf.a2a.v1." + strings.ReplaceAll(title, " ", "") + ".jsonschema.json"
}

func load() (*schemaSet, error) {
	loadOnce.Do(func() {
		path, err := SchemaPath()
		if err != nil {
			loadErr = err
			return
		}
		f, err := os.Open(path)
		if err != nil {
			loadErr = fmt.Errorf("a2atest: open schema bundle: %w", err)
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			loadErr = fmt.Errorf("a2atest: parse schema bundle %s: %w", path, err)
			return
		}
		root, _ := doc.(map[string]any)
		defs, _ := root["definitions"].(map[string]any)
		if len(defs) == 0 {
			loadErr = fmt.Errorf("a2atest: schema bundle %s has no definitions", path)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		set := &schemaSet{compiler: c, compiled: make(map[string]*jsonschema.Schema)}
		for name, def := range defs {
			if err := c.AddResource(schemaBase+refName(name), def); err != nil {
				loadErr = fmt.Errorf("a2atest: add definition %q: %w", name, err)
				return
			}
			set.names = append(set.names, name)
		}
		sort.Strings(set.names)
		loaded = set
	})
	return loaded, loadErr
}

// Definitions lists the definition names of the bundle ("Task", "Agent
// Card", "Stream Response", …).
func Definitions() ([]string, error) {
	s, err := load()
	if err != nil {
		return nil, err
	}
	return append([]string(nil), s.names...), nil
}

// schema returns the compiled schema of a definition.
func schema(definition string) (*jsonschema.Schema, error) {
	s, err := load()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[definition]; ok {
		return sch, nil
	}
	known := false
	for _, n := range s.names {
		known = known || n == definition
	}
	if !known {
		return nil, fmt.Errorf("a2atest: no definition %q in the schema bundle (have: %s)", definition, strings.Join(s.names, ", "))
	}
	sch, err := s.compiler.Compile(schemaBase + refName(definition))
	if err != nil {
		return nil, fmt.Errorf("a2atest: compile %q: %w", definition, err)
	}
	s.compiled[definition] = sch
	return sch, nil
}

// CheckJSON validates data against a definition of the bundle and the
// strict-output rules, returning the first problem found or nil.
func CheckJSON(definition string, data []byte) error {
	sch, err := schema(definition)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("does not validate against %q: %w", definition, err)
	}
	if probs := strictProblems(v, "", false); len(probs) > 0 {
		return fmt.Errorf("breaks strict v1.0 output rules: %s", strings.Join(probs, "; "))
	}
	return nil
}

// ValidateJSON fails the test (without stopping it) unless data is valid
// against the bundle definition named definition ("Task", "Message",
// "Stream Response", "Send Message Response", "List Tasks Response",
// "Agent Card", "Task Push Notification Config", "List Task Push
// Notification Configs Response", …) and follows the strict-output rules:
// no snake_case or `kind` keys outside user content, enums as names.
func ValidateJSON(t testing.TB, definition string, data []byte) {
	t.Helper()
	if err := CheckJSON(definition, data); err != nil {
		t.Errorf("a2atest: %s: %v\n%s", definition, err, truncate(data))
	}
}

// opaqueKeys hold user content, which the strict rules do not look into;
// nameKeys hold maps whose keys are user-chosen names.
var (
	opaqueKeys = map[string]bool{"metadata": true, "data": true, "params": true, "header": true}
	nameKeys   = map[string]bool{"securitySchemes": true, "schemes": true, "scopes": true}
)

// strictProblems lists the strict-output violations in v. names says the
// keys of the object v are user-chosen names.
func strictProblems(v any, path string, names bool) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := path + "." + k
			if names {
				out = append(out, strictProblems(x[k], p, false)...)
				continue
			}
			if strings.Contains(k, "_") {
				out = append(out, fmt.Sprintf("%s: snake_case key (emit camelCase)", p))
			}
			if k == "kind" {
				out = append(out, fmt.Sprintf("%s: `kind` is a 0.3 key, never emitted in v1.0", p))
			}
			if (k == "state" || k == "role") && !isString(x[k]) {
				out = append(out, fmt.Sprintf("%s: enum must be emitted as its name string", p))
			}
			if opaqueKeys[k] {
				continue
			}
			out = append(out, strictProblems(x[k], p, nameKeys[k])...)
		}
	case []any:
		for i, e := range x {
			out = append(out, strictProblems(e, fmt.Sprintf("%s[%d]", path, i), false)...)
		}
	}
	return out
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
