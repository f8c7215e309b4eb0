package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
