package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/loadresult"
)

// Result is the measurement of one run: loadresult.Result, whose JSON form
// (-json) is what a2a-bench reads.
type Result = loadresult.Result

// Percentiles of a latency distribution, in milliseconds (nearest rank).
type Percentiles = loadresult.Percentiles

// percentiles sorts ns in place and reads the quantiles off it.
func percentiles(ns []int64) Percentiles {
	if len(ns) == 0 {
		return Percentiles{}
	}
	slices.Sort(ns)
	rank := func(q float64) float64 {
		i := int(q*float64(len(ns))+0.9999999) - 1 // ceil(q·n) - 1
		i = max(0, min(i, len(ns)-1))
		return ms(ns[i])
	}
	var sum float64
	for _, v := range ns {
		sum += float64(v)
	}
	return Percentiles{
		P50:  rank(0.50),
		P90:  rank(0.90),
		P99:  rank(0.99),
		Max:  ms(ns[len(ns)-1]),
		Mean: sum / float64(len(ns)) / 1e6,
		N:    len(ns),
	}
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func (r *runner) collect(workers []*worker, window, cpu time.Duration) *Result {
	res := &Result{
		URL:         r.cfg.URL,
		Mode:        r.cfg.Mode,
		Concurrency: r.cfg.Concurrency,
		WarmupSec:   r.cfg.Warmup.Seconds(),
		WindowSec:   window.Seconds(),
		Errors:      map[string]int64{},
		LoadCPUSec:  cpu.Seconds(),
	}
	var lat, ack, first []int64
	var polls int64
	for _, w := range workers {
		res.OK += w.ok
		res.AllOps += w.allOps
		res.HTTPRequests += w.httpReq
		res.Events += w.events
		polls += w.polls
		lat = append(lat, w.lat...)
		ack = append(ack, w.ack...)
		first = append(first, w.first...)
		for k, v := range w.errs {
			res.Errors[k] += v
			res.ErrorsTotal += v
		}
		for _, s := range w.samples {
			kind, _, _ := strings.Cut(s, ":")
			if len(res.ErrorSamples) < maxErrorSamples && !slices.ContainsFunc(res.ErrorSamples, func(t string) bool {
				return strings.HasPrefix(t, kind+":")
			}) {
				res.ErrorSamples = append(res.ErrorSamples, s)
			}
		}
	}
	if window > 0 {
		res.RPS = float64(res.OK) / window.Seconds()
	}
	res.Latency = percentiles(lat)
	if res.AllOps > 0 {
		res.LoadCPUPerOp = cpu.Seconds() * 1e6 / float64(res.AllOps)
	}
	switch r.cfg.Mode {
	case "send-async":
		p := percentiles(ack)
		res.Ack = &p
		if res.OK > 0 {
			res.PollsPerTask = float64(polls) / float64(res.OK)
		}
	case "stream":
		p := percentiles(first)
		res.FirstEvent = &p
		if window > 0 {
			res.EventsPerSec = float64(res.Events) / window.Seconds()
		}
		if res.OK > 0 {
			res.EventsPerStream = float64(res.Events) / float64(res.OK)
		}
	}
	return res
}

// writeText prints the result for a person.
func writeText(w io.Writer, res *Result) {
	fmt.Fprintf(w, "a2a-load %s %s  clients %d  window %.2fs (warm-up %gs)\n",
		res.Mode, res.URL, res.Concurrency, res.WindowSec, res.WarmupSec)
	fmt.Fprintf(w, "  ok %d (%.1f/s)  errors %d\n", res.OK, res.RPS, res.ErrorsTotal)
	pl := func(name string, p Percentiles) {
		fmt.Fprintf(w, "  %-12s p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  mean %.3f ms\n", name, p.P50, p.P90, p.P99, p.Max, p.Mean)
	}
	switch res.Mode {
	case "send-async":
		pl("to terminal", res.Latency)
		if res.Ack != nil {
			pl("ack", *res.Ack)
		}
		fmt.Fprintf(w, "  GetTask polls per task %.2f\n", res.PollsPerTask)
	case "stream":
		pl("stream", res.Latency)
		if res.FirstEvent != nil {
			pl("first event", *res.FirstEvent)
		}
		fmt.Fprintf(w, "  events %d (%.1f/s, %.2f per stream)\n", res.Events, res.EventsPerSec, res.EventsPerStream)
	default:
		pl("latency", res.Latency)
	}
	if res.ErrorsTotal > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(res.Errors)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, res.Errors[k]))
		}
		fmt.Fprintf(w, "  errors by kind: %s\n", strings.Join(parts, ", "))
		for _, s := range res.ErrorSamples {
			fmt.Fprintf(w, "    e.g. %s\n", s)
		}
	}
	fmt.Fprintf(w, "  load tool CPU %.2fs (%.1f µs per operation, warm-up included)\n", res.LoadCPUSec, res.LoadCPUPerOp)
}
