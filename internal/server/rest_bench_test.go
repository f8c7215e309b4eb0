package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// serveRESTBench runs one HTTP+JSON request through h b.N times in
// parallel and checks each answer is a success holding want.
func serveRESTBench(b *testing.B, h http.Handler, method, target string, body []byte, want string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &benchWriter{h: http.Header{}}
		rb := &reusableBody{}
		req := httptest.NewRequest(method, target, nil)
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

// BenchmarkRESTSendMessageBlocking is BenchmarkSendMessageBlocking over
// the HTTP+JSON binding (POST /message:send).
func BenchmarkRESTSendMessageBlocking(b *testing.B) {
	srv, _ := newInstantServer(b)
	body, _ := a2a.Marshal(sendParams("hello, how are you today?", nil))
	serveRESTBench(b, srv.Handler(), http.MethodPost, "/message:send", body, "TASK_STATE_COMPLETED")
}

// BenchmarkRESTGetTask is BenchmarkGetTask over the HTTP+JSON binding
// (GET /tasks/{id}?historyLength=1, which assembles and decodes params).
func BenchmarkRESTGetTask(b *testing.B) {
	srv, mgr := newInstantServer(b)
	resp, err := mgr.Send(context.Background(), tasks.SendParams{Request: sendParams("hello", nil)})
	if err != nil {
		b.Fatal(err)
	}
	serveRESTBench(b, srv.Handler(), http.MethodGet, "/tasks/"+resp.Task.ID+"?historyLength=1", nil, resp.Task.ID)
}
