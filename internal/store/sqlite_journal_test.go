package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// logSink collects what a store logs.
type logSink struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed and replaced at each line
}

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	if l.more != nil {
		close(l.more)
		l.more = nil
	}
	l.mu.Unlock()
}

// wait waits for a line containing sub.
func (l *logSink) wait(sub string) {
	for {
		l.mu.Lock()
		for _, s := range l.lines {
			if strings.Contains(s, sub) {
				l.mu.Unlock()
				return
			}
		}
		if l.more == nil {
			l.more = make(chan struct{})
		}
		more := l.more
		l.mu.Unlock()
		<-more
	}
}

func (l *logSink) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// stall makes every apply of a journaled save fail until unstall: saves
// are journaled and acknowledged, and stay pending.
func stall(s *SQLite)   { s.w.failSaves.Store(math.MaxInt32) }
func unstall(s *SQLite) { s.w.failSaves.Store(0) }

func jtask(id, owner string, state a2a.TaskState, ms int64, text string) *TaskRecord {
	return &TaskRecord{
		Task: a2a.Task{ID: id, ContextID: "ctx-" + id, Status: a2a.TaskStatus{State: state},
			History: []a2a.Message{{MessageID: "m-" + id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text)}}}},
		Owner: owner, UpdatedAt: time.UnixMilli(ms), CreatedAt: time.UnixMilli(ms),
	}
}

func sameTask(t *testing.T, got *TaskRecord, want *TaskRecord) {
	t.Helper()
	g, _ := a2a.Marshal(&got.Task)
	w, _ := a2a.Marshal(&want.Task)
	if string(g) != string(w) || got.Owner != want.Owner || got.Agent != want.Agent {
		t.Errorf("task %s:\n got  %s (owner %q agent %q)\n want %s (owner %q agent %q)", want.Task.ID, g, got.Owner, got.Agent, w, want.Owner, want.Agent)
	}
}

