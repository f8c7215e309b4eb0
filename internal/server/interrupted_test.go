package server

import (
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// TestSubscribeToAWaitingTaskStaysOpenUntilItEnds: SubscribeToTask on a
// task waiting for input (or for credentials) sends the task, stays open,
// and — when another client answers the task half a second later —
// delivers the WORKING and COMPLETED updates, then ends. The 0.3 method
// (tasks/resubscribe) does the same and marks only the last update final.
func TestSubscribeToAWaitingTaskStaysOpenUntilItEnds(t *testing.T) {
	for _, tc := range []struct{ text, state, method string }{
		{"ask something", "INPUT_REQUIRED", "SubscribeToTask"},
		{"auth please", "AUTH_REQUIRED", "SubscribeToTask"},
		{"ask something", "INPUT_REQUIRED", "tasks/resubscribe"},
	} {
		t.Run(tc.state+" "+tc.method, func(t *testing.T) {
			e := newEnv(t)
			task := decode[a2a.SendMessageResponse](t, e.ok(tokAlice, "SendMessage", sendParams(tc.text, nil))).Task
			if got := string(task.Status.State); got != "TASK_STATE_"+tc.state {
				t.Fatalf("state = %s", got)
			}
			var hdr []map[string]string
			if tc.method == "tasks/resubscribe" {
				hdr = append(hdr, map[string]string{"A2A-Version": ""})
			}
			sub := e.openStream(tokAlice, tc.method, &a2a.SubscribeToTaskRequest{ID: task.ID}, hdr...)
			first := sub.next()
			if first == nil || first.Error != nil {
				t.Fatalf("first event = %+v", first)
			}
			answered := make(chan *a2a.Task, 1)
			go func() {
				time.Sleep(500 * time.Millisecond)
				answered <- decode[a2a.SendMessageResponse](t, e.ok(tokAlice, "SendMessage", sendParams("blue", func(r *a2a.SendMessageRequest) {
					r.Message.TaskID = task.ID
				}))).Task
			}()
			if tc.method == "tasks/resubscribe" {
				var got []string
				for _, ev := range sub.raw03() {
					st, _ := ev["status"].(map[string]any)
					got = append(got, ev["kind"].(string)+":"+str(st["state"])+":"+str(ev["final"]))
				}
				want := "status-update:working:false,artifact-update::,status-update:completed:true"
				if j := join(got); j != want {
					t.Fatalf("0.3 events after the snapshot = %s\nwant %s", j, want)
				}
			} else {
				evs, errEv := sub.all()
				if errEv != nil {
					t.Fatal(errEv)
				}
				if got := kinds(evs); got != "statusUpdate:WORKING,artifactUpdate,statusUpdate:COMPLETED" {
					t.Fatalf("events after the snapshot = %s", got)
				}
			}
			if done := <-answered; done.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("the answering client got %s", done.Status.State)
			}
		})
	}
}

// TestStreamingSendEndsAtAQuestion pins SendStreamingMessage at the
// interrupted states: the stream ends at INPUT_REQUIRED (the request has
// its answer, a question; the client answers with a new message) and stays
// open at AUTH_REQUIRED until the task resumes and ends.
func TestStreamingSendEndsAtAQuestion(t *testing.T) {
	e := newEnv(t)
	evs, errEv := e.openStream(tokAlice, "SendStreamingMessage", sendParams("ask something", nil)).all()
	if errEv != nil || kinds(evs) != "task:SUBMITTED,statusUpdate:WORKING,statusUpdate:INPUT_REQUIRED" {
		t.Fatalf("events = %s (%v)", kinds(evs), errEv)
	}
	s := e.openStream(tokAlice, "SendStreamingMessage", sendParams("auth please", nil))
	var id string
	for _, want := range []string{"task", "statusUpdate:WORKING", "statusUpdate:AUTH_REQUIRED"} {
		var ev a2a.StreamResponse
		if err := s.next().DecodeResult(&ev); err != nil {
			t.Fatal(err)
		}
		if got := kinds([]a2a.StreamResponse{ev}); got != want && !(want == "task" && ev.Task != nil) {
			t.Fatalf("event %s, want %s", got, want)
		}
		if ev.Task != nil {
			id = ev.Task.ID
		}
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		e.ok(tokAlice, "SendMessage", sendParams("token: abc", func(r *a2a.SendMessageRequest) { r.Message.TaskID = id }))
	}()
	rest, errEv := s.all()
	<-answered
	if errEv != nil || kinds(rest) != "statusUpdate:WORKING,artifactUpdate,statusUpdate:COMPLETED" {
		t.Fatalf("events after AUTH_REQUIRED = %s (%v)", kinds(rest), errEv)
	}
}

// TestStreamSendsTheTaskBeforeTheAgentSaysAnything: the first event of a
// stream is the task, sent while the agent is still silent.
func TestStreamSendsTheTaskBeforeTheAgentSaysAnything(t *testing.T) {
	e := newEnv(t)
	s := e.openStream(tokAlice, "SendStreamingMessage", sendParams("silent", nil))
	var first a2a.StreamResponse
	if err := s.next().DecodeResult(&first); err != nil || first.Task == nil || first.Task.Status.State != a2a.TaskStateSubmitted && first.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event = %+v, %v", first, err)
	}
	e.exec.release(first.Task.ID) // only now does the agent answer
	rest, errEv := s.all()
	if errEv != nil || kinds(rest) == "" {
		t.Fatalf("rest = %s (%v)", kinds(rest), errEv)
	}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	if b, ok := v.(bool); ok {
		if b {
			return "true"
		}
		return "false"
	}
	return "?"
}

func join(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}
