package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The cost measurements of issue 32 (-costs): how the plugin's costs grow
// with what it holds, per store (SQLite, PostgreSQL):
//
//	turns      one task with -turns turns (INPUT_REQUIRED and a reply on the
//	           same task, so its history grows) and one context with
//	           -turns tasks: SendMessage latency by turn, GetTask with and
//	           without historyLength as the history grows;
//	chunks     one task whose answer is an artifact sent in 1, 10, 100 and
//	           -chunks chunks (the same text): SendMessage latency and the
//	           plugin's CPU;
//	memory     plugin RSS per idle keep-alive connection, per open stream,
//	           and with connections up to and past max_connections;
//	agents     one host with -agents agents on one port, the load spread
//	           over them, against the same host with one agent;
//	scale      -scale-tasks stored tasks (seeded through the store's API by
//	           "a2a-load seed" before the plugin starts): start-up to the
//	           Agent Card, RSS, ListTasks latency, database bytes per task.
//
// Every part runs -rounds times (scale: each start-up -startup-n times) and
// the report gives medians.

// Parts of -costs.
var allCostParts = []string{"turns", "chunks", "memory", "agents", "scale"}

// chunkLevels are the artifact chunk counts of the chunks part, up to
// -chunks.
func chunkLevels(max int) []int {
	var out []int
	for n := 1; n < max; n *= 10 {
		out = append(out, n)
	}
	return append(out, max)
}

// chunkText is the artifact text of every level: the same bytes whatever
// the count, so what grows is the number of chunks only.
const chunkTextLen = 16_000

// benchScenario is the host's agent for the cost measurements: "turn …"
// asks a question (the task waits, INPUT_REQUIRED, for the next turn),
// "chunks-N …" answers with an artifact in N chunks, "hold …" never
// answers (an open stream), anything else is echoed.
func benchScenario(chunks []int) string {
	var b strings.Builder
	b.WriteString("name: a2a-bench\nrules:\n")
	b.WriteString("  - match: {text: {prefix: \"turn\"}}\n    actions:\n      - ask: \"next? {{text}}\"\n")
	b.WriteString("  - match: {text: {prefix: \"hold\"}}\n    actions:\n      - hang\n")
	text := strings.Repeat("0123456789abcde\n", chunkTextLen/16)
	for _, n := range chunks {
		fmt.Fprintf(&b, "  - match: {text: {prefix: \"chunks-%d \"}}\n    actions:\n      - artifact: {id: big, name: big.txt, text: %q, chunks: %d}\n      - reply: done\n", n, text, n)
	}
	b.WriteString("default:\n  - echo\n")
	return b.String()
}

// Records of the cost measurements (results.json "costs").
type costsResults struct {
	Turns  []turnsRecord  `json:"turns,omitempty"`
	Chunks []chunksRecord `json:"chunks,omitempty"`
	Memory []memoryRecord `json:"memory,omitempty"`
	Agents []agentsRecord `json:"agents,omitempty"`
	Scale  []scaleRecord  `json:"scale,omitempty"`
}

// turnsRecord is one context of many turns: Variant "task" is one task
// continued turn after turn, "context" a new task per turn in one context.
type turnsRecord struct {
	Store   string    `json:"store"`
	Round   int       `json:"round"`
	Variant string    `json:"variant"`
	SendMS  []float64 `json:"send_ms"` // per turn
	// Gets are GetTask timings at checkpoints (turn numbers).
	Gets []getCheckpoint `json:"gets"`
	// Resets are the CancelTasks the loop guard needed (resetContext).
	Resets   int    `json:"resets"`
	ErrorMsg string `json:"error,omitempty"`
}

type getCheckpoint struct {
	Turn      int     `json:"turn"`
	HistoryN  int     `json:"history_messages"`
	Last10MS  float64 `json:"historylength10_ms"` // median of getRepeats
	FullMS    float64 `json:"full_ms"`
	FullBytes int     `json:"full_bytes"`
}

type chunksRecord struct {
	Store  string  `json:"store"`
	Round  int     `json:"round"`
	Chunks int     `json:"chunks"`
	Tasks  int     `json:"tasks"`   // sent at this level
	SendMS float64 `json:"send_ms"` // median
	// CPU per task of the plugin and of the host (agenthost and its agent).
	PluginCPUMS float64 `json:"plugin_cpu_ms"`
	HostCPUMS   float64 `json:"host_cpu_ms"`
	GetMS       float64 `json:"get_ms"`
	ErrorMsg    string  `json:"error,omitempty"`
}

type memoryRecord struct {
	Store string `json:"store"`
	Round int    `json:"round"`
	// Idle keep-alive connections.
	Conns   int   `json:"conns"`
	BaseKB  int64 `json:"base_kb"`
	ConnsKB int64 `json:"conns_kb"`
	// Open streams (each on a connection of its own).
	Streams   int   `json:"streams"`
	SBaseKB   int64 `json:"streams_base_kb"`
	StreamsKB int64 `json:"streams_kb"`
	// Up to and past max_connections: RSS with Cap connections open, then
	// with CapExtra more attempted; how those were answered.
	Cap        int    `json:"cap"`
	CapKB      int64  `json:"cap_kb"`
	CapExtra   int    `json:"cap_extra"`
	PastKB     int64  `json:"past_cap_kb"`
	PastOK     int    `json:"past_cap_200"`
	Past503    int    `json:"past_cap_503"`
	PastFailed int    `json:"past_cap_failed"`
	PastErr    string `json:"past_cap_error,omitempty"` // the first failure`
	PeakKB     int64  `json:"peak_kb"`
	ErrorMsg   string `json:"error,omitempty"`
}

func (m memoryRecord) perConnKB() float64   { return perUnitKB(m.BaseKB, m.ConnsKB, m.Conns) }
func (m memoryRecord) perStreamKB() float64 { return perUnitKB(m.SBaseKB, m.StreamsKB, m.Streams) }

