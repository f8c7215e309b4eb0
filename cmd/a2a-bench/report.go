package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// statOf is the median (the mean of the middle two for an even count) and
// range of vs.
func statOf(vs []float64) stat {
	if len(vs) == 0 {
		return stat{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{Median: m, Min: s[0], Max: s[len(s)-1]}
}

func median(vs []float64) float64 { return statOf(vs).Median }

// summarize fills the summary, ratios, targets and start-up summary from
// the raw records.
func summarize(res *Results) {
	res.Summary, res.Ratios, res.Targets, res.StartupSummary = nil, nil, nil, nil
	byKey := map[[2]string][]runRecord{} // mode, server
	for _, r := range res.Runs {
		k := [2]string{r.Mode, r.Server}
		byKey[k] = append(byKey[k], r)
	}
	for _, mode := range res.Config.Modes {
		for _, srv := range res.Config.Only {
			runs := byKey[[2]string{mode, srv}]
			if len(runs) == 0 {
				continue
			}
			row := summaryRow{Mode: mode, Server: srv, Rounds: len(runs)}
			var rps, p50, p90, p99, scpu, lcpu, pcpu, fe, eps, ack, polls []float64
			for _, r := range runs {
				rps = append(rps, r.Load.RPS)
				p50 = append(p50, r.Load.Latency.P50)
				p90 = append(p90, r.Load.Latency.P90)
				p99 = append(p99, r.Load.Latency.P99)
				scpu = append(scpu, r.ServerCPUPerOpUS)
				lcpu = append(lcpu, r.Load.LoadCPUPerOp)
				pcpu = append(pcpu, r.PluginCPUPerOpUS)
				if r.Load.FirstEvent != nil {
					fe = append(fe, r.Load.FirstEvent.P50)
					eps = append(eps, r.Load.EventsPerSec)
				}
				if r.Load.Ack != nil {
					ack = append(ack, r.Load.Ack.P50)
					polls = append(polls, r.Load.PollsPerTask)
				}
				row.OK += r.Load.OK
				row.Errors += r.Load.ErrorsTotal
				row.MaxRSSKB = max(row.MaxRSSKB, r.Mem.RSS)
			}
			row.RPS, row.P50, row.P90, row.P99 = statOf(rps), statOf(p50), statOf(p90), statOf(p99)
			row.ServerCPUPerOp, row.LoadCPUPerOp = statOf(scpu), statOf(lcpu)
			if runsPlugin(srv) {
				row.PluginCPUPerOp = statOf(pcpu)
			}
			row.PluginParts = medianParts(runs)
			row.FirstEventP50, row.EventsPerSec = median(fe), median(eps)
			row.AckP50, row.PollsPerTask = median(ack), median(polls)
			res.Summary = append(res.Summary, row)
		}
		// Ratios of ours against every other server, round by round, and
		// of the Python host against the Go reference host.
		for _, ours := range res.Config.Only {
			if !isOurs(ours) && ours != srvPyHost {
				continue
			}
			for _, other := range res.Config.Only {
				switch {
				case ours == srvPyHost:
					if other != srvOursSQLite {
						continue // the Python host is compared with the Go host on the same store only
					}
				case other == ours || other == srvPyHost || (isOurs(other) && other != srvOursMem) || (ours == srvOursMem && isOurs(other)):
					continue // compare sqlite with mem, not mem with sqlite
				}
				a, o := byRound(byKey[[2]string{mode, ours}]), byRound(byKey[[2]string{mode, other}])
				var rr, pr, cr []float64
				for round, x := range a {
					y, ok := o[round]
					if !ok || y.Load.RPS == 0 || y.Load.Latency.P99 == 0 || y.ServerCPUPerOpUS == 0 {
						continue
					}
					rr = append(rr, x.Load.RPS/y.Load.RPS)
					pr = append(pr, x.Load.Latency.P99/y.Load.Latency.P99)
					cr = append(cr, x.ServerCPUPerOpUS/y.ServerCPUPerOpUS)
				}
				if len(rr) == 0 {
					continue
				}
				res.Ratios = append(res.Ratios, ratioRow{Mode: mode, Ours: ours, Other: other, RPS: statOf(rr), P99: statOf(pr), CPUPerOp: statOf(cr)})
			}
		}
	}
	res.Targets = targets(res)

	byServer := map[string][]startupRecord{}
	for _, s := range res.Startup {
		if s.ErrorMsg == "" {
			byServer[s.Server] = append(byServer[s.Server], s)
		}
	}
	for _, srv := range allServers {
		recs := byServer[srv]
		if len(recs) == 0 {
			continue
		}
		var ready, rss []float64
		for _, r := range recs {
			ready = append(ready, r.ReadyMS)
			rss = append(rss, float64(r.IdleMem.RSS))
		}
		res.StartupSummary = append(res.StartupSummary, startupSummary{Server: srv, N: len(recs), ReadyMS: statOf(ready), IdleRSSKB: int64(median(rss))})
	}
}

func byRound(runs []runRecord) map[int]runRecord {
	m := make(map[int]runRecord, len(runs))
	for _, r := range runs {
		m[r.Round] = r
	}
	return m
}

func findRatio(res *Results, mode, ours, other string) (ratioRow, bool) {
	for _, r := range res.Ratios {
		if r.Mode == mode && r.Ours == ours && r.Other == other {
			return r, true
		}
	}
	return ratioRow{}, false
}

// targets checks the project's targets (issue 7) against what was measured:
// at the comparison's concurrency, ours with the durable store ≥ 5× the
// req/s of each official SDK server with ≤ 1/5 of its p99, ≥ 1/2 of the
// floor's req/s; plugin RSS < 50 MB after 100k tasks in the durable store.
func targets(res *Results) []targetRow {
	var out []targetRow
	for _, sdk := range []string{srvGoSDK, srvJSSDK} {
		if r, ok := findRatio(res, "send", srvOursSQLite, sdk); ok {
			out = append(out,
				targetRow{Target: fmt.Sprintf("ours-sqlite req/s ≥ 5× %s (send, %d clients)", sdk, res.Config.Clients),
					Measured: fmt.Sprintf("%.2f× [%.2f–%.2f]", r.RPS.Median, r.RPS.Min, r.RPS.Max), Value: r.RPS.Median, Pass: r.RPS.Median >= 5},
				targetRow{Target: fmt.Sprintf("ours-sqlite p99 ≤ 1/5 of %s (send, %d clients)", sdk, res.Config.Clients),
					Measured: fmt.Sprintf("%.2f× [%.2f–%.2f]", r.P99.Median, r.P99.Min, r.P99.Max), Value: r.P99.Median, Pass: r.P99.Median <= 0.2})
		}
	}
	if r, ok := findRatio(res, "send", srvOursSQLite, srvFloor); ok {
		out = append(out, targetRow{Target: fmt.Sprintf("ours-sqlite req/s ≥ 1/2 of the floor (send, %d clients)", res.Config.Clients),
			Measured: fmt.Sprintf("%.2f× [%.2f–%.2f]", r.RPS.Median, r.RPS.Min, r.RPS.Max), Value: r.RPS.Median, Pass: r.RPS.Median >= 0.5})
	}
	for _, g := range res.GrowthTasks {
		if g.Target == 100_000 {
			// 50 MB read strictly (decimal, 47.7 MiB): after the fill, after
			// the send run that follows it, and at the peak.
			worst := max(g.MemBefore.RSS, g.Mem.RSS, g.Mem.HWM)
			out = append(out, targetRow{Target: "plugin RSS < 50 MB (47.7 MiB) after 100k tasks in the durable store, peak included",
				Measured: fmt.Sprintf("%.1f MiB after filling %d tasks; %.1f MiB (peak %.1f) after a further send run to %d",
					float64(g.MemBefore.RSS)/1024, g.Stored, float64(g.Mem.RSS)/1024, float64(g.Mem.HWM)/1024, g.StoredAfter),
				Value: float64(worst) / 1024, Pass: worst*1024 < 50_000_000})
		}
	}
	return out
}

var modeTitle = map[string]string{
	"send":       "blocking SendMessage, a new task each; latency = the call",
	"send-async": "SendMessage returnImmediately + GetTask polling (2 ms) until terminal; latency = to terminal",
	"stream":     "SendStreamingMessage read to its end; latency = the whole stream",
}

// writeReport prints the human-readable report.
func writeReport(w io.Writer, res *Results) {
	c := res.Config
	fmt.Fprintf(w, "A2A side-by-side benchmark — %s (%s)\n", res.Started.Format("2006-01-02 15:04 UTC"), res.Finished.Sub(res.Started).Round(time.Second))
	e := res.Env
	fmt.Fprintf(w, "machine: %d CPUs (%s), linux %s, %s, node %s; load average %s at start, %s at end\n",
		e.CPUs, e.CPUModel, e.Kernel, e.GoVersion, orDefault(e.NodeVersion, "-"), e.LoadAvgStart, e.LoadAvgEnd)
	if e.Plugin != "" {
		fmt.Fprintf(w, "measured: %s\n", e.Plugin)
	}
	fmt.Fprintf(w, "load: a2a-load on the same %d CPUs as the server — they compete; \"load µs/op\" is its CPU per operation, \"server µs/op\" the server's\n", e.CPUs)
	fmt.Fprintln(w, "servers:")
	for _, s := range allServers {
		if d, ok := res.Servers[s]; ok {
			fmt.Fprintf(w, "  %-12s %s\n", s, d)
		}
	}

	if len(res.Summary) > 0 {
		fmt.Fprintf(w, "\n%d round(s) (server order rotated each round), each mode %s warm-up + %s measured at %d clients; medians across rounds [min–max]\n",
			c.Rounds, c.Warmup, c.Duration, c.Clients)
		fmt.Fprintln(w, "server µs/op: CPU of all the server's processes per operation (ours: agenthost + plugin; \"(plugin)\": a2a-plugin alone);")
		fmt.Fprintln(w, "RSS: after the run, the plugin process for ours (agenthost excluded), the server process for the others")
	}
	for _, mode := range c.Modes {
		rows := filter(res.Summary, func(r summaryRow) bool { return r.Mode == mode })
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nmode %s (%s)\n", mode, modeTitle[mode])
		extra := ""
		switch mode {
		case "stream":
			extra = "  1st ev p50  events/s"
		case "send-async":
			extra = "   ack p50  polls/task"
		}
		fmt.Fprintf(w, "  %-12s %22s %8s %8s %8s %12s %8s %10s %8s %7s%s\n", "server", "req/s [min–max]", "p50 ms", "p90 ms", "p99 ms", "server µs/op", "(plugin)", "load µs/op", "RSS MiB", "errors", extra)
		for _, r := range rows {
			ex := ""
			switch mode {
			case "stream":
				ex = fmt.Sprintf("  %10.2f  %8.0f", r.FirstEventP50, r.EventsPerSec)
			case "send-async":
				ex = fmt.Sprintf("  %8.2f  %10.2f", r.AckP50, r.PollsPerTask)
			}
			plug := "-"
			if runsPlugin(r.Server) {
				plug = fmt.Sprintf("%.0f", r.PluginCPUPerOp.Median)
			}
			fmt.Fprintf(w, "  %-12s %7.0f [%6.0f–%6.0f] %8.2f %8.2f %8.2f %12.0f %8s %10.1f %8.1f %7d%s\n",
				r.Server, r.RPS.Median, r.RPS.Min, r.RPS.Max, r.P50.Median, r.P90.Median, r.P99.Median,
				r.ServerCPUPerOp.Median, plug, r.LoadCPUPerOp.Median, float64(r.MaxRSSKB)/1024, r.Errors, ex)
		}
		writeParts(w, rows)
		ratios := filter(res.Ratios, func(r ratioRow) bool { return r.Mode == mode })
		if len(ratios) > 0 {
			fmt.Fprintln(w, "  ratios, median of per-round ratios [min–max] (req/s: higher is better for ours; p99 and CPU/op: lower is better)")
			for _, r := range ratios {
				fmt.Fprintf(w, "    %-26s %6.2f× req/s [%.2f–%.2f]   %6.2f× p99 [%.2f–%.2f]   %6.2f× server CPU/op\n",
					r.Ours+" / "+r.Other+":", r.RPS.Median, r.RPS.Min, r.RPS.Max, r.P99.Median, r.P99.Min, r.P99.Max, r.CPUPerOp.Median)
			}
		}
		for _, r := range rows {
			if r.Errors > 0 {
				fmt.Fprintf(w, "  ! %s had %d failed operations: %s\n", r.Server, r.Errors, errorKinds(res, mode, r.Server))
			}
		}
	}

	if len(res.Targets) > 0 {
		fmt.Fprintln(w, "\ntargets (issue 7)")
		for _, t := range res.Targets {
			verdict := "MISS"
			if t.Pass {
				verdict = "PASS"
			}
			fmt.Fprintf(w, "  %s  %-62s measured %s\n", verdict, t.Target, t.Measured)
		}
	}

	if len(res.StartupSummary) > 0 {
		fmt.Fprintf(w, "\nstart-up to ready (process start → Agent Card served), median of %d [min–max]; idle RSS at ready\n", c.StartupN)
		for _, s := range res.StartupSummary {
			fmt.Fprintf(w, "  %-12s %8.1f ms [%.1f–%.1f]   idle RSS %.1f MiB\n", s.Server, s.ReadyMS.Median, s.ReadyMS.Min, s.ReadyMS.Max, float64(s.IdleRSSKB)/1024)
		}
		if failed := filter(res.Startup, func(s startupRecord) bool { return s.ErrorMsg != "" }); len(failed) > 0 {
			fmt.Fprintf(w, "  ! %d start-ups failed, e.g. %s\n", len(failed), failed[0].ErrorMsg)
		}
	}

	if len(res.GrowthClients) > 0 {
		fmt.Fprintf(w, "\ngrowth with clients (send, %s measured each, fresh server per level; RSS of the plugin for ours)\n", c.GrowthDuration)
		fmt.Fprintf(w, "  %-12s %7s %8s %8s %8s %12s %9s %9s %9s %7s\n", "server", "clients", "req/s", "p50 ms", "p99 ms", "server µs/op", "idle MiB", "RSS MiB", "peak MiB", "errors")
		for _, g := range res.GrowthClients {
			fmt.Fprintf(w, "  %-12s %7d %8.0f %8.2f %8.2f %12.0f %9.1f %9.1f %9.1f %7d\n", g.Server, g.Clients, g.Load.RPS, g.Load.Latency.P50, g.Load.Latency.P99,
				g.ServerCPUPerOpUS, float64(g.IdleMem.RSS)/1024, float64(g.Mem.RSS)/1024, float64(g.Mem.HWM)/1024, g.Load.ErrorsTotal)
		}
	}
	if len(res.GrowthTasks) > 0 {
		fmt.Fprintf(w, "\ngrowth with stored tasks (ours-sqlite, a fresh store per level filled by a2a-load at %d clients; list = ListTasks first page of 50\n", prefillClients)
		fmt.Fprintf(w, "at 1 client; then send at 16 clients for %s, which adds tasks; RSS of the plugin)\n", c.GrowthDuration)
		fmt.Fprintf(w, "  %9s %8s %10s %9s %9s %8s %8s %9s %10s %9s %8s %8s\n", "stored", "fill/s", "RSS MiB", "list p50", "list p99", "send/s", "p99 ms", "then", "RSS MiB", "peak MiB", "µs/op", "db MiB")
		for _, g := range res.GrowthTasks {
			fmt.Fprintf(w, "  %9d %8.0f %10.1f %9.2f %9.2f %8.0f %8.2f %9d %10.1f %9.1f %8.0f %8.1f\n", g.Stored, g.PrefillRPS, float64(g.MemBefore.RSS)/1024,
				g.List.Latency.P50, g.List.Latency.P99, g.Send.RPS, g.Send.Latency.P99, g.StoredAfter, float64(g.Mem.RSS)/1024, float64(g.Mem.HWM)/1024,
				g.ServerCPUPerOpUS, float64(g.DBBytes)/(1<<20))
		}
		if r := res.Restart; r != nil {
			fmt.Fprintf(w, "  restart on %d stored tasks: ready in %.1f ms, idle RSS %.1f MiB; list p50 %.2f ms p99 %.2f ms; RSS after %.1f MiB\n",
				r.Stored, r.ReadyMS, float64(r.IdleMem.RSS)/1024, r.List.Latency.P50, r.List.Latency.P99, float64(r.Mem.RSS)/1024)
		}
	}
	writeCosts(w, res)
}

func errorKinds(res *Results, mode, server string) string {
	kinds := map[string]int64{}
	var sample string
	for _, r := range res.Runs {
		if r.Mode != mode || r.Server != server {
			continue
		}
		for k, v := range r.Load.Errors {
			kinds[k] += v
		}
		if sample == "" && len(r.Load.ErrorSamples) > 0 {
			sample = r.Load.ErrorSamples[0]
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ") + "; e.g. " + sample
}

func filter[T any](s []T, keep func(T) bool) []T {
	var out []T
	for _, v := range s {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// medianParts is the median of each part over the runs that have a
// breakdown (nil when none has).
func medianParts(runs []runRecord) map[string]float64 {
	by := map[string][]float64{}
	n := 0
	for _, r := range runs {
		if r.PluginParts == nil {
			continue
		}
		n++
		for _, k := range profilePartNames() {
			by[k] = append(by[k], r.PluginParts[k])
		}
	}
	if n == 0 {
		return nil
	}
	out := make(map[string]float64, len(by))
	for k, v := range by {
		out[k] = median(v)
	}
	return out
}

// writeParts writes where the plugin's CPU goes, for the rows that were
// profiled (-profile).
func writeParts(w io.Writer, rows []summaryRow) {
	var prof []summaryRow
	for _, r := range rows {
		if r.PluginParts != nil {
			prof = append(prof, r)
		}
	}
	if len(prof) == 0 {
		return
	}
	fmt.Fprintln(w, "  the plugin's CPU by part, µs per operation (profile of the measured run, medians of rounds; each sample in the part of its innermost frame that has one):")
	fmt.Fprintf(w, "    %-12s", "server")
	for _, k := range profilePartNames() {
		fmt.Fprintf(w, " %*s", max(8, len(k)), k)
	}
	fmt.Fprintf(w, " %8s\n", "total")
	for _, r := range prof {
		fmt.Fprintf(w, "    %-12s", r.Server)
		var total float64
		for _, k := range profilePartNames() {
			total += r.PluginParts[k]
			fmt.Fprintf(w, " %*.1f", max(8, len(k)), r.PluginParts[k])
		}
		fmt.Fprintf(w, " %8.1f\n", total)
	}
}
