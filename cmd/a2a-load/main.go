// Command a2a-load is a load generator for A2A v1.0 JSON-RPC servers. It
// drives one operation at a fixed concurrency, checks that every answer is
// a success, and prints throughput and exact latency percentiles.
//
//	a2a-load -url URL -mode send|send-async|stream|list [-c 16] [-n N | -d 20s] [-warmup 2s] [-json]
//	a2a-load seed -db FILE | -postgres DSN [-n 100000] [-from 0]
//
// Modes:
//
//	send        blocking SendMessage, a new task per request; the answer must
//	            be a COMPLETED task that echoes the text.
//	send-async  SendMessage with returnImmediately, then GetTask until the
//	            task is terminal; latency is the end-to-end time to terminal,
//	            "ack" is the time of the first answer.
//	stream      SendStreamingMessage; latency is the whole stream, "first
//	            event" the time to the first SSE event; events/s is reported.
//	list        ListTasks (first page, -page-size); for stores with many tasks.
//
// -transport grpc drives send over the gRPC binding instead
// (lf.a2a.v1.A2AService at -url host:port, one connection per worker).
//
// Every response is validated: HTTP status, JSON-RPC error, task state and
// the echoed text (the unique marker sent in each message must come back at
// least twice: once in the history, once in the answer). Failures are
// counted by kind, never dropped.
//
// The load tool competes with the server for the same CPUs on a small
// machine, so it is written to be cheap: each worker owns one keep-alive
// connection and speaks HTTP/1.1 on it itself (-client raw, the default: one
// write per request and no goroutine hand-offs, about half the CPU of
// net/http), bodies are built with append into per-worker buffers, and
// answers are checked with byte searches instead of full JSON decoding on
// the hot path. -client net/http uses a shared http.Transport instead
// (MaxIdleConnsPerHost above the concurrency), to cross-check the raw one. The -json output includes the CPU
// time the load tool itself used, so a run can show who the bottleneck was.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

// Exit codes.
const (
	exitOK     = 0
	exitErrors = 1 // the run completed but some requests failed, or none succeeded
	exitUsage  = 2
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "seed" {
		os.Exit(seedMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without os.Exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "a2a-load: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintf(stderr, "a2a-load: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "a2a-load: %v\n", err)
			return exitUsage
		}
		defer pprof.StopCPUProfile()
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "a2a-load: %v\n", err)
		return exitErrors
	}
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "a2a-load: %v\n", err)
			return exitErrors
		}
	} else {
		writeText(stdout, res)
	}
	if res.OK == 0 || (cfg.FailOnError && res.ErrorsTotal > 0) {
		return exitErrors
	}
	return exitOK
}

// Config is one load run.
type Config struct {
	URL         string        // JSON-RPC endpoint
	Mode        string        // send, send-async, stream, list
	Concurrency int           // workers, each with its own keep-alive connection
	Requests    int64         // measured operations (0: run for Duration)
	Duration    time.Duration // measured time when Requests is 0
	Warmup      time.Duration // unmeasured load before the measurement
	Timeout     time.Duration // per request (and per task in send-async)
	Poll        time.Duration // GetTask interval in send-async
	Text        string        // message text (a unique marker is appended)
	PageSize    int           // ListTasks page size
	Token       string        // bearer token, if the server wants one
	JSON        bool          // machine-readable output
	FailOnError bool          // exit 1 when any request failed
	CPUProfile  string        // write the load tool's own CPU profile here
	Client      string        // raw (default) or net/http
	Transport   string        // jsonrpc (default) or grpc (mode send only)
}

const modes = "send, send-async, stream or list"

func parseFlags(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("a2a-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	fs.StringVar(&c.URL, "url", "", "JSON-RPC endpoint `URL` of the A2A server (e.g. http://127.0.0.1:41241/); several, comma-separated, spread the clients over them in turn")
	fs.StringVar(&c.Mode, "mode", "send", "operation: "+modes)
	fs.IntVar(&c.Concurrency, "c", 16, "concurrent clients (each keeps one connection)")
	fs.Int64Var(&c.Requests, "n", 0, "measured operations `N` (instead of -d)")
	fs.DurationVar(&c.Duration, "d", 10*time.Second, "measured duration (ignored with -n)")
	fs.DurationVar(&c.Warmup, "warmup", 2*time.Second, "unmeasured load before measuring")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "timeout of one request (send-async: of one task)")
	fs.DurationVar(&c.Poll, "poll", 2*time.Millisecond, "GetTask polling interval in send-async")
	fs.StringVar(&c.Text, "text", "hello from a2a-load", "message text; a unique marker is appended to each")
	fs.IntVar(&c.PageSize, "page-size", 50, "ListTasks page size (mode list)")
	fs.StringVar(&c.Token, "token", os.Getenv("A2A_LOAD_TOKEN"), "bearer token (default $A2A_LOAD_TOKEN)")
	fs.BoolVar(&c.JSON, "json", false, "print the result as JSON")
	fs.BoolVar(&c.FailOnError, "fail-on-error", false, "exit 1 if any request failed")
	fs.StringVar(&c.Transport, "transport", "jsonrpc", "binding: jsonrpc, or grpc (lf.a2a.v1.A2AService at -url host:port; mode send only)")
	fs.StringVar(&c.Client, "client", "raw", "HTTP client: raw (one goroutine per connection, cheapest) or net/http (a shared http.Transport)")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write the load tool's own CPU profile to `FILE` (to keep it lean)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: a2a-load -url URL [-mode %s] [-c 16] [-n N | -d 10s] [-warmup 2s] [-json]\n\nFlags:\n", modes)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (all options are flags)", fs.Arg(0))
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	switch {
	case c.URL == "":
		return errors.New("-url is required, e.g. -url http://127.0.0.1:41241/")
	case c.Mode != "send" && c.Mode != "send-async" && c.Mode != "stream" && c.Mode != "list":
		return fmt.Errorf("unknown -mode %q (want %s)", c.Mode, modes)
	case c.Concurrency < 1:
		return fmt.Errorf("-c %d: need at least one client", c.Concurrency)
	case c.Requests < 0:
		return fmt.Errorf("-n %d must not be negative", c.Requests)
	case c.Requests == 0 && c.Duration <= 0:
		return errors.New("give -n N or a positive -d")
	case c.Warmup < 0:
		return fmt.Errorf("-warmup %s must not be negative", c.Warmup)
	case c.Timeout <= 0:
		return fmt.Errorf("-timeout %s must be positive", c.Timeout)
	case c.Client != "raw" && c.Client != "net/http":
		return fmt.Errorf("unknown -client %q (want raw or net/http)", c.Client)
	case c.Transport != "jsonrpc" && c.Transport != "grpc" && c.Transport != "":
		return fmt.Errorf("unknown -transport %q (want jsonrpc or grpc)", c.Transport)
	case c.Transport == "grpc" && c.Mode != "send":
		return fmt.Errorf("-transport grpc drives -mode send only, not %q", c.Mode)
	case c.PageSize < 1:
		return fmt.Errorf("-page-size %d must be positive", c.PageSize)
	}
	return nil
}
