package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// hookLog is what the recorders of a test saw, in order.
type hookLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *hookLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *hookLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// loggingRecorder writes every hook it is called at into log.
type loggingRecorder struct {
	name string
	log  *hookLog
}

func (r *loggingRecorder) exchanged(*callRecord, *resolved, peerRequest, error) {
	r.log.add(r.name + ":exchanged")
}
func (r *loggingRecorder) ended(*callRecord, *resolved, string, time.Duration, error) {
	r.log.add(r.name + ":ended")
}
func (r *loggingRecorder) named(context.Context, *callRecord, *resolved, *a2a.Message, string, string) {
	r.log.add(r.name + ":named")
}
func (r *loggingRecorder) sent(context.Context, *callRecord, store.ConversationEntry) {
	r.log.add(r.name + ":sent")
}
func (r *loggingRecorder) received(context.Context, *callRecord, *resolved, *outcome) {
	r.log.add(r.name + ":received")
}
func (r *loggingRecorder) settled(context.Context, *callRecord, *resolved, delegationInfo, *outcome) {
	r.log.add(r.name + ":settled")
}
func (r *loggingRecorder) finished(*callRecord, *pb.ToolResult, error) {
	r.log.add(r.name + ":finished")
}

// TestTheChainCallsEveryRecorderOnceInItsOrder: at each point of a call
// the chain calls every recorder once, in the chain's order; a chain of
// nothing (nil) records nothing, and a task without an id is no task.
func TestTheChainCallsEveryRecorderOnceInItsOrder(t *testing.T) {
	log := &hookLog{}
	c := &callRecord{}
	c.chain = append(c.buf[:0], &loggingRecorder{"a", log}, &loggingRecorder{"b", log}, &loggingRecorder{"c", log})
	ctx := context.Background()
	target := &resolved{name: "p", rec: c}
	o := &outcome{}
	c.exchanged(target, peerRequest{}, nil)
	c.ended(target, "SendMessage", time.Second, nil)
	c.named(ctx, target, &a2a.Message{}, "task-1", "ctx-1")
	c.named(ctx, target, &a2a.Message{}, "", "ctx-1") // no task: nothing
	c.sent(ctx, store.ConversationEntry{})
	c.received(ctx, target, o)
	c.settled(ctx, target, delegationInfo{}, o)
	c.finished(&pb.ToolResult{}, nil)
	var want []string
	for _, hook := range []string{"exchanged", "ended", "named", "sent", "received", "settled", "finished"} {
		for _, r := range []string{"a", "b", "c"} {
			want = append(want, r+":"+hook)
		}
	}
	if got := log.all(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the chain called\n%v\nwant\n%v", got, want)
	}

	var none *callRecord
	none.exchanged(target, peerRequest{}, nil)
	none.ended(target, "GetTask", 0, nil)
	none.named(ctx, target, &a2a.Message{}, "task-1", "")
	none.sent(ctx, store.ConversationEntry{})
	none.received(ctx, target, o)
	none.settled(ctx, target, delegationInfo{}, o)
	none.finished(nil, nil)
	if n := len(log.all()); n != len(want) {
		t.Fatalf("a nil chain recorded: %d lines", n)
	}
}

// TestTheChainIsBuiltFromTheOriginAndTheDeps: a call's chain holds the
// span, the audit log, the metrics, the cascade's record, the
// conversations and the host's memory, in that order, each only when its
// sink is on; the cascade's only for a call made for an inbound task.
func TestTheChainIsBuiltFromTheOriginAndTheDeps(t *testing.T) {
	audit, _ := newAuditLog(t)
	ts, err := New(Config{}, Deps{Store: store.NewMemory(10), Host: &delegationHost{}, Audit: audit, Delegations: &delegationLog{}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	kinds := func(c *callRecord) []string {
		var out []string
		for _, r := range c.chain {
			out = append(out, fmt.Sprintf("%T", r))
		}
		return out
	}
	span := SpanEnd(func(*pb.ToolResult, error) {})
	var c callRecord
	ts.sinks.recording(&c, Origin{Task: "in-1"}, span)
	want := []string{"tools.SpanEnd", "*tools.auditRecorder", "*tools.metricsRecorder", "*tools.cascadeRecorder", "*tools.conversationLog", "*tools.hostMemory"}
	if got := kinds(&c); !reflect.DeepEqual(got, want) {
		t.Fatalf("chain of a call for an inbound task: %v, want %v", got, want)
	}
	if c.org.Task != "in-1" {
		t.Fatalf("the chain records for %+v", c.org)
	}
	ts.sinks.recording(&c, Origin{}, nil)
	want = []string{"*tools.auditRecorder", "*tools.metricsRecorder", "*tools.conversationLog", "*tools.hostMemory"}
	if got := kinds(&c); !reflect.DeepEqual(got, want) {
		t.Fatalf("chain of the host's own call: %v, want %v", got, want)
	}

	bare, err := New(Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if got := kinds(bare.sinks.record(Origin{Task: "in-1"})); !reflect.DeepEqual(got, []string{"*tools.metricsRecorder"}) {
		t.Fatalf("chain without sinks: %v", got)
	}
}

// orderHost records RecordDelegation calls into a hookLog, failing them
// with err.
type orderHost struct {
	plugin.Host
	log *hookLog
	err error
}

func (h *orderHost) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	h.log.add("host:" + req.GetState())
	return &pb.RecordDelegationResponse{}, h.err
}

// orderDelegations records the cascade's records into a hookLog, failing
// them with err.
type orderDelegations struct {
	log *hookLog
	err error
}

func (d *orderDelegations) Record(ctx context.Context, del store.Delegation) error {
	d.log.add("cascade:" + del.ParentTaskID)
	return d.err
}

// failingConversations refuses every entry.
type failingConversations struct {
	store.Store
	log *hookLog
}

func (f failingConversations) AppendConversation(ctx context.Context, e *store.ConversationEntry) (int64, error) {
	f.log.add("conversation:" + e.Direction)
	return 0, errors.New("disk full")
}

// auditMethods reads the methods of an audit log's records.
func auditMethods(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var rec security.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.Method)
	}
	return out
}

