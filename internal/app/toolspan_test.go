package app

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/a2a-plugin/a2a-plugin/internal/tools"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// TestToolSpanDecidesTheTraceAndEndsWithTheResult: the span recorder the
// app gives the tools (parts.toolSpan) continues the host's trace, else
// the origin's, makes the call's trace its own span, and is ended — once,
// failed for an is_error result — by the SpanEnd it returns. Without a
// tracer it only decides the trace (a new one when there is none) and
// returns no recorder.
func TestToolSpanDecidesTheTraceAndEndsWithTheResult(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := &parts{tracer: tracing.NewWithExporter(exp)}
	const host = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	org := tools.Origin{Trace: tracing.Context{Traceparent: "00-11111111111111111111111111111111-2222222222222222-01"}}
	req := &pb.CallToolRequest{Name: "a2a_call", Platform: "a2a", ChatId: "c1", Trace: &pb.TraceContext{Traceparent: host}}
	end := p.toolSpan(context.Background(), &org, req)
	if end == nil || !org.TraceIsSpan || tracing.TraceID(org.Trace.Traceparent) != tracing.TraceID(host) || tracing.SpanID(org.Trace.Traceparent) == tracing.SpanID(host) {
		t.Fatalf("with a tracer: trace %+v, recorder %v", org, end != nil)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans ended before the call did", n)
	}
	end(&pb.ToolResult{Content: "no", IsError: true}, nil)
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "a2a.tool a2a_call" || spans[0].Status.Code != codes.Error ||
		spans[0].SpanContext.SpanID().String() != tracing.SpanID(org.Trace.Traceparent) {
		t.Fatalf("spans %+v", spans)
	}

	bare := &parts{}
	org = tools.Origin{}
	if end := bare.toolSpan(context.Background(), &org, &pb.CallToolRequest{Name: "a2a_list"}); end != nil || org.TraceIsSpan || !org.Trace.Valid() {
		t.Fatalf("without a tracer: trace %+v, recorder %v", org, end != nil)
	}
	inbound := tracing.Context{Traceparent: host}
	org = tools.Origin{Trace: inbound}
	bare.toolSpan(context.Background(), &org, &pb.CallToolRequest{Name: "a2a_list"})
	if org.Trace != inbound {
		t.Fatalf("without a tracer the inbound turn's trace is kept: %+v", org.Trace)
	}
}
