package inbound_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStreamsOfOneTaskSeeTheSameEvents opens three streams on one task —
// the stream that created it and two SubscribeToTask — and checks that
// subscriptions start with a snapshot of the task and that every stream
// then carries the identical events in the identical order until the task
// completes, when all of them close.
func TestStreamsOfOneTaskSeeTheSameEvents(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)

	origin, r := c.openStream(t, ctx, "SendStreamingMessage", msg("slowmany for three streams"))
	if r != nil {
		t.Fatalf("refused: %s", r.Body)
	}
	defer origin.close()
	// The turn reports "thinking" and then waits: read up to there.
	var head []event
	for len(head) < 3 {
		ev, err := origin.next()
		if err != nil {
			t.Fatalf("origin stream after %v: %v", labels(head), err)
		}
		head = append(head, ev)
	}
	if got := labels(head); !equal(got, []string{"task:" + stSubmitted, "status:" + stWorking, "status:" + stWorking}) {
		t.Fatalf("origin stream starts %v", got)
	}
	id := head[0].Task.ID

	var subs []*stream
	for i := 0; i < 2; i++ {
		s, r := c.openStream(t, ctx, "SubscribeToTask", map[string]any{"id": id})
		if r != nil {
			t.Fatalf("subscribe refused: %s", r.Body)
		}
		snap, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		// The snapshot: the task as it is now, with its history.
		if snap.Task == nil || snap.Task.ID != id || snap.Task.Status.State != stWorking ||
			snap.Task.Status.Message.text() != "thinking" || len(snap.Task.History) == 0 ||
			snap.Task.History[0].text() != "slowmany for three streams" {
			t.Fatalf("subscription %d starts with %s: %s", i, snap.label(), snap.Raw)
		}
		subs = append(subs, s)
	}

	h.agent.release(id)
	rest := origin.all()
	want := []string{"status:" + stWorking, "status:" + stWorking, "artifact:out", "artifact:out+append/last",
		"artifact:answer/last", "status:" + stCompleted}
	if got := labels(rest); !equal(got, want) {
		t.Fatalf("origin stream after the release = %v\nwant %v", got, want)
	}
	for i, s := range subs {
		evs := s.all() // all() also proves the stream closed at the terminal state
		if len(evs) != len(rest) {
			t.Fatalf("subscription %d got %v, origin %v", i, labels(evs), labels(rest))
		}
		for j := range evs {
			if !bytes.Equal(evs[j].Raw, rest[j].Raw) {
				t.Errorf("subscription %d event %d differs:\n%s\norigin:\n%s", i, j, evs[j].Raw, rest[j].Raw)
			}
		}
	}
	// A finished task can no longer be subscribed to.
	c.call(t, ctx, "SubscribeToTask", map[string]any{"id": id}).wantError(t, -32004, "UNSUPPORTED_OPERATION")
}

// TestSubscribeToAWaitingTaskFollowsItWhenAnotherClientAnswers subscribes
// to a task waiting for input: the stream starts with the snapshot and
// stays open; another client answers the task half a second later, and the
// subscriber gets the WORKING and COMPLETED updates, then the end.
func TestSubscribeToAWaitingTaskFollowsItWhenAnotherClientAnswers(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)
	asked := c.sendTask(t, ctx, msg("ask before subscribing"))
	s, r := c.openStream(t, ctx, "SubscribeToTask", map[string]any{"id": asked.ID})
	if r != nil {
		t.Fatalf("refused: %s", r.Body)
	}
	first, err := s.next()
	if err != nil || first.Task == nil || first.Task.Status.State != stInputRequired || first.Task.Status.Message.text() != "Which colour?" {
		t.Fatalf("snapshot = %s %v", first.label(), err)
	}
	answered := make(chan *task, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		other := newClient(h.url) // another client, its own connections
		answered <- other.sendTask(t, ctx, msg("blue", "taskId", asked.ID))
	}()
	evs := s.all()
	if got := labels(evs); !equal(got, []string{"status:" + stWorking, "artifact:answer/last", "status:" + stCompleted}) {
		t.Fatalf("after the snapshot the subscriber got %v", got)
	}
	if done := <-answered; done.Status.State != stCompleted || streamAnswer(evs) != done.answer() {
		t.Errorf("the answering client got %s %q; the subscriber saw %q", done.Status.State, done.answer(), streamAnswer(evs))
	}
}