// TestJournalPendingSavesAreReadExactly keeps saves pending (their applies
// fail) and checks that GetTask answers from them at once, with the same
// owner check, that ListTasks waits for them (its counts and page are
// exact), and that the failed applies are retried, logged, and lose
// nothing.
func TestJournalPendingSavesAreReadExactly(t *testing.T) {
	logs := &logSink{}
	s := openTestSQLite(t, SQLiteOptions{Logf: logs.logf})
	ctx := context.Background()
	if err := s.SaveTask(ctx, jtask("t0", "o", a2a.TaskStateCompleted, 1, "applied"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.barrier(ctx); err != nil {
		t.Fatal(err)
	}
	stall(s)
	var want []*TaskRecord
	for i := range 20 {
		rec := jtask(fmt.Sprint("t", i%10), "o", a2a.TaskStateWorking, int64(10+i), fmt.Sprint("version ", i))
		if i%10 == 9 {
			rec.Owner = "other"
		}
		if err := s.SaveTask(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		// Readable the moment SaveTask returns, while not applied.
		if s.pendingTask(rec.Task.ID) == nil {
			t.Fatalf("save %d of %s is not pending", i, rec.Task.ID)
		}
		got, err := s.GetTask(ctx, rec.Task.ID, rec.Owner)
		if err != nil {
			t.Fatalf("GetTask right after SaveTask %d: %v", i, err)
		}
		sameTask(t, got, rec)
		if _, err := s.GetTask(ctx, rec.Task.ID, "intruder"); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetTask of %s by another owner: %v, want ErrNotFound", rec.Task.ID, err)
		}
		if i >= 10 {
			want = append(want, rec)
		}
	}
	type listed struct {
		page TaskPage
		err  error
	}
	lists := make(chan listed, 2)
	for _, q := range []TaskQuery{{Owner: "o", PageSize: 100}, {State: a2a.TaskStateWorking, PageSize: 100}} {
		go func() {
			p, err := s.ListTasks(ctx, q)
			lists <- listed{p, err}
		}()
	}
	// The applier has tried and failed (so the saves are pending for
	// sure while ListTasks starts).
	logs.wait("retrying")
	active := make(chan int, 1)
	go func() {
		a, err := s.ActiveTasks(ctx)
		if err != nil {
			t.Error(err)
		}
		active <- len(a)
	}()
	unstall(s)
	for range 2 {
		l := <-lists
		if l.err != nil {
			t.Fatal(l.err)
		}
		// Owner "o": t0..t8 (t9 is other's); WORKING: t0..t9.
		wantN := 9
		if len(l.page.Tasks) > 0 && l.page.Tasks[0].Owner == "other" || l.page.TotalSize == 10 {
			wantN = 10
		}
		owners := map[string]bool{}
		for _, r := range l.page.Tasks {
			owners[r.Owner] = true
		}
		if wantN == 9 && owners["other"] || wantN == 10 && !owners["other"] {
			wantN = -1
		}
		if l.page.TotalSize != wantN || len(l.page.Tasks) != wantN {
			t.Errorf("ListTasks after pending saves: totalSize %d, %d tasks (owners %v); want 9 of owner o or 10 WORKING", l.page.TotalSize, len(l.page.Tasks), owners)
		}
	}
	if n := <-active; n != 10 {
		t.Errorf("ActiveTasks: %d, want 10", n)
	}
	if !logs.has("retrying") {
		t.Errorf("the failed applies were not logged: %q", logs.lines)
	}
	for _, rec := range want {
		if s.pendingTask(rec.Task.ID) != nil {
			t.Errorf("%s still pending after the barrier", rec.Task.ID)
		}
		got, err := s.GetTask(ctx, rec.Task.ID, rec.Owner)
		if err != nil {
			t.Fatal(err)
		}
		sameTask(t, got, rec)
	}
	for _, q := range []TaskQuery{{}, {Owner: "o"}, {Owner: "other"}, {State: a2a.TaskStateWorking}, {State: a2a.TaskStateCompleted}} {
		p, err := s.ListTasks(ctx, q)
		wantN := map[string]int{"": 10, "o": 9, "other": 1}[q.Owner]
		if q.State == a2a.TaskStateCompleted {
			wantN = 0
		}
		if err != nil || p.TotalSize != wantN {
			t.Errorf("ListTasks(%+v) totalSize %d, %v; want %d", q, p.TotalSize, err, wantN)
		}
	}
}

// TestJournalCoalescesSavesOfOneTask: saves of one task pending together
// are applied as one row write, the latest.
func TestJournalCoalescesSavesOfOneTask(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{Logf: (&logSink{}).logf})
	ctx := context.Background()
	stall(s)
	var last *TaskRecord
	const n = 50
	for i := range n {
		last = jtask("one", "o", a2a.TaskStateWorking, int64(i), fmt.Sprint("chunk ", i))
		if i == n-1 {
			last.Task.Status.State = a2a.TaskStateCompleted
		}
		if err := s.SaveTask(ctx, last, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := s.w.rowWrites.Load()
	unstall(s)
	if err := s.barrier(ctx); err != nil {
		t.Fatal(err)
	}
	// The applier was retrying the first save (or the first few) when
	// the others came; those it takes next in one transaction.
	if w := s.w.rowWrites.Load() - before; w > 2 {
		t.Errorf("%d saves of one task took %d row writes, want at most 2", n, w)
	}
	got, err := s.GetTask(ctx, "one", "o")
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, got, last)
	for _, q := range []TaskQuery{{}, {State: a2a.TaskStateCompleted}, {State: a2a.TaskStateWorking}} {
		p, err := s.ListTasks(ctx, q)
		wantN := 1
		if q.State == a2a.TaskStateWorking {
			wantN = 0
		}
		if err != nil || p.TotalSize != wantN || len(p.Tasks) != wantN {
			t.Errorf("ListTasks(%+v): %d (%d tasks), %v; want %d", q, p.TotalSize, len(p.Tasks), err, wantN)
		}
	}
}

// TestJournalOtherWritesComeAfterEarlierSaves: a write that is not a
// journaled save runs after every save journaled before it, whatever the
// applier's delay.
func TestJournalOtherWritesComeAfterEarlierSaves(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{Logf: (&logSink{}).logf})
	ctx := context.Background()
	stall(s)
	if err := s.SaveTask(ctx, jtask("pushed", "o", a2a.TaskStateWorking, 5, "x"), nil); err != nil {
		t.Fatal(err)
	}
	old := jtask("old", "o", a2a.TaskStateCompleted, 1, "x")
	old.Agent = "agent-b" // not adopted, whether pruned before AdoptTasks or not
	if err := s.SaveTask(ctx, old, nil); err != nil {
		t.Fatal(err)
	}
	orphan := jtask("orphan", "o", a2a.TaskStateWorking, 7, "x")
	if err := s.SaveTask(ctx, orphan, nil); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	go func() {
		errs <- s.PutPushConfig(ctx, &PushConfig{Config: a2a.TaskPushNotificationConfig{TaskID: "pushed", ID: "p", URL: "https://h.example"}})
	}()
	go func() {
		n, _, err := s.Prune(ctx, time.UnixMilli(2))
		if err == nil && n != 1 {
			err = fmt.Errorf("Prune deleted %d tasks, want the 1 saved before it", n)
		}
		errs <- err
	}()
	go func() {
		n, err := s.AdoptTasks(ctx, "agent-a")
		if err == nil && n != 2 {
			err = fmt.Errorf("AdoptTasks gave %d tasks, want the 2 of no agent saved before it", n)
		}
		errs <- err
	}()
	unstall(s)
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if _, err := s.GetPushConfig(ctx, "pushed", "p"); err != nil {
		t.Error(err)
	}
	if _, err := s.GetTask(ctx, "old", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("pruned task: %v", err)
	}
	got, err := s.GetTask(ctx, "orphan", "")
	if err != nil || got.Agent != "agent-a" {
		t.Errorf("adopted task: %+v, %v", got, err)
	}
	// A save with deliveries (not journaled) after a journaled one of the
	// same task wins, and is not overwritten by it.
	stall(s)
	first := jtask("pushed", "o", a2a.TaskStateWorking, 8, "journaled")
	if err := s.SaveTask(ctx, first, nil); err != nil {
		t.Fatal(err)
	}
	second := jtask("pushed", "o", a2a.TaskStateCompleted, 9, "with delivery")
	go func() { errs <- s.SaveTask(ctx, second, []Delivery{{ConfigID: "p", Body: []byte(`{}`)}}) }()
	unstall(s)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	got, err = s.GetTask(ctx, "pushed", "")
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, got, second)
	if ds, err := s.DueDeliveries(ctx, time.Now().Add(time.Hour), 0); err != nil || len(ds) != 1 {
		t.Errorf("deliveries: %d, %v", len(ds), err)
	}
}

