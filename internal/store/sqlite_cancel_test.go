package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// endAt is a context that ends at the n-th call of its Done method. That
// call cancels it and then pauses, so that whoever watches the context
// (database/sql, the driver's interrupt goroutine) sees it end at exactly
// that point of the caller's progress. Sweeping n over every call a read
// makes visits each place where a read can be cut short.
type endAt struct {
	context.Context
	cancel context.CancelFunc
	n      int32
	calls  atomic.Int32
}

func newEndAt(n int32) *endAt {
	ctx, cancel := context.WithCancel(context.Background())
	return &endAt{Context: ctx, cancel: cancel, n: n}
}

func (c *endAt) Done() <-chan struct{} {
	if c.calls.Add(1) == c.n {
		c.cancel()
		time.Sleep(2 * time.Millisecond)
	}
	return c.Context.Done()
}

// TestReadsCanceledAtEachPointLeaveReadersClean cancels every kind of read
// at each point where it looks at its context, on a store with a single
// reader, and checks after each that the reader is left as it was taken:
// no read transaction still open (the next ListTasks could not BEGIN) and
// no statement still running (the next read would see an old snapshot).
//
// The driver reports the context's error whenever the context ended while
// a statement ran, even when the statement completed; a BEGIN reported as
// failed that way has opened the transaction all the same.
func TestReadsCanceledAtEachPointLeaveReadersClean(t *testing.T) {
	s := openTestSQLite(t, SQLiteOptions{Readers: 1})
	ctx := context.Background()
	save := func(id, contextID string, state a2a.TaskState, ms int64) {
		t.Helper()
		rec := &TaskRecord{Task: a2a.Task{ID: id, ContextID: contextID, Status: a2a.TaskStatus{State: state}},
			Owner: "o", UpdatedAt: time.UnixMilli(ms)}
		if err := s.SaveTask(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		save(fmt.Sprintf("t%02d", i), "c", a2a.TaskStateWorking, int64(i+1))
	}
	if err := s.PutPushConfig(ctx, &PushConfig{Owner: "o", Config: a2a.TaskPushNotificationConfig{TaskID: "t00", ID: "p", URL: "https://h.example"}}); err != nil {
		t.Fatal(err)
	}
	rec := &TaskRecord{Task: a2a.Task{ID: "t00", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, Owner: "o", UpdatedAt: time.UnixMilli(1)}
	if err := s.SaveTask(ctx, rec, []Delivery{{ConfigID: "p", Body: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.AppendConversation(ctx, &ConversationEntry{ContextID: "c", Peer: "p", Direction: "out", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}

	reads := []struct {
		name string
		read func(context.Context) error
	}{
		{"GetTask", func(ctx context.Context) error { _, err := s.GetTask(ctx, "t01", "o"); return err }},
		{"ListTasks", func(ctx context.Context) error { _, err := s.ListTasks(ctx, TaskQuery{PageSize: 5}); return err }},
		{"ListTasks/filtered", func(ctx context.Context) error {
			_, err := s.ListTasks(ctx, TaskQuery{Owner: "o", ContextID: "c", State: a2a.TaskStateWorking, PageSize: 50})
			return err
		}},
		{"ActiveTasks", func(ctx context.Context) error { _, err := s.ActiveTasks(ctx); return err }},
		{"GetPushConfig", func(ctx context.Context) error { _, err := s.GetPushConfig(ctx, "t00", "p"); return err }},
		{"ListPushConfigs", func(ctx context.Context) error { _, err := s.ListPushConfigs(ctx, "t00"); return err }},
		{"DueDeliveries", func(ctx context.Context) error {
			_, err := s.DueDeliveries(ctx, time.Now().Add(time.Hour), 0)
			return err
		}},
		{"Conversation", func(ctx context.Context) error { _, err := s.Conversation(ctx, "c", 0); return err }},
		{"Conversations", func(ctx context.Context) error { _, err := s.Conversations(ctx, 0); return err }},
	}
	next := 100
	for _, rd := range reads {
		points, cut := 0, 0
		for n := int32(1); ; n++ {
			c := newEndAt(n)
			err := rd.read(c)
			c.cancel()
			if c.calls.Load() < n {
				break // the read finished before this point
			}
			points++
			if err != nil {
				cut++
			}
			// A task saved now must be visible to the (only) reader, and a
			// transaction must start on it. (Completed and in another
			// context, so that the reads above stay the same size.)
			next++
			id := fmt.Sprintf("t%03d", next)
			save(id, "other", a2a.TaskStateCompleted, int64(next))
			if _, err := s.GetTask(ctx, id, "o"); err != nil {
				t.Fatalf("%s canceled at point %d: then GetTask of a new task: %v", rd.name, n, err)
			}
			if _, err := s.ListTasks(ctx, TaskQuery{PageSize: 1}); err != nil {
				t.Fatalf("%s canceled at point %d: then ListTasks: %v", rd.name, n, err)
			}
		}
		if points == 0 || cut == 0 {
			t.Errorf("%s: canceled at %d points, cut short %d times: the sweep missed the read", rd.name, points, cut)
		}
		t.Logf("%s: canceled at %d points, cut short %d times", rd.name, points, cut)
	}
}
