// Package jsonenc holds what the hand-written JSON encoders of internal/a2a
// (answers, stream events) and internal/security (audit records) share: a
// string written exactly as encoding/json writes it with HTML escaping
// off, so that their output stays byte for byte that of encoding/json
// (their tests and fuzz targets compare the two).
package jsonenc

import (
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string the way encoding/json does with
// HTML escaping off: '"', '\\' and control characters escaped (\b, \f,
// \n, \r, \t by name, the others as \u00XX), invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 escaped (JavaScript reads them as line ends).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Bytes that need no escape are left where they are, to be copied
		// with the run they belong to: skip them eight at a time, up to
		// the first byte that may need one (not in text that is mostly
		// multi-byte characters, where the test would rarely skip any).
		if i+8 <= len(s) && s[i] < utf8.RuneSelf {
			m := special8(load8(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
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

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 flags, in the high bit of its byte, the first of the eight
// bytes of x (little-endian: the lowest) that is a control character,
// '"', '\\' or 0x80 and up (the start or the middle of a multi-byte
// UTF-8 sequence); 0 when there is none. Subtracting 0x20 from every byte
// (1 from every byte of x^'"' and of x^'\\') borrows, and so sets that
// byte's high bit, first at the lowest byte below 0x20 (equal to '"', to
// '\\'); a byte of 0x80 and up has its high bit set in x itself. Bits
// above the first flagged byte may be wrong (borrows carry upward), so
// only the lowest one is used.
func special8(x uint64) uint64 {
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return (x | (x - ones*0x20) | (q - ones) | (b - ones)) & highs
}

// load8 is s's first eight bytes, little-endian (the compiler makes it
// one load).
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
