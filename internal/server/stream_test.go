package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

func TestStreamStartsWithTaskAndFollowsInOrder(t *testing.T) {
	e := newEnv(t)
	s := e.openStream(tokAlice, "SendStreamingMessage", sendParams("progress report", nil))
	if s.status != 200 {
		t.Fatalf("HTTP %d %s", s.status, s.errBody)
	}
	h := s.resp.Header
	if h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache" || h.Get("X-Accel-Buffering") != "no" {
		t.Errorf("headers = %v", h)
	}
	evs, errEv := s.all()
	if errEv != nil {
		t.Fatalf("error event: %v", errEv)
	}
	got := kinds(evs)
	want := "task:SUBMITTED,statusUpdate:WORKING,statusUpdate:WORKING,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate:COMPLETED"
	if got != want {
		t.Fatalf("events = %s\nwant     %s", got, want)
	}
	id := evs[0].Task.ID
	for _, ev := range evs {
		if ev.TaskID() != id || ev.ContextID() != evs[0].Task.ContextID {
			t.Errorf("event about another task: %s", mustJSON(ev))
		}
	}
	if a := evs[4].ArtifactUpdate; !a.Append || !a.LastChunk || a.Artifact.Text() != "part two" {
		t.Errorf("second chunk = %s", mustJSON(a))
	}
	// The audit record counts the events.
	waitFor(t, "the audit record", func() bool {
		for _, r := range e.audit.all() {
			if r.events == len(evs) && r.TaskID == id && r.Outcome == "ok" {
				return true
			}
		}
		return false
	})
}

func TestStreamShapes(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		text, want string
	}{
		// A direct reply completes the streamed task (its first event,
		// the task, went out before the agent answered).
		{"direct hello", "task:SUBMITTED,statusUpdate:WORKING,artifactUpdate,statusUpdate:COMPLETED"},
		{"ask something", "task:SUBMITTED,statusUpdate:WORKING,statusUpdate:INPUT_REQUIRED"},
		{"fail hard", "task:SUBMITTED,statusUpdate:WORKING,statusUpdate:FAILED"},
		{"echo plain", "task:SUBMITTED,statusUpdate:WORKING,artifactUpdate,statusUpdate:COMPLETED"},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			evs, errEv := e.openStream(tokAlice, "SendStreamingMessage", sendParams(tc.text, nil)).all()
			if errEv != nil || kinds(evs) != tc.want {
				t.Errorf("events = %s (error %v), want %s", kinds(evs), errEv, tc.want)
			}
		})
	}
	t.Run("errors before the stream are plain JSON", func(t *testing.T) {
		s := e.openStream(tokAlice, "SendStreamingMessage", sendParams("x", func(r *a2a.SendMessageRequest) { r.Message.TaskID = "unknown" }))
		if s.r != nil || s.status != 200 {
			t.Fatalf("HTTP %d, stream %v", s.status, s.r != nil)
		}
		a2atest.ValidateJSONRPCResponse(t, s.errBody, "")
		if !strings.Contains(string(s.errBody), "-32001") {
			t.Errorf("body = %s", s.errBody)
		}
	})
}

func TestSeveralStreamsOnOneTaskGetIdenticalEvents(t *testing.T) {
	e := newEnv(t)
	task := decode[a2a.SendMessageResponse](t, e.ok(tokAlice, "SendMessage", sendParams("slow task", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))).Task
	waitFor(t, "the task to work", func() bool {
		return decode[a2a.Task](t, e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: task.ID})).Status.Message != nil
	})
	const n = 4
	streams := make([]*sseStream, n)
	for i := range streams {
		streams[i] = e.openStream(tokAlice, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: task.ID})
		first := streams[i].next()
		var ev a2a.StreamResponse
		if err := first.DecodeResult(&ev); err != nil || ev.Task == nil || ev.Task.ID != task.ID || ev.Task.Status.State != a2a.TaskStateWorking {
			t.Fatalf("stream %d first event = %s", i, mustJSON(first))
		}
	}
	// Closing one stream does not disturb the others or the task.
	streams[0].resp.Body.Close()
	e.exec.release(task.ID)
	var results []string
	for _, s := range streams[1:] {
		evs, errEv := s.all()
		if errEv != nil {
			t.Fatal(errEv)
		}
		results = append(results, string(mustJSON(evs)))
		if k := kinds(evs); k != "artifactUpdate,statusUpdate:COMPLETED" {
			t.Errorf("events = %s", k)
		}
	}
	for i := 1; i < len(results); i++ {
		if results[i] != results[0] {
			t.Errorf("stream %d saw different events:\n%s\n%s", i+1, results[i], results[0])
		}
	}
	final := decode[a2a.Task](t, e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: task.ID}))
	if final.Status.State != a2a.TaskStateCompleted {
		t.Errorf("task = %s", final.Status.State)
	}
}

func TestSubscribeToTaskRules(t *testing.T) {
	e := newEnv(t)
	// A task waiting for input: see TestSubscribeToAWaitingTaskStaysOpenUntilItEnds.
	for _, tc := range []struct {
		name, id string
		code     int
	}{
		{"unknown task", "no-such-task", a2a.CodeTaskNotFound},
		{"terminal task", e.send(tokAlice, "done", nil).ID, a2a.CodeUnsupportedOperation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := e.openStream(tokAlice, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: tc.id})
			a2atest.ValidateJSONRPCResponse(t, s.errBody, "")
			r, err := a2a.ParseResponse(s.errBody)
			if err != nil || r.Error == nil || r.Error.Code != tc.code {
				t.Errorf("body = %s", s.errBody)
			}
		})
	}
}

