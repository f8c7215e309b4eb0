package server

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// TestSmallAnswerToAClientThatStopsReadingIsBoundByTheWriteDeadline: a
// small answer, which net/http buffers whole and writes only after the
// handler returns, is still written under Limits.WriteTimeout: a client
// that never reads (a pipe: every write waits for the reader) loses its
// connection instead of holding the handler and its place forever.
func TestSmallAnswerToAClientThatStopsReadingIsBoundByTheWriteDeadline(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	e := newEnv(t, func(o *Options) { o.Limits.WriteTimeout = writeTimeout })
	cli, closed := servePipe(t, e)
	body, _ := a2a.MarshalRequest(1, "GetTask", &a2a.GetTaskRequest{ID: "no-such-task"})
	go fmt.Fprintf(cli, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		tokAlice, len(body), body) // then the client never reads

	// A liveness bound, not a measure: 10 s is over 30 write deadlines.
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("the server still holds the connection of a client that stopped reading, 10 s after a write deadline of %v", writeTimeout)
	}
}

func anyone(security.Identity) bool { return true }

// TestLongWritesRoutesOutliveTheWriteDeadline: a response's write deadline
// runs from its first write, so a route that writes for longer (pprof's
// trace) says so (ExtraRoute.LongWrites) and is not cut; any other route
// is.
func TestLongWritesRoutesOutliveTheWriteDeadline(t *testing.T) {
	const writeTimeout = 200 * time.Millisecond
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		rc := http.NewResponseController(w)
		_, _ = w.Write([]byte("first "))
		_ = rc.Flush()
		time.Sleep(3 * writeTimeout)
		_, _ = w.Write([]byte("second"))
		_ = rc.Flush()
	})
	e := startedEnv(t, func(o *Options) {
		o.Limits.WriteTimeout = writeTimeout
		o.Extra = append(o.Extra,
			ExtraRoute{Pattern: "GET /long", Handler: slow, Allow: anyone, LongWrites: true},
			ExtraRoute{Pattern: "GET /short", Handler: slow, Allow: anyone})
	})
	get := func(path string) string {
		t.Helper()
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := get("/long"); got != "first second" {
		t.Errorf("a LongWrites route answered %q, want all of it", got)
	}
	if got := get("/short"); got != "first " {
		t.Errorf("another route answered %q: its write after the deadline went out", got)
	}
}
