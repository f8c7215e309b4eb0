package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// flushCounter is a ResponseWriter that counts its flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// TestSSEHeldEventIsSentWithTheNext: an event written while another is
// queued is not flushed on its own; the next Event sends both.
func TestSSEHeldEventIsSentWithTheNext(t *testing.T) {
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	hb := &httpBinding{limits: &testLimits, log: hclog.NewNullLogger()}
	s := &sseSink{b: hb, w: w, rc: http.NewResponseController(w), c: &Call{}, rpcID: []byte(`1`)}
	working := &tasks.Event{Response: a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c",
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}}
	done := &tasks.Event{Response: a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}}}
	var hs heldSink = s
	if err := hs.EventHeld(working); err != nil {
		t.Fatal(err)
	}
	if w.flushes != 0 {
		t.Fatalf("a held event was flushed (%d flushes)", w.flushes)
	}
	if err := s.Event(done); err != nil {
		t.Fatal(err)
	}
	if w.flushes != 1 {
		t.Fatalf("%d flushes after the second event, want 1", w.flushes)
	}
	body := w.Body.String()
	if strings.Count(body, "data: ") != 2 || strings.Index(body, "TASK_STATE_WORKING") > strings.Index(body, "TASK_STATE_COMPLETED") {
		t.Fatalf("body does not hold both events in order:\n%s", body)
	}
	if s.c.BytesOut != int64(len(body)) {
		t.Fatalf("BytesOut %d, body %d bytes", s.c.BytesOut, len(body))
	}
}

// TestStreamLeavesItsLastEventToTheResponsesEnd: events already queued
// when Run looks, the stream's end included, are all written held; the
// last one is sent by the end of the response (net/http flushes it with
// the chunked terminator when the handler returns), not by a flush of
// its own.
func TestStreamLeavesItsLastEventToTheResponsesEnd(t *testing.T) {
	e := newEnv(t)
	e.exec.sync = true // the turn is over, its events queued, when Stream returns
	sub, err := e.mgr.Stream(context.Background(), tasks.SendParams{Request: sendParams("hello", nil)})
	if err != nil {
		t.Fatal(err)
	}
	c := &Call{}
	st := &Stream{sub: sub, c: c, log: hclog.NewNullLogger()}
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	hb := &httpBinding{limits: &testLimits, log: hclog.NewNullLogger()}
	st.Run(context.Background(), &sseSink{b: hb, w: w, rc: http.NewResponseController(w), c: c, rpcID: []byte(`1`)}, 0)
	if w.flushes != 0 {
		t.Fatalf("%d flushes, want none: every event was queued with the end behind it", w.flushes)
	}
	body := w.Body.String()
	if n := strings.Count(body, "data: "); n < 2 || n != c.Events {
		t.Fatalf("%d events in the body, %d counted:\n%s", n, c.Events, body)
	}
	if !strings.Contains(body[strings.LastIndex(body, "data: "):], "TASK_STATE_COMPLETED") {
		t.Fatalf("the last event is not the COMPLETED status:\n%s", body)
	}
	if c.cut {
		t.Fatal("a stream whose task completed is marked cut")
	}
}

// TestStreamHeadersLeaveWithAQueuedEvent: a stream whose first event is
// already queued sends its headers with it instead of flushing them on
// their own (here, with the whole stream, when the handler returns); one
// with nothing queued yet flushes them at once, so the client knows the
// stream is open.
func TestStreamHeadersLeaveWithAQueuedEvent(t *testing.T) {
	e := newEnv(t)
	hb := &httpBinding{limits: &testLimits, log: hclog.NewNullLogger()}

	e.exec.sync = true // the turn is over, its events queued, when Stream returns
	sub, err := e.mgr.Stream(context.Background(), tasks.SendParams{Request: sendParams("hello", nil)})
	if err != nil {
		t.Fatal(err)
	}
	c := &Call{}
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	hb.stream(context.Background(), w, &Stream{sub: sub, c: c, log: hclog.NewNullLogger()}, &sseSink{b: hb, c: c, rpcID: []byte(`1`)})
	if w.flushes != 0 || w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("queued events: %d flushes, HTTP %d, Content-Type %q; want no flush of its own, 200, text/event-stream",
			w.flushes, w.Code, w.Header().Get("Content-Type"))
	}
	if int64(strings.Count(w.Body.String(), "data: ")) != int64(c.Events) || c.Events < 2 {
		t.Fatalf("%d events counted, body:\n%s", c.Events, w.Body.String())
	}

	e.exec.sync = false
	resp, err := e.mgr.Send(context.Background(), tasks.SendParams{Request: sendParams("slow", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	})})
	if err != nil {
		t.Fatal(err)
	}
	<-e.exec.started
	waitFor(t, "the slow turn's progress", func() bool { // then it waits until released
		task, err := e.mgr.Get(context.Background(), "", &a2a.GetTaskRequest{ID: resp.Task.ID})
		return err == nil && task.Status.Message != nil && task.Status.Message.Text() == "thinking"
	})
	sub, err = e.mgr.Subscribe(context.Background(), "", &a2a.SubscribeToTaskRequest{ID: resp.Task.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer e.exec.release(resp.Task.ID)
	<-sub.Events() // its snapshot: nothing is queued now
	c = &Call{}
	w = &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		hb.stream(ctx, w, &Stream{sub: sub, c: c, log: hclog.NewNullLogger()}, &sseSink{b: hb, c: c, rpcID: []byte(`1`)})
	}()
	cancel() // the client goes away; the headers were flushed before Run looked
	<-done
	if w.flushes < 1 || c.Events != 0 {
		t.Fatalf("nothing queued: %d flushes and %d events, want the headers flushed and no event", w.flushes, c.Events)
	}
}

