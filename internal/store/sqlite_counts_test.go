package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// A save and the Prune that deletes its task in one transaction (as one
// group commit can carry them): the writer's pending count of the save
// must reach the counters before the delete trigger subtracts from them,
// or totalSize keeps a task that is gone.
func TestSQLiteCountsOfASaveAndItsPruneInOneTransaction(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{})
	ctx := context.Background()
	old := time.Now().Add(-time.Hour).UnixMilli()
	err := s.write(ctx, func(w *writer) error {
		args := []any{"x", "c", "alice", stateName(a2a.TaskStateCompleted), true, old, old, []byte(`{"id":"x"}`), ""}
		if err := w.saveTaskRow(args); err != nil {
			return err
		}
		_, err := w.pruneTaskRows(time.Now().UnixMilli(), 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []TaskQuery{{Owner: "alice", PageSize: 10}, {PageSize: 10}} {
		p, err := s.ListTasks(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if p.TotalSize != len(p.Tasks) {
			t.Errorf("owner %q: totalSize %d, tasks %d", q.Owner, p.TotalSize, len(p.Tasks))
		}
	}
}

// The same through the public API: saves of old terminal tasks racing a
// pruning loop, batched by group commit as they come.
func TestSQLiteCountsOfSavesRacingPrune(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{})
	ctx := context.Background()
	old := time.Now().Add(-time.Hour)
	stop := make(chan struct{})
	var pw sync.WaitGroup
	pw.Add(1)
	go func() {
		defer pw.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := s.Prune(ctx, time.Now()); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				id := fmt.Sprintf("g%d-%d", g, i)
				rec := &TaskRecord{Task: a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}, Owner: id, UpdatedAt: old, CreatedAt: old}
				if err := s.SaveTask(ctx, rec, nil); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	pw.Wait()
	if _, _, err := s.Prune(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	p, err := s.ListTasks(ctx, TaskQuery{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.TotalSize != len(p.Tasks) {
		t.Fatalf("after every task was pruned: totalSize %d, tasks %d", p.TotalSize, len(p.Tasks))
	}
}
