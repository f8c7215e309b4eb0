package replicas_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchClients is how many clients send at once, spread round-robin over
// the replicas (each client keeps its connection to one replica, as a
// load balancer with keep-alive would).
const benchClients = 16

// BenchmarkReplicas measures the throughput of blocking SendMessage round
// trips (a new task each: created, handed to the host's echo agent,
// answered, stored) on one replica with SQLite, the single-machine
// default, and on one, two and three replicas sharing one PostgreSQL
// database — in the same run, on the same machine:
//
//	make bench-replicas                      # PostgreSQL with its durable defaults
//	go test ./testharness/e2e/replicas -run '^$' -bench Replicas -benchtime 3000x
//
// It reports tasks/s and the p50 and p99 latency. Every replica, the
// agents, PostgreSQL and the clients share this machine's CPUs, so more
// replicas add capacity only where there are cores to spare; on a real
// deployment each replica has its own host.
func BenchmarkReplicas(b *testing.B) {
	for _, c := range []struct {
		name     string
		replicas int
		store    string
	}{
		{"sqlite-1", 1, "sqlite"},
		{"postgres-1", 1, "postgres"},
		{"postgres-2", 2, "postgres"},
		{"postgres-3", 3, "postgres"},
	} {
		b.Run(c.name, func(b *testing.B) {
			if b.N == 1 {
				return // the harness's probe run; the measured run follows
			}
			dsn := ""
			if c.store == "postgres" {
				dsn = pgDSN(b)
			}
			rs := launch(b, dsn, c.replicas, map[string]any{"store": c.store}, "warn")
			benchSend(b, rs)
		})
	}
}

// benchSend drives b.N blocking sends over rs and reports the figures.
func benchSend(b *testing.B, rs []*replica) {
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	send := func(url string, i int64) (time.Duration, error) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-%d-%d","role":"ROLE_USER","parts":[{"text":"bench %d"}]}}}`,
			time.Now().UnixNano(), i, i)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+tokAlice)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"TASK_STATE_COMPLETED"`)) || !bytes.Contains(out, []byte(fmt.Sprintf("echo: bench %d", i))) {
			return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, out)
		}
		return took, nil
	}
	run := func(total int64, record bool) []time.Duration {
		var (
			next atomic.Int64
			mu   sync.Mutex
			lat  = make([]time.Duration, 0, total)
			wg   sync.WaitGroup
			fail atomic.Value
		)
		for w := range benchClients {
			url := rs[w%len(rs)].url
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := next.Add(1)
					if i > total || fail.Load() != nil {
						return
					}
					took, err := send(url, i)
					if err != nil {
						fail.Store(err)
						return
					}
					if record {
						mu.Lock()
						lat = append(lat, took)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if err := fail.Load(); err != nil {
			b.Fatalf("send: %v", err)
		}
		return lat
	}
	run(int64(max(200, b.N/10)), false) // warm up connections, caches, pools
	b.ResetTimer()
	start := time.Now()
	lat := run(int64(b.N), true)
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
