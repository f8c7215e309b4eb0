package push

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

const turnTrace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// enqueueTraced queues one notification of task with the turn trace tp.
func enqueueTraced(t *testing.T, f *fixture, task, config, seq, tp, ts string) {
	t.Helper()
	d := store.Delivery{TaskID: task, ContextID: "ctx-" + task, ConfigID: config, Body: body(t, task, seq),
		NextTry: f.now(), CreatedAt: f.now(), Trace: tracing.Context{Traceparent: tp, Tracestate: ts}}
	if err := f.st.SaveTask(context.Background(), f.record(task), []store.Delivery{d}); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookPOSTContinuesTheTasksTrace(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		rc := newReceiver(t, nil)
		f := newFixture(t, st, nil)
		f.config("t1", "c1", rc.URL+"/hook")
		f.config("t2", "c2", rc.URL+"/hook")
		enqueueTraced(t, f, "t1", "c1", "traced", turnTrace, "vendor=1")
		enqueueTraced(t, f, "t2", "c2", "untraced", "", "")
		start(t, Options{Store: st})
		eventually(t, "both notifications delivered", func() bool { return len(rc.accepted()) == 2 }, nil)
		for _, r := range rc.accepted() {
			tp, ts := r.header.Get("traceparent"), r.header.Get("tracestate")
			switch seqOf(t, r.body) {
			case "traced":
				if tracing.TraceID(tp) != tracing.TraceID(turnTrace) || tracing.SpanID(tp) == tracing.SpanID(turnTrace) || ts != "vendor=1" {
					t.Errorf("traced notification: traceparent %q tracestate %q; want a new span in trace %s", tp, ts, tracing.TraceID(turnTrace))
				}
			case "untraced":
				if tp != "" || ts != "" {
					t.Errorf("a notification without a trace sent traceparent %q tracestate %q", tp, ts)
				}
			}
		}
	})
}

func TestWebhookSpanIsExportedAndNamedByTheHeader(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	st := openMemory(t)
	rc := newReceiver(t, nil)
	f := newFixture(t, st, nil)
	f.config("t1", "c1", rc.URL+"/hook?token=secret")
	enqueueTraced(t, f, "t1", "c1", "traced", turnTrace, "")
	logs := &logBuffer{}
	start(t, Options{Store: st, Tracer: tracing.NewWithExporter(exp), Logger: logs.logger()})
	eventually(t, "the notification delivered", func() bool { return len(rc.accepted()) == 1 && len(exp.GetSpans()) == 1 }, nil)
	tp := rc.accepted()[0].header.Get("traceparent")
	s := exp.GetSpans()[0]
	if s.Name != "a2a.push POST" || s.SpanContext.SpanID().String() != tracing.SpanID(tp) ||
		s.SpanContext.TraceID().String() != tracing.TraceID(turnTrace) || s.Parent.SpanID().String() != tracing.SpanID(turnTrace) {
		t.Errorf("span %s %s (parent %s), header %s; want the POST's span, child of the turn", s.Name, s.SpanContext.SpanID(), s.Parent.SpanID(), tp)
	}
	attrs := map[string]string{}
	for _, kv := range s.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["a2a.task_id"] != "t1" || attrs["a2a.context_id"] != "ctx-t1" || attrs["a2a.peer"] != "peer:test" ||
		attrs["http.response.status_code"] != "204" || strings.Contains(attrs["url.full"], "secret") {
		t.Errorf("span attributes %v", attrs)
	}
	// The debug line of the delivery names the task, its context and peer.
	eventually(t, "the delivery logged", func() bool { return strings.Contains(logs.String(), "webhook notification delivered") }, func() { time.Sleep(time.Millisecond) })
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "webhook notification delivered") &&
			(!strings.Contains(line, `"task_id":"t1"`) || !strings.Contains(line, `"context_id":"ctx-t1"`) || !strings.Contains(line, `"peer":"peer:test"`)) {
			t.Errorf("log line without task, context and peer: %s", line)
		}
	}
}
