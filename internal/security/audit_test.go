package security

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func readRecords(t *testing.T, path string) []AuditRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []AuditRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: bad line %q: %v", path, sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func TestAuditLogWritesJSONLinesWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "audit.jsonl")
	l, err := NewAuditLog(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.FixedZone("X", 3600))
	rec := AuditRecord{Time: start, Direction: AuditInbound, Identity: "peer:alice", Tier: "trusted", Method: "SendMessage",
		TaskID: "t1", ContextID: "c1", Outcome: "ok", RequestBytes: 120, ResponseBytes: 340, DurationMS: 12.5}
	if err := l.Log(rec); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(AuditRecord{Direction: AuditOutbound, Peer: "https://bob:pw@agent.example/a2a", Outcome: "error", Code: -32001,
		Error: "peer said: invalid token " + fakeGitHub}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), fakeGitHub) || strings.Contains(string(raw), "bob:pw") {
		t.Fatalf("secret written to audit log:\n%s", raw)
	}
	recs := readRecords(t, path)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	got := recs[0]
	if !got.Time.Equal(start) || got.Time.Location() != time.UTC || got.Identity != "peer:alice" || got.DurationMS != 12.5 {
		t.Fatalf("record 0 = %+v", got)
	}
	if !strings.Contains(string(raw), `"time":"2026-03-04T04:06:07.008Z"`) {
		t.Fatalf("time not written in UTC:\n%s", raw)
	}
	if recs[1].Time.IsZero() || recs[1].Code != -32001 || !strings.Contains(recs[1].Error, "[REDACTED:github_token]") {
		t.Fatalf("record 1 = %+v", recs[1])
	}
}

func TestAuditLogTightensExistingFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := NewAuditLog(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
}

func TestAuditLogRotatesBySizeAndKeepsN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := NewAuditLog(path, 600, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := l.Log(AuditRecord{Direction: AuditInbound, Method: "GetTask", TaskID: fmt.Sprint("task-", i), Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".1", path + ".2"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("missing %s: %v", p, err)
		}
		if st.Size() > 600 {
			t.Errorf("%s is %d bytes, over 600", p, st.Size())
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v", p, st.Mode().Perm())
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Fatalf("kept more than 2 old files: %v", err)
	}
	cur := readRecords(t, path)
	if cur[len(cur)-1].TaskID != "task-39" {
		t.Fatalf("newest record not in current file: %+v", cur[len(cur)-1])
	}
	old := readRecords(t, path+".1")
	if old[len(old)-1].TaskID != fmt.Sprint("task-", 39-len(cur)) {
		t.Fatalf("path.1 does not end right before the current file: %s", old[len(old)-1].TaskID)
	}
}

func TestAuditLogRotationWithoutKeepStartsAfresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := NewAuditLog(path, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		l.Log(AuditRecord{Direction: AuditInbound, TaskID: fmt.Sprint(i), Outcome: "ok"})
	}
	l.Close()
	if _, err := os.Stat(path + ".1"); !os.IsNotExist(err) {
		t.Fatal("keep=0 left a rotated file")
	}
	if st, _ := os.Stat(path); st.Size() > 300 {
		t.Fatalf("file grew to %d", st.Size())
	}
}

func TestAuditLogConcurrentWritesLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := NewAuditLog(path, 8<<10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 250
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := l.Log(AuditRecord{Direction: AuditInbound, Identity: fmt.Sprint("w", w), TaskID: fmt.Sprint(i), Outcome: "ok"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(path + "*")
	seen := map[string]bool{}
	for _, f := range files {
		for _, r := range readRecords(t, f) {
			key := r.Identity + "/" + r.TaskID
			if seen[key] {
				t.Fatalf("duplicate record %s", key)
			}
			seen[key] = true
		}
	}
	if len(seen) != writers*each {
		t.Fatalf("found %d records in %d files, want %d", len(seen), len(files), writers*each)
	}
}

func TestAuditLogCutsLongFieldsAndEscapesLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := NewAuditLog(path, 0, 0)
	l.Log(AuditRecord{Direction: AuditInbound, Method: strings.Repeat("é", 1000) + "\n{\"forged\":true}", Outcome: "refused"})
	l.Close()
	recs := readRecords(t, path)
	if len(recs) != 1 || len(recs[0].Method) > auditMaxField || !strings.HasSuffix(recs[0].Method, "…") {
		t.Fatalf("records = %d, method length %d", len(recs), len(recs[0].Method))
	}
}

func TestAuditLogAfterCloseAndNil(t *testing.T) {
	l, _ := NewAuditLog(filepath.Join(t.TempDir(), "a.jsonl"), 0, 0)
	l.Close()
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.Log(AuditRecord{}); !errors.Is(err, ErrAuditClosed) {
		t.Fatalf("Log after Close = %v", err)
	}
	var off *AuditLog
	if err := off.Log(AuditRecord{}); err != nil {
		t.Fatalf("nil log: %v", err)
	}
	if _, err := NewAuditLog("", 0, 0); err == nil {
		t.Fatal("empty path accepted")
	}
}

func BenchmarkAuditLog(b *testing.B) {
	l, err := NewAuditLog(filepath.Join(b.TempDir(), "audit.jsonl"), 64<<20, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := AuditRecord{Direction: AuditInbound, Identity: "peer:alice", Tier: "trusted", Method: "SendMessage",
		TaskID: "0b9f6c1e-3c55-4a4e-9d0e-3f0d1f6a2b7c", ContextID: "ctx-1", Outcome: "ok", RequestBytes: 512, ResponseBytes: 2048, DurationMS: 3.2}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Log(rec); err != nil {
			b.Fatal(err)
		}
	}
}
