package security

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func auditJSON(t testing.TB, rec *AuditRecord) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(rec)
	return buf.String(), err
}

func TestAuditRecordEncodingMatchesEncodingJSON(t *testing.T) {
	hard := "q\" b\\ \n\r\t\b\f \x00\x1f\x7f <&> é 日本 \u2028\u2029 bad\xff end"
	base := time.Date(2026, 12, 6, 7, 8, 9, 120000000, time.UTC)
	recs := []AuditRecord{
		{},
		{Time: base, Direction: AuditInbound, Identity: "id", Tier: "local", Method: "SendMessage", TaskID: "t", ContextID: "c",
			Peer: "p", Agent: "a", Outcome: "ok", Code: -32001, RequestBytes: 123, ResponseBytes: 456, DurationMS: 1.25, Error: hard},
		{Time: base.Add(time.Nanosecond), Direction: hard, Outcome: hard, DurationMS: 0.000001},
		{Time: base.Truncate(time.Second), DurationMS: 123456789.125, Code: 429, RequestBytes: -1},
		{Time: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), DurationMS: 1e20},
		{Time: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), DurationMS: -3.5},
	}
	for i, rec := range recs {
		want, err := auditJSON(t, &rec)
		if err != nil {
			t.Fatalf("record %d: encoding/json: %v", i, err)
		}
		got, ok := appendAuditRecord(nil, &rec)
		if !ok || string(got) != want {
			t.Errorf("record %d (ok %v):\n got %s\nwant %s", i, ok, got, want)
		}
	}
	// What encoding/json writes differently or refuses is left to it.
	for _, rec := range []AuditRecord{
		{Time: base, DurationMS: 1e-7},
		{Time: base, DurationMS: 1e21},
		{Time: base, DurationMS: math.NaN()},
		{Time: base, DurationMS: math.Inf(1)},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, ok := appendAuditRecord(nil, &rec); ok {
			t.Errorf("appendAuditRecord took %+v", rec)
		}
	}
}

// TestAuditLogWritesRecordsEncodingJSONCannot: a record the fast encoder
// leaves to encoding/json is still written (an exponent) or refused as
// before (NaN).
func TestAuditLogWritesRecordsEncodingJSONCannot(t *testing.T) {
	l, err := NewAuditLog(t.TempDir()+"/audit.log", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Log(AuditRecord{Direction: AuditInbound, Outcome: "ok", DurationMS: 1e-9}); err != nil {
		t.Fatalf("exponent: %v", err)
	}
	if err := l.Log(AuditRecord{Direction: AuditInbound, Outcome: "ok", DurationMS: math.NaN()}); err == nil {
		t.Fatal("NaN duration: no error")
	}
}

func FuzzAuditRecordEncoding(f *testing.F) {
	f.Add("inbound", "id\x00", "q\"\\\u2028\xff", int64(1733468889123456789), 1.5, -32001)
	f.Add("", "", "", int64(0), 0.0, 0)
	f.Fuzz(func(t *testing.T, a, b, c string, nanos int64, ms float64, code int) {
		rec := AuditRecord{Time: time.Unix(0, nanos).UTC(), Direction: a, Identity: b, Tier: c, Method: a + b,
			TaskID: c, ContextID: b, Peer: a, Agent: c, Outcome: b, Code: code,
			RequestBytes: nanos, ResponseBytes: int64(code), DurationMS: ms, Error: c + a}
		got, ok := appendAuditRecord(nil, &rec)
		want, err := auditJSON(t, &rec)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast encoder took a record encoding/json refuses (%v): %s", err, got)
		}
		if string(got) != want {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

// TestAuditRecordEncodingKnowsEveryField fails when AuditRecord gains a
// field: appendAuditRecord must then write it too.
func TestAuditRecordEncodingKnowsEveryField(t *testing.T) {
	typ := reflect.TypeFor[AuditRecord]()
	var names []string
	for i := range typ.NumField() {
		names = append(names, typ.Field(i).Name)
	}
	want := "Time Direction Identity Tier Method TaskID ContextID Peer Agent Outcome Code RequestBytes ResponseBytes DurationMS Error"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("AuditRecord has fields %q; appendAuditRecord writes %q", got, want)
	}
}
