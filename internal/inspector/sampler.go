package inspector

import (
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/metrics"
)

// Sampling: a sample is taken when a page asks for the metrics and the
// last one is older than sampleEvery; sampleKeep samples are kept. So the
// charts cost nothing while no page is open, and an open page (it asks
// every two seconds) sees the last few minutes.
const (
	sampleEvery = time.Second
	sampleKeep  = 150
)

// sample is one reading of the key metrics. Counters are totals since the
// plugin started; the page charts their rate.
type sample struct {
	T          time.Time `json:"t"`
	InRequests float64   `json:"inRequests"`
	InErrors   float64   `json:"inErrors"`
	OutCalls   float64   `json:"outCalls"`
	OutErrors  float64   `json:"outErrors"`
	// ActiveTasks are tasks submitted, working or waiting for input.
	ActiveTasks float64 `json:"activeTasks"`
	Streams     float64 `json:"streams"`
	Push        float64 `json:"pushDelivered"`
	RateLimited float64 `json:"rateLimited"`
	// Finished counts tasks that reached each terminal state.
	Finished map[string]float64 `json:"finished"`
}

// peerFigures is one row of the per-peer call table.
type peerFigures struct {
	Direction string    `json:"direction"`
	Peer      string    `json:"peer"`
	Calls     uint64    `json:"calls"`
	Errors    uint64    `json:"errors"`
	P50MS     float64   `json:"p50ms"`
	P99MS     float64   `json:"p99ms"`
	LastCall  time.Time `json:"lastCall"`
}

type sampler struct {
	m *metrics.Metrics
	// agent is the host agent whose inbound callers peers shows.
	agent string
	now   func() time.Time

	mu   sync.Mutex
	ring []sample
}

func newSampler(m *metrics.Metrics, agent string, now func() time.Time) *sampler {
	return &sampler{m: m, agent: agent, now: now}
}

// samples takes a sample when the last one is old enough and returns a
// copy of the ring, oldest first.
func (s *sampler) samples() []sample {
	if s.m == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if n := len(s.ring); n == 0 || now.Sub(s.ring[n-1].T) >= sampleEvery {
		s.ring = append(s.ring, s.read(now))
		if len(s.ring) > sampleKeep {
			s.ring = append(s.ring[:0], s.ring[len(s.ring)-sampleKeep:]...)
		}
	}
	return append([]sample(nil), s.ring...)
}

// read gathers one sample from the Prometheus registry.
func (s *sampler) read(now time.Time) sample {
	out := sample{T: now.UTC(), Finished: map[string]float64{}}
	fams, _ := s.m.Registry().Gather() // a partial gather still has our families
	for _, f := range fams {
		switch f.GetName() {
		case metrics.Namespace + "_requests_total":
			for _, m := range f.GetMetric() {
				v := m.GetCounter().GetValue()
				failed := label(m, "outcome") != "ok"
				switch label(m, "direction") {
				case "inbound":
					out.InRequests += v
					if failed {
						out.InErrors += v
					}
				case "outbound":
					out.OutCalls += v
					if failed {
						out.OutErrors += v
					}
				}
			}
		case metrics.Namespace + "_tasks":
			for _, m := range f.GetMetric() {
				st := a2a.TaskState(label(m, "state"))
				v := m.GetGauge().GetValue()
				if st.Terminal() {
					out.Finished[string(st)] = v
				} else {
					out.ActiveTasks += v
				}
			}
		case metrics.Namespace + "_active_streams":
			out.Streams = first(f).GetGauge().GetValue()
		case metrics.Namespace + "_push_deliveries_total":
			out.Push = first(f).GetCounter().GetValue()
		case metrics.Namespace + "_rate_limited_total":
			out.RateLimited = first(f).GetCounter().GetValue()
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func first(f *dto.MetricFamily) *dto.Metric {
	if ms := f.GetMetric(); len(ms) > 0 {
		return ms[0]
	}
	return nil
}

// peers returns the per-peer figures (what a2a_list reports).
func (s *sampler) peers() []peerFigures {
	if s.m == nil {
		return nil
	}
	snap := s.m.SnapshotFor(s.agent)
	out := make([]peerFigures, 0, len(snap))
	for _, p := range snap {
		out = append(out, peerFigures{Direction: p.Direction, Peer: p.Peer, Calls: p.Calls, Errors: p.Errors,
			P50MS: float64(p.P50) / float64(time.Millisecond), P99MS: float64(p.P99) / float64(time.Millisecond), LastCall: p.LastCall.UTC()})
	}
	return out
}

// serveMetrics answers the charts' JSON: the recent samples and the
// per-peer figures.
func (in *Inspector) serveMetrics(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"samples": in.samples.samples(), "peers": in.samples.peers(),
		"enabled": in.opts.Metrics != nil})
}