// pendingSaves opens the store at path with its applier stalled and
// saves n tasks (ids prefix0…, owner "o", the given state and text): they
// are journaled, none applied.
func pendingSaves(t *testing.T, path string, n int, prefix string, state a2a.TaskState, text string) (*SQLite, []*TaskRecord) {
	t.Helper()
	s, err := OpenSQLite(path, SQLiteOptions{Logf: (&logSink{}).logf})
	if err != nil {
		t.Fatal(err)
	}
	stall(s)
	var recs []*TaskRecord
	for i := range n {
		rec := jtask(fmt.Sprint(prefix, i), "o", state, int64(i), text)
		recs = append(recs, rec)
		if err := s.SaveTask(context.Background(), rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	return s, recs
}

// TestJournalCloseAppliesPending closes a store with saves pending: Close
// applies them and removes the journal; the next open has them.
func TestJournalCloseAppliesPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	ctx := context.Background()
	s, recs := pendingSaves(t, path, 30, "c", a2a.TaskStateCompleted, "closing")
	s.w.failSaves.Store(1) // one more failure, then the applies go through
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(journalDir(path)); err != nil || len(ents) != 1 || ents[0].Name() != "store.lock" {
		t.Errorf("journals left after a clean Close: %v, %v (want only the store lock)", ents, err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM tasks`).Scan(&n); err != nil || n != 30 {
		t.Errorf("tasks in the database after Close: %d, %v; want 30", n, err)
	}
	db.Close()
	s, err = OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, rec := range recs {
		got, err := s.GetTask(ctx, rec.Task.ID, "o")
		if err != nil {
			t.Fatal(err)
		}
		sameTask(t, got, rec)
	}
}

// TestJournalKeptWhenCloseCannotApply: when the saves cannot be applied
// by Close, Close says so and the next open replays the journal.
func TestJournalKeptWhenCloseCannotApply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	ctx := context.Background()
	s, recs := pendingSaves(t, path, 10, "k", a2a.TaskStateWorking, "kept")
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "journal") {
		t.Fatalf("Close with saves it cannot apply: %v", err)
	}
	logs := &logSink{}
	s, err := OpenSQLite(path, SQLiteOptions{Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !logs.has("replayed 10 saves") {
		t.Errorf("no replay logged: %q", logs.lines)
	}
	for _, rec := range recs {
		if s.pendingTask(rec.Task.ID) != nil {
			t.Fatalf("%s pending after a replay", rec.Task.ID)
		}
		got, err := s.GetTask(ctx, rec.Task.ID, "o")
		if err != nil {
			t.Fatal(err)
		}
		sameTask(t, got, rec)
	}
	if p, err := s.ListTasks(ctx, TaskQuery{State: a2a.TaskStateWorking}); err != nil || p.TotalSize != 10 {
		t.Errorf("ListTasks after the replay: %d, %v", p.TotalSize, err)
	}
}

// writeSegment writes records (and then junk, if any) as segment n.
func writeSegment(t *testing.T, dir string, n int, recs []*jrec, junk []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, r := range recs {
		buf = appendRecord(buf, r)
	}
	buf = append(buf, junk...)
	if err := os.WriteFile(segmentPath(dir, n), buf, 0o600); err != nil {
		t.Fatal(err)
	}
}

// jrecOf is the journal record of a save of rec.
func jrecOf(t *testing.T, seq int64, rec *TaskRecord) *jrec {
	blob, err := a2a.Marshal(&rec.Task)
	if err != nil {
		t.Fatal(err)
	}
	return &jrec{seq: seq, id: rec.Task.ID, contextID: rec.Task.ContextID, owner: rec.Owner,
		state: stateName(rec.Task.Status.State), terminal: rec.Task.Status.State.Terminal(),
		statusMs: rec.StatusMillis(), createdMs: toMillis(rec.CreatedAt), blob: blob, agent: rec.Agent}
}

// TestJournalReplayIgnoresTornTail replays a journal whose last segment
// ends in a torn record and one whose last record fails its checksum; a
// record already applied is skipped; damage before the last segment
// stops the open.
func TestJournalReplayIgnoresTornTail(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(journalDir(path), "0-dead-a") // a journal left by a crash
	a := jtask("a", "o", a2a.TaskStateWorking, 1, "a")
	b := jtask("b", "o", a2a.TaskStateWorking, 2, "b")
	b2 := jtask("b", "o", a2a.TaskStateCompleted, 3, "b again")
	torn := appendRecord(nil, jrecOf(t, 4, jtask("torn", "o", a2a.TaskStateWorking, 4, "torn")))
	writeSegment(t, dir, 1, []*jrec{jrecOf(t, 1, a), jrecOf(t, 2, b)}, nil)
	writeSegment(t, dir, 2, []*jrec{jrecOf(t, 3, b2)}, torn[:len(torn)-5])
	logs := &logSink{}
	s, err = OpenSQLite(path, SQLiteOptions{Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*TaskRecord{a, b2} {
		got, err := s.GetTask(ctx, want.Task.ID, "o")
		if err != nil {
			t.Fatal(err)
		}
		sameTask(t, got, want)
	}
	if _, err := s.GetTask(ctx, "torn", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("the torn record was applied: %v", err)
	}
	if !logs.has("never acknowledged") || !logs.has("replayed 3 saves") {
		t.Errorf("log: %q", logs.lines)
	}
	if p, err := s.ListTasks(ctx, TaskQuery{}); err != nil || p.TotalSize != 2 {
		t.Errorf("ListTasks: %d, %v", p.TotalSize, err)
	}
	// New saves continue the sequence numbers.
	c := jtask("c", "o", a2a.TaskStateWorking, 5, "c")
	if err := s.SaveTask(ctx, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A journal whose records 1-3 are applied (the database says so)
	// changes nothing, although it holds a stale b; and a bad checksum at
	// the end of the last segment is a torn write too.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO journal_state (instance, applied) VALUES ('0-dead-b', 3)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dir = filepath.Join(journalDir(path), "0-dead-b")
	bad := appendRecord(nil, jrecOf(t, 9, jtask("bad", "o", a2a.TaskStateWorking, 9, "bad")))
	bad[len(bad)-1] ^= 0xff
	writeSegment(t, dir, 7, []*jrec{jrecOf(t, 1, a), jrecOf(t, 2, b), jrecOf(t, 3, jtask("b", "o", a2a.TaskStateFailed, 3, "stale"))}, bad)
	s, err = OpenSQLite(path, SQLiteOptions{Logf: (&logSink{}).logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*TaskRecord{a, b2, c} {
		got, err := s.GetTask(ctx, want.Task.ID, "o")
		if err != nil {
			t.Fatal(err)
		}
		sameTask(t, got, want)
	}
	if _, err := s.GetTask(ctx, "bad", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("the record with a bad checksum was applied: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Damage in a segment that is not the last: refused.
	dir = filepath.Join(journalDir(path), "0-dead-c")
	writeSegment(t, dir, 1, []*jrec{jrecOf(t, 20, a)}, torn[:10])
	writeSegment(t, dir, 2, []*jrec{jrecOf(t, 21, b)}, nil)
	if s, err := OpenSQLite(path, SQLiteOptions{Logf: (&logSink{}).logf}); err == nil || !strings.Contains(err.Error(), "damaged") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("open with a damaged middle segment: %v", err)
	}
}

// TestJournalSegmentsRotateAndGo: the journal moves to a new segment past
// its size limit, deletes segments once applied, and is private to the
// user.
func TestJournalSegmentsRotateAndGo(t *testing.T) {
	defer func(n int64) { journalSegmentMax = n }(journalSegmentMax)
	journalSegmentMax = 8 << 10
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	stall(s)
	for i := range 40 {
		if err := s.SaveTask(ctx, jtask(fmt.Sprint("r", i), "o", a2a.TaskStateWorking, int64(i), strings.Repeat("x", 1000)), nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := s.j.dir
	paths, _, err := listSegments(dir)
	if err != nil || len(paths) < 4 {
		t.Fatalf("40 KB of saves pending in segments of 8 KiB: %d segments, %v", len(paths), err)
	}
	for _, p := range append(paths, dir, journalDir(path)) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group and others", p, fi.Mode().Perm())
		}
	}
	unstall(s)
	if err := s.barrier(ctx); err != nil {
		t.Fatal(err)
	}
	after, nums, err := listSegments(dir)
	if err != nil || len(after) != 1 || nums[0] < len(paths) {
		t.Errorf("segments once all is applied: %v (numbers %v), %v; want the open one only", after, nums, err)
	}
	if p, err := s.ListTasks(ctx, TaskQuery{}); err != nil || p.TotalSize != 40 {
		t.Errorf("ListTasks: %d, %v", p.TotalSize, err)
	}
}

// TestJournalFullSync: with FullSync the journal is synced before the
// acknowledgement; the saves read back, and survive a reopen.
func TestJournalFullSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	s, err := OpenSQLite(path, SQLiteOptions{FullSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec := jtask("f", "o", a2a.TaskStateCompleted, 1, "synced")
	if err := s.SaveTask(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenSQLite(path, SQLiteOptions{FullSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetTask(ctx, "f", "o")
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, got, rec)
}

// TestJournalRecordRoundTrip: a record decodes to what was encoded; any
// cut or flipped byte is refused.
func TestJournalRecordRoundTrip(t *testing.T) {
	r := jrecOf(t, 12345, &TaskRecord{Task: a2a.Task{ID: "id", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateFailed}},
		Owner: "o", Agent: "ag", CreatedAt: time.UnixMilli(-5), UpdatedAt: time.UnixMilli(77)})
	b := appendRecord(nil, r)
	got, n, err := readRecord(b)
	if err != nil || n != len(b) {
		t.Fatalf("readRecord: %v, %d of %d", err, n, len(b))
	}
	if fmt.Sprint(got.args()) != fmt.Sprint(r.args()) || got.seq != r.seq {
		t.Errorf("round trip: %v, want %v", got.args(), r.args())
	}
	for i := range b {
		if _, _, err := readRecord(b[:i]); err == nil {
			t.Errorf("record cut at %d accepted", i)
		}
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		if _, _, err := readRecord(c); err == nil {
			t.Errorf("record with byte %d flipped accepted", i)
		}
	}
}

// TestJournalsOfTwoStores: a second store on a database another store
// holds waits for it to close, then refuses with what to do; one that
// opens while the first closes waits and replays what the first left.
func TestJournalsOfTwoStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	s1, err := OpenSQLite(path, SQLiteOptions{Logf: (&logSink{}).logf})
	if err != nil {
		t.Fatal(err)
	}
	stall(s1)
	rec := jtask("only-in-s1", "o", a2a.TaskStateWorking, 1, "x")
	if err := s1.SaveTask(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	// A second store on the database waits for the first to let go, then
	// refuses: its saves and the first's would reach SQLite in an order
	// neither chose.
	_, err = OpenSQLite(path, SQLiteOptions{BusyTimeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "open in another store") || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("second store on an open database: %v, want a refusal saying what to do", err)
	}
	if segs, _, _ := listSegments(s1.j.dir); len(segs) == 0 {
		t.Fatalf("the refused store took the first one's journal")
	}
	// One that opens while the first closes waits for it.
	opened := make(chan error, 1)
	var s2 *SQLite
	go func() {
		var err error
		s2, err = OpenSQLite(path, SQLiteOptions{BusyTimeout: 30 * time.Second, Logf: (&logSink{}).logf})
		opened <- err
	}()
	if err := s1.Close(); err == nil {
		t.Fatal("Close of a store whose saves cannot apply: no error")
	}
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.GetTask(ctx, rec.Task.ID, "o")
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, got, rec)
	if ents, _ := os.ReadDir(journalDir(path)); len(ents) != 2 {
		t.Errorf("journals after the replay: %v, want the open store's and the store lock", ents)
	}
}

// TestJournalBackpressure: past the room for pending saves, saves wait
// for the applier (their context still ends them: such a save is not
// journaled), and go on once it catches up.
func TestJournalBackpressure(t *testing.T) {
	defer func(n int) { pendingMaxBytes = n }(pendingMaxBytes)
	pendingMaxBytes = 1 // one pending save fills it
	s := openTestSQLite(t, SQLiteOptions{Logf: (&logSink{}).logf})
	ctx := context.Background()
	stall(s)
	if err := s.SaveTask(ctx, jtask("first", "o", a2a.TaskStateWorking, 1, "x"), nil); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.SaveTask(short, jtask("blocked", "o", a2a.TaskStateWorking, 2, "x"), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a save past the room: %v, want it held until its context ended", err)
	}
	unstall(s)
	last := jtask("after", "o", a2a.TaskStateWorking, 3, "x")
	if err := s.SaveTask(ctx, last, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTask(ctx, "blocked", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("the save whose context ended while it waited: %v, want it never journaled", err)
	}
	for _, id := range []string{"first", "after"} {
		if _, err := s.GetTask(ctx, id, "o"); err != nil {
			t.Error(err)
		}
	}
	if p, err := s.ListTasks(ctx, TaskQuery{}); err != nil || p.TotalSize != 2 {
		t.Errorf("ListTasks: %d, %v", p.TotalSize, err)
	}
}

// TestJournalWriteFailureFailsTheSave: a save whose journal write fails
// is not acknowledged and leaves nothing behind; other writes go on.
func TestJournalWriteFailureFailsTheSave(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{})
	ctx := context.Background()
	if err := s.SaveTask(ctx, jtask("ok", "o", a2a.TaskStateWorking, 1, "x"), nil); err != nil {
		t.Fatal(err)
	}
	s.j.f.Close() // every later write(2) to the segment fails
	err := s.SaveTask(ctx, jtask("lost", "o", a2a.TaskStateWorking, 2, "x"), nil)
	if err == nil || !strings.Contains(err.Error(), "journal") {
		t.Fatalf("a save whose journal write failed: %v", err)
	}
	if _, err := s.GetTask(ctx, "lost", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("the failed save is readable: %v", err)
	}
	if err := s.PutPushConfig(ctx, &PushConfig{Config: a2a.TaskPushNotificationConfig{TaskID: "ok", ID: "p", URL: "https://h.example"}}); err != nil {
		t.Errorf("a write that is not a journaled save: %v", err)
	}
	if p, err := s.ListTasks(ctx, TaskQuery{}); err != nil || p.TotalSize != 1 {
		t.Errorf("ListTasks: %d, %v", p.TotalSize, err)
	}
}
