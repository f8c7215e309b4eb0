package a2a

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// The one JSON scanner of this project: the fast paths of part decoding
// (Part.UnmarshalJSON) and of the JSON-RPC envelope (ParseRequest) read
// well-formed, simple JSON with it and leave anything unusual to
// encoding/json, so their results and errors are exactly encoding/json's.

// foldsToAny reports whether encoding/json could match key to one of keys:
// a case-insensitive ASCII match, or any non-ASCII key (Unicode case
// folding maps, e.g., "ſ" to "s").
func foldsToAny(key []byte, keys []string) bool {
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	for _, k := range keys {
		if strings.EqualFold(k, string(key)) {
			return true
		}
	}
	return false
}

// objectMembers calls fn with the raw key (without quotes) and raw value
// of each member of the JSON object b, in order. fn returns ok=false to
// give up. handled is false when b is not an object of the simple form
// this scanner reads (then the caller uses encoding/json), or when fn gave
// up; an error from fn is returned with handled=true.
func objectMembers(b []byte, fn func(key, val []byte) (ok bool, err error)) (handled bool, err error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false, nil
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b), nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false, nil
		}
		end, ok := skipValue(b, i)
		if !ok {
			return false, nil
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false, nil
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return false, nil
		}
		i = skipWS(b, i+1)
		end, ok = skipValue(b, i)
		if !ok {
			return false, nil
		}
		ok, err := fn(key, b[i:end])
		if err != nil {
			return true, err
		}
		if !ok {
			return false, nil
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return false, nil
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return skipWS(b, i+1) == len(b), nil
		default:
			return false, nil
		}
	}
}

// plainString returns the value of a JSON string literal that has no
// escapes and is valid UTF-8 (so that encoding/json would yield the same
// bytes); ok is false otherwise.
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	inner := val[1 : len(val)-1]
	for _, c := range inner {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			if c >= 0x80 && bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) && noControl(inner) {
				return string(inner), true
			}
			return "", false
		}
	}
	return string(inner), true
}

func noControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return true
}

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the JSON value starting at i. It
// checks structure only loosely; callers fall back to encoding/json when
// it reports false, and encoding/json has validated the document before
// any UnmarshalJSON method runs.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return len(b), false
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			case '"':
				end, ok := skipValue(b, j)
				if !ok {
					return end, false
				}
				j = end - 1
			}
		}
		return len(b), false
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j, j > i
			}
			j++
		}
		return j, j > i
	}
}
