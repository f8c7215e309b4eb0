package server

import (
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

func TestTraceContextReachesTheHost(t *testing.T) {
	e := newEnv(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	e.ok(tokAlice, "SendMessage", sendParams("traced", nil), map[string]string{"traceparent": tp, "tracestate": "vendor=abc"})
	if tr := e.exec.lastTurn().Trace; tr.Traceparent != tp || tr.Tracestate != "vendor=abc" {
		t.Errorf("trace = %+v", tr)
	}
	// A malformed traceparent is not forwarded: the turn starts a new
	// trace, as one without any does.
	e.ok(tokAlice, "SendMessage", sendParams("badly traced", nil), map[string]string{"traceparent": "not-a-trace", "tracestate": "x=1"})
	bad := e.exec.lastTurn().Trace
	e.ok(tokAlice, "SendMessage", sendParams("not traced", nil))
	none := e.exec.lastTurn().Trace
	for _, tr := range []tracing.Context{bad, none} {
		if !tracing.Valid(tr.Traceparent) || tr.Tracestate != "" || tracing.TraceID(tr.Traceparent) == tracing.TraceID(tp) {
			t.Errorf("untraced turn got trace %+v, want a new trace", tr)
		}
	}
	if tracing.TraceID(bad.Traceparent) == tracing.TraceID(none.Traceparent) {
		t.Error("two untraced turns share a trace")
	}
}

func TestExportRecordsEachRequestAsTheTurnsParent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	e := newEnv(t, func(o *Options) { o.Tracer = tracing.NewWithExporter(exp) })
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	e.ok(tokAlice, "SendMessage", sendParams("traced", nil), map[string]string{"traceparent": tp, "tracestate": "vendor=abc"})
	turn := e.exec.lastTurn()
	if tracing.TraceID(turn.Trace.Traceparent) != tracing.TraceID(tp) || tracing.SpanID(turn.Trace.Traceparent) == tracing.SpanID(tp) || turn.Trace.Tracestate != "vendor=abc" {
		t.Fatalf("turn trace %+v, want the request's span in trace %s", turn.Trace, tracing.TraceID(tp))
	}
	// Streams pass through the span's writer.
	evs, aerr := e.openStream(tokAlice, "SendStreamingMessage", sendParams("streamed", nil), map[string]string{"traceparent": tp}).all()
	if aerr != nil || len(evs) < 2 {
		t.Fatalf("stream through a traced server: %d events, %v", len(evs), aerr)
	}
	e.fails(tokAlice, "GetTask", &a2a.GetTaskRequest{ID: "no-such-task"}, map[string]string{"traceparent": tp})

	var send, get tracetest.SpanStub
	waitFor(t, "the spans of the traced requests", func() bool {
		send, get = tracetest.SpanStub{}, tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID().String() != tracing.TraceID(tp) {
				continue
			}
			switch s.Name {
			case "a2a SendMessage":
				send = s
			case "a2a GetTask":
				get = s
			}
		}
		return send.Name != "" && get.Name != ""
	})
	if send.SpanContext.SpanID().String() != tracing.SpanID(turn.Trace.Traceparent) || send.Parent.SpanID().String() != tracing.SpanID(tp) {
		t.Errorf("SendMessage span %s (parent %s); want the turn's parent %s, child of the caller", send.SpanContext.SpanID(), send.Parent.SpanID(), turn.Trace.Traceparent)
	}
	attrs := map[string]string{}
	for _, kv := range send.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["a2a.task_id"] != turn.TaskID || attrs["a2a.context_id"] != turn.ContextID || attrs["a2a.peer"] != "peer:alice" || attrs["http.response.status_code"] != "200" {
		t.Errorf("SendMessage span attributes %v", attrs)
	}
	if get.Status.Code.String() != "Error" {
		t.Errorf("a refused GetTask left its span %s", get.Status.Code)
	}
}
