package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// readyTimeout bounds a server's start-up.
const readyTimeout = 60 * time.Second

// loadRun is one a2a-load invocation.
type loadRun struct {
	mode     string
	clients  int
	duration time.Duration // or
	n        int64         // operations
	warmup   time.Duration
}

// runLoad runs a2a-load against s and measures the server's CPU around it.
func (b *bench) runLoad(s *server, lr loadRun) (loadResult, float64, float64, error) {
	args := []string{"-url", s.rpc, "-mode", lr.mode, "-c", strconv.Itoa(lr.clients),
		"-warmup", lr.warmup.String(), "-json"}
	if overGRPC(s.name) {
		args = append(args, "-transport", "grpc")
	}
	if lr.n > 0 {
		args = append(args, "-n", strconv.FormatInt(lr.n, 10))
	} else {
		args = append(args, "-d", lr.duration.String())
	}
	cpu0, plug0 := s.cpu()
	cmd := exec.Command(b.cfg.Load, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	cpu1, plug1 := s.cpu()
	var res loadResult
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		if err == nil {
			err = jerr
		}
		return res, 0, 0, fmt.Errorf("a2a-load %v: %v: %s", args, err, bytes.TrimSpace(stderr.Bytes()))
	}
	select {
	case <-s.exited:
		return res, 0, 0, s.unexpectedExit()
	default:
	}
	var cpuPerOp, plugPerOp float64
	if res.AllOps > 0 {
		cpuPerOp = (cpu1 - cpu0).Seconds() * 1e6 / float64(res.AllOps)
		plugPerOp = (plug1 - plug0).Seconds() * 1e6 / float64(res.AllOps)
	}
	// A run with failures still counts (the report shows them); a run
	// without a single success does not.
	if res.OK == 0 {
		return res, cpuPerOp, plugPerOp, fmt.Errorf("%s %s: no successful operation; errors %v %q", s.name, lr.mode, res.Errors, res.ErrorSamples)
	}
	return res, cpuPerOp, plugPerOp, nil
}

// startReady starts a server and waits for its Agent Card.
func (b *bench) startReady(name string, o startOptions) (*server, time.Duration, error) {
	s, err := b.start(name, o)
	if err != nil {
		return nil, 0, err
	}
	d, err := s.ready(readyTimeout)
	if err != nil {
		s.stop()
		return nil, 0, err
	}
	return s, d, nil
}

// runStartup measures start-up to ready, interleaving the servers.
func (b *bench) runStartup() error {
	b.progress("== start-up to ready: %d × %v", b.cfg.StartupN, b.cfg.Only)
	var errs []error
	for i := 1; i <= b.cfg.StartupN; i++ {
		for _, name := range rotate(b.cfg.Only, i-1) {
			rec := startupRecord{Server: name, Iter: i}
			s, d, err := b.startReady(name, startOptions{clients: b.cfg.Clients})
			if err != nil {
				rec.ErrorMsg = err.Error()
				errs = append(errs, err)
			} else {
				rec.ReadyMS = float64(d.Microseconds()) / 1000
				time.Sleep(200 * time.Millisecond) // let the runtime settle before reading RSS
				rec.IdleMem = s.mem()
				if err := s.stop(); err != nil {
					errs = append(errs, err)
				}
				if s.dataDir != "" {
					os.RemoveAll(s.dataDir)
				}
			}
			b.res.Startup = append(b.res.Startup, rec)
			b.progress("  start-up %d/%d %-12s %7.1f ms  idle RSS %s", i, b.cfg.StartupN, name, rec.ReadyMS, mb(rec.IdleMem.RSS))
		}
	}
	return errors.Join(errs...)
}

// rotate returns names starting at offset k, wrapping around.
func rotate[T any](names []T, k int) []T {
	if len(names) == 0 {
		return nil
	}
	k %= len(names)
	return append(append([]T(nil), names[k:]...), names[:k]...)
}

