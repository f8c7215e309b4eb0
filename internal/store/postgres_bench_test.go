package store_test

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// pgServerCPU is the processor time used so far by the PostgreSQL server
// behind s (its postmaster and the processes it started), when the server
// runs on this machine; 0 when it cannot tell. Backends that exit meanwhile
// take their time with them, so measure over a pool whose connections stay.
func pgServerCPU(tb testing.TB, s *store.Postgres) time.Duration {
	tb.Helper()
	var backend int
	if err := s.Pool().QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		tb.Fatal(err)
	}
	stat := func(pid string) (ppid string, ticks int64, ok bool) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return "", 0, false
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			return "", 0, false
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		return f[1], u + st, true
	}
	postmaster, _, ok := stat(strconv.Itoa(backend))
	if !ok {
		return 0
	}
	_, total, _ := stat(postmaster)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pp, t, ok := stat(e.Name()); ok && pp == postmaster {
			total += t
		}
	}
	return time.Duration(total) * time.Second / 100 // USER_HZ
}

// BenchmarkPostgresSaveTask is BenchmarkSaveTask on PostgreSQL: new tasks
// from one goroutine and from 16, with the server's durable settings and
// with synchronous_commit off (which takes the WAL flush out of each save,
// leaving mostly the statements' cost). server-µs/op is the PostgreSQL
// server's CPU per save (when it runs on this machine).
func BenchmarkPostgresSaveTask(b *testing.B) {
	ctx := context.Background()
	for _, v := range []struct {
		name string
		par  int
		sync bool
	}{{"par1", 1, true}, {"par16", 16, true}, {"par1-nosync", 1, false}, {"par16-nosync", 16, false}} {
		par := v.par
		b.Run(v.name, func(b *testing.B) {
			dsn := pgDSN(b)
			if !v.sync {
				if strings.Contains(dsn, "://") {
					dsn += "&synchronous_commit=off"
				} else {
					dsn += " synchronous_commit=off"
				}
			}
			s := openTestPostgres(b, dsn, "r1")
			defer s.Close()
			srv0 := pgServerCPU(b, s)
			tmpl := store.BenchTask("", "peer:bench", "ctx", a2a.TaskStateCompleted, time.Now())
			save := func() error {
				rec := *tmpl
				rec.Task.ID, rec.Task.ContextID = a2a.NewID(), a2a.NewID()
				return s.SaveTask(ctx, &rec, nil)
			}
			b.ReportAllocs()
			b.ResetTimer()
			if par == 1 {
				for range b.N {
					if err := save(); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism((par + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := save(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "saves/s")
			if srv := pgServerCPU(b, s) - srv0; srv > 0 {
				b.ReportMetric(float64(srv.Microseconds())/float64(b.N), "server-µs/op")
			}
		})
	}
}

// BenchmarkPostgresListTasks100k times the first page of ListTasks at
// 100,000 stored tasks (seeded once, not timed) and reports the p50 and
// p99 of the calls (-benchtime=200x for 200 calls a filter). The page1
// rows ask for a page of one task: mostly the cost of totalSize.
func BenchmarkPostgresListTasks100k(b *testing.B) {
	ctx := context.Background()
	s := openTestPostgres(b, pgDSN(b), "r1")
	defer s.Close()
	start := time.Now()
	store.Populate(b, s, 100_000)
	b.Logf("stored 100,000 tasks in %v", time.Since(start).Round(time.Millisecond))
	if _, err := s.Pool().Exec(ctx, `VACUUM ANALYZE tasks`); err != nil {
		b.Fatal(err)
	}
	var deltas, deltaBytes int64
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM task_count_deltas), pg_total_relation_size('task_count_deltas')`).Scan(&deltas, &deltaBytes); err == nil {
		b.Logf("unfolded count deltas: %d rows, %d KiB with their index", deltas, deltaBytes>>10)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, q := range []struct {
		name string
		q    store.TaskQuery
		want int
	}{
		{"none", store.TaskQuery{}, 100_000},
		{"none/page1", store.TaskQuery{PageSize: 1}, 100_000},
		{"owner/page1", store.TaskQuery{Owner: "peer:3", PageSize: 1}, 10_000},
		{"owner", store.TaskQuery{Owner: "peer:3"}, 10_000},
		{"owner+state", store.TaskQuery{Owner: "peer:3", State: a2a.TaskStateInputRequired}, 5_000},
		{"state", store.TaskQuery{State: a2a.TaskStateCompleted}, 80_000},
		{"owner+context", store.TaskQuery{Owner: "peer:3", ContextID: "ctx-10000"}, 1},
		{"owner+after", store.TaskQuery{Owner: "peer:3", StatusAfter: base.Add(90_000 * time.Millisecond)}, -1},
	} {
		b.Run(q.name, func(b *testing.B) {
			page, err := s.ListTasks(ctx, q.q)
			if err != nil {
				b.Fatal(err)
			}
			if q.want >= 0 && page.TotalSize != q.want {
				b.Fatalf("totalSize %d, want %d", page.TotalSize, q.want)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := s.ListTasks(ctx, q.q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
