package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestBreakdownCountsEachSampleInItsInnermostPart builds a CPU profile by
// hand and checks where each sample lands.
func TestBreakdownCountsEachSampleInItsInnermostPart(t *testing.T) {
	const mod = "github.com/a2a-plugin/a2a-plugin/"
	fns := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := fns[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(fns) + 1), Name: name}
		fns[name] = f
		return f
	}
	var locs []*profile.Location
	// loc is one location; its frames are given innermost first, as
	// inlined frames are stored.
	loc := func(frames ...string) *profile.Location {
		l := &profile.Location{ID: uint64(len(locs) + 1)}
		for _, f := range frames {
			l.Line = append(l.Line, profile.Line{Function: fn(f)})
		}
		locs = append(locs, l)
		return l
	}
	malloc, serve := loc("runtime.mallocgc"), loc("net/http.(*conn).serve")
	save, send := loc(mod+"internal/store.(*SQLite).SaveTask"), loc(mod+"internal/tasks.(*Manager).Send")
	mark := loc("runtime.gcBgMarkWorker")
	inlined := loc(mod+"internal/jsonenc.AppendString", mod+"internal/tasks.(*Manager).apply")
	write, grpcw := loc("syscall.write"), loc("google.golang.org/grpc/internal/transport.(*loopyWriter).run")
	ms := func(n int64) []int64 { return []int64{1, n * 1e6} }
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{malloc, save, send, serve}, Value: ms(10)}, // the store called it
			{Location: []*profile.Location{mark}, Value: ms(5)},                       // nobody's
			{Location: []*profile.Location{inlined, serve}, Value: ms(3)},             // the inlined callee's
			{Location: []*profile.Location{write, serve}, Value: ms(2)},
			{Location: []*profile.Location{malloc, send, serve}, Value: ms(7)},
			{Location: []*profile.Location{write, grpcw}, Value: ms(4)},
		},
		Location: locs,
	}
	for _, f := range fns {
		p.Function = append(p.Function, f)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	got, total := breakdown(p)
	want := map[string]float64{"store": 0.010, partRest: 0.005, "HTTP, JSON": 0.005, "task manager": 0.007, "contract, gRPC": 0.004}
	if math.Abs(total-0.031) > 1e-9 {
		t.Errorf("total %v s, want 0.031", total)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9 {
			t.Errorf("%s: %v s, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("parts %v, want exactly %v", got, want)
	}
	op := perOp(got, 100)
	if math.Abs(op["store"]-100) > 1e-6 { // 10 ms over 100 operations
		t.Errorf("store %v µs/op, want 100", op["store"])
	}
}

// TestReportShowsThePartsOfProfiledRuns: the parts table appears, with
// the medians of the rounds, for the rows that were profiled.
func TestReportShowsThePartsOfProfiledRuns(t *testing.T) {
	runs := []runRecord{
		{Round: 1, PluginParts: map[string]float64{"store": 40, "HTTP, JSON": 30}},
		{Round: 2, PluginParts: map[string]float64{"store": 50, "HTTP, JSON": 10}},
		{Round: 3, PluginParts: map[string]float64{"store": 45, "HTTP, JSON": 20}},
	}
	m := medianParts(runs)
	if m["store"] != 45 || m["HTTP, JSON"] != 20 {
		t.Fatalf("medians %v", m)
	}
	if medianParts([]runRecord{{Round: 1}}) != nil {
		t.Error("a run without a profile has parts")
	}
	var buf bytes.Buffer
	writeParts(&buf, []summaryRow{{Server: srvOursSQLite, PluginParts: m}, {Server: srvJSSDK}})
	out := buf.String()
	if !strings.Contains(out, srvOursSQLite) || strings.Contains(out, srvJSSDK) || !strings.Contains(out, "45.0") || !strings.Contains(out, "65.0") {
		t.Errorf("parts table:\n%s", out)
	}
}