// runCompare is the side-by-side comparison: rounds × servers × modes.
func (b *bench) runCompare() error {
	b.progress("== comparison: %d rounds × %v × %v, %d clients, %s warm-up + %s each",
		b.cfg.Rounds, b.cfg.Only, b.cfg.Modes, b.cfg.Clients, b.cfg.Warmup, b.cfg.Duration)
	var errs []error
	for r := 1; r <= b.cfg.Rounds; r++ {
		for _, name := range rotate(b.cfg.Only, r-1) {
			if err := b.compareOne(r, name); err != nil {
				b.progress("  ! %v", err)
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (b *bench) compareOne(round int, name string) error {
	so := startOptions{clients: b.cfg.Clients}
	profiling := b.cfg.Profile && isOurs(name)
	if profiling {
		so.plugin = "    pprof: true\n"
	}
	s, _, err := b.startReady(name, so)
	if err != nil {
		return err
	}
	defer func() {
		if s.dataDir != "" {
			os.RemoveAll(s.dataDir)
		}
	}()
	var errs []error
	for _, mode := range b.cfg.Modes {
		if overGRPC(name) && mode != "send" {
			continue // a2a-load drives the send mode over gRPC
		}
		var prof <-chan profileResult
		if profiling {
			prof = b.profileDuring(s)
		}
		res, cpuOp, plugOp, err := b.runLoad(s, loadRun{mode: mode, clients: b.cfg.Clients, duration: b.cfg.Duration, warmup: b.cfg.Warmup})
		var parts map[string]float64
		if prof != nil {
			pr := <-prof
			if pr.err != nil {
				errs = append(errs, fmt.Errorf("%s %s: profile: %w", name, mode, pr.err))
			} else {
				parts = perOp(pr.seconds, res.RPS*pr.length.Seconds())
			}
		}
		if err != nil {
			errs = append(errs, err)
			if res.OK == 0 {
				continue
			}
		}
		rec := runRecord{Round: round, Server: name, Mode: mode, Clients: b.cfg.Clients, Load: res,
			ServerCPUSec: cpuOp * float64(res.AllOps) / 1e6, ServerCPUPerOpUS: cpuOp, PluginCPUPerOpUS: plugOp,
			PluginParts: parts, Mem: s.mem(), LoadAvg: loadAvg()}
		b.res.Runs = append(b.res.Runs, rec)
		b.progress("  [%d/%d] %-12s %-10s %8.0f/s  p50 %6.2f  p99 %7.2f ms  server %6.0f µs/op  load %4.0f µs/op  RSS %s  errors %d",
			round, b.cfg.Rounds, name, mode, res.RPS, res.Latency.P50, res.Latency.P99, cpuOp, res.LoadCPUPerOp, mb(rec.Mem.RSS), res.ErrorsTotal)
	}
	if err := s.stop(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// runGrowthClients measures throughput and RSS at growing client counts,
// each on a freshly started server.
func (b *bench) runGrowthClients() error {
	b.progress("== growth with clients: %v × %v, send, %s each", b.cfg.GrowthServers, b.cfg.GrowthClients, b.cfg.GrowthDuration)
	var errs []error
	for _, name := range b.cfg.GrowthServers {
		for _, c := range b.cfg.GrowthClients {
			s, _, err := b.startReady(name, startOptions{clients: c})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			time.Sleep(200 * time.Millisecond)
			rec := growthClientRecord{Server: name, Clients: c, IdleMem: s.mem()}
			res, cpuOp, _, err := b.runLoad(s, loadRun{mode: "send", clients: c, duration: b.cfg.GrowthDuration, warmup: b.cfg.Warmup})
			if err != nil {
				errs = append(errs, err)
			}
			rec.Load, rec.ServerCPUPerOpUS, rec.Mem = res, cpuOp, s.mem()
			b.res.GrowthClients = append(b.res.GrowthClients, rec)
			b.progress("  %-12s %4d clients %8.0f/s  p50 %6.2f  p99 %7.2f ms  server %5.0f µs/op  RSS idle %s → %s (peak %s)  errors %d",
				name, c, res.RPS, res.Latency.P50, res.Latency.P99, cpuOp, mb(rec.IdleMem.RSS), mb(rec.Mem.RSS), mb(rec.Mem.HWM), res.ErrorsTotal)
			if err := s.stop(); err != nil {
				errs = append(errs, err)
			}
			if s.dataDir != "" {
				os.RemoveAll(s.dataDir)
			}
		}
	}
	return errors.Join(errs...)
}

// prefillClients is the concurrency used to fill the store.
const prefillClients = 32

// runGrowthTasks measures, for each level, a durable store filled with
// that many tasks by the load tool itself (a fresh store per level, so the
// measurement runs of one level do not fill the next): the plugin's memory
// after the fill, ListTasks first-page latency, send throughput, memory
// after the send run and the database's size. Then it restarts the plugin
// on the last (largest) store and measures start-up and memory again.
func (b *bench) runGrowthTasks() error {
	b.progress("== growth with stored tasks (ours-sqlite): %v, a fresh store per level", b.cfg.GrowthTasks)
	var last string
	defer func() {
		if last != "" {
			os.RemoveAll(last)
		}
	}()
	for _, target := range b.cfg.GrowthTasks {
		if last != "" {
			os.RemoveAll(last)
		}
		dir, err := b.growthLevel(target)
		last = dir
		if err != nil {
			return err
		}
	}
	// Restart on the largest store.
	s, d, err := b.startReady(srvOursSQLite, startOptions{dataDir: last, clients: 16})
	if err != nil {
		return err
	}
	defer s.stop()
	time.Sleep(200 * time.Millisecond)
	stored, err := s.storedTasks()
	if err != nil {
		return err
	}
	rr := &restartRecord{Stored: stored, ReadyMS: float64(d.Microseconds()) / 1000, IdleMem: s.mem()}
	lres, _, _, err := b.runLoad(s, loadRun{mode: "list", clients: 1, duration: min(b.cfg.GrowthDuration, 5*time.Second), warmup: b.cfg.Warmup / 2})
	if err != nil {
		return err
	}
	rr.List, rr.Mem = lres, s.mem()
	b.res.Restart = rr
	b.progress("  restart with %d tasks: ready in %.1f ms, idle RSS %s; list p50 %.2f ms; RSS after %s",
		rr.Stored, rr.ReadyMS, mb(rr.IdleMem.RSS), lres.Latency.P50, mb(rr.Mem.RSS))
	return s.stop()
}

// growthLevel fills a fresh durable store with target tasks and measures
// it; it returns the store's data directory.
func (b *bench) growthLevel(target int64) (string, error) {
	s, _, err := b.startReady(srvOursSQLite, startOptions{clients: 16})
	if err != nil {
		return "", err
	}
	defer s.stop()
	rec := growthTaskRecord{Target: target}
	t0 := time.Now()
	res, _, _, err := b.runLoad(s, loadRun{mode: "send", clients: prefillClients, n: target})
	if err != nil {
		return s.dataDir, fmt.Errorf("filling to %d tasks: %w", target, err)
	}
	rec.PrefillSec = time.Since(t0).Seconds()
	rec.PrefillRPS = res.RPS
	time.Sleep(time.Second) // let background work (checkpoints) settle
	if rec.Stored, err = s.storedTasks(); err != nil {
		return s.dataDir, err
	}
	rec.MemBefore = s.mem()
	lres, _, _, err := b.runLoad(s, loadRun{mode: "list", clients: 1, duration: min(b.cfg.GrowthDuration, 5*time.Second), warmup: b.cfg.Warmup / 2})
	if err != nil {
		return s.dataDir, err
	}
	rec.List = lres
	sres, cpuOp, _, err := b.runLoad(s, loadRun{mode: "send", clients: 16, duration: b.cfg.GrowthDuration, warmup: b.cfg.Warmup})
	if err != nil {
		return s.dataDir, err
	}
	rec.Send, rec.ServerCPUPerOpUS = sres, cpuOp
	rec.Mem = s.mem()
	if rec.StoredAfter, err = s.storedTasks(); err != nil {
		return s.dataDir, err
	}
	rec.DBBytes = dbBytes(filepath.Join(s.dataDir, "a2a"))
	b.res.GrowthTasks = append(b.res.GrowthTasks, rec)
	b.progress("  %7d tasks (filled at %.0f/s): RSS %s; list p50 %.2f p99 %.2f ms; send %.0f/s p99 %.2f ms → %d tasks, RSS %s (peak %s); db %s",
		rec.Stored, rec.PrefillRPS, mb(rec.MemBefore.RSS), lres.Latency.P50, lres.Latency.P99, sres.RPS, sres.Latency.P99,
		rec.StoredAfter, mb(rec.Mem.RSS), mb(rec.Mem.HWM), mbBytes(rec.DBBytes))
	return s.dataDir, s.stop()
}

func mb(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

func mbBytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
