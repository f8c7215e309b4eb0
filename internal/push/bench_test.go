package push

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// BenchmarkDeliver measures signed deliveries per second from the outbox
// to a local receiver, spread over configs delivered in parallel.
func BenchmarkDeliver(b *testing.B) {
	for _, kind := range []string{"memory", "sqlite"} {
		for _, configs := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/configs=%d", kind, configs), func(b *testing.B) {
				var st store.Store
				if kind == "memory" {
					st = store.NewMemory(10000)
				} else {
					s, err := store.OpenSQLite(filepath.Join(b.TempDir(), "a2a.db"), store.SQLiteOptions{})
					if err != nil {
						b.Fatal(err)
					}
					st = s
				}
				defer st.Close()
				var got atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					got.Add(1)
					w.WriteHeader(http.StatusNoContent)
				}))
				defer srv.Close()
				f := newFixture(b, st, nil)
				for c := range configs {
					f.config(fmt.Sprintf("t%d", c%8), fmt.Sprintf("c%d", c), srv.URL)
				}
				payload := body(b, "t0", "benchmark")
				ctx := context.Background()
				for c := range configs {
					task := fmt.Sprintf("t%d", c%8)
					n := b.N / configs
					if c < b.N%configs {
						n++
					}
					for n > 0 {
						batch := min(n, 500)
						n -= batch
						ds := make([]store.Delivery, batch)
						for i := range ds {
							ds[i] = store.Delivery{ConfigID: fmt.Sprintf("c%d", c), Body: payload}
						}
						if err := st.SaveTask(ctx, f.record(task), ds); err != nil {
							b.Fatal(err)
						}
					}
				}
				d, err := New(Options{Store: st, Guard: loopback(), Secret: testSecret})
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				done := make(chan error)
				go func() { done <- d.Run(ctx) }()
				for got.Load() < int64(b.N) {
					time.Sleep(100 * time.Microsecond)
				}
				b.StopTimer()
				_ = d.Close()
				<-done
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
			})
		}
	}
}
