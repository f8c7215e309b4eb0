package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// benchTask is a task of a realistic size: a user request, an agent
// status message and one text artifact, about 1.6 KB of JSON.
func benchTask(id, owner, contextID string, state a2a.TaskState, ts time.Time) *TaskRecord {
	return &TaskRecord{
		Task: a2a.Task{
			ID: id, ContextID: contextID,
			Status: a2a.TaskStatus{
				State: state, Timestamp: a2a.NewTimestamp(ts),
				Message: &a2a.Message{MessageID: "s-" + id, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("Here is the summary you asked for.")}},
			},
			History: []a2a.Message{{
				MessageID: "m-" + id, ContextID: contextID, TaskID: id, Role: a2a.RoleUser,
				Parts: []a2a.Part{a2a.TextPart(strings.Repeat("Please summarise the quarterly report for the board. ", 6))},
			}},
			Artifacts: []a2a.Artifact{{
				ArtifactID: "a-" + id, Name: "summary",
				Parts: []a2a.Part{a2a.TextPart(strings.Repeat("Revenue grew, costs fell, and the outlook is steady. ", 16))},
			}},
			Metadata: map[string]any{"source": "bench"},
		},
		Owner:     owner,
		CreatedAt: ts,
		UpdatedAt: ts,
	}
}

type benchOpener struct {
	name string
	open func(b *testing.B) Store
}

func benchStores() []benchOpener {
	return []benchOpener{
		{"Memory", func(b *testing.B) Store { return NewMemory(100_000) }},
		{"SQLite", func(b *testing.B) Store { return openTestSQLite(b, SQLiteOptions{}) }},
	}
}

