package a2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Part is one piece of message or artifact content. Exactly one of Text,
// Raw, URL and Data is set; which one is the part's kind. MediaType,
// Filename and Metadata are allowed on every kind.
//
// Data holds any JSON value verbatim; a non-nil Data is a data part even
// when it holds the JSON literal null (google.protobuf.Value's null).
type Part struct {
	// Text is the content of a text part.
	Text *string `json:"text,omitempty"`
	// Raw is the inline content of a file part; base64 on the wire.
	Raw []byte `json:"raw,omitempty"`
	// URL points at the content of a file part.
	URL *string `json:"url,omitempty"`
	// Data is the structured content of a data part, any JSON value.
	Data json.RawMessage `json:"data,omitempty"`
	// MediaType is the MIME type of the content ("text/plain", "image/png").
	MediaType string `json:"mediaType,omitempty"`
	// Filename is an optional file name ("report.pdf").
	Filename string `json:"filename,omitempty"`
	// Metadata is free-form data attached to the part.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PartKind names which content field of a Part is set.
type PartKind int

// The kinds of a Part. PartInvalid means none or more than one content
// field is set.
const (
	PartInvalid PartKind = iota
	PartText
	PartRaw
	PartURL
	PartData
)

// String returns the JSON key of the kind ("text", "raw", "url", "data")
// or "invalid".
func (k PartKind) String() string {
	switch k {
	case PartText:
		return "text"
	case PartRaw:
		return "raw"
	case PartURL:
		return "url"
	case PartData:
		return "data"
	}
	return "invalid"
}

// TextPart returns a text part holding s.
func TextPart(s string) Part {
	return Part{Text: &s}
}

// DataPart returns a data part holding the JSON encoding of v with media
// type application/json. A json.RawMessage is used as it is. If v cannot
// be encoded the returned part has no content and fails Validate.
func DataPart(v any) Part {
	var raw json.RawMessage
	switch d := v.(type) {
	case json.RawMessage:
		raw = append(json.RawMessage(nil), d...)
	default:
		b, err := marshalPlain(v)
		if err != nil {
			return Part{MediaType: "application/json"}
		}
		raw = b
	}
	return Part{Data: raw, MediaType: "application/json"}
}

// FilePart returns a file part carrying data inline.
func FilePart(data []byte, mediaType, filename string) Part {
	if data == nil {
		data = []byte{}
	}
	return Part{Raw: data, MediaType: mediaType, Filename: filename}
}

// URLPart returns a file part that points at url.
func URLPart(url, mediaType, filename string) Part {
	return Part{URL: &url, MediaType: mediaType, Filename: filename}
}

// Kind reports which content field is set, or PartInvalid when none or
// several are.
func (p *Part) Kind() PartKind {
	kind, n := PartInvalid, 0
	if p.Text != nil {
		kind, n = PartText, n+1
	}
	if p.Raw != nil {
		kind, n = PartRaw, n+1
	}
	if p.URL != nil {
		kind, n = PartURL, n+1
	}
	if p.Data != nil {
		kind, n = PartData, n+1
	}
	if n != 1 {
		return PartInvalid
	}
	return kind
}

// TextValue returns the text of a text part, or "" for other kinds.
func (p *Part) TextValue() string {
	if p.Text == nil {
		return ""
	}
	return *p.Text
}

// URLValue returns the URL of a URL part, or "" for other kinds.
func (p *Part) URLValue() string {
	if p.URL == nil {
		return ""
	}
	return *p.URL
}

// partWire is the lenient input form of a Part: the v1.0 keys plus the 0.3
// `kind` and `file` shapes and a stray `mimeType`.
type partWire struct {
	Kind      string          `json:"kind"`
	Text      *string         `json:"text"`
	Raw       *string         `json:"raw"`
	URL       *string         `json:"url"`
	Data      json.RawMessage `json:"data"`
	MediaType string          `json:"mediaType"`
	MimeType  string          `json:"mimeType"`
	Filename  string          `json:"filename"`
	Metadata  map[string]any  `json:"metadata"`
	File      *fileWire03     `json:"file"`
}

// fileWire03 is the `file` object of a 0.3 FilePart.
type fileWire03 struct {
	Bytes     *string `json:"bytes"`
	URI       *string `json:"uri"`
	MimeType  string  `json:"mimeType"`
	MediaType string  `json:"mediaType"`
	Name      string  `json:"name"`
}

// UnmarshalJSON decodes a v1.0 part or a 0.3 text, file or data part.
// `raw` and 0.3 `file.bytes` accept standard and URL-safe base64, padded or
// not. `data: null` yields a data part holding null.
//
// Parts are decoded on every request, so the common shapes take a
// hand-written path (decodeFast); anything unusual — a 0.3 `file`, escaped
// keys, a type mismatch — goes through encoding/json (decodeSlow), which
// also produces the error messages.
func (p *Part) UnmarshalJSON(b []byte) error {
	if handled, err := p.decodeFast(b); handled {
		return err
	}
	return p.decodeSlow(b)
}

// decodeSlow decodes a part with encoding/json.
func (p *Part) decodeSlow(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var w partWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := Part{
		Text:      w.Text,
		URL:       w.URL,
		MediaType: w.MediaType,
		Filename:  w.Filename,
		Metadata:  w.Metadata,
	}
	if out.MediaType == "" {
		out.MediaType = w.MimeType
	}
	if w.Data != nil {
		out.Data = w.Data
	}
	if w.Raw != nil {
		raw, err := decodeBase64(*w.Raw)
		if err != nil {
			return typeError[Part](fmt.Errorf("raw: %w", err))
		}
		out.Raw = raw
	}
	if f := w.File; f != nil {
		if f.Bytes != nil {
			raw, err := decodeBase64(*f.Bytes)
			if err != nil {
				return typeError[Part](fmt.Errorf("file.bytes: %w", err))
			}
			out.Raw = raw
		}
		if f.URI != nil {
			out.URL = f.URI
		}
		if out.MediaType == "" {
			out.MediaType = f.MimeType
		}
		if out.MediaType == "" {
			out.MediaType = f.MediaType
		}
		if out.Filename == "" {
			out.Filename = f.Name
		}
	}
	*p = out
	return nil
}

// partKeys are the keys decodeFast understands; a key that matches one of
// them only case-insensitively (encoding/json would accept it) sends the
// part to decodeSlow.
var partKeys = [...]string{"text", "raw", "url", "data", "mediaType", "mimeType", "filename", "metadata", "kind", "file"}

// decodeFast decodes the common part shapes without reflection. It reports
// handled=false when b needs decodeSlow; it never reports an error that
// decodeSlow would not.
func (p *Part) decodeFast(b []byte) (handled bool, err error) {
	var out Part
	var mimeType string
	handled, err = objectMembers(b, func(key, val []byte) (bool, error) {
		isNull := string(val) == "null"
		switch string(key) {
		case "text", "url", "mediaType", "mimeType", "filename":
			if isNull {
				return true, nil
			}
			s, ok := plainString(val)
			if !ok {
				return false, nil
			}
			switch string(key) {
			case "text":
				out.Text = &s
			case "url":
				out.URL = &s
			case "mediaType":
				out.MediaType = s
			case "mimeType":
				mimeType = s
			default:
				out.Filename = s
			}
		case "raw":
			if isNull {
				out.Raw = nil
				return true, nil
			}
			if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 {
				return false, nil
			}
			raw, err := decodeBase64(string(val[1 : len(val)-1]))
			if err != nil {
				return true, typeError[Part](fmt.Errorf("raw: %w", err))
			}
			out.Raw = raw
		case "data":
			out.Data = append(json.RawMessage(nil), val...)
		case "metadata":
			if isNull {
				out.Metadata = nil
				return true, nil
			}
			if val[0] != '{' {
				return false, nil
			}
			var m map[string]any
			if json.Unmarshal(val, &m) != nil {
				return false, nil
			}
			out.Metadata = m
		case "kind":
		case "file":
			return isNull, nil
		default:
			return !foldsToAny(key, partKeys[:]), nil
		}
		return true, nil
	})
	if handled && err == nil {
		if out.MediaType == "" {
			out.MediaType = mimeType
		}
		*p = out
	}
	return handled, err
}

// decodeBase64 decodes standard or URL-safe base64, padded or not, and
// ignores line breaks (MIME-style wrapping).
func decodeBase64(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	if strings.ContainsAny(s, "\r\n") {
		s = strings.NewReplacer("\r", "", "\n", "").Replace(s)
	}
	enc := base64.StdEncoding
	urlSafe := false
	for i := 0; i < len(s); i++ {
		if s[i] == '-' || s[i] == '_' {
			urlSafe = true
			break
		}
	}
	padded := s[len(s)-1] == '='
	switch {
	case urlSafe && padded:
		enc = base64.URLEncoding
	case urlSafe:
		enc = base64.RawURLEncoding
	case !padded && len(s)%4 != 0:
		enc = base64.RawStdEncoding
	}
	out, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not valid base64 (standard or URL-safe alphabet expected): %v", err)
	}
	return out, nil
}
