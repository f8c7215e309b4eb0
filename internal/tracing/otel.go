package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options configure OpenTelemetry export.
type Options struct {
	// Endpoint is the OTLP/HTTP collector: a base URL such as
	// http://127.0.0.1:4318 (spans go to its /v1/traces) or the full URL
	// of the traces endpoint. https URLs use TLS. Required.
	Endpoint string
	// ServiceName names this agent in the traces (OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES override it). Default "a2a-plugin".
	ServiceName string
	// ServiceVersion is the plugin's version, if known.
	ServiceVersion string
}

// Tracer records the plugin's spans and exports them. A nil *Tracer is the
// disabled tracer: every method is a no-op and Start returns a zero Span.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// instrumentation is the instrumentation scope name of the plugin's spans.
const instrumentation = "github.com/a2a-plugin/a2a-plugin"

// New starts an exporter to opts.Endpoint and returns a Tracer whose spans
// are batched to it. The usual OTEL_* variables (OTEL_TRACES_SAMPLER,
// OTEL_EXPORTER_OTLP_HEADERS, …) are honoured; the default sampler
// follows the caller's sampled flag and samples new traces.
func New(ctx context.Context, opts Options) (*Tracer, error) {
	endpoint, err := EndpointURL(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter for %s: %w", endpoint, err)
	}
	name := opts.ServiceName
	if name == "" {
		name = "a2a-plugin"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opts.ServiceVersion))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{provider: tp, tracer: tp.Tracer(instrumentation)}, nil
}

// NewWithExporter is New with an exporter of the caller's (tests use an
// in-memory one), spans sent synchronously.
func NewWithExporter(exp sdktrace.SpanExporter) *Tracer {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	return &Tracer{provider: tp, tracer: tp.Tracer(instrumentation)}
}

// EndpointURL checks an OTLP/HTTP endpoint setting and returns the URL
// spans are posted to: a URL without a path gets /v1/traces.
func EndpointURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("tracing: the OTLP endpoint %q is not an http(s) URL; use e.g. http://127.0.0.1:4318", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// Enabled reports whether spans are recorded (t is not the nil Tracer).
func (t *Tracer) Enabled() bool { return t != nil }

// Shutdown flushes the spans not yet exported and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: flushing spans: %w", err)
	}
	return nil
}

// Kind says what a span stands for.
type Kind int

// Span kinds.
const (
	// KindServer: an inbound request served by the plugin.
	KindServer Kind = iota + 1
	// KindClient: a call the plugin makes (to its host, a peer, a webhook).
	KindClient
)

// propagator reads and writes the W3C headers.
var propagator = propagation.TraceContext{}

// Start starts a span named name whose parent is the W3C trace context
// parent; with no valid traceparent the span starts a new trace. The
// returned context carries the span. On the nil Tracer it returns ctx and
// a zero Span without doing anything else.
func (t *Tracer) Start(ctx context.Context, name string, kind Kind, parent Context) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	if kind == KindServer {
		opts[0] = trace.WithSpanKind(trace.SpanKindServer)
	}
	// The parent comes from the W3C strings, never from a span ctx may
	// carry; ctx keeps its deadline and values.
	var sc trace.SpanContext
	if parent.Valid() {
		sc = trace.SpanContextFromContext(propagator.Extract(context.Background(), carrier(parent)))
	}
	if sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	ctx, s := t.tracer.Start(ctx, name, opts...)
	return ctx, Span{s: s}
}

// SpanFromContext returns the span ctx carries (one Start returned), or
// the zero Span.
func SpanFromContext(ctx context.Context) Span {
	s := trace.SpanFromContext(ctx)
	if !s.SpanContext().IsValid() {
		return Span{}
	}
	return Span{s: s}
}

// carrier is a Context read as a propagation.TextMapCarrier.
type carrier Context

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Traceparent
	case "tracestate":
		return c.Tracestate
	}
	return ""
}
func (c carrier) Set(string, string) {}
func (c carrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// Span is a span being recorded. The zero Span (export off) ignores every
// call.
type Span struct{ s trace.Span }

// Recording reports whether the span is real (export on).
func (s Span) Recording() bool { return s.s != nil }

// Traceparent is the W3C traceparent naming this span, to send to whoever
// the span calls ("" for the zero Span).
func (s Span) Traceparent() string {
	if s.s == nil {
		return ""
	}
	sc := s.s.SpanContext()
	if !sc.IsValid() {
		return ""
	}
	flags := "00"
	if sc.IsSampled() {
		flags = "01"
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + flags
}

// Tracestate is the span's tracestate (its parent's), "" when empty.
func (s Span) Tracestate() string {
	if s.s == nil {
		return ""
	}
	return s.s.SpanContext().TraceState().String()
}

// Context is the trace context naming this span, to send to whoever the
// span calls (the zero Context for the zero Span).
func (s Span) Context() Context {
	return Context{Traceparent: s.Traceparent(), Tracestate: s.Tracestate()}
}

// SetName renames the span (a server span learns its method late).
func (s Span) SetName(name string) {
	if s.s != nil {
		s.s.SetName(name)
	}
}

// SetString sets a string attribute; empty values are skipped.
func (s Span) SetString(key, value string) {
	if s.s != nil && value != "" {
		s.s.SetAttributes(attribute.String(key, value))
	}
}

// SetInt sets an integer attribute.
func (s Span) SetInt(key string, value int) {
	if s.s != nil {
		s.s.SetAttributes(attribute.Int(key, value))
	}
}

// Fail marks the span as failed with a message (a refusal, an error
// answer) without ending it.
func (s Span) Fail(msg string) {
	if s.s != nil {
		s.s.SetStatus(codes.Error, msg)
	}
}

// End ends the span; a non-nil err is recorded and marks it failed.
func (s Span) End(err error) {
	if s.s == nil {
		return
	}
	if err != nil {
		s.s.RecordError(err)
		s.s.SetStatus(codes.Error, err.Error())
	}
	s.s.End()
}
