package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// decodeArgs decodes a tool's JSON arguments into dst (a pointer to a
// struct with json tags). The error names the bad argument and says how to
// fix it: unknown arguments list the allowed ones, type errors name the
// expected type.
func decodeArgs(tool string, raw []byte, dst any, allowed ...string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("%s: the arguments must be a JSON object (%v)", tool, err)
	}
	var unknown []string
	for k := range keys {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%s: unknown argument(s) %s; allowed: %s", tool, quoteAll(unknown), strings.Join(allowed, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if i := strings.IndexByte(field, '.'); i >= 0 {
				field = field[:i]
			}
			return fmt.Errorf("%s: argument %q must be %s, not %s", tool, field, jsonTypeName(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf("%s: could not read the arguments: %v", tool, err)
	}
	return nil
}

// jsonTypeName names a Go kind the way a model thinks of JSON types.
func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean (true or false)"
	case "float64", "float32", "int", "int64", "int32":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "of another type"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
