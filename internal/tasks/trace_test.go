package tasks

import (
	"context"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// drainDeliveries completes and returns every queued push delivery.
func (e *env) drainDeliveries(t *testing.T) []deliverySeen {
	t.Helper()
	ctx := context.Background()
	var out []deliverySeen
	for {
		ds, err := e.store.DueDeliveries(ctx, time.Now().Add(time.Hour), 10)
		must(t, err)
		if len(ds) == 0 {
			return out
		}
		for _, d := range ds {
			out = append(out, deliverySeen{contextID: d.ContextID, traceparent: d.Trace.Traceparent, tracestate: d.Trace.Tracestate})
			must(t, e.store.CompleteDelivery(ctx, d.ID, false, ""))
		}
	}
}

type deliverySeen struct{ contextID, traceparent, tracestate string }

func TestWebhookDeliveriesCarryTheTurnsTrace(t *testing.T) {
	const (
		first  = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		second = "00-11111111111111111111111111111111-2222222222222222-01"
	)
	e := newEnv(t, nil)
	ctx := context.Background()
	p := sendParams(alice, "x", nil)
	p.Trace = tracing.Context{Traceparent: first, Tracestate: "vendor=1"}
	p.PushConfig = &a2a.TaskPushNotificationConfig{URL: "https://example.test/hook"}
	ch := e.sendAsync(p)
	turn := e.exec.next(t)
	if turn.Trace != p.Trace {
		t.Fatalf("turn trace = %+v, want %+v", turn.Trace, p.Trace)
	}
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("which one?")}))
	wait(t, ch)
	seen := e.drainDeliveries(t)
	if len(seen) == 0 {
		t.Fatal("no deliveries queued")
	}
	for _, d := range seen {
		if d != (deliverySeen{turn.ContextID, first, "vendor=1"}) {
			t.Errorf("delivery of the first turn = %+v, want context %s and its trace", d, turn.ContextID)
		}
	}

	// The answer is a new turn with its own trace; what it causes
	// continues that trace, and so does a cancellation after it.
	p2 := sendParams(alice, "the red one", func(r *a2a.SendMessageRequest) { r.Message.TaskID = turn.TaskID })
	p2.Trace = tracing.Context{Traceparent: second}
	ch = e.sendAsync(p2)
	turn2 := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn2.TaskID, Update{Kind: UpdateProgress, Message: agentMsg("working")}))
	_, err := e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: turn.TaskID})
	must(t, err)
	wait(t, ch)
	seen = e.drainDeliveries(t)
	if len(seen) < 2 {
		t.Fatalf("deliveries of the second turn = %+v, want progress and cancellation", seen)
	}
	for _, d := range seen {
		if d != (deliverySeen{turn.ContextID, second, ""}) {
			t.Errorf("delivery of the second turn = %+v, want its trace %s", d, second)
		}
	}
}
