package a2a

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// flexInt32 is an int32 that ProtoJSON allows as a number or a numeric
// string on input.
type flexInt32 int32

// UnmarshalJSON accepts 10, 10.0 and "10"; it rejects fractions and values
// outside int32.
func (f *flexInt32) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		s = string(b[1 : len(b)-1])
	}
	if v, err := strconv.ParseInt(s, 10, 32); err == nil {
		*f = flexInt32(v)
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
		return typeError[flexInt32](fmt.Errorf("expected a 32-bit integer, got %s", truncateForError(b)))
	}
	*f = flexInt32(v)
	return nil
}

// ptr returns the value as *int32, nil when f is nil.
func (f *flexInt32) ptr() *int32 {
	if f == nil {
		return nil
	}
	v := int32(*f)
	return &v
}

// value returns the value, 0 when f is nil.
func (f *flexInt32) value() int32 {
	if f == nil {
		return 0
	}
	return int32(*f)
}

// jsonUnquote decodes the JSON string literal b into s.
func jsonUnquote(b []byte, s *string) error {
	return json.Unmarshal(b, s)
}

// Int32 returns a pointer to v, for the optional int32 fields
// (HistoryLength, PageSize).
func Int32(v int32) *int32 {
	return &v
}

// Bool returns a pointer to v, for the optional bool fields of
// AgentCapabilities.
func Bool(v bool) *bool {
	return &v
}

// typeError wraps a decoding error of a T value as a
// *json.UnmarshalTypeError, so that encoding/json records the path of the
// offending field in it; Value carries the explanation. nil stays nil.
func typeError[T any](err error) error {
	if err == nil {
		return nil
	}
	return &json.UnmarshalTypeError{Value: err.Error(), Type: reflect.TypeFor[T]()}
}