type agentsRecord struct {
	Store            string     `json:"store"`
	Round            int        `json:"round"`
	Agents           int        `json:"agents"`
	IdleKB           int64      `json:"idle_kb"`
	Mem              memKB      `json:"mem"`
	ServerCPUPerOpUS float64    `json:"server_cpu_us_per_op"`
	PluginCPUPerOpUS float64    `json:"plugin_cpu_us_per_op"`
	Load             loadResult `json:"load"`
	ErrorMsg         string     `json:"error,omitempty"`
}

type scaleRecord struct {
	Store     string     `json:"store"`
	Tasks     int64      `json:"tasks"`  // seeded
	Stored    int64      `json:"stored"` // ListTasks totalSize
	SeedSec   float64    `json:"seed_s"` // 0: reused from -seed-dir
	StartupMS []float64  `json:"startup_ms"`
	IdleKB    []int64    `json:"idle_kb"` // after each start-up
	List      loadResult `json:"list"`
	ListMem   memKB      `json:"mem_after_list"`
	DBBytes   int64      `json:"db_bytes"`
	ErrorMsg  string     `json:"error,omitempty"`
}

// perUnitKB is the growth from base to after spread over n units.
func perUnitKB(base, after int64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(after-base) / float64(n)
}

// settledRSS reads the plugin's RSS after letting it settle: the median of
// three readings 200 ms apart, after a pause.
func settledRSS(s *server, pause time.Duration) int64 {
	time.Sleep(pause)
	var rs []float64
	for i := range 3 {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		rs = append(rs, float64(s.mem().RSS))
	}
	return int64(median(rs))
}

// runCosts runs the selected parts for each store.
func (b *bench) runCosts() error {
	c := b.cfg
	b.res.Costs = &costsResults{}
	b.progress("== costs (issue 32): %v × stores %v, %d round(s)", c.CostParts, c.CostStores, c.Rounds)
	scen := filepath.Join(b.work, "bench-agent.yaml")
	if err := os.WriteFile(scen, []byte(benchScenario(chunkLevels(c.Chunks))), 0o600); err != nil {
		return err
	}
	var errs []error
	for _, st := range c.CostStores {
		for _, part := range c.CostParts {
			var err error
			switch part {
			case "turns":
				err = b.costTurns(st, scen)
			case "chunks":
				err = b.costChunks(st, scen)
			case "memory":
				err = b.costMemory(st, scen)
			case "agents":
				err = b.costAgents(st)
			case "scale":
				err = b.costScale(st)
			}
			if err != nil {
				b.progress("  ! %s %s: %v", st, part, err)
				errs = append(errs, fmt.Errorf("%s %s: %w", st, part, err))
			}
		}
	}
	return errors.Join(errs...)
}

// startStore starts ours on store st (a fresh PostgreSQL schema for
// postgres, dropped by the returned cleanup).
func (b *bench) startStore(st string, o startOptions) (*server, func(), error) {
	o.store = st
	cleanup := func() {}
	if st == "postgres" {
		dsn, drop, err := b.pgSchema()
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = drop
		o.plugin += pgPluginConfig(dsn)
	}
	s, _, err := b.startReady(srvOursSQLite, o)
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return s, func() {
		s.stop()
		if s.dataDir != "" && o.dataDir == "" {
			os.RemoveAll(s.dataDir)
		}
		cleanup()
	}, nil
}

// pgPluginConfig is the plugin's settings for the store postgres: the DSN
// and the webhook signing secret the store requires (no webhook is sent).
func pgPluginConfig(dsn string) string {
	return fmt.Sprintf("    postgres_dsn: %q\n    push_secret: a2a-bench-push-secret-0123456789abcdef\n", dsn)
}

// pgSchema makes a fresh schema in -postgres's database and returns a DSN
// that uses it, and a function that drops it.
func (b *bench) pgSchema() (string, func(), error) {
	b.pgSeq++
	name := fmt.Sprintf("a2a_bench_%d_%d", os.Getpid(), b.pgSeq)
	if _, err := b.psql("CREATE SCHEMA " + name); err != nil {
		return "", nil, err
	}
	return withSearchPath(b.cfg.Postgres, name), func() { b.psql("DROP SCHEMA " + name + " CASCADE") }, nil
}

// withSearchPath adds search_path to a postgres:// DSN or to key=value
// pairs.
func withSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " search_path=" + schema
}

// psql runs one statement against -postgres and returns its output.
func (b *bench) psql(stmt string) (string, error) {
	out, err := exec.Command("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", b.cfg.Postgres, "-c", stmt).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("psql %q: %v: %s", stmt, err, bytes.TrimSpace(out))
	}
	return strings.TrimSpace(string(out)), nil
}

// pgBytes is the size of the tables (with their indexes and TOAST) of the
// schema a DSN of pgSchema names.
func (b *bench) pgBytes(dsn string) int64 {
	u, err := url.Parse(dsn)
	schema := ""
	if err == nil {
		schema = u.Query().Get("search_path")
	}
	if i := strings.LastIndex(dsn, "search_path="); schema == "" && i >= 0 {
		schema = dsn[i+len("search_path="):]
	}
	out, err := b.psql(fmt.Sprintf("SELECT coalesce(sum(pg_total_relation_size(c.oid)),0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '%s' AND c.relkind IN ('r','m')", schema))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(out, 10, 64)
	return n
}

// turnCheckpoints are the turns after which GetTask is timed.
func turnCheckpoints(turns int) []int {
	var out []int
	for n := 1; n < turns; n *= 10 {
		out = append(out, n)
	}
	return append(out, turns)
}

const getRepeats = 5

