package security

import (
	"math"
	"strconv"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/jsonenc"
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

// appendJSONString writes s as a JSON string as encoding/json does with
// HTML escaping off (jsonenc.AppendString).
func appendJSONString(dst []byte, s string) []byte { return jsonenc.AppendString(dst, s) }