// startGated starts text as a non-blocking task and waits until the
// agent is working on it (a "slow…" behaviour waits for release).
func (e *testEnv) startGated(token, text string) *a2a.Task {
	e.t.Helper()
	task := decode[a2a.SendMessageResponse](e.t, e.ok(token, "SendMessage", sendParams(text, func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))).Task
	waitFor(e.t, "the task to work", func() bool {
		return decode[a2a.Task](e.t, e.ok(token, "GetTask", &a2a.GetTaskRequest{ID: task.ID})).Status.Message != nil
	})
	return task
}

// rawSubscribe subscribes over a raw TCP connection (with a tiny receive
// buffer when tiny is set) and returns the connection without reading it.
func (e *testEnv) rawSubscribe(token, taskID string, tiny bool) net.Conn {
	e.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	if tc, ok := c.(*net.TCPConn); ok && tiny {
		_ = tc.SetReadBuffer(4096)
	}
	body, _ := a2a.MarshalRequest(1, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: taskID})
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		token, len(body), body)
	return c
}

func TestStuckClientIsCutWhileOthersContinue(t *testing.T) {
	const chunks, size = 300, 64 << 10
	// A write may block for 3 s: the stuck stream is cut, a good reader
	// that a loaded machine leaves unscheduled for a moment is not.
	e := newEnvTasks(t, func(o *tasks.Options) { o.SubscriberBuffer = 4096 },
		func(o *Options) { o.Limits.WriteTimeout = 3 * time.Second })
	task := e.startGated(tokAlice, fmt.Sprintf("slowchunks %d %d", chunks, size))
	e.rawSubscribe(tokAlice, task.ID, true) // never read
	waitFor(t, "the stuck stream to open", func() bool { return e.srv.pipe.streams.open() == 1 })

	good := e.openStream(tokAlice, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: task.ID})
	if good.r == nil {
		t.Fatalf("HTTP %d %s", good.status, good.errBody)
	}
	var raw bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&raw, good.resp.Body)
		done <- err
	}()
	waitFor(t, "both streams to be open", func() bool { return e.srv.pipe.streams.open() == 2 })
	e.exec.release(task.ID)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the good stream did not finish")
	}
	evs := a2atest.ValidateSSE(t, raw.Bytes(), "Stream Response")
	// snapshot + the chunks + the answer artifact + COMPLETED
	if len(evs) != chunks+3 {
		t.Errorf("good stream got %d events, want %d", len(evs), chunks+3)
	}
	// The stream's slot is given back before its audit record is written:
	// wait for the record.
	waitFor(t, "an audit record of the stuck stream being cut", func() bool {
		for _, r := range e.audit.all() {
			if r.Method == "SubscribeToTask" && r.Outcome == outcomeCut && r.events < chunks {
				return true
			}
		}
		return false
	})
	waitFor(t, "no stream left open", func() bool { return e.srv.pipe.streams.open() == 0 })
}

func TestTooSlowStreamEndsWithDroppedEvent(t *testing.T) {
	// More than the socket buffers of both ends can hold, so the server's
	// writes block and the subscription overflows.
	const chunks, size = 500, 64 << 10
	e := newEnvTasks(t, func(o *tasks.Options) { o.SubscriberBuffer = 8 })
	task := e.startGated(tokAlice, fmt.Sprintf("slowchunks %d %d", chunks, size))
	c := e.rawSubscribe(tokAlice, task.ID, false)
	waitFor(t, "the stream to open", func() bool { return e.srv.pipe.streams.open() == 1 })
	e.exec.release(task.ID)
	// The task finishes although its subscriber does not read.
	waitFor(t, "the task to complete", func() bool {
		return decode[a2a.Task](t, e.ok(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: task.ID})).Status.State == a2a.TaskStateCompleted
	})
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	evs := a2atest.ValidateSSE(t, b, "Stream Response")
	if len(evs) >= chunks {
		t.Errorf("stream was not dropped: %d events", len(evs))
	}
	blocks := strings.Split(strings.TrimSpace(string(b)), "\n\n")
	last := blocks[len(blocks)-1]
	if !strings.Contains(last, `"error"`) || !strings.Contains(last, "STREAM_DROPPED") {
		t.Errorf("last event = %.300s", last)
	}
}

func TestKeepAliveCommentsOnIdleStreams(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.KeepAlive = 20 * time.Millisecond })
	body, _ := a2a.MarshalRequest(1, "SendStreamingMessage", sendParams("slow keepalive", nil))
	req, _ := http.NewRequest(http.MethodPost, e.url+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var mu sync.Mutex
	var seen []string
	deadline := time.After(5 * time.Second)
	lines := make(chan string)
	go func() {
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	for {
		select {
		case l := <-lines:
			mu.Lock()
			seen = append(seen, l)
			mu.Unlock()
			if strings.HasPrefix(l, ": keep-alive") {
				if t := e.exec.lastTurn(); t != nil {
					e.exec.release(t.TaskID)
				}
				return
			}
		case <-deadline:
			t.Fatalf("no keep-alive comment; saw %q", seen)
		}
	}
}