// maxContextTurns is the loop guard's hard maximum of turns per context
// (max_pingpong_turns may not be set higher): a context of more turns is
// built with a CancelTask every maxContextTurns turns (resetContext).
const maxContextTurns = 20

// resetContext starts a task that never answers in the context and cancels
// it: a CancelTask starts the loop guard's count of the context over.
func resetContext(c *rpcClient, ctxID string) error {
	t, _, err := c.sendConf("hold reset", ctxID, "", 1, true)
	if err != nil {
		return fmt.Errorf("a task to cancel: %w", err)
	}
	return c.cancel(t.ID)
}

func (b *bench) costTurns(st, scen string) error {
	var errs []error
	for r := 1; r <= b.cfg.Rounds; r++ {
		for _, variant := range []string{"task", "context"} {
			rec := turnsRecord{Store: st, Round: r, Variant: variant}
			if err := b.turnsOnce(st, scen, &rec); err != nil {
				rec.ErrorMsg = err.Error()
				errs = append(errs, err)
			}
			b.res.Costs.Turns = append(b.res.Costs.Turns, rec)
			w := turnWindows(len(rec.SendMS))
			med := windowMedians(rec.SendMS, w)
			b.progress("  [%d/%d] %s turns (%s): %d turns; send p50 by window %v ms; gets %+v", r, b.cfg.Rounds, st, variant, len(rec.SendMS), fmtFloats(med), rec.Gets)
		}
	}
	return errors.Join(errs...)
}