// TestStreamShutdownEndsARunOfQueuedEvents: a shutdown ends a stream
// between two queued events, as it ends one that waits for its next
// event: the client is told to resubscribe instead of getting every
// queued event first.
func TestStreamShutdownEndsARunOfQueuedEvents(t *testing.T) {
	e := newEnv(t)
	e.exec.sync = true
	sub, err := e.mgr.Stream(context.Background(), tasks.SendParams{Request: sendParams("chunks 6 10", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sub.Events()); n < 4 {
		t.Fatalf("%d events queued, want the task's snapshot, WORKING, its chunks and its end", n)
	}
	stop := make(chan struct{})
	close(stop)
	c := &Call{}
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	hb := &httpBinding{limits: &testLimits, log: hclog.NewNullLogger()}
	st := &Stream{sub: sub, c: c, log: hclog.NewNullLogger(), stop: stop}
	st.Run(context.Background(), &sseSink{b: hb, w: w, rc: http.NewResponseController(w), c: c, rpcID: []byte(`1`)}, 0)
	body := w.Body.String()
	if c.Events > 1 || !strings.Contains(body, "shutting down") || !c.cut {
		t.Fatalf("%d events written, cut %v; want at most one and the shutdown error:\n%s", c.Events, c.cut, body)
	}
}

// pipeListener hands out the server ends of net.Pipe connections: a
// write to one blocks until its client reads, whatever the size, so a
// client that never reads is a client whose buffers are full.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// TestStreamEndingHeldIsBoundByTheWriteDeadline: a stream whose events
// and end are all queued is written held, and what is left of it when
// Run returns must still go out under Limits.WriteTimeout. Its client
// sends the request and never reads: the handler must give up after the
// write deadline and the server close the connection, instead of
// writing the rest with no deadline once the handler returns (which
// blocks the connection's goroutine forever).
func TestStreamEndingHeldIsBoundByTheWriteDeadline(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	e := newEnv(t, func(o *Options) { o.Limits.WriteTimeout = writeTimeout })
	e.exec.sync = true // the turn is over, its events and end queued, when Stream returns
	cli, closed := servePipe(t, e)
	body, _ := a2a.MarshalRequest(1, "SendStreamingMessage", sendParams("hello", nil))
	go fmt.Fprintf(cli, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		tokAlice, len(body), body) // then the client never reads

	// A liveness bound, not a measure: 10 s is over 30 write deadlines.
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("the server still holds the connection of a client that stopped reading, 10 s after a write deadline of %v", writeTimeout)
	}
	waitFor(t, "the stream's audit record", func() bool {
		for _, r := range e.audit.all() {
			if r.Method == "SendStreamingMessage" {
				return true
			}
		}
		return false
	})
}

// servePipe serves e's handler on one connection over a pipe, where every
// write waits for the reader: it returns the client's end (closed at the
// end of the test) and a channel closed once the server closed the
// connection.
func servePipe(t *testing.T, e *testEnv) (net.Conn, <-chan struct{}) {
	t.Helper()
	closed := make(chan struct{})
	var closeOnce sync.Once
	l := &pipeListener{conns: make(chan net.Conn, 1), closed: make(chan struct{})}
	hs := &http.Server{Handler: e.srv.Handler(), ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closeOnce.Do(func() { close(closed) })
		}
	}}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { hs.Close() }) // also ends a write that blocks forever, so a failing run ends
	cli, srvEnd := net.Pipe()
	t.Cleanup(func() { cli.Close() })
	l.conns <- srvEnd
	return cli, closed
}

// TestStreamLeavesNoDeadlineToTheNextAnswer: a stream that ends held
// leaves its write deadline set for net/http's last write (its held
// events and the chunked terminator), relying on net/http to lift it once
// the response is finished. The next answer on the keep-alive
// connection (its own deadline set as it starts, trackingWriter),
// written after that deadline has passed, must still arrive: it would be
// refused by the stale deadline if net/http stopped lifting it.
func TestStreamLeavesNoDeadlineToTheNextAnswer(t *testing.T) {
	const writeTimeout = 100 * time.Millisecond
	e := newEnv(t, func(o *Options) { o.Limits.WriteTimeout = writeTimeout })
	e.exec.sync = true // the stream's events and end are queued: it ends held
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	post := func(method string, params any) (*http.Response, []byte) {
		t.Helper()
		body, _ := a2a.MarshalRequest(1, method, params)
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
			tokAlice, len(body), body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: reading the answer: %v", method, err)
		}
		return resp, b
	}
	resp, body := post("SendStreamingMessage", sendParams("hello", nil))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "TASK_STATE_COMPLETED") || resp.Close {
		t.Fatalf("stream: HTTP %d, close %v:\n%s", resp.StatusCode, resp.Close, body)
	}
	time.Sleep(3 * writeTimeout) // past the deadline the stream left set
	resp, body = post("GetTask", &a2a.GetTaskRequest{ID: "no-such-task"})
	if len(body) > 2048 {
		t.Fatalf("the answer (%d bytes) is too large to go without a deadline of its own", len(body))
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("GetTask after the stream: HTTP %d:\n%s", resp.StatusCode, body)
	}
}
