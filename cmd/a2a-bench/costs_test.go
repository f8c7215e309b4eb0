package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseStatusReadsRSSAndPeak(t *testing.T) {
	status := "Name:\ta2a-plugin\nVmPeak:\t 1266404 kB\nVmHWM:\t   48120 kB\nVmRSS:\t   46512 kB\nThreads:\t9\n"
	m, err := parseStatus(strings.NewReader(status))
	if err != nil || m.RSS != 46512 || m.HWM != 48120 {
		t.Fatalf("parseStatus = %+v, %v; want RSS 46512, HWM 48120", m, err)
	}
	for _, bad := range []string{"VmRSS:\t x kB\n", "VmRSS:\t 12 MB\n", "VmHWM:\n", "VmRSS:\t -5 kB\n"} {
		if _, err := parseStatus(strings.NewReader(bad)); err == nil {
			t.Errorf("parseStatus(%q) accepted a malformed line", bad)
		}
	}
	// A kernel thread has no Vm lines: zeros, no error.
	if m, err := parseStatus(strings.NewReader("Name:\tkthreadd\n")); err != nil || m != (memKB{}) {
		t.Errorf("no Vm lines: %+v, %v", m, err)
	}
}

func TestDBBytesCountsTheDatabaseNotTheAuditLog(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"a2a-plugin.db": 4096, "a2a-plugin.db-wal": 1000, "a2a-plugin.db-shm": 24,
		"audit.jsonl": 9999, "audit.jsonl.1": 10_000, "push-secret": 65} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := dbBytes(dir); got != 4096+1000+24 {
		t.Errorf("dbBytes = %d, want %d", got, 4096+1000+24)
	}
	if got := dbBytes(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("no database: %d", got)
	}
}

func TestPerUnitKBSpreadsTheGrowth(t *testing.T) {
	if got := perUnitKB(30_000, 37_500, 500); got != 15 {
		t.Errorf("perUnitKB = %v, want 15", got)
	}
	if got := perUnitKB(30_000, 29_000, 100); got != -10 {
		t.Errorf("a shrink is reported as it is: %v, want -10", got)
	}
	if got := perUnitKB(1, 2, 0); got != 0 {
		t.Errorf("no units: %v, want 0", got)
	}
	m := memoryRecord{Conns: 4, BaseKB: 100, ConnsKB: 140, Streams: 2, SBaseKB: 100, StreamsKB: 190}
	if m.perConnKB() != 10 || m.perStreamKB() != 45 {
		t.Errorf("per connection %v, per stream %v; want 10 and 45", m.perConnKB(), m.perStreamKB())
	}
}

func TestTurnWindowsAndTheirMedians(t *testing.T) {
	w := turnWindows(1000)
	want := [][2]int{{0, 10}, {90, 100}, {990, 1000}}
	if len(w) != len(want) {
		t.Fatalf("turnWindows(1000) = %v, want %v", w, want)
	}
	for i := range want {
		if w[i] != want[i] {
			t.Fatalf("turnWindows(1000) = %v, want %v", w, want)
		}
	}
	if w := turnWindows(5); len(w) != 1 || w[0] != [2]int{0, 5} {
		t.Errorf("turnWindows(5) = %v, want [[0 5]]", w)
	}
	if turnWindows(0) != nil {
		t.Error("no turns, no windows")
	}
	vs := make([]float64, 30)
	for i := range vs {
		vs[i] = float64(i + 1)
	}
	got := windowMedians(vs, [][2]int{{0, 10}, {20, 30}, {25, 40}, {40, 50}})
	// 1..10 → 5.5; 21..30 → 25.5; 26..30 (clipped) → 28; past the end → 0.
	if len(got) != 4 || got[0] != 5.5 || got[1] != 25.5 || got[2] != 28 || got[3] != 0 {
		t.Errorf("windowMedians = %v, want [5.5 25.5 28 0]", got)
	}
}

func TestSummarizeTurnsTakesMediansAcrossRounds(t *testing.T) {
	mk := func(round int, scale float64) turnsRecord {
		r := turnsRecord{Store: "sqlite", Round: round, Variant: "task", Resets: 52}
		for i := range 100 {
			r.SendMS = append(r.SendMS, scale*float64(i+1))
		}
		r.Gets = []getCheckpoint{{Turn: 1, HistoryN: 2, Last10MS: scale, FullMS: 2 * scale, FullBytes: 900},
			{Turn: 100, HistoryN: 200, Last10MS: 3 * scale, FullMS: 4 * scale, FullBytes: 40_000}}
		return r
	}
	recs := []turnsRecord{mk(1, 1), mk(2, 3), mk(3, 2), {Store: "sqlite", Round: 4, Variant: "task", ErrorMsg: "boom"}}
	s := summarizeTurns(recs)
	if s.Rounds != 3 || s.Resets != 52 || len(s.Errors) != 1 {
		t.Fatalf("rounds %d, resets %d, errors %v", s.Rounds, s.Resets, s.Errors)
	}
	// Window 1–10 of round k has median 5.5×scale; the median scale is 2.
	if len(s.SendMS) != 2 || s.SendMS[0] != 11 || s.SendMS[1] != 2*95.5 {
		t.Errorf("windows %v, medians %v; want [11 191]", s.Windows, s.SendMS)
	}
	if len(s.Gets) != 2 || s.Gets[1].Turn != 100 || s.Gets[1].Last10MS != 6 || s.Gets[1].FullMS != 8 || s.Gets[1].HistoryN != 200 {
		t.Errorf("gets %+v", s.Gets)
	}
}