func (b *bench) turnsOnce(st, scen string, rec *turnsRecord) error {
	s, done, err := b.startStore(st, startOptions{clients: 16, agent: "scenario:" + scen,
		plugin: fmt.Sprintf("    max_pingpong_turns: %d\n", maxContextTurns)})
	if err != nil {
		return err
	}
	defer done()
	c := newRPCClient(s.rpc)
	defer c.close()
	checks := turnCheckpoints(b.cfg.Turns)
	var ctxID, taskID string
	since := 0 // turns of the context since the loop guard last started over
	for i := 1; i <= b.cfg.Turns; i++ {
		if since == maxContextTurns-1 {
			// The loop guard admits maxContextTurns turns per context
			// (its hard maximum) until a CancelTask in it: one more turn,
			// a task that waits, is cancelled.
			if err := resetContext(c, ctxID); err != nil {
				return fmt.Errorf("turn %d: %w", i, err)
			}
			rec.Resets++
			since = 0
		}
		since++
		text := fmt.Sprintf("turn %d", i)
		tid := taskID
		if rec.Variant == "context" {
			text, tid = fmt.Sprintf("hello %d", i), ""
		}
		t, d, err := c.send(text, ctxID, tid, 10)
		if err != nil {
			return fmt.Errorf("turn %d: %w", i, err)
		}
		want := "TASK_STATE_INPUT_REQUIRED"
		if rec.Variant == "context" {
			want = "TASK_STATE_COMPLETED"
		}
		if t.Status.State != want {
			return fmt.Errorf("turn %d: task %s is %s, want %s", i, t.ID, t.Status.State, want)
		}
		if ctxID == "" {
			ctxID, taskID = t.ContextID, t.ID
		}
		rec.SendMS = append(rec.SendMS, ms(d))
		if slices.Contains(checks, i) {
			cp := getCheckpoint{Turn: i}
			var short, full []float64
			for range getRepeats {
				_, d10, _, err := c.getTask(t.ID, 10)
				if err != nil {
					return err
				}
				ft, df, n, err := c.getTask(t.ID, 0)
				if err != nil {
					return err
				}
				short, full = append(short, ms(d10)), append(full, ms(df))
				cp.FullBytes, cp.HistoryN = n, len(ft.History)
			}
			cp.Last10MS, cp.FullMS = median(short), median(full)
			rec.Gets = append(rec.Gets, cp)
		}
	}
	return s.stop()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// turnWindows are the windows of ten turns the report compares: the
// first, those ending at each power of ten, and the last.
func turnWindows(n int) [][2]int {
	var out [][2]int
	if n == 0 {
		return nil
	}
	for end := 10; end < n; end *= 10 {
		out = append(out, [2]int{end - 10, end})
	}
	return append(out, [2]int{max(0, n-10), n})
}

// windowMedians is the median of vs[lo:hi] for each window.
func windowMedians(vs []float64, windows [][2]int) []float64 {
	out := make([]float64, 0, len(windows))
	for _, w := range windows {
		lo, hi := max(0, w[0]), min(len(vs), w[1])
		if lo >= hi {
			out = append(out, 0)
			continue
		}
		out = append(out, median(vs[lo:hi]))
	}
	return out
}

func fmtFloats(vs []float64) string {
	var p []string
	for _, v := range vs {
		p = append(p, fmt.Sprintf("%.2f", v))
	}
	return "[" + strings.Join(p, " ") + "]"
}

func (b *bench) costChunks(st, scen string) error {
	var errs []error
	levels := chunkLevels(b.cfg.Chunks)
	for r := 1; r <= b.cfg.Rounds; r++ {
		s, done, err := b.startStore(st, startOptions{clients: 16, agent: "scenario:" + scen})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c := newRPCClient(s.rpc)
		// One warm-up task, then the levels, in an order rotated by round.
		c.send("hello", "", "", 1)
		for _, lv := range rotate(levels, r-1) {
			rec := chunksRecord{Store: st, Round: r, Chunks: lv, Tasks: chunkReps(lv)}
			if err := chunksOnce(s, c, &rec); err != nil {
				rec.ErrorMsg = err.Error()
				errs = append(errs, err)
			}
			b.res.Costs.Chunks = append(b.res.Costs.Chunks, rec)
			b.progress("  [%d/%d] %s chunks %5d × %4d tasks: send p50 %.2f ms, per task plugin CPU %.2f ms, host CPU %.2f ms; GetTask %.2f ms %s",
				r, b.cfg.Rounds, st, lv, rec.Tasks, rec.SendMS, rec.PluginCPUMS, rec.HostCPUMS, rec.GetMS, rec.ErrorMsg)
		}
		c.close()
		done()
	}
	return errors.Join(errs...)
}

// chunkReps is how many tasks of n chunks a level sends: enough for a
// thousand chunks in all (CPU time is read in 10 ms ticks), at least 3.
func chunkReps(n int) int { return max(3, 1000/n) }

// chunksOnce sends rec.Tasks tasks answered in rec.Chunks chunks, one at a
// time, and records the median send and the CPU per task.
func chunksOnce(s *server, c *rpcClient, rec *chunksRecord) error {
	var sends []float64
	var last rpcTask
	cpu0, plug0 := s.cpu()
	for range rec.Tasks {
		t, d, err := c.send(fmt.Sprintf("chunks-%d go", rec.Chunks), "", "", 1)
		if err == nil && (t.Status.State != "TASK_STATE_COMPLETED" || largestArtifact(t) != chunkTextLen) {
			err = fmt.Errorf("chunks-%d: task %s is %s with a largest artifact of %d bytes, want COMPLETED with one of %d",
				rec.Chunks, t.ID, t.Status.State, largestArtifact(t), chunkTextLen)
		}
		if err != nil {
			return err
		}
		sends, last = append(sends, ms(d)), t
	}
	cpu1, plug1 := s.cpu()
	rec.SendMS = median(sends)
	rec.PluginCPUMS = ms(plug1-plug0) / float64(rec.Tasks)
	rec.HostCPUMS = ms((cpu1-cpu0)-(plug1-plug0)) / float64(rec.Tasks)
	var gs []float64
	for range getRepeats {
		_, dg, _, err := c.getTask(last.ID, 1)
		if err != nil {
			return err
		}
		gs = append(gs, ms(dg))
	}
	rec.GetMS = median(gs)
	return nil
}

// largestArtifact is the text length of the task's largest artifact (the
// chunked one; the reply adds one of its own).
func largestArtifact(t rpcTask) int {
	most := 0
	for _, a := range t.Artifacts {
		n := 0
		for _, p := range a.Parts {
			n += len(p.Text)
		}
		most = max(most, n)
	}
	return most
}

// costMemory measures RSS per idle connection, per open stream and at the
// connection cap, on a fresh server each round.
func (b *bench) costMemory(st, scen string) error {
	var errs []error
	for r := 1; r <= b.cfg.Rounds; r++ {
		rec := memoryRecord{Store: st, Round: r, Conns: b.cfg.Conns, Streams: b.cfg.Streams, Cap: b.cfg.ConnCap, CapExtra: b.cfg.ConnCap / 10}
		if err := b.memoryOnce(st, scen, &rec); err != nil {
			rec.ErrorMsg = err.Error()
			errs = append(errs, err)
		}
		b.res.Costs.Memory = append(b.res.Costs.Memory, rec)
		b.progress("  [%d/%d] %s memory: %.1f KiB per idle connection (%d), %.1f KiB per open stream (%d); at the cap of %d %s, %d more: %s (200: %d, 503: %d, failed %d) %s",
			r, b.cfg.Rounds, st, rec.perConnKB(), rec.Conns, rec.perStreamKB(), rec.Streams, rec.Cap, mb(rec.CapKB), rec.CapExtra, mb(rec.PastKB),
			rec.PastOK, rec.Past503, rec.PastFailed, rec.ErrorMsg)
	}
	return errors.Join(errs...)
}

func (b *bench) memoryOnce(st, scen string, rec *memoryRecord) error {
	cap := rec.Cap
	plugin := fmt.Sprintf("    max_connections: %d\n    max_streams: %d\n", cap, rec.Streams+16)
	s, done, err := b.startStore(st, startOptions{clients: rec.Streams + 1, agent: "scenario:" + scen, plugin: plugin})
	if err != nil {
		return err
	}
	defer done()
	addr := strings.TrimPrefix(s.base, "http://")
	ctx := context.Background()
	// Warm the server up the way a client would first: a few sends.
	c := newRPCClient(s.rpc)
	for i := range 50 {
		c.send(fmt.Sprintf("warm %d", i), "", "", 1)
	}
	c.close()

	var conns []net.Conn
	defer func() {
		for _, cn := range conns {
			cn.Close()
		}
	}()
	// Idle keep-alive connections: each made one request, then idles.
	rec.BaseKB = settledRSS(s, time.Second)
	for range rec.Conns {
		cn, code, err := openConn(ctx, addr, "/.well-known/agent-card.json")
		if err != nil {
			return fmt.Errorf("idle connection %d: %w", len(conns)+1, err)
		}
		conns = append(conns, cn)
		if code != 200 {
			return fmt.Errorf("idle connection %d: HTTP %d", len(conns), code)
		}
	}
	rec.ConnsKB = settledRSS(s, time.Second)
	for _, cn := range conns {
		cn.Close()
	}
	conns = conns[:0]

	// Open streams, each on a connection of its own.
	rec.SBaseKB = settledRSS(s, 2*time.Second)
	for i := range rec.Streams {
		cn, err := openStream(ctx, addr, "/", fmt.Sprintf("hold %d", i))
		if err != nil {
			return fmt.Errorf("stream %d: %w", i+1, err)
		}
		conns = append(conns, cn)
	}
	rec.StreamsKB = settledRSS(s, time.Second)
	for _, cn := range conns {
		cn.Close()
	}
	conns = conns[:0]

	// Up to the connection cap, then past it.
	time.Sleep(2 * time.Second) // the streams' turns are cancelled and their connections gone
	for len(conns) < cap-1 {    // the cap counts every connection: keep one for the readiness of others
		cn, code, err := openConn(ctx, addr, "/.well-known/agent-card.json")
		if err != nil {
			return fmt.Errorf("connection %d of the cap: %w", len(conns)+1, err)
		}
		conns = append(conns, cn)
		if code != 200 {
			return fmt.Errorf("connection %d of the cap %d: HTTP %d", len(conns), cap, code)
		}
	}
	rec.CapKB = settledRSS(s, time.Second)
	for range rec.CapExtra {
		cn, code, err := openConn(ctx, addr, "/.well-known/agent-card.json")
		switch {
		case err != nil:
			rec.PastFailed++
			if rec.PastErr == "" {
				rec.PastErr = err.Error()
			}
		case code == 200:
			rec.PastOK++
			conns = append(conns, cn)
		case code == 503:
			rec.Past503++
			conns = append(conns, cn)
		default:
			rec.PastFailed++
			if rec.PastErr == "" {
				rec.PastErr = fmt.Sprintf("HTTP %d", code)
			}
			cn.Close()
		}
	}
	rec.PastKB = settledRSS(s, time.Second)
	rec.PeakKB = s.mem().HWM
	return nil
}

// costAgents compares one host serving one agent with one serving
// -agents agents on the same port, the load spread over them, interleaved
// round by round.
func (b *bench) costAgents(st string) error {
	var errs []error
	for r := 1; r <= b.cfg.Rounds; r++ {
		for _, n := range rotate([]string{"1", strconv.Itoa(b.cfg.Agents)}, r-1) {
			k, _ := strconv.Atoi(n)
			rec := agentsRecord{Store: st, Round: r, Agents: k}
			if err := b.agentsOnce(st, &rec); err != nil {
				rec.ErrorMsg = err.Error()
				errs = append(errs, err)
			}
			b.res.Costs.Agents = append(b.res.Costs.Agents, rec)
			b.progress("  [%d/%d] %s %2d agent(s): %8.0f/s p50 %.2f p99 %.2f ms, server %.0f µs/op (plugin %.0f), RSS idle %s → %s, errors %d %s",
				r, b.cfg.Rounds, st, k, rec.Load.RPS, rec.Load.Latency.P50, rec.Load.Latency.P99, rec.ServerCPUPerOpUS, rec.PluginCPUPerOpUS,
				mb(rec.IdleKB), mb(rec.Mem.RSS), rec.Load.ErrorsTotal, rec.ErrorMsg)
		}
	}
	return errors.Join(errs...)
}

// agentsConfig is the host's agents section for n agents a0…a(n-1), all
// the host's echo agent; "" for one (a host that declares no agents).
func agentsConfig(n int) string {
	if n <= 1 {
		return ""
	}
	var b strings.Builder
	b.WriteString("agents:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: a%d\n    name: Agent %d\n    description: Echoes the inbound text.\n", i, i)
	}
	return b.String()
}

