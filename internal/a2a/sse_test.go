package a2a

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r *SSEReader) ([]string, []string, error) {
	t.Helper()
	var data, events []string
	for {
		d, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return data, events, nil
			}
			return data, events, err
		}
		data = append(data, string(d))
		events = append(events, r.Event())
	}
}

func TestSSEReaderReadsEvents(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		data   []string
		events []string
	}{
		{"single events", "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n", []string{`{"a":1}`, `{"b":2}`}, []string{"", ""}},
		{"comments and pings ignored", ": ping\n\n: hello\ndata: x\n: mid\n\n:ping\n\n", []string{"x"}, []string{""}},
		{"multi-line data joined", "data: line1\ndata: line2\ndata:line3\n\n", []string{"line1\nline2\nline3"}, []string{""}},
		{"event, id and retry fields", "event: error\nid: 7\nretry: 100\ndata: boom\n\ndata: ok\n\n", []string{"boom", "ok"}, []string{"error", ""}},
		{"CRLF line endings", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}, []string{"", ""}},
		{"CR line endings", "data: a\r\rdata: b\r\r", []string{"a", "b"}, []string{"", ""}},
		{"last event without blank line", "data: a\n\ndata: b", []string{"a", "b"}, []string{"", ""}},
		{"empty data field", "data:\n\n", []string{""}, []string{""}},
		{"field without colon", "data\n\ndata: x\n\n", []string{"", "x"}, []string{"", ""}},
		{"only one leading space stripped", "data:  two\n\n", []string{" two"}, []string{""}},
		{"unknown fields and blank lines", "\n\nfoo: bar\n\ndata: x\n\n\n", []string{"x"}, []string{""}},
		{"nothing", "", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader} {
				data, events, err := readAll(t, NewSSEReader(wrap(strings.NewReader(c.in)), 0))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(data, "|") != strings.Join(c.data, "|") || len(data) != len(c.data) || strings.Join(events, "|") != strings.Join(c.events, "|") {
					t.Errorf("data %q events %q, want %q %q", data, events, c.data, c.events)
				}
			}
		})
	}
}

func TestSSEReaderEnforcesTheMaximumEventSize(t *testing.T) {
	in := "data: " + strings.Repeat("x", 100) + "\ndata: " + strings.Repeat("y", 100) + "\n\n"
	r := NewSSEReader(strings.NewReader(in), 150)
	if _, err := r.Next(); !errors.Is(err, ErrSSEEventTooLarge) {
		t.Fatalf("err = %v", err)
	}
	if _, err := r.Next(); !errors.Is(err, ErrSSEEventTooLarge) {
		t.Fatalf("error not sticky: %v", err)
	}
	long := "data: " + strings.Repeat("z", 100_000) + "\n\n"
	if _, err := NewSSEReader(strings.NewReader(long), 1000).Next(); !errors.Is(err, ErrSSEEventTooLarge) {
		t.Fatalf("long line: err = %v", err)
	}
	d, err := NewSSEReader(strings.NewReader(long), 200_000).Next()
	if err != nil || len(d) != 100_000 {
		t.Fatalf("long line within limit: %d bytes, %v", len(d), err)
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	if d, err := r.Next(); err != nil || string(d) != "a" {
		t.Fatalf("first: %q %v", d, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

func TestWriteSSEEventRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	payloads := []string{`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}`, "two\nlines", "cr\r\nlf", ""}
	for _, p := range payloads {
		if err := WriteSSEEvent(&buf, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(buf.String(), "data: {\"jsonrpc\"") || !strings.Contains(buf.String(), "}}}\n\ndata: two\ndata: lines\n\n") {
		t.Errorf("framing: %q", buf.String())
	}
	data, _, err := readAll(t, NewSSEReader(&buf, 0))
	want := []string{payloads[0], "two\nlines", "cr\nlf", ""}
	if err != nil || strings.Join(data, "|") != strings.Join(want, "|") {
		t.Errorf("read back %q, %v", data, err)
	}
}
