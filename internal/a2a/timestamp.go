package a2a

import (
	"fmt"
	"time"
)

// timestampLayout is RFC 3339 in UTC with exactly three fractional digits,
// the form the v1.0 specification asks emitters to use.
const timestampLayout = "2006-01-02T15:04:05.000Z"

// Timestamp is a google.protobuf.Timestamp on the wire. It marshals as an
// RFC 3339 string in UTC with millisecond precision and a `Z` suffix
// ("2026-01-01T00:00:00.000Z") and parses any RFC 3339 string, converting
// offsets to UTC.
type Timestamp struct {
	time.Time
}

// Now returns the current time as a *Timestamp, truncated to milliseconds
// so that a value survives a round trip through JSON unchanged.
func Now() *Timestamp {
	return &Timestamp{Time: time.Now().UTC().Truncate(time.Millisecond)}
}

// NewTimestamp wraps t (converted to UTC) as a *Timestamp.
func NewTimestamp(t time.Time) *Timestamp {
	return &Timestamp{Time: t.UTC()}
}

// String returns the wire form of the timestamp.
func (t Timestamp) String() string {
	return string(appendTimestamp(make([]byte, 0, len(timestampLayout)), t.Time))
}

// MarshalText returns the wire form of the timestamp.
func (t Timestamp) MarshalText() ([]byte, error) {
	return appendTimestamp(make([]byte, 0, len(timestampLayout)), t.Time), nil
}

// MarshalJSON returns the wire form of the timestamp as a JSON string.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(timestampLayout)+2)
	b = append(b, '"')
	b = appendTimestamp(b, t.Time)
	return append(b, '"'), nil
}

// UnmarshalText parses an RFC 3339 timestamp with any precision and offset.
func (t *Timestamp) UnmarshalText(b []byte) error {
	v, err := ParseTimestamp(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// UnmarshalJSON parses an RFC 3339 timestamp string; `null` leaves t as it is.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return typeError[Timestamp](fmt.Errorf("timestamp must be an RFC 3339 string such as \"2026-01-01T00:00:00.000Z\", got %s", truncateForError(b)))
	}
	return typeError[Timestamp](t.UnmarshalText(b[1 : len(b)-1]))
}

// ParseTimestamp parses an RFC 3339 timestamp (any fractional precision,
// any offset) and returns it in UTC.
func ParseTimestamp(s string) (Timestamp, error) {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Timestamp{}, fmt.Errorf("timestamp %q is not RFC 3339: use a form such as \"2026-01-01T00:00:00.000Z\"", s)
	}
	return Timestamp{Time: v.UTC()}, nil
}

// truncateForError shortens b for inclusion in an error message.
func truncateForError(b []byte) string {
	const max = 64
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// appendTimestamp appends t in timestampLayout, as t.UTC().AppendFormat
// does, without interpreting the layout on every call (a stream's every
// status carries a timestamp). Years outside 0–9999 take AppendFormat.
func appendTimestamp(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, timestampLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}
