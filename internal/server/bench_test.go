package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// benchWriter is a reusable ResponseWriter that keeps only the status and
// the size of the body, so a benchmark measures the server, not a recorder.
type benchWriter struct {
	h      http.Header
	status int
	n      int
	last   []byte
}

func (w *benchWriter) Header() http.Header { return w.h }
func (w *benchWriter) WriteHeader(s int)   { w.status = s }
func (w *benchWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.n += len(b)
	w.last = append(w.last[:0], b...)
	return len(b), nil
}

// SetReadDeadline and SetWriteDeadline make http.ResponseController work
// as it does on a real connection.
func (w *benchWriter) SetReadDeadline(time.Time) error  { return nil }
func (w *benchWriter) SetWriteDeadline(time.Time) error { return nil }

func (w *benchWriter) reset() {
	clear(w.h)
	w.status, w.n = 0, 0
}

// reusableBody is an io.ReadCloser over a fixed body that can be rewound.
type reusableBody struct{ bytes.Reader }

func (*reusableBody) Close() error { return nil }

// serveBench runs body through h b.N times in parallel and checks each
// answer is a success.
func serveBench(b *testing.B, h http.Handler, body []byte, want string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &benchWriter{h: http.Header{}}
		rb := &reusableBody{}
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.RemoteAddr = "127.0.0.1:4242"
		req.Host = "127.0.0.1:41241"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		req.ContentLength = int64(len(body))
		for pb.Next() {
			rb.Reset(body)
			req.Body = rb
			w.reset()
			h.ServeHTTP(w, req)
			if w.status != 200 || !bytes.Contains(w.last, []byte(want)) {
				b.Fatalf("HTTP %d: %s", w.status, w.last)
			}
		}
	})
}

// BenchmarkSendMessageBlocking is one blocking SendMessage through the
// whole handler (authentication, validation, task manager, memory store)
// with an agent that answers at once.
func BenchmarkSendMessageBlocking(b *testing.B) {
	srv, _ := newInstantServer(b)
	body, _ := a2a.MarshalRequest(1, "SendMessage", sendParams("hello, how are you today?", nil))
	serveBench(b, srv.Handler(), body, "TASK_STATE_COMPLETED")
}

// BenchmarkGetTask is one GetTask of a completed task.
func BenchmarkGetTask(b *testing.B) {
	srv, mgr := newInstantServer(b)
	resp, err := mgr.Send(context.Background(), tasks.SendParams{Request: sendParams("hello", nil)})
	if err != nil {
		b.Fatal(err)
	}
	body, _ := a2a.MarshalRequest(1, "GetTask", &a2a.GetTaskRequest{ID: resp.Task.ID})
	serveBench(b, srv.Handler(), body, resp.Task.ID)
}

// BenchmarkSendMessageBlockingHTTP is BenchmarkSendMessageBlocking over a
// real loopback HTTP/1.1 connection per goroutine (keep-alive), the setup
// a load test against the official SDK servers uses.
func BenchmarkSendMessageBlockingHTTP(b *testing.B) {
	srv, _ := newInstantServer(b)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	body, _ := a2a.MarshalRequest(1, "SendMessage", sendParams("hello, how are you today?", nil))
	postCompleted(b, ts.URL+"/", body, nil)
}

// holdExec accepts turns and leaves them running; the benchmark plays the
// agent.
type holdExec struct{ started chan *tasks.Turn }

func (x *holdExec) StartTurn(ctx context.Context, t *tasks.Turn) error { x.started <- t; return nil }
func (x *holdExec) CancelTurn(ctx context.Context, t *tasks.Turn, reason string) error {
	return nil
}