// agentURLs are the JSON-RPC endpoints of n agents under base.
func agentURLs(base string, n int) string {
	if n <= 1 {
		return base + "/"
	}
	var u []string
	for i := range n {
		u = append(u, fmt.Sprintf("%s/agents/a%d/", base, i))
	}
	return strings.Join(u, ",")
}

func (b *bench) agentsOnce(st string, rec *agentsRecord) error {
	s, done, err := b.startStore(st, startOptions{clients: b.cfg.Clients, host: agentsConfig(rec.Agents)})
	if err != nil {
		return err
	}
	defer done()
	rec.IdleKB = settledRSS(s, 300*time.Millisecond)
	s.rpc = agentURLs(s.base, rec.Agents)
	res, cpuOp, plugOp, err := b.runLoad(s, loadRun{mode: "send", clients: b.cfg.Clients, duration: b.cfg.Duration, warmup: b.cfg.Warmup})
	rec.Load, rec.ServerCPUPerOpUS, rec.PluginCPUPerOpUS, rec.Mem = res, cpuOp, plugOp, s.mem()
	if err != nil {
		return err
	}
	return s.stop()
}

// costScale measures stores of -scale-tasks tasks each (and an empty one).
func (b *bench) costScale(st string) error {
	levels := append([]int64{0}, b.cfg.ScaleTasks...)
	if st == "postgres" {
		levels = append([]int64{0}, b.cfg.ScaleTasksPG...)
	}
	var errs []error
	for _, n := range levels {
		rec := scaleRecord{Store: st, Tasks: n}
		if err := b.scaleOnce(st, &rec); err != nil {
			rec.ErrorMsg = err.Error()
			errs = append(errs, err)
		}
		b.res.Costs.Scale = append(b.res.Costs.Scale, rec)
		var idle []float64
		for _, k := range rec.IdleKB {
			idle = append(idle, float64(k))
		}
		b.progress("  %s %8d tasks (seeded in %.0f s): start-up %s ms, idle RSS %s; list p50 %.2f p99 %.2f ms, RSS after %s; db %s (%.0f B/task) %s",
			st, rec.Stored, rec.SeedSec, fmtFloats(rec.StartupMS), mb(int64(median(idle))), rec.List.Latency.P50, rec.List.Latency.P99,
			mb(rec.ListMem.RSS), mbBytes(rec.DBBytes), float64(rec.DBBytes)/float64(max(rec.Stored, 1)), rec.ErrorMsg)
	}
	return errors.Join(errs...)
}

