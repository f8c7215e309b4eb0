// Package jsonenc holds what the hand-written JSON encoders of internal/a2a
// (answers, stream events) and internal/security (audit records) share: a
// string written exactly as encoding/json writes it with HTML escaping
// off, so that their output stays byte for byte that of encoding/json
// (their tests and fuzz targets compare the two).
package jsonenc

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string the way encoding/json does with
// HTML escaping off: '"', '\\' and control characters escaped (\b, \f,
// \n, \r, \t by name, the others as \u00XX), invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 escaped (JavaScript reads them as line ends).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