// BenchmarkSSEFanout measures one task update delivered to 100 SSE
// subscribers over real HTTP connections: ns/op is per update, for all
// 100 streams together.
func BenchmarkSSEFanout(b *testing.B) {
	const subscribers = 100
	st := store.NewMemory(1000)
	x := &holdExec{started: make(chan *tasks.Turn, 1)}
	mgr, err := tasks.NewManager(tasks.Options{Store: st, Executor: x, SubscriberBuffer: 1024})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := mgr.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer mgr.Close(context.Background())
	srv, err := New(Options{Tasks: mgr})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	resp, err := mgr.Send(context.Background(), tasks.SendParams{Request: sendParams("hold", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	})})
	if err != nil {
		b.Fatal(err)
	}
	taskID := resp.Task.ID
	<-x.started

	body, _ := a2a.MarshalRequest(1, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: taskID})
	tr := &http.Transport{MaxIdleConnsPerHost: subscribers}
	defer tr.CloseIdleConnections()
	var received [subscribers]atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < subscribers; i++ {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		r, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func(i int, r *http.Response) {
			defer wg.Done()
			defer r.Body.Close()
			br := bufio.NewReaderSize(r.Body, 64<<10)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if bytes.HasPrefix(line, []byte("data: ")) {
					received[i].Add(1)
				}
			}
		}(i, r)
	}
	waitAll := func(n int64) {
		deadline := time.Now().Add(30 * time.Second)
		for i := range received {
			for received[i].Load() < n {
				if time.Now().After(deadline) {
					b.Fatalf("subscriber %d got %d of %d events", i, received[i].Load(), n)
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	waitAll(1) // the snapshot
	msg := agentMsg(strings.Repeat("progress ", 10))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := mgr.Apply(ctx, taskID, tasks.Update{Kind: tasks.UpdateProgress, Message: msg}); err != nil {
			b.Fatal(err)
		}
		if i%256 == 255 {
			waitAll(int64(i + 2))
		}
	}
	waitAll(int64(b.N + 1))
	b.StopTimer()
	b.ReportMetric(float64(b.N*subscribers)/b.Elapsed().Seconds(), "events/s")
	_ = mgr.Apply(ctx, taskID, tasks.Update{Kind: tasks.UpdateFinal, Message: agentMsg("done")})
	wg.Wait()
}

// asyncExec answers every turn at once from another goroutine, as a host
// answers over its call stream: a stream sees the task's snapshot and
// WORKING first, the answer later.
type asyncExec struct{ instantExec }

func (x *asyncExec) StartTurn(ctx context.Context, t *tasks.Turn) error {
	go func() { _ = x.instantExec.StartTurn(context.WithoutCancel(ctx), t) }()
	return nil
}

// countingListener counts the writes of the connections it accepts (the
// server's write(2) calls on a plain TCP connection).
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// BenchmarkSendStreamingMessageHTTP is one SendStreamingMessage read to
// its end over a real loopback HTTP/1.1 connection per goroutine
// (keep-alive), with an agent that answers from another goroutine at
// once; writes/op counts the server's writes to its connections.
func BenchmarkSendStreamingMessageHTTP(b *testing.B) {
	st := store.NewMemory(10_000)
	x := &asyncExec{instantExec{reply: agentMsg("done")}}
	mgr, err := tasks.NewManager(tasks.Options{Store: st, Executor: x, RequestTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	x.m = mgr
	if _, err := mgr.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer mgr.Close(context.Background())
	srv, err := New(Options{Tasks: mgr})
	if err != nil {
		b.Fatal(err)
	}
	var writes atomic.Int64
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Listener = countingListener{ts.Listener, &writes}
	ts.Start()
	defer ts.Close()
	body, _ := a2a.MarshalRequest(1, "SendStreamingMessage", sendParams("hello, how are you today?", nil))
	postCompleted(b, ts.URL+"/", body, &writes)
}

// postCompleted posts body to url from parallel goroutines, each on its
// own keep-alive connection, until b.N answers that name a completed
// task; it reports the process's CPU per operation and, when writes
// counts the server's connection writes, the writes per operation.
func postCompleted(b *testing.B, url string, body []byte, writes *atomic.Int64) {
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.ResetTimer()
	if writes != nil {
		writes.Store(0)
	}
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(out, []byte("TASK_STATE_COMPLETED")) {
				b.Fatalf("HTTP %d: %s", resp.StatusCode, out)
			}
		}
	})
	if writes != nil {
		b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/op")
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time (user and system) the process used so far:
// client and server together in these benchmarks, but less disturbed by
// other jobs on the machine than the elapsed time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
