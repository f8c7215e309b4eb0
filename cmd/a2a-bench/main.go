// Command a2a-bench measures our A2A server side by side with a bare Go
// floor and the official Go and JS SDK servers, all doing the same echo
// work, driven by the same load tool (a2a-load), on the same machine.
//
//	a2a-bench [-only floor,ours-mem,ours-sqlite,go-sdk,js-sdk] [-modes send,send-async,stream]
//	          [-c 16] [-duration 5s] [-warmup 1s] [-rounds 3]
//	          [-growth] [-startup] [-full] [-out bench-results]
//
// The servers run one at a time. A round starts each server in turn, warms
// it up, runs every mode against it and stops it; rounds repeat with the
// order rotated, and the report takes medians across rounds, so noise on a
// shared machine lands on every server alike. Ratios are medians of the
// per-round ratios.
//
// The load tool and the server share the machine's cores (two, on the
// project's machines): the load tool is written to be cheap, and the
// report shows how much CPU it and the server used per operation, so a
// reader can see who was the bottleneck. Everything runs on loopback.
//
// Besides the comparison (-compare, on by default) it measures:
//
//	-startup  time from starting a server to its Agent Card being served
//	          (for ours: agenthost start → plugin launched, configured,
//	          listening), median of -startup-n;
//	-growth   cost growth of ours: throughput and plugin RSS at 1, 16, 64
//	          and 256 clients, and with 1k, 10k, 100k tasks in the durable
//	          store (filled by the load tool itself): send throughput,
//	          ListTasks first-page latency, RSS, database size;
//	-costs    cost growth, memory and scale (issue 32, costs.go): a task
//	          and a context of 1,000 turns, an answer of 1,000 artifact
//	          chunks, RSS per idle connection, per open stream and at the
//	          connection cap, 10 agents on one port against one, and
//	          1,000,000 stored tasks seeded through the store's API (start-up,
//	          RSS, ListTasks, bytes per task); SQLite and PostgreSQL.
//
// Results go to -out: report.txt (what is printed), results.json (every
// run, raw), and PNG charts. Server logs go to -out/logs.
//
// "a2a-bench floor-server" runs the floor server itself (the suite starts
// it as its own process).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "floor-server" {
		os.Exit(floorMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "floor-child" {
		os.Exit(hopChildMain(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the suite's settings.
type config struct {
	Bin       string `json:"bin"`
	Load      string `json:"load"`
	AgentHost string `json:"agenthost"`
	Plugins   string `json:"plugins"`
	GoSDK     string `json:"go_sdk"`
	Node      string `json:"node"`
	JSServer  string `json:"js_server"`
	Python    string `json:"python"`
	PyHost    string `json:"py_host"`
	// PyTransport is the Python host's transport: auto-mtls or socket-dir.
	PyTransport string `json:"py_transport"`
	Out         string `json:"out"`

	Only     []string      `json:"servers"`
	Modes    []string      `json:"modes"`
	Clients  int           `json:"clients"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	Rounds   int           `json:"rounds"`
	Compare  bool          `json:"compare"`

	Startup  bool `json:"startup"`
	StartupN int  `json:"startup_n"`

	Growth         bool          `json:"growth"`
	GrowthServers  []string      `json:"growth_servers"`
	GrowthClients  []int         `json:"growth_clients"`
	GrowthTasks    []int64       `json:"growth_tasks"`
	GrowthDuration time.Duration `json:"growth_duration_ns"`

	Costs bool `json:"costs"`
	// Profile takes a CPU profile of the plugin in each measured run of
	// ours and breaks it down by part (profile.go).
	Profile      bool     `json:"profile,omitempty"`
	CostParts    []string `json:"cost_parts"`
	CostStores   []string `json:"cost_stores"`
	Postgres     string   `json:"-"` // a DSN may hold a password
	Turns        int      `json:"turns"`
	Chunks       int      `json:"chunks"`
	Conns        int      `json:"conns"`
	Streams      int      `json:"streams"`
	ConnCap      int      `json:"conn_cap"`
	Agents       int      `json:"agents"`
	ScaleTasks   []int64  `json:"scale_tasks"`
	ScaleTasksPG []int64  `json:"scale_tasks_postgres"`
	SeedDir      string   `json:"seed_dir"`
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("a2a-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var only, modes, gServers, gClients, gTasks, cParts, cStores, sTasks, sTasksPG string
	var full bool
	fs.StringVar(&c.Bin, "bin", "bin", "`DIR` with agenthost, plugins/, a2a-load and bench/a2a-go-sdk (make bench-tools)")
	fs.StringVar(&c.Load, "load", "", "the a2a-load binary (default BIN/a2a-load)")
	fs.StringVar(&c.AgentHost, "agenthost", "", "the agenthost binary (default BIN/agenthost)")
	fs.StringVar(&c.Plugins, "plugins", "", "plugins directory with a2a-plugin (default BIN/plugins)")
	fs.StringVar(&c.GoSDK, "gosdk", "", "the official Go SDK's a2a CLI (default BIN/bench/a2a-go-sdk)")
	fs.StringVar(&c.Node, "node", "node", "the Node.js binary")
	fs.StringVar(&c.JSServer, "js", "testharness/interop/js/server-bench.mjs", "the JS SDK benchmark server")
	fs.StringVar(&c.Python, "python", "/usr/bin/python3", "the Python of the py-host server (Debian's, with python3-grpcio)")
	fs.StringVar(&c.PyHost, "pyhost", "host-sdk/python/examples/echo_host.py", "the py-host server: the Python host SDK's echo host")
	fs.StringVar(&c.PyTransport, "pytransport", "auto-mtls", "the py-host server's transport to the plugin: auto-mtls or socket-dir")
	fs.StringVar(&c.Out, "out", "bench-results", "output `DIR` for report.txt, results.json, charts and logs")
	fs.StringVar(&only, "only", strings.Join(defaultServers, ","), "servers to compare, comma-separated: "+strings.Join(allServers, ", "))
	fs.StringVar(&modes, "modes", "send,send-async,stream", "load modes to compare: send, send-async, stream")
	fs.IntVar(&c.Clients, "c", 16, "concurrent clients in the comparison")
	fs.DurationVar(&c.Duration, "duration", 5*time.Second, "measured time of each run")
	fs.DurationVar(&c.Warmup, "warmup", time.Second, "warm-up before each measured run")
	fs.IntVar(&c.Rounds, "rounds", 3, "rounds of the comparison (medians across rounds)")
	fs.BoolVar(&c.Compare, "compare", true, "run the side-by-side comparison")
	fs.BoolVar(&c.Startup, "startup", true, "measure start-up time to ready")
	fs.IntVar(&c.StartupN, "startup-n", 5, "start-ups per server (median)")
	fs.BoolVar(&c.Growth, "growth", false, "measure cost growth with clients and stored tasks (minutes)")
	fs.StringVar(&gServers, "growth-servers", srvOursSQLite, "servers of the client sweep")
	fs.StringVar(&gClients, "growth-clients", "1,16,64,256", "client counts of the sweep")
	fs.StringVar(&gTasks, "growth-tasks", "1000,10000,100000", "stored-task levels of the durable store")
	fs.DurationVar(&c.GrowthDuration, "growth-duration", 0, "measured time of each growth run (default -duration)")
	fs.BoolVar(&c.Profile, "profile", false, "profile the plugin's CPU in each measured run of ours (pprof: true in its settings) and break it down by part: store, security, contract, task manager, HTTP and JSON, runtime")
	fs.BoolVar(&c.Costs, "costs", false, "measure cost growth, memory and scale (issue 32; minutes): see -cost-parts")
	fs.StringVar(&cParts, "cost-parts", strings.Join(allCostParts, ","), "parts of -costs: "+strings.Join(allCostParts, ", "))
	fs.StringVar(&cStores, "cost-stores", "sqlite", "stores of -costs: sqlite, postgres (needs -postgres)")
	fs.StringVar(&c.Postgres, "postgres", os.Getenv("A2A_TEST_POSTGRES_DSN"), "PostgreSQL `DSN` of -cost-stores postgres (each measurement makes a schema of its own in it and drops it); default $A2A_TEST_POSTGRES_DSN")
	fs.IntVar(&c.Turns, "turns", 1000, "turns of one task and of one context (-costs turns)")
	fs.IntVar(&c.Chunks, "chunks", 1000, "artifact chunks of the largest answer (-costs chunks; also 1, 10, 100…)")
	fs.IntVar(&c.Conns, "conns", 500, "idle keep-alive connections (-costs memory)")
	fs.IntVar(&c.Streams, "streams", 200, "open streams (-costs memory)")
	fs.IntVar(&c.ConnCap, "conn-cap", 1024, "max_connections of -costs memory (the default's); it opens that many, then a tenth more")
	fs.IntVar(&c.Agents, "agents", 10, "agents on one port against one (-costs agents)")
	fs.StringVar(&sTasks, "scale-tasks", "100000,1000000", "stored-task levels of -costs scale with SQLite (seeded; an empty store is measured too)")
	fs.StringVar(&sTasksPG, "scale-tasks-postgres", "100000", "stored-task levels of -costs scale with PostgreSQL")
	fs.StringVar(&c.SeedDir, "seed-dir", "", "keep the seeded SQLite stores of -costs scale in `DIR` and reuse them in later runs (default: seed each run, in a temporary directory)")
	fs.BoolVar(&full, "full", false, "everything, longer: -duration 10s -warmup 2s -rounds 5 -growth -startup-n 15 (explicit flags still win)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: a2a-bench [flags]      (make bench; make bench-full)\n       a2a-bench floor-server [-addr 127.0.0.1:0]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if full {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["duration"] {
			c.Duration = 10 * time.Second
		}
		if !set["warmup"] {
			c.Warmup = 2 * time.Second
		}
		if !set["rounds"] {
			c.Rounds = 5
		}
		if !set["growth"] {
			c.Growth = true
		}
		if !set["startup-n"] {
			c.StartupN = 15
		}
	}
	if c.GrowthDuration == 0 {
		c.GrowthDuration = c.Duration
	}
	c.Load = orDefault(c.Load, filepath.Join(c.Bin, "a2a-load"))
	c.AgentHost = orDefault(c.AgentHost, filepath.Join(c.Bin, "agenthost"))
	c.Plugins = orDefault(c.Plugins, filepath.Join(c.Bin, "plugins"))
	c.GoSDK = orDefault(c.GoSDK, filepath.Join(c.Bin, "bench", "a2a-go-sdk"))

	var err error
	if c.Only, err = names(only, allServers, "-only"); err != nil {
		return c, err
	}
	if c.Modes, err = names(modes, []string{"send", "send-async", "stream"}, "-modes"); err != nil {
		return c, err
	}
	if c.CostParts, err = names(cParts, allCostParts, "-cost-parts"); err != nil {
		return c, err
	}
	if c.CostStores, err = names(cStores, []string{"sqlite", "postgres"}, "-cost-stores"); err != nil {
		return c, err
	}
	for _, l := range []struct {
		list string
		dst  *[]int64
		name string
	}{{sTasks, &c.ScaleTasks, "-scale-tasks"}, {sTasksPG, &c.ScaleTasksPG, "-scale-tasks-postgres"}} {
		ns, err := ints(l.list, l.name)
		if err != nil {
			return c, err
		}
		for _, n := range ns {
			*l.dst = append(*l.dst, int64(n))
		}
	}
	if c.Costs && slices.Contains(c.CostStores, "postgres") && c.Postgres == "" {
		return c, errors.New("-cost-stores postgres needs -postgres DSN (or $A2A_TEST_POSTGRES_DSN; make postgres-up prints one)")
	}
	if c.GrowthServers, err = names(gServers, allServers, "-growth-servers"); err != nil {
		return c, err
	}
	if c.GrowthClients, err = ints(gClients, "-growth-clients"); err != nil {
		return c, err
	}
	var ts []int
	if ts, err = ints(gTasks, "-growth-tasks"); err != nil {
		return c, err
	}
	for _, t := range ts {
		c.GrowthTasks = append(c.GrowthTasks, int64(t))
	}
	if !slices.IsSorted(c.GrowthTasks) {
		return c, errors.New("-growth-tasks must be increasing (the store is filled level by level)")
	}
	switch {
	case c.Clients < 1:
		return c, fmt.Errorf("-c %d: need at least one client", c.Clients)
	case c.Rounds < 1:
		return c, fmt.Errorf("-rounds %d: need at least one", c.Rounds)
	case c.Duration <= 0 || c.Warmup < 0:
		return c, errors.New("-duration must be positive and -warmup not negative")
	case c.StartupN < 1:
		return c, fmt.Errorf("-startup-n %d: need at least one", c.StartupN)
	case c.Turns < 1 || c.Chunks < 1 || c.Conns < 1 || c.Streams < 1 || c.ConnCap < 2 || c.Agents < 2:
		return c, errors.New("-turns, -chunks, -conns and -streams must be positive, -conn-cap and -agents at least 2")
	case !c.Compare && !c.Startup && !c.Growth && !c.Costs:
		return c, errors.New("nothing to do: -compare, -startup, -growth and -costs are all off")
	}
	return c, nil
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// names parses a comma-separated list of known names, keeping the order of
// known (so rounds always visit servers in the same base order).
func names(list string, known []string, flagName string) ([]string, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s: unknown %q (want %s)", flagName, n, strings.Join(known, ", "))
		}
		want[n] = true
	}
	var out []string
	for _, k := range known {
		if want[k] {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty list", flagName)
	}
	return out, nil
}

func ints(list, flagName string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive number", flagName, s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty list", flagName)
	}
	return out, nil
}

// bench is one suite run.
type bench struct {
	cfg    config
	self   string // this executable, for floor-server
	work   string // temporary files (data dirs, host configs)
	logDir string
	log    io.Writer // progress
	res    *Results
	pgSeq  int // schemas made by pgSchema
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "a2a-bench: %v\n", err)
		return exitUsage
	}
	b := &bench{cfg: cfg, log: stderr}
	if err := b.prepare(); err != nil {
		fmt.Fprintf(stderr, "a2a-bench: %v\n", err)
		return exitError
	}
	defer os.RemoveAll(b.work)
	err = b.runAll()
	b.res.Finished = time.Now().UTC()
	b.res.Env.LoadAvgEnd = loadAvg()
	if werr := b.write(stdout); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		fmt.Fprintf(stderr, "a2a-bench: %v\n", err)
		return exitError
	}
	return exitOK
}

// prepare checks that everything the selected servers need is there, with
// the command that provides what is missing.
func (b *bench) prepare() error {
	var err error
	if b.self, err = os.Executable(); err != nil {
		return err
	}
	need := func(path, fix string) error {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%s not found: %s", path, fix)
		}
		return nil
	}
	if err := need(b.cfg.Load, "run make bench-tools (or pass -load)"); err != nil {
		return err
	}
	used := map[string]bool{}
	if b.cfg.Compare || b.cfg.Startup {
		for _, s := range b.cfg.Only {
			used[s] = true
		}
	}
	if b.cfg.Growth || b.cfg.Costs {
		used[srvOursSQLite] = true
		for _, s := range b.cfg.GrowthServers {
			used[s] = true
		}
	}
	if used[srvOursMem] || used[srvOursSQLite] || used[srvOursGRPC] {
		if err := need(b.cfg.AgentHost, "run make build (or pass -agenthost)"); err != nil {
			return err
		}
		if err := need(filepath.Join(b.cfg.Plugins, "a2a-plugin"), "run make build (or pass -plugins)"); err != nil {
			return err
		}
	}
	if used[srvPyHost] {
		if err := need(filepath.Join(b.cfg.Plugins, "a2a-plugin"), "run make build (or pass -plugins)"); err != nil {
			return err
		}
		if err := need(b.cfg.PyHost, "pass -pyhost"); err != nil {
			return err
		}
		if out, err := exec.Command(b.cfg.Python, "-c", "import grpc, google.protobuf, cryptography").CombinedOutput(); err != nil {
			return fmt.Errorf("%s cannot import grpc, protobuf and cryptography (%v): run make python-deps, or pass -python\n%s", b.cfg.Python, err, out)
		}
	}
	if used[srvGoSDK] || used[srvGoSDKGRPC] {
		if err := need(b.cfg.GoSDK, "run make bench-tools (builds the official Go SDK's a2a CLI), pass -gosdk, or leave go-sdk out of -only"); err != nil {
			return err
		}
	}
	if used[srvJSSDK] {
		if err := need(b.cfg.JSServer, "pass -js"); err != nil {
			return err
		}
		if err := need(filepath.Join(filepath.Dir(b.cfg.JSServer), "node_modules", "@a2a-js", "sdk"), "run make npm-deps"); err != nil {
			return err
		}
		if _, err := exec.LookPath(b.cfg.Node); err != nil {
			return fmt.Errorf("node not found (%v): install Node.js, pass -node, or leave js-sdk out of -only", err)
		}
	}
	if b.work, err = os.MkdirTemp("", "a2a-bench-"); err != nil {
		return err
	}
	b.logDir = filepath.Join(b.cfg.Out, "logs")
	if err := os.MkdirAll(b.logDir, 0o755); err != nil {
		return err
	}
	// Fresh logs for this run.
	old, _ := filepath.Glob(filepath.Join(b.logDir, "*.log"))
	for _, f := range old {
		os.Remove(f)
	}
	b.res = &Results{
		Started: time.Now().UTC(),
		Config:  b.cfg,
		Env:     b.env(),
		Servers: map[string]string{},
	}
	for s := range used {
		b.res.Servers[s] = serverInfo[s]
	}
	return nil
}

func (b *bench) env() envInfo {
	e := envInfo{
		CPUs:         runtime.NumCPU(),
		CPUModel:     cpuModel(),
		GoVersion:    runtime.Version(),
		OS:           runtime.GOOS + "/" + runtime.GOARCH,
		LoadAvgStart: loadAvg(),
	}
	if k, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(k))
	}
	if out, err := exec.Command(b.cfg.Node, "--version").Output(); err == nil {
		e.NodeVersion = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command(filepath.Join(b.cfg.Plugins, "a2a-plugin"), "--version").Output(); err == nil {
		e.Plugin, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	return e
}

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(b.log, format+"\n", args...)
}

// runAll runs the selected parts; a failing part is reported and the
// others still run.
func (b *bench) runAll() error {
	var errs []error
	if b.cfg.Startup {
		if err := b.runStartup(); err != nil {
			errs = append(errs, fmt.Errorf("start-up: %w", err))
		}
	}
	if b.cfg.Compare {
		if err := b.runCompare(); err != nil {
			errs = append(errs, fmt.Errorf("comparison: %w", err))
		}
	}
	if b.cfg.Growth {
		if err := b.runGrowthClients(); err != nil {
			errs = append(errs, fmt.Errorf("growth with clients: %w", err))
		}
		if err := b.runGrowthTasks(); err != nil {
			errs = append(errs, fmt.Errorf("growth with stored tasks: %w", err))
		}
	}
	if b.cfg.Costs {
		if err := b.runCosts(); err != nil {
			errs = append(errs, fmt.Errorf("costs: %w", err))
		}
	}
	return errors.Join(errs...)
}

// write prints the report and writes report.txt, results.json and charts.
func (b *bench) write(stdout io.Writer) error {
	summarize(b.res)
	var sb strings.Builder
	writeReport(&sb, b.res)
	io.WriteString(stdout, sb.String())
	if err := os.MkdirAll(b.cfg.Out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.cfg.Out, "report.txt"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(b.res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.cfg.Out, "results.json"), raw, 0o644); err != nil {
		return err
	}
	charts, err := writeCharts(b.cfg.Out, b.res)
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	fmt.Fprintf(stdout, "\nwritten: %s, %s", filepath.Join(b.cfg.Out, "report.txt"), filepath.Join(b.cfg.Out, "results.json"))
	for _, c := range charts {
		fmt.Fprintf(stdout, ", %s", c)
	}
	fmt.Fprintln(stdout)
	return nil
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
