package a2a

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Unmarshal is the lenient A2A decoder. It rewrites snake_case keys of
// protocol objects to the camelCase names the Go types carry (in one pass
// over the bytes, copying only when a key actually changes) and then
// decodes with encoding/json, whose per-type UnmarshalJSON methods in this
// package accept integer and 0.3 enums, 0.3 part shapes and legacy
// fields. Unknown fields are ignored and `null` means unset.
//
// Keys inside user content — `metadata`, `data`, `params`, `header` — and
// the names in `securitySchemes`, `schemes`, `scopes` and 0.3 `security`
// are kept exactly as sent.
func Unmarshal(data []byte, v any) error {
	return json.Unmarshal(normalizeKeys(data), v)
}

// Marshal is the strict A2A encoder: camelCase keys, enum names, proto3
// defaults omitted, timestamps in UTC with milliseconds. Unlike
// json.Marshal it does not escape <, > and & (they are legal in JSON and
// common in text parts), and it encodes a *Response without re-scanning the
// result.
func Marshal(v any) ([]byte, error) {
	switch r := v.(type) {
	case *Response:
		return r.appendJSON(nil)
	case Response:
		return r.appendJSON(nil)
	}
	return marshalPlain(v)
}

// encoder is a pooled json.Encoder writing into its own buffer, so that a
// call to marshalPlain costs one allocation for the result.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoderPool = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// fastRoom is the free capacity of dst above which appendPlain encodes
// the hand-encoded types (encode.go) straight into it.
const fastRoom = 1024

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// appendFastRoomy is appendFast for a dst of any capacity: with little
// room in dst (Marshal's nil), it encodes into a pooled scratch buffer and
// copies once, so that the result is allocated at its size.
func appendFastRoomy(dst []byte, v any) ([]byte, bool, error) {
	if cap(dst)-len(dst) >= fastRoom {
		out, ok, err := appendFast(dst, v)
		if err != nil {
			return dst, ok, err
		}
		return out, ok, nil
	}
	sp := scratchPool.Get().(*[]byte)
	out, ok, err := appendFast((*sp)[:0], v)
	if ok && err == nil {
		dst = append(dst, out...)
	}
	if cap(out) <= 1<<20 {
		*sp = out[:0]
		scratchPool.Put(sp)
	}
	return dst, ok, err
}

// appendPlain appends the JSON encoding of v (without HTML escaping) to dst.
func appendPlain(dst []byte, v any) ([]byte, error) {
	if out, ok, err := appendFastRoomy(dst, v); ok {
		return out, err
	}
	e := encoderPool.Get().(*encoder)
	e.buf.Reset()
	err := e.enc.Encode(v)
	if err == nil {
		b := e.buf.Bytes()
		// Encoder.Encode terminates every value with a newline.
		if n := len(b); n > 0 && b[n-1] == '\n' {
			b = b[:n-1]
		}
		dst = append(dst, b...)
	}
	if e.buf.Cap() <= 1<<20 {
		encoderPool.Put(e)
	}
	return dst, err
}

// marshalPlain is appendPlain into a fresh slice.
func marshalPlain(v any) ([]byte, error) {
	return appendPlain(nil, v)
}

// Key modes of the normaliser: how the keys of an object met in a given
// position are treated.
const (
	modeProtocol = iota // protocol object: snake_case keys become camelCase
	modeNames           // keys are user-chosen names (kept); values are protocol
	modeOpaque          // user content: copied verbatim, nothing rewritten
)

// maxNormalizeDepth bounds the normaliser's recursion. Deeper documents are
// passed through unchanged; encoding/json then rejects them by its own
// depth limit.
const maxNormalizeDepth = 512

// opaqueKeys hold user content whose keys must never be rewritten.
var opaqueKeys = map[string]bool{
	"metadata": true, // google.protobuf.Struct on most messages
	"data":     true, // Part.data (google.protobuf.Value), JSON-RPC error data
	"params":   true, // AgentExtension.params
	"header":   true, // AgentCardSignature.header
}

// nameKeys hold maps from user-chosen names to protocol values.
var nameKeys = map[string]bool{
	"securitySchemes": true, // name → SecurityScheme
	"schemes":         true, // SecurityRequirement: name → StringList
	"scopes":          true, // OAuth flow: scope → description
	"security":        true, // 0.3: [{name: [scopes]}]
}

// normalizeKeys returns data with every snake_case key of a protocol object
// rewritten to lowerCamelCase. It returns data itself when nothing needs
// rewriting (the common case: no underscore anywhere) and on malformed
// input, which encoding/json then reports.
func normalizeKeys(data []byte) []byte {
	if bytes.IndexByte(data, '_') < 0 {
		return data
	}
	n := normalizer{data: data}
	n.ws()
	if !n.value(modeProtocol, 0) {
		return data
	}
	if n.out == nil {
		return data
	}
	return append(n.out, data[n.last:]...)
}

// normalizer is the state of one normalizeKeys pass. out stays nil until
// the first rewrite (copy on write); last is the index in data up to which
// out holds a copy.
type normalizer struct {
	data []byte
	i    int
	out  []byte
	last int
}

