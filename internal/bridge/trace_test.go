package bridge

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

const inboundTrace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// sendTraced sends a message whose request carried trace.
func sendTraced(mgr *tasks.Manager, text string, trace tracing.Context) {
	go func() {
		_, _ = mgr.Send(context.Background(), tasks.SendParams{Caller: peer, Scope: peer.ID, Trace: trace,
			Request: &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart(text))}})
	}()
}

func TestInboundTraceReachesTheHostAndIsRememberedForTools(t *testing.T) {
	br, mgr, host := setup(t)
	sendTraced(mgr, "traced", tracing.Context{Traceparent: inboundTrace, Tracestate: "vendor=1"})
	req := next(t, host)
	if tr := req.GetTrace(); tr.GetTraceparent() != inboundTrace || tr.GetTracestate() != "vendor=1" {
		t.Fatalf("HandleMessage trace = %+v, want the inbound one", tr)
	}
	got, ok := br.TraceFor(req.GetChatId())
	if !ok || got.Traceparent != inboundTrace || got.Tracestate != "vendor=1" {
		t.Fatalf("TraceFor = %+v, %v", got, ok)
	}
	if _, ok := br.TraceFor("other"); ok {
		t.Fatal("an unknown conversation has a trace")
	}
	if br.peerOf(req.GetChatId()) != peer.ID {
		t.Errorf("peer of the conversation = %q", br.peerOf(req.GetChatId()))
	}

	// A later untraced turn in the same conversation forgets the trace.
	msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart("again"))
	msg.ContextID = req.GetChatId()
	go func() {
		_, _ = mgr.Send(context.Background(), tasks.SendParams{Caller: peer, Scope: peer.ID, Request: &a2a.SendMessageRequest{Message: msg}})
	}()
	if _, err := br.Send(context.Background(), mgr, &pb.SendRequest{TaskId: req.GetTaskId(), ChatId: req.GetChatId(), Kind: pb.SendKind_SEND_KIND_FINAL, Text: "done"}); err != nil {
		t.Fatal(err)
	}
	req2 := next(t, host)
	if req2.GetTrace() != nil {
		t.Errorf("untraced turn reached the host with trace %+v", req2.GetTrace())
	}
	if _, ok := br.TraceFor(req.GetChatId()); ok {
		t.Error("the conversation kept the previous turn's trace")
	}
}

func TestExportRecordsTheHostCallAndTheHostGetsItsSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := tracing.NewWithExporter(exp)
	host := &fakeHost{handled: make(chan *pb.HandleMessageRequest, 16)}
	br, err := New(Options{Host: host, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := tasks.NewManager(tasks.Options{Store: store.NewMemory(100), Executor: br, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(context.Background()) })

	sendTraced(mgr, "traced", tracing.Context{Traceparent: inboundTrace})
	req := next(t, host)
	sent := req.GetTrace().GetTraceparent()
	if tracing.TraceID(sent) != tracing.TraceID(inboundTrace) || tracing.SpanID(sent) == tracing.SpanID(inboundTrace) {
		t.Fatalf("host got trace %q, want a new span in trace %s", sent, tracing.TraceID(inboundTrace))
	}
	if got, _ := br.TraceFor(req.GetChatId()); got.Traceparent != sent {
		t.Errorf("TraceFor = %q, want what the host got (%q)", got.Traceparent, sent)
	}
	var spans tracetest.SpanStubs
	for deadline := time.Now().Add(5 * time.Second); len(spans) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		spans = exp.GetSpans()
	}
	if len(spans) != 1 {
		t.Fatalf("%d spans, want the HandleMessage span", len(spans))
	}
	s := spans[0]
	if s.Name != "a2a.host HandleMessage" || s.SpanContext.SpanID().String() != tracing.SpanID(sent) || s.Parent.SpanID().String() != tracing.SpanID(inboundTrace) {
		t.Errorf("span %s id %s parent %s; want the span the host got, child of the inbound span", s.Name, s.SpanContext.SpanID(), s.Parent.SpanID())
	}
	attrs := map[string]string{}
	for _, kv := range s.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["a2a.task_id"] != req.GetTaskId() || attrs["a2a.context_id"] != req.GetChatId() || attrs["a2a.peer"] != peer.ID {
		t.Errorf("span attributes %v", attrs)
	}
}