// seedSQLite returns a host data directory whose task database holds n
// seeded tasks: from -seed-dir when it has one (seeded by an earlier run),
// else seeded now (and kept there when -seed-dir is set).
func (b *bench) seedSQLite(n int64, rec *scaleRecord) (string, error) {
	root := b.cfg.SeedDir
	keep := root != ""
	if !keep {
		root = b.work
	}
	dir := filepath.Join(root, fmt.Sprintf("sqlite-%d", n))
	if _, err := os.Stat(filepath.Join(dir, "seed.json")); err == nil {
		return dir, nil
	}
	os.RemoveAll(dir)
	if n > 0 {
		t0 := time.Now()
		out, err := exec.Command(b.cfg.Load, "seed", "-db", filepath.Join(dir, "a2a", "a2a-plugin.db"), "-n", strconv.FormatInt(n, 10)).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("a2a-load seed -n %d: %v: %s", n, err, bytes.TrimSpace(out))
		}
		rec.SeedSec = time.Since(t0).Seconds()
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "seed.json"), []byte(fmt.Sprintf("{\"tasks\":%d}\n", n)), 0o600)
}

func (b *bench) scaleOnce(st string, rec *scaleRecord) error {
	var dataDir, dsn string
	cleanup := func() {}
	defer func() { cleanup() }()
	o := startOptions{clients: 16, store: st}
	if st == "postgres" {
		var drop func()
		var err error
		if dsn, drop, err = b.pgSchema(); err != nil {
			return err
		}
		cleanup = drop
		o.plugin = pgPluginConfig(dsn)
		if rec.Tasks > 0 {
			t0 := time.Now()
			out, err := exec.Command(b.cfg.Load, "seed", "-postgres", dsn, "-n", strconv.FormatInt(rec.Tasks, 10)).CombinedOutput()
			if err != nil {
				return fmt.Errorf("a2a-load seed -n %d: %v: %s", rec.Tasks, err, bytes.TrimSpace(out))
			}
			rec.SeedSec = time.Since(t0).Seconds()
		}
	} else {
		var err error
		if dataDir, err = b.seedSQLite(rec.Tasks, rec); err != nil {
			return err
		}
		if b.cfg.SeedDir == "" {
			cleanup = func() { os.RemoveAll(dataDir) }
		}
		o.dataDir = dataDir
	}
	// Start-ups: the first after the seed warms the page cache like any
	// later one (the seed just wrote the file), so every one counts.
	var s *server
	for i := range b.cfg.StartupN {
		srv, d, err := b.startReady(srvOursSQLite, o)
		if err != nil {
			return err
		}
		rec.StartupMS = append(rec.StartupMS, ms(d))
		rec.IdleKB = append(rec.IdleKB, settledRSS(srv, 300*time.Millisecond))
		if i == b.cfg.StartupN-1 {
			s = srv
			break
		}
		if err := srv.stop(); err != nil {
			return err
		}
	}
	defer s.stop()
	var err error
	if rec.Stored, err = s.storedTasks(); err != nil {
		return err
	}
	lres, _, _, err := b.runLoad(s, loadRun{mode: "list", clients: 1, duration: min(b.cfg.Duration, 5*time.Second), warmup: b.cfg.Warmup / 2})
	if err != nil {
		return err
	}
	rec.List, rec.ListMem = lres, s.mem()
	if err := s.stop(); err != nil {
		return err
	}
	if st == "postgres" {
		rec.DBBytes = b.pgBytes(dsn)
	} else {
		rec.DBBytes = dbBytes(filepath.Join(dataDir, "a2a"))
	}
	return nil
}

// turnsSummary is one variant of the turns part on one store, across
// rounds: the median over rounds of each window's median, and of each
// checkpoint's GetTask timings.
type turnsSummary struct {
	Windows [][2]int
	SendMS  []float64 // per window
	Gets    []getCheckpoint
	Rounds  int
	Resets  int
	Errors  []string
}

func summarizeTurns(recs []turnsRecord) turnsSummary {
	var s turnsSummary
	var ok []turnsRecord
	for _, r := range recs {
		if r.ErrorMsg != "" {
			s.Errors = append(s.Errors, r.ErrorMsg)
			continue
		}
		ok = append(ok, r)
	}
	if len(ok) == 0 {
		return s
	}
	s.Rounds, s.Resets = len(ok), ok[0].Resets
	n := len(ok[0].SendMS)
	for _, r := range ok {
		n = min(n, len(r.SendMS))
	}
	s.Windows = turnWindows(n)
	per := make([][]float64, len(s.Windows))
	for _, r := range ok {
		for i, m := range windowMedians(r.SendMS, s.Windows) {
			per[i] = append(per[i], m)
		}
	}
	for _, p := range per {
		s.SendMS = append(s.SendMS, median(p))
	}
	for i, cp := range ok[0].Gets {
		var short, full []float64
		for _, r := range ok {
			if i < len(r.Gets) && r.Gets[i].Turn == cp.Turn {
				short, full = append(short, r.Gets[i].Last10MS), append(full, r.Gets[i].FullMS)
			}
		}
		s.Gets = append(s.Gets, getCheckpoint{Turn: cp.Turn, HistoryN: cp.HistoryN, FullBytes: cp.FullBytes,
			Last10MS: median(short), FullMS: median(full)})
	}
	return s
}

// medianBy is the median of f over the records that keep selects.
func medianBy[T any](recs []T, keep func(T) bool, f func(T) float64) (stat, int) {
	var vs []float64
	for _, r := range recs {
		if keep(r) {
			vs = append(vs, f(r))
		}
	}
	return statOf(vs), len(vs)
}

// agentRatios are the per-round ratios of the many-agents host to the
// one-agent host (req/s, server CPU per request), for one store.
func agentRatios(recs []agentsRecord, st string, many int) (rps, cpu stat) {
	one := map[int]agentsRecord{}
	for _, r := range recs {
		if r.Store == st && r.Agents == 1 && r.ErrorMsg == "" {
			one[r.Round] = r
		}
	}
	var rr, cr []float64
	for _, r := range recs {
		o, ok := one[r.Round]
		if r.Store != st || r.Agents != many || r.ErrorMsg != "" || !ok || o.Load.RPS == 0 || o.ServerCPUPerOpUS == 0 {
			continue
		}
		rr = append(rr, r.Load.RPS/o.Load.RPS)
		cr = append(cr, r.ServerCPUPerOpUS/o.ServerCPUPerOpUS)
	}
	return statOf(rr), statOf(cr)
}

