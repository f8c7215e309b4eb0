package testharness

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
)

// templateVar matches {{name}} with optional inner spaces.
var templateVar = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\}\}`)

// Template variables known in action texts; metadata.<key> is accepted too.
var messageVars = []string{
	"text", "framed_text", "parts_text", "task_id", "chat_id", "sender", "turn", "turn_id", "message_id",
	"platform", "result",
}

// Template variables known in completion replies.
var completionVars = []string{"prompt", "system"}

// checkTemplate reports the first unknown variable in s. vars nil means
// the message variables (with metadata.<key>).
func checkTemplate(s string, vars []string) error {
	allowMetadata := vars == nil
	if vars == nil {
		vars = messageVars
	}
	for _, m := range templateVar.FindAllStringSubmatch(s, -1) {
		name := m[1]
		if allowMetadata && strings.HasPrefix(name, "metadata.") {
			continue
		}
		ok := false
		for _, v := range vars {
			if v == name {
				ok = true
			}
		}
		if !ok {
			extra := ""
			if allowMetadata {
				extra = ", metadata.<key>"
			}
			return fmt.Errorf("unknown template variable {{%s}} (known: %s%s)", name, strings.Join(vars, ", "), extra)
		}
	}
	return nil
}

// expandTemplate replaces {{name}} with lookup(name); names lookup does not
// know are left as they are.
func expandTemplate(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return templateVar.ReplaceAllStringFunc(s, func(m string) string {
		name := templateVar.FindStringSubmatch(m)[1]
		if v, ok := lookup(name); ok {
			return v
		}
		return m
	})
}

// expandAny returns a copy of a JSON-able value with every string templated.
func expandAny(v any, expand func(string) string) any {
	switch x := v.(type) {
	case string:
		return expand(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[expand(k)] = expandAny(e, expand)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandAny(e, expand)
		}
		return out
	default:
		return v
	}
}

// metadataLookup finds a dotted path in a Struct and renders it as a string:
// strings as they are, anything else as JSON.
func metadataLookup(md *structpb.Struct, path string) (string, bool) {
	if md == nil {
		return "", false
	}
	var cur any = md.AsMap()
	for _, key := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur, ok = m[key]
		if !ok {
			return "", false
		}
	}
	if s, ok := cur.(string); ok {
		return s, true
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return "", false
	}
	return string(b), true
}
