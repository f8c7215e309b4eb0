package tracing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		tp   string
		want bool
	}{
		{tp, true},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", true},
		{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future", true},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra", false},
		{"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", false},
		{"00-00000000000000000000000000000000-b7ad6b7169203331-01", false},
		{"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", false},
		{"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", false},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01", false},
		{"00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", false},
		{"garbage", false},
		{"", false},
	} {
		if got := tracing.Valid(tc.tp); got != tc.want {
			t.Errorf("Valid(%q) = %t, want %t", tc.tp, got, tc.want)
		}
	}
}

func TestChildKeepsTraceIDWithANewSpanID(t *testing.T) {
	c := tracing.Child(tp)
	if !tracing.Valid(c) || len(c) != 55 {
		t.Fatalf("Child = %q, not a version 00 traceparent", c)
	}
	if tracing.TraceID(c) != tracing.TraceID(tp) {
		t.Errorf("Child trace id %s, want %s", tracing.TraceID(c), tracing.TraceID(tp))
	}
	if tracing.SpanID(c) == tracing.SpanID(tp) {
		t.Error("Child kept the parent's span id")
	}
	if !strings.HasSuffix(c, "-01") {
		t.Errorf("Child %s lost the sampled flag", c)
	}
	if c2 := tracing.Child(tp); tracing.SpanID(c2) == tracing.SpanID(c) {
		t.Error("two children got the same span id")
	}
	if c := tracing.Child("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"); !strings.HasSuffix(c, "-00") {
		t.Errorf("Child of an unsampled trace = %s, want it unsampled", c)
	}
	if c := tracing.Child("cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-09-what-comes-next"); !strings.HasPrefix(c, "00-0af7651916cd43dd8448eb211c80319c-") || !strings.HasSuffix(c, "-01") || len(c) != 55 {
		t.Errorf("Child of a future version = %s, want version 00 with the same trace id", c)
	}
}

func TestChildOfNothingStartsATrace(t *testing.T) {
	a, b := tracing.Child(""), tracing.Child("garbage")
	if !tracing.Valid(a) || !tracing.Valid(b) {
		t.Fatalf("Child of nothing = %q, %q; want new traces", a, b)
	}
	if tracing.TraceID(a) == tracing.TraceID(b) {
		t.Error("two new traces share a trace id")
	}
	if r := tracing.NewRoot(); !strings.HasPrefix(r, "00-") || !strings.HasSuffix(r, "-01") {
		t.Errorf("NewRoot = %s, want version 00, sampled", r)
	}
}

func TestValidState(t *testing.T) {
	if !tracing.ValidState("") || !tracing.ValidState("vendor=abc,other=1") {
		t.Error("plain tracestates refused")
	}
	if tracing.ValidState("a=b\r\nX-Evil: 1") || tracing.ValidState(strings.Repeat("a", 513)) {
		t.Error("a tracestate with a line break or over 512 bytes accepted")
	}
}

func TestNilTracerDoesNothing(t *testing.T) {
	var tr *tracing.Tracer
	ctx := context.Background()
	got, sp := tr.Start(ctx, "x", tracing.KindServer, tracing.Context{Traceparent: tp})
	if got != ctx || sp.Recording() || sp.Traceparent() != "" || tr.Enabled() {
		t.Fatal("the nil tracer did something")
	}
	sp.SetString("k", "v")
	sp.SetInt("n", 1)
	sp.SetName("y")
	sp.Fail("no")
	sp.End(errors.New("boom"))
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_, sp := tr.Start(ctx, "x", tracing.KindServer, tracing.Context{Traceparent: tp})
		sp.SetString("a2a.task_id", "t")
		sp.End(nil)
	})
	if allocs != 0 {
		t.Errorf("the nil tracer allocates %.0f times per span", allocs)
	}
}

func TestSpansContinueTheW3CParent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := tracing.NewWithExporter(exp)
	defer tr.Shutdown(context.Background())

	ctx, sp := tr.Start(context.Background(), "a2a SendMessage", tracing.KindServer, tracing.Context{Traceparent: tp, Tracestate: "vendor=1"})
	if !sp.Recording() {
		t.Fatal("span not recording")
	}
	child := sp.Traceparent()
	if tracing.TraceID(child) != tracing.TraceID(tp) || tracing.SpanID(child) == tracing.SpanID(tp) || sp.Tracestate() != "vendor=1" {
		t.Errorf("span traceparent %s tracestate %q; want trace %s with a new span id and vendor=1", child, sp.Tracestate(), tracing.TraceID(tp))
	}
	if got := tracing.SpanFromContext(ctx).Traceparent(); got != child {
		t.Errorf("context carries span %s, want %s", got, child)
	}
	if tracing.SpanFromContext(context.Background()).Recording() {
		t.Error("a bare context carries a span")
	}
	sp.SetString("a2a.task_id", "task-1")
	sp.End(errors.New("refused"))

	_, root := tr.Start(context.Background(), "a2a.push", tracing.KindClient, tracing.Context{Traceparent: "garbage"})
	root.End(nil)
	if tracing.TraceID(root.Traceparent()) == tracing.TraceID(tp) || !tracing.Valid(root.Traceparent()) {
		t.Errorf("a span without a valid parent = %s, want a new trace", root.Traceparent())
	}

	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans exported, want 2", len(spans))
	}
	s := spans[0]
	if s.Name != "a2a SendMessage" || s.SpanKind != trace.SpanKindServer || s.Parent.SpanID().String() != tracing.SpanID(tp) ||
		!s.Parent.IsRemote() || s.Status.Description != "refused" {
		t.Errorf("server span = %+v", s)
	}
	if spans[1].SpanKind != trace.SpanKindClient || spans[1].Parent.IsValid() {
		t.Errorf("root client span = %+v", spans[1])
	}
}

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":            "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":           "http://127.0.0.1:4318/v1/traces",
		"https://otel.example/custom/path": "https://otel.example/custom/path",
	} {
		if got, err := tracing.EndpointURL(in); err != nil || got != want {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"127.0.0.1:4318", "grpc://x:4317", "http://"} {
		if _, err := tracing.EndpointURL(bad); err == nil {
			t.Errorf("EndpointURL(%q) accepted", bad)
		}
	}
}

// BenchmarkNewRoot is the cost an untraced inbound send pays with export
// off: one new traceparent.
func BenchmarkNewRoot(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = tracing.NewRoot()
	}
}

// BenchmarkChild is the cost of the traceparent of one outbound call.
func BenchmarkChild(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = tracing.Child(tp)
	}
}

// BenchmarkDisabledSpan is what a span costs with export off.
func BenchmarkDisabledSpan(b *testing.B) {
	var tr *tracing.Tracer
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, sp := tr.Start(ctx, "x", tracing.KindServer, tracing.Context{Traceparent: tp})
		sp.SetString("a2a.task_id", "t")
		sp.End(nil)
	}
}
