// Command seed fills an a2a-plugin task database with many tasks through
// the store's own API, so that the end-to-end tests can measure the plugin
// binary on a large store without spending minutes creating the tasks one
// request at a time (or under the race detector). It lives under testdata
// so that "go build ./..." leaves it alone; the tests build it.
//
// Usage: seed -db <path> -n <tasks> -owners alice,bob
//
// Task i belongs to peer:<owners[i mod len]>, is in context ctx-<i/10>,
// and is COMPLETED, except every 20th (FAILED) and every 20th+1
// (INPUT_REQUIRED); status timestamps grow by one millisecond per task,
// ending now. It prints one JSON line: {"tasks": n, "owners": {...},
// "states": {...}, "first": id, "last": id}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

func main() {
	path := flag.String("db", "", "database file")
	n := flag.Int("n", 100_000, "tasks to store")
	owners := flag.String("owners", "alice,bob", "peer names owning the tasks, in turn")
	flag.Parse()
	if err := run(*path, *n, strings.Split(*owners, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run(path string, n int, owners []string) error {
	if path == "" || n <= 0 || len(owners) == 0 {
		return fmt.Errorf("need -db, a positive -n and -owners")
	}
	s, err := store.OpenSQLite(path, store.SQLiteOptions{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	base := time.Now().Add(-time.Duration(n) * time.Millisecond)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := s.SaveTask(ctx, record(i, owners, base), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		_ = s.Close()
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	perOwner, perState := map[string]int{}, map[string]int{}
	for i := range n {
		perOwner["peer:"+owners[i%len(owners)]]++
		perState[string(state(i))]++
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"tasks": n, "owners": perOwner, "states": perState, "first": id(0), "last": id(n - 1),
	})
}

func id(i int) string { return fmt.Sprintf("seed-%07d", i) }

func state(i int) a2a.TaskState {
	switch i % 20 {
	case 0:
		return a2a.TaskStateFailed
	case 1:
		return a2a.TaskStateInputRequired
	}
	return a2a.TaskStateCompleted
}

func record(i int, owners []string, base time.Time) *store.TaskRecord {
	ts := base.Add(time.Duration(i) * time.Millisecond)
	ctxID := fmt.Sprintf("ctx-%d", i/10)
	q, a := fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i)
	user := a2a.Message{MessageID: id(i) + "-q", ContextID: ctxID, TaskID: id(i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &q}}}
	agent := a2a.Message{MessageID: id(i) + "-a", ContextID: ctxID, TaskID: id(i), Role: a2a.RoleAgent, Parts: []a2a.Part{{Text: &a}}}
	return &store.TaskRecord{
		Task: a2a.Task{
			ID: id(i), ContextID: ctxID,
			Status:    a2a.TaskStatus{State: state(i), Message: &agent, Timestamp: &a2a.Timestamp{Time: ts}},
			History:   []a2a.Message{user, agent},
			Artifacts: []a2a.Artifact{{ArtifactID: id(i) + "-answer", Name: "answer", Parts: []a2a.Part{{Text: &a}}}},
		},
		Owner: "peer:" + owners[i%len(owners)], CreatedAt: ts, UpdatedAt: ts,
	}
}
