package security

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendAuditRecord appends rec as one JSON line, byte for byte what
// json.Encoder (HTML escaping off) writes for it, without reflection: an
// audit record is written for every exchange, and encoding/json took
// about half of the audit log's CPU (docs/performance.md, "The plugin's
// CPU outside the store"). ok is false for
// the values encoding/json writes differently or refuses (a year outside
// 0–9999, a duration that is not finite or needs an exponent); the caller
// then uses encoding/json. TestAuditRecordEncodingMatchesEncodingJSON and
// FuzzAuditRecordEncoding compare the two.
func appendAuditRecord(dst []byte, rec *AuditRecord) ([]byte, bool) {
	if y := rec.Time.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	ms := rec.DurationMS
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return dst, false
	}
	if abs := math.Abs(ms); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return dst, false
	}
	dst = append(dst, `{"time":"`...)
	dst = rec.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	dst = appendJSONString(append(dst, `,"direction":`...), rec.Direction)
	optional := func(dst []byte, key, v string) []byte {
		if v == "" {
			return dst
		}
		return appendJSONString(append(dst, key...), v)
	}
	dst = optional(dst, `,"identity":`, rec.Identity)
	dst = optional(dst, `,"tier":`, rec.Tier)
	dst = optional(dst, `,"method":`, rec.Method)
	dst = optional(dst, `,"taskId":`, rec.TaskID)
	dst = optional(dst, `,"contextId":`, rec.ContextID)
	dst = optional(dst, `,"peer":`, rec.Peer)
	dst = optional(dst, `,"agent":`, rec.Agent)
	dst = appendJSONString(append(dst, `,"outcome":`...), rec.Outcome)
	if rec.Code != 0 {
		dst = strconv.AppendInt(append(dst, `,"code":`...), int64(rec.Code), 10)
	}
	dst = strconv.AppendInt(append(dst, `,"requestBytes":`...), rec.RequestBytes, 10)
	dst = strconv.AppendInt(append(dst, `,"responseBytes":`...), rec.ResponseBytes, 10)
	dst = strconv.AppendFloat(append(dst, `,"durationMs":`...), ms, 'f', -1, 64)
	dst = optional(dst, `,"error":`, rec.Error)
	return append(dst, '}', '\n'), true
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string as encoding/json does with
// HTML escaping off: '"', '\\' and control characters escaped (\b, \f,
// \n, \r, \t by name, others as \u00XX), invalid UTF-8 as \ufffd, U+2028
// and U+2029 escaped. (internal/a2a has the same function for the
// protocol's types; this package does not depend on that one.)
func appendJSONString(dst []byte, s string) []byte {
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