// TestEverySideEffectOfACallIsRecordedOnce: one a2a_call made for an
// inbound task leaves one audit record, one metrics observation, one
// cascade record, its two conversation entries and one RecordDelegation,
// inside the span the app's recorder started (which decided the trace the
// request carried) and ended last, with the result.
func TestEverySideEffectOfACallIsRecordedOnce(t *testing.T) {
	c := newCapture(t)
	audit, path := newAuditLog(t)
	log := &hookLog{}
	st := store.NewMemory(100)
	var spanRes *pb.ToolResult
	spans := 0
	trace := tracing.Context{Traceparent: tracing.NewRoot()}
	startSpan := func(ctx context.Context, org *Origin, req *pb.CallToolRequest) SpanEnd {
		spans++
		log.add("span:start " + req.GetName())
		org.Trace, org.TraceIsSpan = trace, true
		return func(res *pb.ToolResult, err error) {
			log.add("span:end")
			spanRes = res
			if err != nil {
				t.Errorf("span ended with %v", err)
			}
		}
	}
	ts, err := New(Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}},
		Deps{Store: st, Host: &orderHost{log: log}, Audit: audit, Delegations: &orderDelegations{log: log}, Span: startSpan})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	org := Origin{Platform: "a2a", ChatID: "c1", Task: "in-1", Caller: "peer:bob"}
	r := callToolFrom(context.Background(), org, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "hi"}, nil)
	mustOK(t, r, "got it")

	want := []string{"span:start a2a_call", "cascade:in-1", "host:TASK_STATE_COMPLETED", "span:end"}
	if got := log.all(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the call recorded\n%v\nwant\n%v", got, want)
	}
	if spans != 1 || spanRes == nil || spanRes.Content != r.Content {
		t.Fatalf("%d spans, ended with %v", spans, spanRes)
	}
	if got := auditMethods(t, path); !reflect.DeepEqual(got, []string{"SendMessage"}) {
		t.Fatalf("audit records: %v", got)
	}
	if s := ts.Metrics().Peer("cap"); s.Calls != 1 || s.Errors != 0 {
		t.Fatalf("metrics: %+v", s)
	}
	entries, err := st.Conversation(context.Background(), "ctx-capture", 0)
	if err != nil || len(entries) != 2 || entries[0].Direction != store.DirectionSent || entries[1].Direction != store.DirectionReceived {
		t.Fatalf("conversation entries %+v (%v)", entries, err)
	}
}

// TestAFailingSinkDoesNotStopTheOthersNorTheCall: when the cascade, the
// conversation store, the host and the audit log all fail, the call still
// answers, every sink was tried once, and the metrics and the span still
// record it.
func TestAFailingSinkDoesNotStopTheOthersNorTheCall(t *testing.T) {
	c := newCapture(t)
	audit, path := newAuditLog(t)
	if err := audit.Close(); err != nil { // every Log fails from now on
		t.Fatal(err)
	}
	log := &hookLog{}
	startSpan := func(ctx context.Context, org *Origin, req *pb.CallToolRequest) SpanEnd {
		return func(res *pb.ToolResult, err error) { log.add(fmt.Sprintf("span:end is_error=%v", res.GetIsError())) }
	}
	ts, err := New(Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}},
		Deps{Store: failingConversations{Store: store.NewMemory(10), log: log}, Host: &orderHost{log: log, err: errors.New("host down")}, Audit: audit,
			Delegations: &orderDelegations{log: log, err: errors.New("store down")}, Span: startSpan})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	org := Origin{Task: "in-1", Caller: "peer:bob"}
	mustOK(t, callToolFrom(context.Background(), org, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "hi"}, nil), "got it")
	want := []string{"cascade:in-1", "conversation:sent", "conversation:received", "host:TASK_STATE_COMPLETED", "span:end is_error=false"}
	if got := log.all(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the call recorded\n%v\nwant\n%v", got, want)
	}
	if got := auditMethods(t, path); len(got) != 0 {
		t.Fatalf("a closed audit log got records: %v", got)
	}
	if s := ts.Metrics().Peer("cap"); s.Calls != 1 {
		t.Fatalf("metrics: %+v", s)
	}
}

// TestTheSpanOfAnUnknownToolEndsWithItsError: a call of a tool that does
// not exist still ends the span it started, with the error CallFrom
// returns.
func TestTheSpanOfAnUnknownToolEndsWithItsError(t *testing.T) {
	var ended error
	n := 0
	ts, err := New(Config{}, Deps{Span: func(ctx context.Context, org *Origin, req *pb.CallToolRequest) SpanEnd {
		return func(res *pb.ToolResult, err error) { n++; ended = err }
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	_, err = ts.CallFrom(context.Background(), Origin{}, &pb.CallToolRequest{Name: "a2a_nope"}, nil)
	if !errors.Is(err, plugin.ErrUnknownTool) || n != 1 || ended != err {
		t.Fatalf("CallFrom: %v; span ended %d time(s) with %v", err, n, ended)
	}
}
