package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play "a2a-bench floor-server" (and the
// floor-hop's "a2a-bench floor-child"), which the suite starts as
// os.Executable().
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "floor-server" {
		os.Exit(floorMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "floor-child" {
		os.Exit(hopChildMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func rpcCall(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFloorEchoesACompletedTask(t *testing.T) {
	ts := httptest.NewServer(newFloorServer("http://x"))
	defer ts.Close()
	out := rpcCall(t, ts.URL, `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi there"}]}}}`)
	task := out["result"].(map[string]any)["task"].(map[string]any)
	if task["status"].(map[string]any)["state"] != "TASK_STATE_COMPLETED" || out["id"].(float64) != 7 {
		t.Fatalf("%v", out)
	}
	art := task["artifacts"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]
	if art != "hi there" {
		t.Errorf("artifact %v", art)
	}
}

func TestFloorAnswersAsyncSendsThenGetTask(t *testing.T) {
	ts := httptest.NewServer(newFloorServer("http://x"))
	defer ts.Close()
	out := rpcCall(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"returnImmediately":true}}}`)
	task := out["result"].(map[string]any)["task"].(map[string]any)
	if task["status"].(map[string]any)["state"] != "TASK_STATE_SUBMITTED" {
		t.Fatalf("%v", out)
	}
	got := rpcCall(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+task["id"].(string)+`"}}`)
	if got["result"].(map[string]any)["status"].(map[string]any)["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("%v", got)
	}
	missing := rpcCall(t, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"nope"}}`)
	if missing["error"].(map[string]any)["code"].(float64) != -32001 {
		t.Fatalf("%v", missing)
	}
}

func TestFloorStreamsFourEvents(t *testing.T) {
	ts := httptest.NewServer(newFloorServer("http://x"))
	defer ts.Close()
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
		}
	}
	if len(events) != 4 || !strings.Contains(events[0], `"task"`) || !strings.Contains(events[2], `"artifactUpdate"`) || !strings.Contains(events[3], "TASK_STATE_COMPLETED") {
		t.Fatalf("%q", events)
	}
	for _, e := range events {
		if !json.Valid([]byte(e)) {
			t.Errorf("invalid JSON event %s", e)
		}
	}
}

func TestFloorRefusesWhatItCannotServe(t *testing.T) {
	ts := httptest.NewServer(newFloorServer("http://x"))
	defer ts.Close()
	for body, code := range map[string]float64{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`: -32602,
		`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`:   -32601,
		`{not json`: -32700,
	} {
		out := rpcCall(t, ts.URL, body)
		if out["error"].(map[string]any)["code"].(float64) != code {
			t.Errorf("%s: %v", body, out)
		}
	}
	resp, err := http.Get(ts.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	card, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(card, []byte(`"protocolBinding":"JSONRPC"`)) {
		t.Errorf("card %s", card)
	}
}

func TestStatIsMedianWithRange(t *testing.T) {
	if s := statOf([]float64{3, 1, 2}); s != (stat{Median: 2, Min: 1, Max: 3}) {
		t.Errorf("%+v", s)
	}
	if s := statOf([]float64{4, 1, 3, 2}); s.Median != 2.5 {
		t.Errorf("%+v", s)
	}
	if s := statOf(nil); s != (stat{}) {
		t.Errorf("%+v", s)
	}
}

func TestRotateVisitsEveryServerFromADifferentStart(t *testing.T) {
	in := []string{"a", "b", "c"}
	if got := strings.Join(rotate(in, 1), ","); got != "b,c,a" {
		t.Errorf("%s", got)
	}
	if got := strings.Join(rotate(in, 4), ","); got != "b,c,a" {
		t.Errorf("%s", got)
	}
	if strings.Join(in, ",") != "a,b,c" {
		t.Error("rotate changed its input")
	}
}

func TestFlags(t *testing.T) {
	c, err := parseFlags([]string{"-only", "js-sdk,floor", "-modes", "stream", "-full", "-rounds", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Only, ",") != "floor,js-sdk" || c.Rounds != 2 || c.Duration != 10*time.Second || !c.Growth || c.GrowthDuration != 10*time.Second {
		t.Errorf("%+v", c)
	}
	c, err = parseFlags([]string{"-compare=false", "-startup=false", "-costs", "-cost-stores", "postgres,sqlite", "-postgres", "postgres://u@h/db",
		"-cost-parts", "scale,turns", "-scale-tasks", "1000,1000000"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.CostStores, ",") != "sqlite,postgres" || strings.Join(c.CostParts, ",") != "turns,scale" ||
		len(c.ScaleTasks) != 2 || c.ScaleTasks[1] != 1_000_000 || c.Turns != 1000 || c.Agents != 10 {
		t.Errorf("costs flags: %+v", c)
	}
	if c.Load != filepath.Join("bin", "a2a-load") || c.GoSDK != filepath.Join("bin", "bench", "a2a-go-sdk") {
		t.Errorf("paths %s %s", c.Load, c.GoSDK)
	}
	for _, bad := range [][]string{
		{"-only", "nginx"},
		{"-modes", "list"},
		{"-growth-tasks", "10000,1000"},
		{"-growth-clients", "0"},
		{"-compare=false", "-startup=false"},
		{"-costs", "-cost-stores", "postgres", "-postgres", ""},
		{"-costs", "-cost-parts", "turns,weather"},
		{"-costs", "-scale-tasks", "0"},
		{"-costs", "-agents", "1"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func run3(server string, rps, p99, cpu float64) []runRecord {
	var out []runRecord
	for r := 1; r <= 3; r++ {
		f := float64(r) // the machine gets slower each round, for every server alike
		out = append(out, runRecord{Round: r, Server: server, Mode: "send",
			Load: loadResult{RPS: rps / f, OK: 10, Latency: pct{P50: p99 / 4 * f, P99: p99 * f}}, ServerCPUPerOpUS: cpu})
	}
	return out
}

func TestSummaryRatiosAndTargets(t *testing.T) {
	res := &Results{Config: config{Modes: []string{"send"}, Only: allServers, Clients: 16, Rounds: 3}}
	res.Runs = append(res.Runs, run3(srvFloor, 20000, 2, 50)...)
	res.Runs = append(res.Runs, run3(srvOursSQLite, 12000, 3, 150)...)
	res.Runs = append(res.Runs, run3(srvGoSDK, 2000, 40, 900)...)
	res.GrowthTasks = []growthTaskRecord{{Target: 100_000, Stored: 100_000, StoredAfter: 120_000, MemBefore: memKB{RSS: 30 << 10}, Mem: memKB{RSS: 40 << 10, HWM: 45 << 10}}}
	summarize(res)
	r, ok := findRatio(res, "send", srvOursSQLite, srvGoSDK)
	if !ok || r.RPS.Median != 6 || r.RPS.Min != 6 || r.P99.Median != 0.075 || r.CPUPerOp.Median != 1.0/6 {
		t.Fatalf("%+v", r)
	}
	if _, ok := findRatio(res, "send", srvOursSQLite, srvJSSDK); ok {
		t.Error("a ratio against a server that did not run")
	}
	want := map[string]bool{
		"ours-sqlite req/s ≥ 5× go-sdk (send, 16 clients)":                                   true,
		"ours-sqlite p99 ≤ 1/5 of go-sdk (send, 16 clients)":                                 true,
		"ours-sqlite req/s ≥ 1/2 of the floor (send, 16 clients)":                            true,
		"plugin RSS < 50 MB (47.7 MiB) after 100k tasks in the durable store, peak included": true,
	}
	if len(res.Targets) != len(want) {
		t.Fatalf("%+v", res.Targets)
	}
	for _, tg := range res.Targets {
		if pass, ok := want[tg.Target]; !ok || pass != tg.Pass {
			t.Errorf("%+v", tg)
		}
	}
	// A peak of 48 MiB is over 50 MB, though under 50 MiB.
	res.GrowthTasks[0].Mem.HWM = 48 << 10
	summarize(res)
	if tg := res.Targets[len(res.Targets)-1]; tg.Pass || tg.Value != 48 {
		t.Errorf("peak RSS 48 MiB: %+v", tg)
	}
	var sb strings.Builder
	writeReport(&sb, res)
	for _, s := range []string{"mode send", "ours-sqlite / go-sdk:", "6.00× req/s", "PASS  ours-sqlite req/s ≥ 5× go-sdk"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, sb.String())
		}
	}
	files, err := writeCharts(t.TempDir(), res)
	if err != nil || len(files) != 2 {
		t.Fatalf("%v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG (%v)", f, err)
		}
	}
}

func TestProcReadingsOfThisProcess(t *testing.T) {
	pid := os.Getpid()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := procCPU(pid); err != nil {
		t.Fatal(err)
	}
	m, err := procMem(pid)
	if err != nil || m.RSS <= 0 || m.HWM < m.RSS {
		t.Fatalf("%+v %v", m, err)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if got := childNamed(pid, "sleep"); got != cmd.Process.Pid {
		t.Errorf("child %d, want %d", got, cmd.Process.Pid)
	}
	if f, err := statFields([]byte("42 (a) b (c)) S 1 2 3 4 5 6 7 8 9 10 11 12 13")); err != nil || f[0] != "S" || f[11] != "11" {
		t.Errorf("%q %v", f, err)
	}
}

// TestSuiteAgainstTheFloor runs the real suite, end to end, with the two
// floors only: a2a-load is built, the floors are started as processes
// (floor-hop with its child), measured, stopped, and the report, JSON and
// chart are written.
func TestSuiteAgainstTheFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a2a-load")
	}
	dir := t.TempDir()
	load := filepath.Join(dir, "a2a-load")
	build := exec.Command("go", "build", "-o", load, "./cmd/a2a-load")
	build.Dir = "../.." // a2a-load is the plugin module's
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build a2a-load: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"-load", load, "-out", out, "-only", "floor,floor-hop", "-modes", "send,stream,send-async",
		"-rounds", "2", "-duration", "300ms", "-warmup", "100ms", "-startup-n", "2", "-c", "2"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res Results
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 12 || len(res.Summary) != 6 || len(res.StartupSummary) != 2 {
		t.Fatalf("runs %d summary %d startup %d", len(res.Runs), len(res.Summary), len(res.StartupSummary))
	}
	for _, r := range res.Runs {
		if r.Load.OK == 0 || r.Load.ErrorsTotal != 0 || r.ServerCPUPerOpUS <= 0 || r.Mem.RSS <= 0 {
			t.Errorf("%+v", r)
		}
	}
	for _, f := range []string{"report.txt", "bench-send.png", "bench-stream.png", "bench-send-async.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout.String(), "start-up to ready") {
		t.Errorf("report:\n%s", stdout.String())
	}
}
