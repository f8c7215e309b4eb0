package server

import (
	"fmt"
	"mime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// maxIDLength bounds every id a client sends (message, context, task,
// reference task ids).
const maxIDLength = 256

// checkMessage applies the limits a2a's Validate does not know about: the
// number and size of parts, the media types the agent accepts (-32005) and
// well-formed ids. It runs before anything reaches the host.
func (s *service) checkMessage(m *a2a.Message) *a2a.Error {
	l := &s.opts.Limits
	if len(m.Parts) > l.MaxParts {
		return a2a.ErrInvalidParams("message.parts", fmt.Sprintf(
			"has %d parts; at most %d are accepted: merge text parts or send fewer files per message", len(m.Parts), l.MaxParts))
	}
	if e := checkID("message.messageId", m.MessageID); e != nil {
		return e
	}
	if e := checkID("message.contextId", m.ContextID); e != nil {
		return e
	}
	if e := checkID("message.taskId", m.TaskID); e != nil {
		return e
	}
	for i, id := range m.ReferenceTaskIDs {
		if e := checkID("message.referenceTaskIds["+strconv.Itoa(i)+"]", id); e != nil {
			return e
		}
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		size := 0
		switch {
		case p.Text != nil:
			size = len(*p.Text)
		case p.Raw != nil:
			size = len(p.Raw)
		case p.URL != nil:
			size = len(*p.URL)
		case p.Data != nil:
			size = len(p.Data)
		}
		if size > l.MaxPartBytes {
			return a2a.ErrInvalidParams(partField(i), fmt.Sprintf(
				"holds %d bytes; a part may hold at most %d: send large files by URL or split the content", size, l.MaxPartBytes))
		}
		mt := partMediaType(p)
		if !s.inputModes.accepts(mt) {
			field := partField(i)
			e := a2a.ErrContentTypeNotSupported(mt)
			e.Message = fmt.Sprintf("%s: media type %q is not accepted by this agent; send one of %s",
				field, mt, strings.Join(s.opts.Card.InputModes, ", "))
			return e.WithMetadata("field", field)
		}
	}
	return nil
}

// partField names part i of the message in an error; it is built only
// when one is answered (a string per part per request otherwise).
func partField(i int) string { return "message.parts[" + strconv.Itoa(i) + "]" }

// partMediaType is the media type a part declares, or the one its kind
// implies: text/plain for text, application/json for data,
// application/octet-stream for files.
func partMediaType(p *a2a.Part) string {
	if p.MediaType != "" {
		return p.MediaType
	}
	switch {
	case p.Text != nil:
		return "text/plain"
	case p.Data != nil:
		return "application/json"
	}
	return "application/octet-stream"
}

// checkID refuses ids with control characters, invalid UTF-8 (decoded by
// encoding/json into U+FFFD) or excessive length: ids end up in logs,
// headers and the host's session keys.
func checkID(field, id string) *a2a.Error {
	if id == "" {
		return nil
	}
	if len(id) > maxIDLength {
		return a2a.ErrInvalidParams(field, fmt.Sprintf("is %d bytes long; ids may be at most %d bytes (a UUID is 36)", len(id), maxIDLength))
	}
	for i, r := range id {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return a2a.ErrInvalidParams(field, fmt.Sprintf(
				"contains a control character or invalid UTF-8 at byte %d; use printable characters only (a UUID is best)", i))
		}
	}
	return nil
}

// mediaMatcher matches media types against the accepted input modes,
// which may contain wildcards ("image/*", "*/*").
type mediaMatcher struct {
	any    bool
	exact  map[string]bool
	prefix []string // "image/" for "image/*"
}

func newMediaMatcher(modes []string) (mediaMatcher, error) {
	m := mediaMatcher{exact: make(map[string]bool, len(modes))}
	for _, mode := range modes {
		mt, _, err := mime.ParseMediaType(mode)
		if err != nil {
			return m, fmt.Errorf("server: input mode %q is not a media type: %w", mode, err)
		}
		switch {
		case mt == "*/*" || mt == "*":
			m.any = true
		case strings.HasSuffix(mt, "/*"):
			m.prefix = append(m.prefix, strings.TrimSuffix(mt, "*"))
		default:
			m.exact[mt] = true
		}
	}
	return m, nil
}

// accepts reports whether media type mt (parameters allowed) is accepted.
func (m *mediaMatcher) accepts(mt string) bool {
	if m.any {
		return true
	}
	if m.exact[mt] {
		return true // the common case, without parsing
	}
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return false
	}
	if m.exact[base] {
		return true
	}
	for _, p := range m.prefix {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}