func (n *normalizer) ws() {
	for n.i < len(n.data) {
		switch n.data[n.i] {
		case ' ', '\t', '\n', '\r':
			n.i++
		default:
			return
		}
	}
}

// value scans one JSON value starting at n.i in the given mode. It reports
// false on malformed input.
func (n *normalizer) value(mode, depth int) bool {
	if n.i >= len(n.data) {
		return false
	}
	switch c := n.data[n.i]; c {
	case '{':
		if mode == modeOpaque {
			return n.skipComposite()
		}
		if depth >= maxNormalizeDepth {
			return false
		}
		return n.object(mode, depth)
	case '[':
		if mode == modeOpaque {
			return n.skipComposite()
		}
		if depth >= maxNormalizeDepth {
			return false
		}
		return n.array(mode, depth)
	case '"':
		_, ok := n.str()
		return ok
	default:
		// number, true, false, null: run to the next delimiter.
		start := n.i
		for n.i < len(n.data) {
			switch n.data[n.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return n.i > start
			}
			n.i++
		}
		return n.i > start
	}
}

// str scans a JSON string starting at its opening quote, leaving n.i just
// past the closing quote. It reports whether the string contained an escape
// and, through ok, whether it was terminated.
func (n *normalizer) str() (hasEscape bool, ok bool) {
	n.i++ // opening quote
	for n.i < len(n.data) {
		switch n.data[n.i] {
		case '\\':
			hasEscape = true
			n.i += 2
		case '"':
			n.i++
			return hasEscape, true
		default:
			n.i++
		}
	}
	return hasEscape, false
}

func (n *normalizer) object(mode, depth int) bool {
	n.i++ // {
	n.ws()
	if n.i < len(n.data) && n.data[n.i] == '}' {
		n.i++
		return true
	}
	for {
		n.ws()
		if n.i >= len(n.data) || n.data[n.i] != '"' {
			return false
		}
		keyStart := n.i
		esc, ok := n.str()
		if !ok {
			return false
		}
		key := n.data[keyStart+1 : n.i-1]
		childMode := modeProtocol
		if mode == modeProtocol && !esc {
			if bytes.IndexByte(key, '_') >= 0 {
				if camel, changed := snakeToCamel(key); changed {
					if n.out == nil {
						n.out = make([]byte, 0, len(n.data))
					}
					n.out = append(n.out, n.data[n.last:keyStart+1]...)
					n.out = append(n.out, camel...)
					n.last = n.i - 1
					key = camel
				}
			}
			if opaqueKeys[string(key)] {
				childMode = modeOpaque
			} else if nameKeys[string(key)] {
				childMode = modeNames
			}
		}
		n.ws()
		if n.i >= len(n.data) || n.data[n.i] != ':' {
			return false
		}
		n.i++
		n.ws()
		if !n.value(childMode, depth+1) {
			return false
		}
		n.ws()
		if n.i >= len(n.data) {
			return false
		}
		switch n.data[n.i] {
		case ',':
			n.i++
		case '}':
			n.i++
			return true
		default:
			return false
		}
	}
}

func (n *normalizer) array(mode, depth int) bool {
	n.i++ // [
	n.ws()
	if n.i < len(n.data) && n.data[n.i] == ']' {
		n.i++
		return true
	}
	// Elements of a name-keyed array (0.3 `security`) are name-keyed
	// objects themselves; elements of a protocol array are protocol values.
	for {
		n.ws()
		if !n.value(mode, depth+1) {
			return false
		}
		n.ws()
		if n.i >= len(n.data) {
			return false
		}
		switch n.data[n.i] {
		case ',':
			n.i++
		case ']':
			n.i++
			return true
		default:
			return false
		}
	}
}

// skipComposite skips an object or array without recursion.
func (n *normalizer) skipComposite() bool {
	depth := 0
	for n.i < len(n.data) {
		switch n.data[n.i] {
		case '{', '[':
			depth++
			n.i++
		case '}', ']':
			depth--
			n.i++
			if depth == 0 {
				return true
			}
		case '"':
			if _, ok := n.str(); !ok {
				return false
			}
		default:
			n.i++
		}
	}
	return false
}

// snakeToCamel converts a snake_case key to lowerCamelCase: each underscore
// followed by a lowercase ASCII letter or digit is dropped and the letter
// upper-cased. Keys starting or ending with an underscore, or with doubled
// underscores, are not protocol keys and are left alone.
func snakeToCamel(key []byte) ([]byte, bool) {
	if len(key) == 0 || key[0] == '_' || key[len(key)-1] == '_' {
		return key, false
	}
	out := make([]byte, 0, len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c != '_' {
			out = append(out, c)
			continue
		}
		next := key[i+1]
		switch {
		case next >= 'a' && next <= 'z':
			out = append(out, next-'a'+'A')
			i++
		case next >= '0' && next <= '9':
			out = append(out, next)
			i++
		default:
			return key, false
		}
	}
	return out, true
}
