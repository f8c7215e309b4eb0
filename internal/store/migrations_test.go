package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// TestMigration2AddsTraceContextToAnExistingOutbox opens a database file
// written with the version 1 schema, with a task and a queued
// notification, and checks that migration 2 keeps both and that new
// notifications carry their context and trace.
func TestMigration2AddsTraceContextToAnExistingOutbox(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	task := a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	blob, err := a2a.Marshal(&task)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{migrations[0], nil},
		{"PRAGMA user_version = 1", nil},
		{`INSERT INTO tasks (id, context_id, owner, state, terminal, status_ts, created_at, task) VALUES (?, ?, ?, ?, 0, 5, 5, ?)`,
			[]any{"t1", "c1", "peer:alice", stateName(a2a.TaskStateWorking), blob}},
		{`INSERT INTO push_configs (task_id, id, owner, created_at, config) VALUES ('t1', 'p', 'peer:alice', 5, ?)`,
			[]any{[]byte(`{"taskId":"t1","id":"p","url":"https://h.example/hook"}`)}},
		{`INSERT INTO outbox (task_id, config_id, body, attempts, next_try, last_error, created_at) VALUES ('t1', 'p', ?, 0, 5, '', 5)`,
			[]any{[]byte(`{"statusUpdate":{}}`)}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("building the version 1 database: %v", err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatalf("opening a version 1 database: %v", err)
	}
	defer s.Close()
	var v int
	if err := s.w.conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion || SchemaVersion < 2 {
		t.Fatalf("user_version %d (%v), SchemaVersion %d; want the latest, 2 or later", v, err, SchemaVersion)
	}
	if old, err := s.GetTask(ctx, "t1", "peer:alice"); err != nil {
		t.Fatalf("the version 1 task after migration: %v", err)
	} else if old.Agent != "" {
		t.Errorf("the version 1 task belongs to agent %q after migration, want the default agent (\"\")", old.Agent)
	}
	ds, err := s.DueDeliveries(ctx, time.Now(), 0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("DueDeliveries after migration = %+v, %v; want the queued notification", ds, err)
	}
	if d := ds[0]; d.TaskID != "t1" || d.ConfigID != "p" || string(d.Body) != `{"statusUpdate":{}}` || d.ContextID != "" || d.Trace.Traceparent != "" || d.Trace.Tracestate != "" {
		t.Errorf("old notification after migration = %+v", d)
	}
	if err := s.CompleteDelivery(ctx, ds[0].ID, false, ""); err != nil {
		t.Fatal(err)
	}

	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	rec := &TaskRecord{Task: task, Owner: "peer:alice", UpdatedAt: time.UnixMilli(6)}
	if err := s.SaveTask(ctx, rec, []Delivery{{ConfigID: "p", ContextID: "c1", Body: []byte("b"), Trace: tracing.Context{Traceparent: tp, Tracestate: "vendor=1"}}}); err != nil {
		t.Fatal(err)
	}
	ds, err = s.DueDeliveries(ctx, time.Now().Add(time.Second), 0)
	if err != nil || len(ds) != 1 || ds[0].ContextID != "c1" || ds[0].Trace.Traceparent != tp || ds[0].Trace.Tracestate != "vendor=1" {
		t.Fatalf("new notification = %+v, %v; want its context and trace", ds, err)
	}
}

// TestMigration6KeepsTheTaskCounts opens a version 5 database, whose
// count triggers counted its tasks, and checks that after migration 6 the
// writer's own counting carries on from those counts: an update that
// changes a task's state and owner, and a new task, leave ListTasks'
// totalSize exact for every counted filter.
func TestMigration6KeepsTheTaskCounts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:5] {
		if _, err := db.ExecContext(ctx, m); err != nil {
			t.Fatalf("building the version 5 database, step %d: %v", i+1, err)
		}
	}
	if _, err := db.ExecContext(ctx, "PRAGMA user_version = 5"); err != nil {
		t.Fatal(err)
	}
	for i, owner := range []string{"peer:alice", "peer:alice", "peer:bob"} {
		task := a2a.Task{ID: fmt.Sprint("t", i), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		blob, err := a2a.Marshal(&task)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO tasks (id, context_id, owner, state, terminal, status_ts, created_at, task) VALUES (?, 'c', ?, ?, 0, 5, 5, ?)`,
			task.ID, owner, stateName(a2a.TaskStateWorking), blob); err != nil {
			t.Fatalf("building the version 5 database: %v", err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatalf("opening a version 5 database: %v", err)
	}
	defer s.Close()
	var triggers int
	if err := s.w.conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN ('tasks_count_insert', 'tasks_count_update')`).Scan(&triggers); err != nil || triggers != 0 {
		t.Fatalf("%d insert and update count triggers left (%v), want none", triggers, err)
	}
	// t1 moves from alice to bob and completes; t3 is new, alice's.
	for _, rec := range []*TaskRecord{
		{Task: a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}, Owner: "peer:bob", UpdatedAt: time.UnixMilli(6)},
		{Task: a2a.Task{ID: "t3", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, Owner: "peer:alice", UpdatedAt: time.UnixMilli(7)},
	} {
		if err := s.SaveTask(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q    TaskQuery
		want int
	}{
		{TaskQuery{}, 4},
		{TaskQuery{State: a2a.TaskStateWorking}, 3},
		{TaskQuery{State: a2a.TaskStateCompleted}, 1},
		{TaskQuery{Owner: "peer:alice"}, 2},
		{TaskQuery{Owner: "peer:bob"}, 2},
		{TaskQuery{Owner: "peer:bob", State: a2a.TaskStateCompleted}, 1},
		{TaskQuery{Owner: "peer:bob", State: a2a.TaskStateWorking}, 1},
		{TaskQuery{Owner: "peer:alice", State: a2a.TaskStateWorking}, 2},
	} {
		page, err := s.ListTasks(ctx, c.q)
		if err != nil || page.TotalSize != c.want || len(page.Tasks) != c.want {
			t.Errorf("ListTasks(%+v): totalSize %d, %d tasks, %v; want %d", c.q, page.TotalSize, len(page.Tasks), err, c.want)
		}
	}
	if _, _, err := s.Prune(ctx, time.UnixMilli(100)); err != nil {
		t.Fatal(err)
	}
	if page, err := s.ListTasks(ctx, TaskQuery{Owner: "peer:bob"}); err != nil || page.TotalSize != 1 {
		t.Errorf("after pruning the completed task, bob's totalSize = %d, %v; want 1", page.TotalSize, err)
	}
}
