package a2a

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxSSEEventSize bounds one SSE event's data when NewSSEReader is
// given no limit.
const DefaultMaxSSEEventSize = 8 << 20

// ErrSSEEventTooLarge is returned by SSEReader.Next for an event whose data
// exceeds the reader's limit.
var ErrSSEEventTooLarge = errors.New("SSE event exceeds the maximum size")

// WriteSSEEvent writes one SSE event whose data is data: "data: <json>\n\n".
// The JSON this package emits is single-line; should data contain line
// breaks anyway, each line becomes its own `data:` field, which readers
// join back with "\n".
func WriteSSEEvent(w io.Writer, data []byte) error {
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		buf := make([]byte, 0, len(data)+8)
		buf = append(buf, "data: "...)
		buf = append(buf, data...)
		buf = append(buf, '\n', '\n')
		_, err := w.Write(buf)
		return err
	}
	var buf bytes.Buffer
	for _, line := range bytes.Split(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n")), []byte("\n")) {
		buf.WriteString("data: ")
		buf.Write(line)
		buf.WriteByte('\n')
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// SSEReader reads server-sent events. It returns the data of each event,
// joining multi-line `data:` fields with "\n", and skips comment lines
// (": ping"), `event:`, `id:` and `retry:` fields and events without data.
// Lines may end in LF, CRLF or CR.
type SSEReader struct {
	r     *bufio.Reader
	max   int
	data  []byte
	event string
	err   error
	queue [][]byte // lines split off a chunk with CR-only endings
	eof   bool
}

// NewSSEReader returns a reader of the events in r. maxEventSize bounds an
// event's data (and any single line); 0 means DefaultMaxSSEEventSize.
func NewSSEReader(r io.Reader, maxEventSize int) *SSEReader {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxSSEEventSize
	}
	return &SSEReader{r: bufio.NewReaderSize(r, 16<<10), max: maxEventSize}
}

// Event returns the `event:` name of the event last returned by Next
// ("" when it had none, which means "message").
func (s *SSEReader) Event() string { return s.event }

// Next returns the data of the next event. The returned slice is valid
// until the following call. At the end of the stream it returns io.EOF;
// an event cut off by the end of the stream (no blank line after it) is
// still returned, since some servers close without the final blank line.
func (s *SSEReader) Next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.data = s.data[:0]
	s.event = ""
	hasData := false
	var event string
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && hasData {
				s.err = io.EOF
				s.event = event
				return s.data, nil
			}
			s.err = err
			return nil, err
		}
		if len(line) == 0 {
			if hasData {
				s.event = event
				return s.data, nil
			}
			event = ""
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. a keep-alive ": ping"
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > s.max {
				s.err = fmt.Errorf("%w (%d bytes)", ErrSSEEventTooLarge, s.max)
				return nil, s.err
			}
			s.data = append(s.data, value...)
			hasData = true
		case "event":
			event = string(value)
		}
	}
}

// readLine returns the next line without its terminator, enforcing the
// size limit on lines. LF and CRLF endings are handled as lines are read;
// CR-only endings are split out of the LF-terminated chunk that holds
// them (so a CR-only stream is delivered when a LF, the buffer limit or
// EOF arrives).
func (s *SSEReader) readLine() ([]byte, error) {
	if len(s.queue) > 0 {
		l := s.queue[0]
		s.queue = s.queue[1:]
		return l, nil
	}
	if s.eof {
		return nil, io.EOF
	}
	var long []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > s.max+64 {
				return nil, fmt.Errorf("%w (%d bytes)", ErrSSEEventTooLarge, s.max)
			}
			long = append(long, chunk...)
			continue
		}
		if long != nil {
			long = append(long, chunk...)
			chunk = long
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			s.eof = true
			if len(chunk) == 0 {
				return nil, io.EOF
			}
		}
		if n := len(chunk); n > 0 && chunk[n-1] == '\n' {
			chunk = chunk[:n-1]
			if n := len(chunk); n > 0 && chunk[n-1] == '\r' {
				chunk = chunk[:n-1] // CRLF
			}
		}
		i := bytes.IndexByte(chunk, '\r')
		if i < 0 {
			return chunk, nil
		}
		// CR-only line endings inside the chunk.
		rest := append([]byte(nil), chunk[i+1:]...)
		if n := len(rest); n > 0 && rest[n-1] == '\r' && s.eof {
			rest = rest[:n-1] // a final CR ends the last line
		}
		if len(rest) > 0 || !s.eof {
			s.queue = bytes.Split(rest, []byte{'\r'})
		}
		return chunk[:i], nil
	}
}