// cpuTime is the processor time (user and system) this process has used.
// On a shared machine it is a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the processor time per op since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// settle waits until the SQLite store has applied every journaled save,
// so that the processor time of the applier behind the measured saves is
// counted with them.
func settle(b *testing.B, s Store) {
	if sq, ok := s.(*SQLite); ok {
		if err := sq.barrier(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// reportRate adds ops/s and, for SQLite, the mean group-commit batch.
func reportRate(b *testing.B, s Store, commits0, ops0 int64) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	if sq, ok := s.(*SQLite); ok {
		if c := sq.commits.Load() - commits0; c > 0 {
			b.ReportMetric(float64(sq.committedOps.Load()-ops0)/float64(c), "ops/commit")
		}
	}
}

func counters(s Store) (int64, int64) {
	if sq, ok := s.(*SQLite); ok {
		return sq.commits.Load(), sq.committedOps.Load()
	}
	return 0, 0
}

// BenchmarkSaveTask measures inserting new tasks, from one goroutine and
// from 16. Each task has fresh ids from a2a.NewID, as the plugin gives
// them (a blocking send without a contextId starts a new conversation), so
// the primary key and the context indexes see the insert positions they
// see in production.
func BenchmarkSaveTask(b *testing.B) {
	ctx := context.Background()
	for _, st := range benchStores() {
		b.Run(st.name+"/serial", func(b *testing.B) {
			s := st.open(b)
			defer s.Close()
			tmpl := benchTask("", "peer:bench", "ctx", a2a.TaskStateCompleted, time.Now())
			c0, o0 := counters(s)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for range b.N {
				rec := *tmpl
				rec.Task.ID, rec.Task.ContextID = a2a.NewID(), a2a.NewID()
				if err := s.SaveTask(ctx, &rec, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			settle(b, s)
			reportCPU(b, cpu0)
			reportRate(b, s, c0, o0)
		})
		b.Run(st.name+"/parallel16", func(b *testing.B) {
			s := st.open(b)
			defer s.Close()
			tmpl := benchTask("", "peer:bench", "ctx", a2a.TaskStateCompleted, time.Now())
			c0, o0 := counters(s)
			b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec := *tmpl
					rec.Task.ID, rec.Task.ContextID = a2a.NewID(), a2a.NewID()
					if err := s.SaveTask(ctx, &rec, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			settle(b, s)
			reportCPU(b, cpu0)
			reportRate(b, s, c0, o0)
		})
	}
}

// BenchmarkSaveTaskLifecycle measures the saves of a streamed task from 16
// goroutines: each new task is saved WORKING and then saved again
// COMPLETED (an update of a stored task); one op is one save.
func BenchmarkSaveTaskLifecycle(b *testing.B) {
	ctx := context.Background()
	for _, st := range benchStores() {
		b.Run(st.name+"/parallel16", func(b *testing.B) {
			s := st.open(b)
			defer s.Close()
			tmpl := benchTask("", "peer:bench", "ctx", a2a.TaskStateWorking, time.Now())
			c0, o0 := counters(s)
			b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				var rec TaskRecord
				for i := 0; pb.Next(); i++ {
					if i%2 == 0 {
						rec = *tmpl
						rec.Task.ID, rec.Task.ContextID = a2a.NewID(), a2a.NewID()
					} else {
						rec.Task.Status.State = a2a.TaskStateCompleted
						rec.UpdatedAt = time.Now()
					}
					if err := s.SaveTask(ctx, &rec, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			settle(b, s)
			reportCPU(b, cpu0)
			reportRate(b, s, c0, o0)
		})
	}
}

// populate stores n tasks: 10 owners, contexts of 5 tasks, 80% completed,
// 10% failed, 5% working, 5% input-required, one status timestamp per
// millisecond with ties in threes, saved from 32 goroutines.
func populate(tb testing.TB, s Store, n int) {
	tb.Helper()
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				state := a2a.TaskStateCompleted
				switch i % 20 {
				case 0, 1:
					state = a2a.TaskStateFailed
				case 2:
					state = a2a.TaskStateWorking
				case 3:
					state = a2a.TaskStateInputRequired
				}
				rec := benchTask(fmt.Sprintf("task-%09d", i), fmt.Sprintf("peer:%d", i%10), fmt.Sprintf("ctx-%d", i/5), state,
					base.Add(time.Duration(i-i%3)*time.Millisecond))
				if err := s.SaveTask(ctx, rec, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// BenchmarkListTasks measures one ListTasks page (50 tasks, with its
// TotalSize) over 1k, 10k and 100k stored tasks.
func BenchmarkListTasks(b *testing.B) {
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, st := range benchStores() {
		for _, n := range []int{1_000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%dk", st.name, n/1000), func(b *testing.B) {
				s := st.open(b)
				defer s.Close()
				start := time.Now()
				populate(b, s, n)
				b.Logf("%s: stored %d tasks in %v", st.name, n, time.Since(start).Round(time.Millisecond))
				if sq, ok := s.(*SQLite); ok {
					withWAL, err := sq.Size()
					if err != nil {
						b.Fatal(err)
					}
					if _, err := sq.ckpt.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
						b.Fatal(err)
					}
					size, err := sq.Size()
					if err != nil {
						b.Fatal(err)
					}
					b.Run("dbsize", func(b *testing.B) {
						for range b.N {
						}
						b.ReportMetric(float64(size)/float64(n)*10000/(1<<20), "MiB/10k-tasks")
						b.ReportMetric(float64(withWAL)/(1<<20), "MiB-with-wal")
					})
				}
				mid := n / 2
				midKey := taskKey{ts: base.Add(time.Duration(mid-mid%3) * time.Millisecond).UnixMilli(), id: fmt.Sprintf("task-%09d", mid)}
				ownerMid := mid - mid%10 + 3
				ownerKey := taskKey{ts: base.Add(time.Duration(ownerMid-ownerMid%3) * time.Millisecond).UnixMilli(), id: fmt.Sprintf("task-%09d", ownerMid)}
				for _, q := range []struct {
					name string
					q    TaskQuery
				}{
					{"first", TaskQuery{}},
					{"owner", TaskQuery{Owner: "peer:3"}},
					{"state", TaskQuery{State: a2a.TaskStateCompleted}},
					{"owner+state", TaskQuery{Owner: "peer:3", State: a2a.TaskStateCompleted}},
					{"failed", TaskQuery{State: a2a.TaskStateFailed}},
					{"owner+failed", TaskQuery{Owner: "peer:1", State: a2a.TaskStateFailed}},
					{"owner+context", TaskQuery{Owner: "peer:3", ContextID: fmt.Sprintf("ctx-%d", mid/5)}},
					{"owner+after", TaskQuery{Owner: "peer:3", StatusAfter: base.Add(time.Duration(mid) * time.Millisecond)}},
					{"deep", TaskQuery{PageToken: encodePageToken(midKey)}},
					{"owner+deep", TaskQuery{Owner: "peer:3", PageToken: encodePageToken(ownerKey)}},
				} {
					b.Run(q.name, func(b *testing.B) {
						page, err := s.ListTasks(ctx, q.q)
						if err != nil {
							b.Fatal(err)
						}
						if q.q.ContextID == "" && len(page.Tasks) != DefaultPageSize {
							b.Fatalf("%d tasks on the page", len(page.Tasks))
						}
						b.ReportAllocs()
						b.ResetTimer()
						cpu0 := cpuTime()
						for range b.N {
							if _, err := s.ListTasks(ctx, q.q); err != nil {
								b.Fatal(err)
							}
						}
						b.StopTimer()
						reportCPU(b, cpu0)
						b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
					})
				}
			})
		}
	}
}

// BenchmarkGetTask reads random tasks out of 10k.
func BenchmarkGetTask(b *testing.B) {
	ctx := context.Background()
	for _, st := range benchStores() {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			defer s.Close()
			const n = 10_000
			populate(b, s, n)
			r := rand.New(rand.NewPCG(1, 1))
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				for range b.N {
					if _, err := s.GetTask(ctx, fmt.Sprintf("task-%09d", r.IntN(n)), ""); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu0)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			})
			b.Run("parallel16", func(b *testing.B) {
				b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.RunParallel(func(pb *testing.PB) {
					r := rand.New(rand.NewPCG(rand.Uint64(), 1))
					for pb.Next() {
						if _, err := s.GetTask(ctx, fmt.Sprintf("task-%09d", r.IntN(n)), ""); err != nil {
							b.Error(err)
							return
						}
					}
				})
				reportCPU(b, cpu0)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			})
		})
	}
}

// BenchmarkSQLiteWriterTxn runs transactions of 10 saves directly on the
// writer, one goroutine, no waiting for a batch to fill: its instruction
// count per save (callgrind; docs/performance.md, "Store cost per save")
// is steady on a shared machine where CPU time is not. insert: 10 new
// COMPLETED tasks per op (a blocking send's save); lifecycle: 10 new
// WORKING tasks, then the same 10 COMPLETED (a stream's two saves).
func BenchmarkSQLiteWriterTxn(b *testing.B) {
	ctx := context.Background()
	rowArgs := func(rec *TaskRecord) []any {
		blob, err := a2a.Marshal(&rec.Task)
		if err != nil {
			b.Fatal(err)
		}
		return []any{rec.Task.ID, rec.Task.ContextID, rec.Owner, stateName(rec.Task.Status.State),
			rec.Task.Status.State.Terminal(), rec.StatusMillis(), toMillis(rec.CreatedAt), blob, rec.Agent}
	}
	txn := func(s *SQLite, rows [][]any) {
		err := s.write(ctx, func(w *writer) error {
			for _, a := range rows {
				if err := w.saveTaskRow(a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"insert", "lifecycle"} {
		b.Run(mode, func(b *testing.B) {
			s := openTestSQLite(b, SQLiteOptions{})
			defer s.Close()
			tmpl := benchTask("", "peer:bench", "ctx", a2a.TaskStateCompleted, time.Now())
			b.ReportAllocs()
			for range b.N {
				var ins, upd [][]any
				for range 10 {
					rec := *tmpl
					rec.Task.ID, rec.Task.ContextID = a2a.NewID(), a2a.NewID()
					if mode == "lifecycle" {
						rec.Task.Status.State = a2a.TaskStateWorking
						ins = append(ins, rowArgs(&rec))
						rec.Task.Status.State = a2a.TaskStateCompleted
						rec.UpdatedAt = rec.UpdatedAt.Add(time.Millisecond)
						upd = append(upd, rowArgs(&rec))
					} else {
						ins = append(ins, rowArgs(&rec))
					}
				}
				txn(s, ins)
				if upd != nil {
					txn(s, upd)
				}
			}
		})
	}
}
