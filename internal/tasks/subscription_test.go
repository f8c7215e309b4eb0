package tasks

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// progressText is the text of a WORKING update's message, or "".
func progressText(r a2a.StreamResponse) string {
	if r.StatusUpdate == nil || r.StatusUpdate.Status.Message == nil || len(r.StatusUpdate.Status.Message.Parts) == 0 {
		return ""
	}
	if p := r.StatusUpdate.Status.Message.Parts[0].Text; p != nil {
		return *p
	}
	return ""
}

// A stream that lags more events than its channel holds, but fewer than
// its buffer, gets every event in order, then its end.
func TestLaggingStreamGetsEveryEventInOrder(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.SubscriberBuffer = 64 })
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "go", nil))
	must(t, err)
	turn := e.exec.next(t)
	const n = 3 * subscriberChan
	for i := range n {
		must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg(fmt.Sprint(i))}))
	}
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
	got := collect(t, sub)
	if sub.Err() != nil {
		t.Fatalf("sub.Err = %v", sub.Err())
	}
	// The task, WORKING, n progress updates, the answer's artifact and
	// COMPLETED.
	if len(got) != n+4 {
		t.Fatalf("got %d events, want %d", len(got), n+4)
	}
	if got[0].Task == nil {
		t.Fatalf("first event = %+v", got[0])
	}
	for i := range n {
		if s := progressText(got[2+i]); s != fmt.Sprint(i) {
			t.Fatalf("event %d: progress %q, want %q", 2+i, s, fmt.Sprint(i))
		}
	}
	if last := got[len(got)-1]; last.StatusUpdate == nil || last.StatusUpdate.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("last event = %+v", last)
	}
}

// A stream dropped while events wait in its overflow still hands out the
// events it had queued, then ends with ErrDropped.
func TestStreamDroppedWithOverflowDeliversQueuedEvents(t *testing.T) {
	const limit = 2 * subscriberChan
	e := newEnv(t, func(o *Options) { o.SubscriberBuffer = limit })
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "go", nil))
	must(t, err)
	turn := e.exec.next(t)
	for i := range 3 * limit {
		must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg(fmt.Sprint(i))}))
	}
	got := collect(t, sub)
	if !errors.Is(sub.Err(), ErrDropped) {
		t.Fatalf("sub.Err = %v", sub.Err())
	}
	if len(got) != limit {
		t.Fatalf("got %d events before the drop, want %d", len(got), limit)
	}
	for i := 2; i < len(got); i++ {
		if s := progressText(got[i]); s != fmt.Sprint(i-2) {
			t.Fatalf("event %d: progress %q, want %q", i, s, fmt.Sprint(i-2))
		}
	}
}

// Close while events wait in the overflow (the client went away) stops the
// pump and closes the channel.
func TestCloseStopsAPumpingStream(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.SubscriberBuffer = 64 })
	ctx := context.Background()
	sub, err := e.m.Stream(ctx, sendParams(alice, "go", nil))
	must(t, err)
	turn := e.exec.next(t)
	for i := range 2 * subscriberChan {
		must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateProgress, Message: agentMsg(fmt.Sprint(i))}))
	}
	sub.mu.Lock()
	pumping := sub.pumping
	sub.mu.Unlock()
	if !pumping {
		t.Fatal("no pump with more events waiting than the channel holds")
	}
	sub.Close()
	deadline := time.After(5 * time.Second)
	for {
		sub.mu.Lock()
		stopped := !sub.pumping && sub.closed
		sub.mu.Unlock()
		if stopped {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the pump did not stop after Close")
		case <-time.After(time.Millisecond):
		}
	}
	for range sub.Events() {
	}
	// The task goes on without its stream.
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("done")}))
}
