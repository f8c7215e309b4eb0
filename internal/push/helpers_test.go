package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/testclock"
)

func newFakeClock() *testclock.Clock {
	return testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// loopback is a guard that lets deliveries reach httptest receivers.
func loopback() *security.SSRFGuard { return &security.SSRFGuard{AllowLoopback: true} }

// eachStore runs fn against a memory store and a SQLite store in a
// temporary directory.
func eachStore(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("memory", func(t *testing.T) { fn(t, openMemory(t)) })
	t.Run("sqlite", func(t *testing.T) { fn(t, openSQLite(t, filepath.Join(t.TempDir(), "a2a.db"))) })
}

func openMemory(t testing.TB) store.Store {
	st := store.NewMemory(10000)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func openSQLite(t testing.TB, path string) store.Store {
	t.Helper()
	st, err := store.OpenSQLite(path, store.SQLiteOptions{})
	if err != nil {
		t.Fatalf("open SQLite store %s: %v", path, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// fixture puts tasks, push configs and deliveries into a store.
type fixture struct {
	t   testing.TB
	st  store.Store
	now func() time.Time
}

func newFixture(t testing.TB, st store.Store, now func() time.Time) *fixture {
	if now == nil {
		now = time.Now
	}
	return &fixture{t: t, st: st, now: now}
}

func (f *fixture) record(taskID string) *store.TaskRecord {
	return &store.TaskRecord{
		Task: a2a.Task{
			ID:        taskID,
			ContextID: "ctx-" + taskID,
			Status:    a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.NewTimestamp(f.now())},
		},
		Owner:     "peer:test",
		CreatedAt: f.now(),
		UpdatedAt: f.now(),
	}
}

// config saves the task (if needed) and a push config for it.
func (f *fixture) config(taskID, configID, url string, edit ...func(*a2a.TaskPushNotificationConfig)) {
	f.t.Helper()
	ctx := context.Background()
	if _, err := f.st.GetTask(ctx, taskID, ""); errors.Is(err, store.ErrNotFound) {
		if err := f.st.SaveTask(ctx, f.record(taskID), nil); err != nil {
			f.t.Fatalf("save task %s: %v", taskID, err)
		}
	}
	c := a2a.TaskPushNotificationConfig{ID: configID, TaskID: taskID, URL: url}
	for _, e := range edit {
		e(&c)
	}
	if err := f.st.PutPushConfig(ctx, &store.PushConfig{Config: c, Owner: "peer:test"}); err != nil {
		f.t.Fatalf("put push config %s/%s: %v", taskID, configID, err)
	}
}

// enqueue adds one delivery per seq to a config's queue, due now, and
// returns the bodies.
func (f *fixture) enqueue(taskID, configID string, seqs ...string) [][]byte {
	f.t.Helper()
	var ds []store.Delivery
	var bodies [][]byte
	for _, s := range seqs {
		b := body(f.t, taskID, s)
		bodies = append(bodies, b)
		ds = append(ds, store.Delivery{TaskID: taskID, ConfigID: configID, Body: b, NextTry: f.now(), CreatedAt: f.now()})
	}
	if err := f.st.SaveTask(context.Background(), f.record(taskID), ds); err != nil {
		f.t.Fatalf("save task %s with %d deliveries: %v", taskID, len(ds), err)
	}
	return bodies
}

// outboxEmpty reports whether no delivery is left, due or not.
func (f *fixture) outboxEmpty() bool {
	f.t.Helper()
	ds, err := f.st.DueDeliveries(context.Background(), time.Now().Add(100*365*24*time.Hour), 1000)
	if err != nil {
		f.t.Fatalf("due deliveries: %v", err)
	}
	return len(ds) == 0
}

// body is a StreamResponse whose status message says seq.
func body(t testing.TB, taskID, seq string) []byte {
	t.Helper()
	b, err := a2a.Marshal(&a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskID:    taskID,
		ContextID: "ctx-" + taskID,
		Status: a2a.TaskStatus{
			State:     a2a.TaskStateWorking,
			Timestamp: a2a.NewTimestamp(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
			Message:   &a2a.Message{MessageID: "m-" + seq, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(seq)}},
		},
		Metadata: map[string]any{"seq": seq},
	}})
	if err != nil {
		t.Fatalf("marshal body: %v", err)
	}
	return b
}

// seqOf reads back the seq of a body.
func seqOf(t testing.TB, b []byte) string {
	t.Helper()
	var r a2a.StreamResponse
	if err := a2a.Unmarshal(b, &r); err != nil || r.StatusUpdate == nil {
		t.Fatalf("receiver got a body that is not a status update (%v): %s", err, b)
	}
	s, _ := r.StatusUpdate.Metadata["seq"].(string)
	return s
}

// request is one POST a receiver got.
type request struct {
	path   string
	header http.Header
	body   []byte
	status int
}

// receiver is a webhook that records every request. respond decides the
// answer to the n-th request (from 0); nil answers 204.
type receiver struct {
	*httptest.Server
	respond func(w http.ResponseWriter, r *http.Request, n int) int

	mu  sync.Mutex
	all []request
}

func newReceiver(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int) int) *receiver {
	rc := &receiver{respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := len(rc.all)
	rc.all = append(rc.all, request{path: r.URL.Path, header: r.Header.Clone(), body: b})
	rc.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(b))
	status := http.StatusNoContent
	if rc.respond != nil {
		status = rc.respond(w, r, n)
	} else {
		w.WriteHeader(status)
	}
	rc.mu.Lock()
	rc.all[n].status = status
	rc.mu.Unlock()
}

// requests returns every request so far.
func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.all...)
}