// TestSlowReaderDoesNotBlockTheTaskOrOtherStreams opens two streams on a
// task that produces far more output than socket buffers and a stream's
// queue hold. One client stops reading; the task still completes and the
// other client gets every update in order. The stalled client, when it
// reads again, finds its stream ended (all events, or dropped with an
// error event) — never a task stuck waiting for it.
func TestSlowReaderDoesNotBlockTheTaskOrOtherStreams(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)
	const n, size = 800, 16 << 10

	reader, r := c.openStream(t, ctx, "SendStreamingMessage", msg(fmt.Sprintf("flood %d %d", n, size)))
	if r != nil {
		t.Fatalf("refused: %s", r.Body)
	}
	var head []event
	for len(head) < 3 {
		ev, err := reader.next()
		if err != nil {
			t.Fatal(err)
		}
		head = append(head, ev)
	}
	id := head[0].Task.ID
	stalled, r := c.openStream(t, ctx, "SubscribeToTask", map[string]any{"id": id})
	if r != nil {
		t.Fatalf("refused: %s", r.Body)
	}
	if snap, err := stalled.next(); err != nil || snap.Task == nil {
		t.Fatalf("stalled stream's snapshot: %v %v", snap.label(), err)
	}
	// From here on the stalled client reads nothing. The reading client
	// paces the agent (100 updates at a time), so that it never falls
	// behind by more than its stream's queue: a reader slower than the
	// agent is dropped too, by design.
	h.agent.release(id)
	var evs []event
	for {
		ev, err := reader.next()
		if errors.Is(err, errStreamEnd) {
			break
		}
		if err != nil {
			t.Fatalf("reading client after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev)
		if len(evs)%100 == 0 && len(evs) < n {
			h.agent.release(fmt.Sprintf("%s/%d", id, len(evs)/100))
		}
	}
	reader.close()
	if len(evs) != n+2 {
		t.Fatalf("the reading client got %d events after the start, want %d", len(evs), n+2)
	}
	for i := 0; i < n; i++ {
		au := evs[i].ArtifactUpdate
		if au == nil || !strings.HasPrefix(partsString(au.Artifact.Parts), fmt.Sprintf("%05d:", i)) || au.LastChunk != (i == n-1) {
			t.Fatalf("event %d is %s, want flood update %d", i, evs[i].label(), i)
		}
	}
	if last := evs[len(evs)-1].label(); last != "status:"+stCompleted {
		t.Fatalf("last event = %s", last)
	}
	if got := c.getTask(t, ctx, id); got.Status.State != stCompleted || got.answer() != "flood done" {
		t.Fatalf("task = %s %q while a client is stalled", got.Status.State, got.answer())
	}

	// Now the stalled client reads: its stream has ended one way or the other.
	count, dropped := 0, false
	for {
		ev, err := stalled.next()
		if errors.Is(err, errStreamEnd) {
			break
		}
		if err != nil {
			t.Fatalf("stalled stream after %d events: %v", count, err)
		}
		if ev.Err != nil {
			if ev.Err.reason() != "STREAM_DROPPED" {
				t.Errorf("stalled stream ended with %v (reason %s), want STREAM_DROPPED", ev.Err, ev.Err.reason())
			}
			dropped = true
			continue
		}
		count++
	}
	stalled.close()
	t.Logf("the stalled client got %d of %d events; dropped: %t", count, n+2, dropped)
	if !dropped && count != n+2 {
		t.Errorf("the stalled stream ended after %d events without saying it was dropped", count)
	}
}