func TestAgentRatiosPairRoundsOfOneStore(t *testing.T) {
	rec := func(st string, round, agents int, rps, cpu float64) agentsRecord {
		r := agentsRecord{Store: st, Round: round, Agents: agents, ServerCPUPerOpUS: cpu}
		r.Load.RPS = rps
		return r
	}
	recs := []agentsRecord{
		rec("sqlite", 1, 1, 1000, 200), rec("sqlite", 1, 10, 900, 220),
		rec("sqlite", 2, 1, 2000, 100), rec("sqlite", 2, 10, 1600, 125),
		rec("sqlite", 3, 10, 5000, 1), // no one-agent run in round 3: unpaired
		rec("postgres", 1, 1, 10, 10), rec("postgres", 1, 10, 100, 100),
	}
	rps, cpu := agentRatios(recs, "sqlite", 10)
	if rps.Min != 0.8 || rps.Max != 0.9 || cpu.Min != 1.1 || cpu.Max != 1.25 {
		t.Errorf("req/s %+v, CPU %+v; want 0.8–0.9 and 1.1–1.25", rps, cpu)
	}
}

func TestChunkLevelsAndRepetitions(t *testing.T) {
	if got := chunkLevels(1000); len(got) != 4 || got[0] != 1 || got[3] != 1000 {
		t.Errorf("chunkLevels(1000) = %v", got)
	}
	if got := chunkLevels(250); len(got) != 4 || got[2] != 100 || got[3] != 250 {
		t.Errorf("chunkLevels(250) = %v", got)
	}
	if chunkReps(1) != 1000 || chunkReps(1000) != 3 || chunkReps(100) != 10 {
		t.Errorf("chunkReps: %d %d %d", chunkReps(1), chunkReps(100), chunkReps(1000))
	}
	scen := benchScenario([]int{1, 10})
	for _, want := range []string{`prefix: "chunks-10 "`, "chunks: 10}", "- ask:", "- hang", "default:"} {
		if !strings.Contains(scen, want) {
			t.Errorf("the scenario lacks %q:\n%s", want, scen)
		}
	}
}

func TestSearchPathJoinsEitherFormOfDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@127.0.0.1:5432/db?sslmode=disable": "postgres://u@127.0.0.1:5432/db?search_path=s1&sslmode=disable",
		"host=127.0.0.1 dbname=db":                       "host=127.0.0.1 dbname=db search_path=s1",
	} {
		if got := withSearchPath(in, "s1"); got != want {
			t.Errorf("withSearchPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAgentsConfigAndURLs(t *testing.T) {
	if agentsConfig(1) != "" || agentURLs("http://h", 1) != "http://h/" {
		t.Error("one agent: no agents section, the root URL")
	}
	cfg := agentsConfig(3)
	if !strings.HasPrefix(cfg, "agents:\n") || strings.Count(cfg, "- id: a") != 3 || !strings.Contains(cfg, "- id: a2\n") {
		t.Errorf("agentsConfig(3) =\n%s", cfg)
	}
	if got := agentURLs("http://h", 3); got != "http://h/agents/a0/,http://h/agents/a1/,http://h/agents/a2/" {
		t.Errorf("agentURLs = %q", got)
	}
}

func TestCostsReportPerTaskBytesAndRSSPer100k(t *testing.T) {
	res := &Results{Config: config{Rounds: 1, CostStores: []string{"sqlite"}, Chunks: 10, Agents: 10, Clients: 16, StartupN: 2, Duration: 5 * time.Second}}
	res.Costs = &costsResults{
		Scale: []scaleRecord{
			{Store: "sqlite", Tasks: 0, StartupMS: []float64{40, 60}, IdleKB: []int64{30_000, 31_000}, DBBytes: 1 << 20, ListMem: memKB{RSS: 32 * 1024}},
			{Store: "sqlite", Tasks: 1_000_000, Stored: 1_000_000, StartupMS: []float64{70, 90}, IdleKB: []int64{33_000},
				DBBytes: 1<<20 + 1_700_000_000, ListMem: memKB{RSS: 52 * 1024}},
		},
		Chunks: []chunksRecord{{Store: "sqlite", Round: 1, Chunks: 1, Tasks: 1000, SendMS: 2}, {Store: "sqlite", Round: 1, Chunks: 10, Tasks: 100, SendMS: 5}},
	}
	var sb strings.Builder
	writeCosts(&sb, res)
	out := sb.String()
	for _, want := range []string{
		"== store sqlite",
		" 1700\n",             // bytes per task over the empty store
		"2.00 MiB at 1000000", // (52 − 32) MiB over 10 × 100,000 tasks
		"50 [40–60]",          // start-up median [min–max]
		"2.5×",                // 10 chunks against 1
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