// accepted returns the requests answered 2xx.
func (rc *receiver) accepted() []request {
	var out []request
	for _, r := range rc.requests() {
		if r.status/100 == 2 {
			out = append(out, r)
		}
	}
	return out
}

// reply writes status (and header pairs) and returns status.
func reply(w http.ResponseWriter, status int, header ...string) int {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.WriteHeader(status)
	return status
}

// recStore records what the dispatcher writes to the store.
type recStore struct {
	store.Store
	mu        sync.Mutex
	completed []completion
	retries   []retryCall
}

type completion struct {
	id     int64
	gaveUp bool
	reason string
}

type retryCall struct {
	id       int64
	attempts int
	next     time.Time
	lastErr  string
}

func (s *recStore) CompleteDelivery(ctx context.Context, id int64, gaveUp bool, reason string) error {
	err := s.Store.CompleteDelivery(ctx, id, gaveUp, reason)
	s.mu.Lock()
	s.completed = append(s.completed, completion{id, gaveUp, reason})
	s.mu.Unlock()
	return err
}

func (s *recStore) RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time, lastErr string) error {
	err := s.Store.RetryDelivery(ctx, id, attempts, next, lastErr)
	s.mu.Lock()
	s.retries = append(s.retries, retryCall{id, attempts, next, lastErr})
	s.mu.Unlock()
	return err
}

func (s *recStore) gaveUp() []completion {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []completion
	for _, c := range s.completed {
		if c.gaveUp {
			out = append(out, c)
		}
	}
	return out
}

func (s *recStore) completions() []completion {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]completion(nil), s.completed...)
}

func (s *recStore) retryCalls() []retryCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]retryCall(nil), s.retries...)
}

// counter is an Observer.
type counter struct{ delivered, retried, gaveUp atomic.Int64 }

func (c *counter) Delivered(time.Duration) { c.delivered.Add(1) }
func (c *counter) Retried()                { c.retried.Add(1) }
func (c *counter) GaveUp()                 { c.gaveUp.Add(1) }

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "push", Output: l, Level: hclog.Trace, JSONFormat: true})
}

// start runs a dispatcher until the test ends.
func start(t testing.TB, opts Options) *Dispatcher {
	t.Helper()
	if opts.Guard == nil {
		opts.Guard = loopback()
	}
	if opts.Secret == nil {
		opts.Secret = testSecret
	}
	d, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		_ = d.Close()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Run: %v", err)
		}
	})
	return d
}

// eventually polls cond until it holds, calling tick between polls (to
// advance a fake clock, say), and fails after a generous deadline. The
// deadline only stops a hung test; nothing is asserted about timing.
func eventually(t testing.TB, what string, cond func() bool, tick func()) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		if tick != nil {
			tick()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// seqs lists the seqs of requests.
func seqs(t testing.TB, rs []request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, seqOf(t, r.body))
	}
	return out
}

// numbered returns prefix0 … prefix(n-1).
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return out
}

func sameStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}