// writeCosts prints the cost measurements, store by store.
func writeCosts(w io.Writer, res *Results) {
	cr, c := res.Costs, res.Config
	if cr == nil {
		return
	}
	fmt.Fprintf(w, "\ncost growth, memory and scale (issue 32, -costs): ours on each store, echo/scenario agent on agenthost; medians of %d round(s) [min–max]\n", c.Rounds)
	for _, st := range c.CostStores {
		fmt.Fprintf(w, "\n== store %s\n", st)
		for _, v := range []struct{ variant, title string }{
			{"task", fmt.Sprintf("one task of %d turns (each answered INPUT_REQUIRED, the next turn continues the task: its history grows)", c.Turns)},
			{"context", fmt.Sprintf("one context of %d turns (a new task per turn, each COMPLETED)", c.Turns)},
		} {
			s := summarizeTurns(filter(cr.Turns, func(r turnsRecord) bool { return r.Store == st && r.Variant == v.variant }))
			if s.Rounds == 0 && len(s.Errors) == 0 {
				continue
			}
			fmt.Fprintf(w, "%s; SendMessage with historyLength 10, one at a time\n", v.title)
			if s.Rounds > 0 {
				fmt.Fprintf(w, "  SendMessage p50 ms by turns:")
				for i, win := range s.Windows {
					fmt.Fprintf(w, "  %d–%d: %.2f", win[0]+1, win[1], s.SendMS[i])
				}
				if k := len(s.SendMS); k > 1 && s.SendMS[0] > 0 {
					fmt.Fprintf(w, "  (last / first %.2f×)", s.SendMS[k-1]/s.SendMS[0])
				}
				fmt.Fprintln(w)
				fmt.Fprintf(w, "  %-10s %9s %22s %18s %12s\n", "GetTask at", "history", "historyLength 10 ms", "whole history ms", "bytes")
				for _, g := range s.Gets {
					fmt.Fprintf(w, "  turn %-5d %9d %22.2f %18.2f %12d\n", g.Turn, g.HistoryN, g.Last10MS, g.FullMS, g.FullBytes)
				}
				if s.Resets > 0 {
					fmt.Fprintf(w, "  (the loop guard admits %d turns per context: a task cancelled in the context every %d turns started its count over, %d times; not timed)\n",
						maxContextTurns, maxContextTurns-1, s.Resets)
				}
			}
			for _, e := range s.Errors {
				fmt.Fprintf(w, "  ! %s\n", e)
			}
		}

		if chunks := filter(cr.Chunks, func(r chunksRecord) bool { return r.Store == st }); len(chunks) > 0 {
			fmt.Fprintf(w, "one answer of %d bytes of text as an artifact in N chunks, then a reply; blocking SendMessage, one at a time\n", chunkTextLen)
			fmt.Fprintf(w, "  %7s %6s %14s %10s %18s %16s %11s\n", "chunks", "tasks", "send p50 ms", "× 1 chunk", "plugin CPU ms/task", "host CPU ms/task", "GetTask ms")
			var base float64
			for _, n := range chunkLevels(c.Chunks) {
				ok := func(r chunksRecord) bool { return r.Chunks == n && r.ErrorMsg == "" }
				send, k := medianBy(chunks, ok, func(r chunksRecord) float64 { return r.SendMS })
				if k == 0 {
					continue
				}
				plug, _ := medianBy(chunks, ok, func(r chunksRecord) float64 { return r.PluginCPUMS })
				host, _ := medianBy(chunks, ok, func(r chunksRecord) float64 { return r.HostCPUMS })
				get, _ := medianBy(chunks, ok, func(r chunksRecord) float64 { return r.GetMS })
				if n == 1 {
					base = send.Median
				}
				x := "-"
				if base > 0 {
					x = fmt.Sprintf("%.1f×", send.Median/base)
				}
				fmt.Fprintf(w, "  %7d %6d %14.2f %10s %18.2f %16.2f %11.2f\n", n, chunkReps(n), send.Median, x, plug.Median, host.Median, get.Median)
			}
			for _, r := range chunks {
				if r.ErrorMsg != "" {
					fmt.Fprintf(w, "  ! round %d, %d chunks: %s\n", r.Round, r.Chunks, r.ErrorMsg)
				}
			}
		}

		if mem := filter(cr.Memory, func(r memoryRecord) bool { return r.Store == st }); len(mem) > 0 {
			ok := func(r memoryRecord) bool { return r.ErrorMsg == "" }
			conn, k := medianBy(mem, ok, memoryRecord.perConnKB)
			if k > 0 {
				strm, _ := medianBy(mem, ok, memoryRecord.perStreamKB)
				capKB, _ := medianBy(mem, ok, func(r memoryRecord) float64 { return float64(r.CapKB) })
				pastKB, _ := medianBy(mem, ok, func(r memoryRecord) float64 { return float64(r.PastKB) })
				base, _ := medianBy(mem, ok, func(r memoryRecord) float64 { return float64(r.BaseKB) })
				m := mem[0]
				fmt.Fprintf(w, "plugin RSS (VmRSS, settled): %.1f MiB before; per idle keep-alive connection %.1f KiB [%.1f–%.1f] (%d of them); per open stream %.1f KiB [%.1f–%.1f] (%d, each on its own connection, its turn waiting)\n",
					base.Median/1024, conn.Median, conn.Min, conn.Max, m.Conns, strm.Median, strm.Min, strm.Max, m.Streams)
				fmt.Fprintf(w, "  at the connection cap (max_connections %d, %d idle open): %.1f MiB; %d more attempted: %.1f MiB; answered",
					m.Cap, m.Cap-1, capKB.Median/1024, m.CapExtra, pastKB.Median/1024)
				for _, r := range filter(mem, ok) {
					fmt.Fprintf(w, " [200 %d, 503 %d, failed %d]", r.PastOK, r.Past503, r.PastFailed)
				}
				fmt.Fprintln(w)
				if r := filter(mem, func(r memoryRecord) bool { return r.PastErr != "" }); len(r) > 0 {
					fmt.Fprintf(w, "  a failed one: %s\n", r[0].PastErr)
				}
			}
			for _, r := range mem {
				if r.ErrorMsg != "" {
					fmt.Fprintf(w, "  ! memory, round %d: %s\n", r.Round, r.ErrorMsg)
				}
			}
		}

		if ag := filter(cr.Agents, func(r agentsRecord) bool { return r.Store == st }); len(ag) > 0 {
			fmt.Fprintf(w, "agents on one port: blocking SendMessage at %d clients for %s, spread over the agents in turn; interleaved rounds\n", c.Clients, c.Duration)
			fmt.Fprintf(w, "  %7s %9s %8s %8s %12s %9s %9s %9s\n", "agents", "req/s", "p50 ms", "p99 ms", "server µs/op", "(plugin)", "idle MiB", "RSS MiB")
			for _, n := range []int{1, c.Agents} {
				ok := func(r agentsRecord) bool { return r.Agents == n && r.ErrorMsg == "" }
				rps, k := medianBy(ag, ok, func(r agentsRecord) float64 { return r.Load.RPS })
				if k == 0 {
					continue
				}
				p50, _ := medianBy(ag, ok, func(r agentsRecord) float64 { return r.Load.Latency.P50 })
				p99, _ := medianBy(ag, ok, func(r agentsRecord) float64 { return r.Load.Latency.P99 })
				cpu, _ := medianBy(ag, ok, func(r agentsRecord) float64 { return r.ServerCPUPerOpUS })
				plug, _ := medianBy(ag, ok, func(r agentsRecord) float64 { return r.PluginCPUPerOpUS })
				idle, _ := medianBy(ag, ok, func(r agentsRecord) float64 { return float64(r.IdleKB) })
				rss, _ := medianBy(ag, ok, func(r agentsRecord) float64 { return float64(r.Mem.RSS) })
				fmt.Fprintf(w, "  %7d %9.0f %8.2f %8.2f %12.0f %9.0f %9.1f %9.1f\n", n, rps.Median, p50.Median, p99.Median, cpu.Median, plug.Median, idle.Median/1024, rss.Median/1024)
			}
			if rps, cpu := agentRatios(ag, st, c.Agents); rps.Median > 0 {
				fmt.Fprintf(w, "  %d agents / 1: %.2f× req/s [%.2f–%.2f], %.2f× server CPU per request [%.2f–%.2f] (median of per-round ratios)\n",
					c.Agents, rps.Median, rps.Min, rps.Max, cpu.Median, cpu.Min, cpu.Max)
			}
			for _, r := range ag {
				if r.ErrorMsg != "" {
					fmt.Fprintf(w, "  ! %d agent(s), round %d: %s\n", r.Agents, r.Round, r.ErrorMsg)
				}
			}
		}

		if sc := filter(cr.Scale, func(r scaleRecord) bool { return r.Store == st }); len(sc) > 0 {
			fmt.Fprintf(w, "stored tasks (seeded through the store's API: COMPLETED, 2 messages and 1 artifact each); start-up = agenthost start → Agent Card served, median of %d;\n", c.StartupN)
			fmt.Fprintf(w, "ListTasks = first page of 50 at 1 client for %s; bytes per task over the empty store\n", min(c.Duration, 5*time.Second))
			fmt.Fprintf(w, "  %9s %9s %22s %9s %9s %9s %10s %10s %10s\n", "tasks", "seeded s", "start-up ms [min–max]", "idle MiB", "list p50", "list p99", "RSS after", "db MiB", "B/task")
			var empty *scaleRecord
			for i := range sc {
				if sc[i].Tasks == 0 && sc[i].ErrorMsg == "" {
					empty = &sc[i]
				}
			}
			for _, r := range sc {
				if r.ErrorMsg != "" {
					fmt.Fprintf(w, "  ! %d tasks: %s\n", r.Tasks, r.ErrorMsg)
					continue
				}
				up := statOf(r.StartupMS)
				var idle []float64
				for _, k := range r.IdleKB {
					idle = append(idle, float64(k))
				}
				per := "-"
				if empty != nil && r.Stored > 0 {
					per = fmt.Sprintf("%.0f", float64(r.DBBytes-empty.DBBytes)/float64(r.Stored))
				}
				fmt.Fprintf(w, "  %9d %9.0f %22s %9.1f %9.2f %9.2f %10.1f %10.1f %10s\n", r.Stored, r.SeedSec,
					fmt.Sprintf("%.0f [%.0f–%.0f]", up.Median, up.Min, up.Max), median(idle)/1024, r.List.Latency.P50, r.List.Latency.P99,
					float64(r.ListMem.RSS)/1024, float64(r.DBBytes)/(1<<20), per)
			}
			if empty != nil {
				for _, r := range sc {
					if r.Tasks > 0 && r.ErrorMsg == "" && r.Stored > 0 {
						fmt.Fprintf(w, "  RSS per 100,000 stored tasks (after ListTasks, over the empty store's): %.2f MiB at %d tasks\n",
							float64(r.ListMem.RSS-empty.ListMem.RSS)/1024/(float64(r.Stored)/100_000), r.Stored)
					}
				}
			}
		}
	}
}
