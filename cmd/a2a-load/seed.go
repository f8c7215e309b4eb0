package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// seedOwner owns the seeded tasks: the identity the plugin gives an
// unauthenticated loopback caller, so a2a-load's ListTasks sees them.
const seedOwner = "local:127.0.0.1"

// seedConcurrency is how many goroutines save at once: the SQLite store's
// writer commits what is queued meanwhile in one transaction (up to 256
// saves), so many savers make big batches.
const seedConcurrency = 256

// seedResult is what "a2a-load seed" prints (one JSON line).
type seedResult struct {
	Tasks   int     `json:"tasks"`
	Seconds float64 `json:"seconds"`
}

// seedMain is "a2a-load seed": it fills a task database through the
// store package's own API, as the plugin would have written the tasks,
// without one HTTP request per task (a million of those take an hour on
// two cores). a2a-bench runs it as a process of its own before the plugin
// starts on the database.
func seedMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("a2a-load seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "SQLite database `FILE` (created if missing), e.g. DATA/a2a/a2a-plugin.db")
	dsn := fs.String("postgres", "", "PostgreSQL `DSN` instead of -db")
	n := fs.Int("n", 100_000, "tasks to add")
	from := fs.Int("from", 0, "number of the first task (to add to an earlier seed)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if (*db == "") == (*dsn == "") || *n < 1 || *from < 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "a2a-load seed: give exactly one of -db FILE and -postgres DSN, a positive -n and no arguments")
		return exitUsage
	}
	ctx := context.Background()
	// The seeder only saves tasks and closes the store.
	var st interface {
		store.Tasks
		io.Closer
	}
	var err error
	if *db != "" {
		if err = os.MkdirAll(filepath.Dir(*db), 0o700); err == nil {
			st, err = store.OpenSQLite(*db, store.SQLiteOptions{})
		}
	} else {
		st, err = store.OpenPostgres(ctx, *dsn, store.PostgresOptions{})
	}
	if err != nil {
		fmt.Fprintf(stderr, "a2a-load seed: %v\n", err)
		return exitErrors
	}
	t0 := time.Now()
	err = seed(ctx, st, *from, *n, time.Now())
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "a2a-load seed: %v\n", err)
		return exitErrors
	}
	json.NewEncoder(stdout).Encode(seedResult{Tasks: *n, Seconds: time.Since(t0).Seconds()})
	return exitOK
}

// seed saves tasks from..from+n-1 with seedConcurrency savers; the last
// one's status time is end, each earlier one a millisecond before.
func seed(ctx context.Context, st store.Tasks, from, n int, end time.Time) error {
	base := end.Add(-time.Duration(n) * time.Millisecond)
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range seedConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := st.SaveTask(ctx, seedRecord(from+i, base.Add(time.Duration(i)*time.Millisecond)), nil); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// seedRecord is task i as a blocking SendMessage to the echo agent leaves
// it: COMPLETED, the user's message and the answer in its history, the
// answer as its status message and one artifact; ten tasks per context.
func seedRecord(i int, ts time.Time) *store.TaskRecord {
	id := fmt.Sprintf("seed-%08d", i)
	ctxID := fmt.Sprintf("seed-ctx-%07d", i/10)
	q := fmt.Sprintf("hello from a2a-load seed %d", i)
	a := "echo: " + q
	user := a2a.Message{MessageID: id + "-q", ContextID: ctxID, TaskID: id, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &q}}}
	agent := a2a.Message{MessageID: id + "-a", ContextID: ctxID, TaskID: id, Role: a2a.RoleAgent, Parts: []a2a.Part{{Text: &a}}}
	return &store.TaskRecord{
		Task: a2a.Task{
			ID: id, ContextID: ctxID,
			Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: &agent, Timestamp: &a2a.Timestamp{Time: ts}},
			History:   []a2a.Message{user, agent},
			Artifacts: []a2a.Artifact{{ArtifactID: id + "-answer", Name: "answer", Parts: []a2a.Part{{Text: &a}}}},
		},
		Owner: seedOwner, CreatedAt: ts, UpdatedAt: ts,
	}
}
