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
// All four set-ups are started first; then b.N round trips per set-up are
// run in benchRounds interleaved rounds, so that a change in the machine's
// background load during the run affects them alike. It reports, per
// set-up, tasks/s, the p50 and p99 latency in ms, and the CPU time per
// task of the plugin processes and of PostgreSQL (from /proc), which is
// what a deployment with a machine per replica scales by. Every replica, the
// agents, PostgreSQL and the clients share this machine's CPUs, so more
// replicas add capacity only where there are cores to spare; in a real
// deployment each replica has its own machine.
func BenchmarkReplicas(b *testing.B) {
	if b.N == 1 {
		return // the harness's probe run; the measured run follows
	}
	setups := []struct {
		name     string
		replicas int
		store    string
		rs       []*replica
		lat      []time.Duration
		elapsed  time.Duration
		// CPU used during the measurement by the set-up's plugins and
		// by PostgreSQL (all its processes on this machine).
		plugins, postgres time.Duration
	}{
		{name: "sqlite1", replicas: 1, store: "sqlite"},
		{name: "pg1", replicas: 1, store: "postgres"},
		{name: "pg2", replicas: 2, store: "postgres"},
		{name: "pg3", replicas: 3, store: "postgres"},
	}
	for i := range setups {
		su := &setups[i]
		dsn := ""
		if su.store == "postgres" {
			dsn = pgDSN(b)
		}
		su.rs = launch(b, dsn, su.replicas, map[string]any{"store": su.store}, "warn", nil)
		benchSend(b, su.rs, max(200, b.N/10)) // warm up connections, caches, pools
	}
	b.ResetTimer()
	per := max(1, b.N/benchRounds)
	for range benchRounds {
		for i := range setups {
			su := &setups[i]
			start, cpu0, pg0 := time.Now(), pluginsCPU(b, su.rs), postgresCPU()
			su.lat = append(su.lat, benchSend(b, su.rs, per)...)
			su.elapsed += time.Since(start)
			su.plugins += pluginsCPU(b, su.rs) - cpu0
			su.postgres += postgresCPU() - pg0
		}
	}
	b.StopTimer()
	for _, su := range setups {
		slices.Sort(su.lat)
		b.ReportMetric(float64(len(su.lat))/su.elapsed.Seconds(), su.name+"-tasks/s")
		b.ReportMetric(float64(su.lat[len(su.lat)/2].Microseconds())/1000, su.name+"-p50-ms")
		b.ReportMetric(float64(su.lat[len(su.lat)*99/100].Microseconds())/1000, su.name+"-p99-ms")
		n := float64(len(su.lat))
		b.ReportMetric(float64(su.plugins.Microseconds())/n, su.name+"-plugin-cpu-us/task")
		if su.store == "postgres" {
			b.ReportMetric(float64(su.postgres.Microseconds())/n, su.name+"-postgres-cpu-us/task")
		}
	}
}

// benchRounds is how many interleaved rounds BenchmarkReplicas runs.
const benchRounds = 5

// benchSend makes total blocking sends over rs with benchClients clients
// and returns their latencies.
func benchSend(b *testing.B, rs []*replica, total int) []time.Duration {
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
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
				if i > int64(total) || fail.Load() != nil {
					return
				}
				took, err := sendOne(client, url, i)
				if err != nil {
					fail.Store(err)
					return
				}
				mu.Lock()
				lat = append(lat, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := fail.Load(); err != nil {
		b.Fatalf("send: %v", err)
	}
	return lat
}

// sendOne makes one blocking SendMessage and checks the echoed answer.
func sendOne(client *http.Client, url string, i int64) (time.Duration, error) {
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
