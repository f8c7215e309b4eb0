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

func openTestSQLite(t testing.TB, opts SQLiteOptions) *SQLite {
	t.Helper()
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "a2a-plugin.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// queryPlan returns EXPLAIN QUERY PLAN of query as one line per step.
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "; ")
}

// TestQueriesUseIndexes checks that no hot query scans a table or sorts
// in a temporary B-tree, and that each ListTasks filter combination uses
// the index made for it.
func TestQueriesUseIndexes(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{})
	// A few rows, so that the planner has a table to reason about.
	for i := range 20 {
		rec := &TaskRecord{Task: a2a.Task{ID: fmt.Sprint(i), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}, Owner: "o", UpdatedAt: time.UnixMilli(int64(i))}
		if err := s.SaveTask(context.Background(), rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+s.path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wantIndex := map[int]string{
		0:                           "tasks_by_ts",
		filterOwner:                 "tasks_by_owner",
		filterContext:               "tasks_by_ctx",
		filterState:                 "tasks_by_state",
		filterOwner | filterContext: "tasks_by_owner_ctx",
		filterOwner | filterState:   "tasks_by_owner_state",
		filterContext | filterState: "tasks_by_ctx",
		filterOwner | filterContext | filterState: "tasks_by_owner_ctx",
		// COMPLETED tasks are in no state index (migration 7).
		filterState | filterCompleted:                               "tasks_by_ts",
		filterOwner | filterState | filterCompleted:                 "tasks_by_owner",
		filterContext | filterState | filterCompleted:               "tasks_by_ctx",
		filterOwner | filterContext | filterState | filterCompleted: "tasks_by_owner_ctx",
	}
	for v := range listVariants {
		if !usedVariant(v) {
			continue
		}
		state := "TASK_STATE_WORKING"
		if v&filterCompleted != 0 {
			state = "TASK_STATE_COMPLETED"
		}
		listArgs := []any{"o", "c", state, int64(math.MinInt64), int64(math.MaxInt64), "", 51}
		for _, q := range []struct {
			sql  string
			args []any
		}{{listSQL(v), listArgs}, {countSQL(v, true), listArgs[:4]}, {countSQL(v, false), countArgs(v, false, listArgs)}} {
			plan := queryPlan(t, db, q.sql, q.args...)
			t.Logf("variant %03b: %s", v, plan)
			if strings.Contains(q.sql, "_counts") {
				// Counters: a handful of rows, by primary key where filtered.
				if strings.Contains(plan, "TEMP B-TREE") || (strings.Contains(q.sql, "WHERE") && !strings.HasPrefix(plan, "SEARCH ")) {
					t.Errorf("variant %03b: %s\n plan: %s", v, q.sql, plan)
				}
				continue
			}
			if strings.HasPrefix(q.sql, "SELECT count(*)") {
				// Any index whose leading columns are the filters will do.
				if strings.Contains(plan, "TEMP B-TREE") || !strings.HasPrefix(plan, "SEARCH tasks USING ") {
					t.Errorf("variant %03b: %s\n plan: %s\n want an index search", v, q.sql, plan)
				}
				continue
			}
			if strings.Contains(plan, "TEMP B-TREE") || !strings.Contains(plan, "INDEX "+wantIndex[v]+" ") {
				t.Errorf("variant %03b: %s\n plan: %s\n want a search of %s without a sort", v, q.sql, plan, wantIndex[v])
			}
		}
	}
	// One agent's lists (a host with agents): the agent indexes hold
	// named agents' tasks only (migration 8); a list of an agent alone or
	// of an agent and an owner walks them, any other the index of its
	// other filters.
	wantAgentIndex := map[int]string{
		0:                             "tasks_by_agent",
		filterOwner:                   "tasks_by_agent_owner",
		filterState | filterCompleted: "tasks_by_agent",
		filterOwner | filterState | filterCompleted: "tasks_by_agent_owner",
		filterState:                 "tasks_by_state",
		filterOwner | filterState:   "tasks_by_owner_state",
		filterContext:               "tasks_by_ctx",
		filterOwner | filterContext: "tasks_by_owner_ctx",
	}
	for v := range listVariants {
		if !usedVariant(v) {
			continue
		}
		state := "TASK_STATE_WORKING"
		if v&filterCompleted != 0 {
			state = "TASK_STATE_COMPLETED"
		}
		args := []any{"o", "c", state, int64(math.MinInt64), int64(math.MaxInt64), "", 51, "a"}
		for _, q := range []string{agentListSQL(v), agentCountSQL(v)} {
			plan := queryPlan(t, db, q, args...)
			t.Logf("agent, variant %04b: %s", v, plan)
			want := wantAgentIndex[v]
			if v&filterContext != 0 {
				want = wantAgentIndex[v&(filterOwner|filterContext)]
			}
			if strings.Contains(plan, "TEMP B-TREE") || !strings.HasPrefix(plan, "SEARCH tasks USING ") ||
				(want != "" && !strings.Contains(plan, "INDEX "+want+" ")) {
				t.Errorf("agent, variant %04b: %s\n plan: %s\n want an index search (%s) without a sort", v, q, plan, want)
			}
		}
	}
	for name, q := range map[string]struct {
		sql  string
		args []any
	}{
		"get task":       {`SELECT owner, created_at, status_ts, task FROM tasks WHERE id = ?1`, []any{"x"}},
		"active tasks":   {`SELECT id, owner, created_at, status_ts, task FROM tasks WHERE terminal = 0 ORDER BY status_ts, id`, nil},
		"prune tasks":    {`SELECT id FROM tasks WHERE terminal = 1 AND status_ts < ?1 LIMIT ?2`, []any{1, 10}},
		"conversation":   {`SELECT id FROM conversation_entries WHERE agent = ?3 AND context_id = ?1 ORDER BY id DESC LIMIT ?2`, []any{"c", 10, "a"}},
		"conversations":  {`SELECT context_id FROM conversations WHERE agent = ?2 ORDER BY last_at DESC, last_entry DESC LIMIT ?1`, []any{10, "a"}},
		"stale convs":    {`SELECT agent, context_id FROM conversations WHERE last_at < ?1 LIMIT ?2`, []any{1, 10}},
		"push configs":   {`SELECT id FROM push_configs WHERE task_id = ?1 ORDER BY created_at, rowid`, []any{"t"}},
		"due deliveries": {`SELECT id FROM outbox o WHERE next_try <= ?1 AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.task_id = o.task_id AND p.config_id = o.config_id AND p.id < o.id) ORDER BY id LIMIT ?2`, []any{1, 10}},
	} {
		plan := queryPlan(t, db, q.sql, q.args...)
		t.Logf("%s: %s", name, plan)
		bad := strings.Contains(plan, "TEMP B-TREE") && name != "push configs" // a task has a handful of configs
		for _, step := range strings.Split(plan, "; ") {
			if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "INDEX") && !(name == "due deliveries" && step == "SCAN o") {
				bad = true
			}
		}
		if bad {
			t.Errorf("%s: %s", name, plan)
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := s.w.conn.QueryRowContext(context.Background(), "PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) {
		t.Fatalf("user_version %d (%v), want %d", v, err, len(migrations))
	}
	if _, err := s.w.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = OpenSQLite(path, SQLiteOptions{})
	if err == nil || !strings.Contains(err.Error(), "newer plugin") {
		t.Fatalf("opening a database from the future: %v", err)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &TaskRecord{Task: a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, Owner: "o", UpdatedAt: time.UnixMilli(5)}
	if err := s.SaveTask(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, &PushConfig{Config: a2a.TaskPushNotificationConfig{TaskID: "t1", ID: "p", URL: "https://h.example"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTask(ctx, rec, []Delivery{{ConfigID: "p", Body: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendConversation(ctx, &ConversationEntry{ContextID: "c", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTask(ctx, rec, nil); !errors.Is(err, errClosed) {
		t.Errorf("SaveTask after Close: %v", err)
	}
	if _, err := s.GetTask(ctx, "t1", ""); !errors.Is(err, errClosed) {
		t.Errorf("GetTask after Close: %v", err)
	}
	s, err = OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.GetTask(ctx, "t1", "o"); err != nil {
		t.Error(err)
	}
	if ds, _ := s.DueDeliveries(ctx, time.Now().Add(time.Hour), 0); len(ds) != 1 {
		t.Errorf("%d deliveries after reopen, want 1", len(ds))
	}
	if es, _ := s.Conversation(ctx, "c", 0); len(es) != 1 {
		t.Errorf("%d entries after reopen, want 1", len(es))
	}
	if n, err := s.Size(); err != nil || n == 0 {
		t.Errorf("Size = %d, %v", n, err)
	}
}

func TestDatabaseIsPrivateToItsUser(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	s, err := OpenSQLite(filepath.Join(dir, "a2a-plugin.db"), SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SaveTask(context.Background(), &TaskRecord{Task: a2a.Task{ID: "t"}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a2a-plugin.db", "a2a-plugin.db-wal", "a2a-plugin.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group and others", name, fi.Mode().Perm())
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v, %v", fi.Mode(), err)
	}
}

func TestSQLitePragmas(t *testing.T) {
	for _, tc := range []struct {
		opts SQLiteOptions
		sync int
	}{{SQLiteOptions{}, 1}, {SQLiteOptions{FullSync: true}, 2}} {
		s := openTestSQLite(t, tc.opts)
		ctx := context.Background()
		var mode string
		var syncMode, fk int
		c := s.w.conn
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode %q, %v", mode, err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&syncMode); err != nil || syncMode != tc.sync {
			t.Errorf("FullSync %v: synchronous %d, %v; want %d", tc.opts.FullSync, syncMode, err, tc.sync)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
			t.Errorf("foreign_keys %d, %v", fk, err)
		}
	}
}

// TestGroupCommitBatchesConcurrentWrites checks that concurrent writers
// share transactions.
func TestGroupCommitBatchesConcurrentWrites(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{})
	const writers, each = 32, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rec := &TaskRecord{Task: a2a.Task{ID: fmt.Sprintf("%d-%d", w, i), Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
				if err := s.SaveTask(context.Background(), rec, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// The saves are journaled when they return; wait until they are
	// applied too.
	if err := s.barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	commits, ops := s.commits.Load(), s.committedOps.Load()
	t.Logf("%d writes in %d transactions (%.1f per commit)", ops, commits, float64(ops)/float64(commits))
	if ops != writers*each || commits >= ops/2 {
		t.Errorf("%d writes in %d transactions: concurrent writes are not batched", ops, commits)
	}
}

// TestFailedWriteDoesNotSinkItsBatch runs a failing write (after it has
// written) among good ones: the good ones commit, the bad one leaves no
// trace.
func TestFailedWriteDoesNotSinkItsBatch(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{})
	ctx := context.Background()
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.write(ctx, func(w *writer) error {
				if err := w.saveTaskRow([]any{fmt.Sprint(i), "c", "o", "TASK_STATE_WORKING", false, i, i, []byte(`{"id":"` + fmt.Sprint(i) + `","status":{"state":"TASK_STATE_WORKING"}}`), ""}); err != nil {
					return err
				}
				if i%10 == 3 {
					return boom
				}
				if i%10 == 7 {
					panic("write op panicked")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		_, gerr := s.GetTask(ctx, fmt.Sprint(i), "")
		switch i % 10 {
		case 3:
			if !errors.Is(err, boom) || !errors.Is(gerr, ErrNotFound) {
				t.Errorf("write %d: %v, get %v; want boom and nothing stored", i, err, gerr)
			}
		case 7:
			if err == nil || !strings.Contains(err.Error(), "panicked") || !errors.Is(gerr, ErrNotFound) {
				t.Errorf("write %d: %v, get %v; want a panic error and nothing stored", i, err, gerr)
			}
		default:
			if err != nil || gerr != nil {
				t.Errorf("write %d: %v, get %v; want it stored", i, err, gerr)
			}
		}
	}
	// The counts the writer keeps for the saves (ListTasks' totalSize)
	// took in the stored tasks only, whatever batch they shared with a
	// failed one.
	for _, q := range []TaskQuery{{}, {Owner: "o"}, {State: a2a.TaskStateWorking}, {Owner: "o", State: a2a.TaskStateWorking}} {
		page, err := s.ListTasks(ctx, q)
		if err != nil || page.TotalSize != 32 {
			t.Errorf("ListTasks(%+v) totalSize = %d, %v; want the 32 stored tasks", q, page.TotalSize, err)
		}
	}
}

func TestPruneWorksInBatches(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{PruneBatch: 3})
	ctx := context.Background()
	for i := range 10 {
		rec := &TaskRecord{Task: a2a.Task{ID: fmt.Sprint(i), ContextID: fmt.Sprint(i), Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}}, UpdatedAt: time.UnixMilli(int64(i))}
		if err := s.SaveTask(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendConversation(ctx, &ConversationEntry{ContextID: fmt.Sprint(i), Time: time.UnixMilli(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	before := s.commits.Load()
	tasks, entries, err := s.Prune(ctx, time.UnixMilli(9))
	if err != nil || tasks != 9 || entries != 9 {
		t.Fatalf("Prune = %d, %d, %v; want 9, 9", tasks, entries, err)
	}
	if n := s.commits.Load() - before; n < 8 {
		t.Errorf("prune of 9+9 rows in batches of 3 took %d transactions", n)
	}
}

func TestGiveUpIsRecorded(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{})
	ctx := context.Background()
	rec := &TaskRecord{Task: a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
	if err := s.SaveTask(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, &PushConfig{Config: a2a.TaskPushNotificationConfig{TaskID: "t", ID: "p", URL: "https://h.example"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTask(ctx, rec, []Delivery{{ConfigID: "p", Body: []byte(`{"task":{}}`)}}); err != nil {
		t.Fatal(err)
	}
	ds, _ := s.DueDeliveries(ctx, time.Now().Add(time.Second), 0)
	if len(ds) != 1 {
		t.Fatalf("%d due", len(ds))
	}
	if err := s.RetryDelivery(ctx, ds[0].ID, 5, time.Now(), "connection refused"); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteDelivery(ctx, ds[0].ID, true, "gave up after 5 attempts"); err != nil {
		t.Fatal(err)
	}
	var taskID, configID, body, lastErr, reason string
	var attempts int
	err := s.ckpt.QueryRowContext(ctx, `SELECT task_id, config_id, body, attempts, last_error, reason FROM deliveries_failed WHERE id = ?`, ds[0].ID).
		Scan(&taskID, &configID, &body, &attempts, &lastErr, &reason)
	if err != nil || taskID != "t" || configID != "p" || body != `{"task":{}}` || attempts != 5 || lastErr != "connection refused" || reason != "gave up after 5 attempts" {
		t.Errorf("failed delivery record: %q %q %q %d %q %q, %v", taskID, configID, body, attempts, lastErr, reason, err)
	}
}

// TestCanceledReadsLeaveReadersUsable cancels reads at random moments on a
// store with a single reader, which must keep working.
func TestCanceledReadsLeaveReadersUsable(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{Readers: 1})
	ctx := context.Background()
	for i := range 150 {
		rec := &TaskRecord{Task: a2a.Task{ID: fmt.Sprintf("t%03d", i), Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
			History: []a2a.Message{{MessageID: "m", Parts: []a2a.Part{a2a.TextPart(strings.Repeat("x", 2000))}}}}, Owner: "o", UpdatedAt: time.UnixMilli(int64(i))}
		if err := s.SaveTask(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	canceled := 0
	for i := range 100 {
		cctx, cancel := context.WithTimeout(ctx, time.Duration(i%50)*100*time.Microsecond)
		_, err := s.ListTasks(cctx, TaskQuery{PageSize: 100, State: a2a.TaskStateCompleted})
		if err != nil {
			canceled++
		}
		cancel()
		if _, err := s.ListTasks(ctx, TaskQuery{PageSize: 100}); err != nil {
			t.Fatalf("after a read canceled mid-way (%d so far): %v", canceled, err)
		}
		if _, err := s.GetTask(ctx, "t001", "o"); err != nil {
			t.Fatalf("after a canceled read: %v", err)
		}
	}
	t.Logf("%d of 100 reads were cut short", canceled)
}
