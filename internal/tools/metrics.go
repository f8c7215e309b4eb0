package tools

import (
	"sort"
	"sync"
	"time"
)

// latencyWindow is how many recent latencies per peer the percentiles are
// computed from.
const latencyWindow = 512

// Metrics counts outbound calls per peer: calls, errors and latency
// percentiles over a window of recent calls. It is safe for concurrent use.
// The shared metrics issue can back it with Prometheus by observing through
// an Observer.
type Metrics struct {
	mu       sync.Mutex
	peers    map[string]*peerStats
	observer Observer
}

// Observer receives every observation, e.g. to feed Prometheus.
type Observer func(peer string, latency time.Duration, failed bool)

// peerStats is one peer's counters and a ring of recent latencies.
type peerStats struct {
	calls, errors int64
	lat           []time.Duration
	next          int
	last          time.Time
}

// PeerMetrics is a snapshot of one peer's metrics.
type PeerMetrics struct {
	Peer     string
	Calls    int64
	Errors   int64
	P50, P99 time.Duration
	LastCall time.Time
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics {
	return &Metrics{peers: map[string]*peerStats{}}
}

// SetObserver installs a function that is called with every observation.
func (m *Metrics) SetObserver(o Observer) {
	m.mu.Lock()
	m.observer = o
	m.mu.Unlock()
}

// Observe records one call to peer that took d and failed or not.
func (m *Metrics) Observe(peer string, d time.Duration, failed bool) {
	m.mu.Lock()
	s := m.peers[peer]
	if s == nil {
		s = &peerStats{}
		m.peers[peer] = s
	}
	s.calls++
	if failed {
		s.errors++
	}
	if len(s.lat) < latencyWindow {
		s.lat = append(s.lat, d)
	} else {
		s.lat[s.next] = d
		s.next = (s.next + 1) % latencyWindow
	}
	s.last = time.Now()
	o := m.observer
	m.mu.Unlock()
	if o != nil {
		o(peer, d, failed)
	}
}

// Snapshot returns the metrics of every peer, sorted by name.
func (m *Metrics) Snapshot() []PeerMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]PeerMetrics, 0, len(m.peers))
	for name, s := range m.peers {
		sorted := append([]time.Duration(nil), s.lat...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		out = append(out, PeerMetrics{Peer: name, Calls: s.calls, Errors: s.errors,
			P50: percentile(sorted, 0.50), P99: percentile(sorted, 0.99), LastCall: s.last})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out
}

// Peer returns one peer's metrics (zero when it has none).
func (m *Metrics) Peer(name string) PeerMetrics {
	for _, pm := range m.Snapshot() {
		if pm.Peer == name {
			return pm
		}
	}
	return PeerMetrics{Peer: name}
}

// percentile returns the nearest-rank percentile q of sorted latencies.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	idx := int(q*float64(len(sorted))+0.999999) - 1
	if idx < 0 {
		idx = 0
	}
	if idx >= len(sorted) {
		idx = len(sorted) - 1
	}
	return sorted[idx]
}
