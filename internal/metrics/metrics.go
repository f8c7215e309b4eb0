// Package metrics is the plugin's one set of Prometheus metrics, shared by
// the inbound server, the task manager, the bridge to the host, push
// delivery and the outbound tools, and exported at /metrics in the
// Prometheus text format.
//
// Label values are bounded: methods are the A2A method names (unknown ones
// become "other"), outcomes a handful of words, and peers are named
// identities ("peer:alice", configured outbound peer names) or a class
// ("anonymous", "ip", "local") — never raw addresses or URLs, so a
// stranger cannot grow the series without bound.
package metrics

import (
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// Namespace prefixes every metric name.
const Namespace = "a2a"

// latencyBuckets cover 100 µs to 2 min: local round trips to long tasks.
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// Metrics holds every metric. The zero value is not usable; call New.
type Metrics struct {
	reg *prometheus.Registry

	requests       *prometheus.CounterVec
	requestSeconds *prometheus.HistogramVec
	tasks          *prometheus.GaugeVec
	transitions    *prometheus.CounterVec
	hostSeconds    *prometheus.HistogramVec
	hostErrors     *prometheus.CounterVec
	pushDelivered  prometheus.Counter
	pushSeconds    prometheus.Histogram
	pushRetries    prometheus.Counter
	pushGaveUp     prometheus.Counter
	rateLimited    prometheus.Counter
	filterHits     prometheus.Counter
	redactions     prometheus.Counter

	mu      sync.Mutex
	streams func() float64
	calls   map[callKey]*callStats

	// The series every exchange and task transition touches, looked up
	// once per label set: a vec's WithLabelValues hashes the labels and
	// takes the vec's lock on every call (a few per request).
	exchangeSeries sync.Map // exchangeKey → *exchangeSeries
	stateSeries    sync.Map // a2a.TaskState → *stateSeries
}

type exchangeKey struct{ method, outcome, peer, agent string }

type exchangeSeries struct {
	requests prometheus.Counter
	seconds  prometheus.Observer
}

type stateSeries struct {
	tasks       prometheus.Gauge
	transitions prometheus.Counter
}

// exchange returns the inbound series of one label set.
func (m *Metrics) exchange(k exchangeKey) *exchangeSeries {
	if s, ok := m.exchangeSeries.Load(k); ok {
		return s.(*exchangeSeries)
	}
	s := &exchangeSeries{
		requests: m.requests.WithLabelValues("inbound", k.method, k.outcome, k.peer, k.agent),
		seconds:  m.requestSeconds.WithLabelValues("inbound", k.method),
	}
	v, _ := m.exchangeSeries.LoadOrStore(k, s)
	return v.(*exchangeSeries)
}

// state returns the series of one task state.
func (m *Metrics) state(st a2a.TaskState) *stateSeries {
	if s, ok := m.stateSeries.Load(st); ok {
		return s.(*stateSeries)
	}
	s := &stateSeries{tasks: m.tasks.WithLabelValues(string(st)), transitions: m.transitions.WithLabelValues(string(st))}
	v, _ := m.stateSeries.LoadOrStore(st, s)
	return v.(*stateSeries)
}

// callKey names one row of a2a_list's figures: inbound rows belong to the
// host agent that served the calls (agent; "" with one agent), outbound
// ones to every agent.
type callKey struct{ agent, direction, peer string }

// callStats keeps what a2a_list reports per peer and direction: the same
// observations as the Prometheus series, kept readable.
type callStats struct {
	calls, errors uint64
	last          time.Time
	window        []float64 // recent latencies in seconds, a ring
	next          int
}

const statsWindow = 512

// New registers every metric on a fresh registry (with the Go runtime and
// process collectors).
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), calls: map[callKey]*callStats{}}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "requests_total",
		Help: "A2A requests by direction (inbound: served, outbound: made by the tools), method, outcome, peer and, inbound, the host agent that served it."},
		[]string{"direction", "method", "outcome", "peer", "agent"})
	m.requestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "request_duration_seconds",
		Help: "Latency of A2A requests by direction and method (streams: until the stream ended).", Buckets: latencyBuckets},
		[]string{"direction", "method"})
	m.tasks = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "tasks",
		Help: "Inbound tasks by state, counted since the plugin started (terminal states only grow)."}, []string{"state"})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "task_transitions_total",
		Help: "Inbound task state transitions by target state."}, []string{"state"})
	m.hostSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "host_call_duration_seconds",
		Help: "Round-trip time of calls into the host (HandleMessage, CancelTurn).", Buckets: latencyBuckets}, []string{"method"})
	m.hostErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "host_call_errors_total",
		Help: "Failed calls into the host."}, []string{"method"})
	m.pushDelivered = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "push_deliveries_total",
		Help: "Webhook notifications delivered."})
	m.pushSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "push_delivery_duration_seconds",
		Help: "Duration of successful webhook POSTs.", Buckets: latencyBuckets})
	m.pushRetries = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "push_retries_total",
		Help: "Webhook delivery attempts that failed and were scheduled again."})
	m.pushGaveUp = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "push_gave_up_total",
		Help: "Webhook notifications given up after repeated failures."})
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "rate_limited_total",
		Help: "Inbound requests refused by the rate limit or the stream cap."})
	m.filterHits = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "injection_filter_hits_total",
		Help: "Injection patterns defanged in inbound text."})
	m.redactions = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "redactions_total",
		Help: "Credential-shaped strings redacted from outgoing text."})
	for _, c := range []prometheus.Collector{m.requests, m.requestSeconds, m.tasks, m.transitions, m.hostSeconds, m.hostErrors,
		m.pushDelivered, m.pushSeconds, m.pushRetries, m.pushGaveUp, m.rateLimited, m.filterHits, m.redactions} {
		f(c)
	}
	f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "active_streams",
		Help: "Open SSE streams (SendStreamingMessage and SubscribeToTask)."}, func() float64 {
		m.mu.Lock()
		fn := m.streams
		m.mu.Unlock()
		if fn == nil {
			return 0
		}
		return fn()
	}))
	return m
}

// Handler serves the metrics in the Prometheus text format: every series,
// for the local operator.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ScopedHandler serves the metrics as a peer of the host agent agent may
// see them: the series naming a peer (a2a_requests_total) only when they
// are that agent's inbound requests or the tools' outbound calls, so
// that one agent's trusted peer does not learn who calls the other
// agents. Series without a peer are the process's and are kept.
func (m *Metrics) ScopedHandler(agent string) http.Handler {
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		fams, err := m.reg.Gather()
		for _, f := range fams {
			kept := f.Metric[:0]
			for _, s := range f.Metric {
				if visibleTo(s, agent) {
					kept = append(kept, s)
				}
			}
			f.Metric = kept
		}
		return fams, err
	})
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// visibleTo reports whether a series may be shown to a peer of agent:
// one without a peer label, an outbound one, or one of agent's.
func visibleTo(s *dto.Metric, agent string) bool {
	var hasPeer, outbound bool
	owner := ""
	for _, l := range s.GetLabel() {
		switch l.GetName() {
		case "peer":
			hasPeer = true
		case "direction":
			outbound = l.GetValue() == "outbound"
		case "agent":
			owner = l.GetValue()
		}
	}
	return !hasPeer || outbound || owner == agent
}

// Registry is the registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SetStreams tells the active_streams gauge how to count open streams.
func (m *Metrics) SetStreams(count func() int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.streams = func() float64 { return float64(count()) }
}

// methodLabel bounds method label values.
func methodLabel(method string) string {
	if method == "" {
		return "none"
	}
	if _, ok := a2a.LookupMethod(method); ok {
		return method
	}
	if _, ok := a2av03.LookupMethod(method); ok {
		return method
	}
	switch method {
	case "GetAgentCard", "discover", "card":
		return method
	}
	return "other"
}

// PeerLabel reduces an identity to a bounded label: named peers keep their
// name, everything else becomes its class.
func PeerLabel(identity string) string {
	switch {
	case identity == "":
		return "anonymous"
	case strings.HasPrefix(identity, "peer:"):
		return identity
	}
	if i := strings.IndexByte(identity, ':'); i > 0 {
		switch class := identity[:i]; class {
		case "oauth":
			// oauth:<issuer>:<subject>: one label per configured issuer,
			// not per subject (subjects are not bounded).
			if j := strings.IndexByte(identity[i+1:], ':'); j > 0 {
				return identity[:i+1+j]
			}
			return class
		case "ip", "local", "anon":
			if class == "anon" {
				return "anonymous"
			}
			return class
		}
	}
	return "other"
}

// Exchange records one inbound exchange from its audit record (the server
// calls it for every request).
func (m *Metrics) Exchange(rec security.AuditRecord) {
	method := methodLabel(rec.Method)
	peer := PeerLabel(rec.Identity)
	series := m.exchange(exchangeKey{method, rec.Outcome, peer, rec.Agent})
	series.requests.Inc()
	d := rec.DurationMS / 1000
	series.seconds.Observe(d)
	if rec.Outcome == "rate-limited" {
		m.rateLimited.Inc()
	}
	m.observeCall(callKey{rec.Agent, "inbound", peer}, d, rec.Outcome != "ok")
}

// Outbound records one call the tools made to a peer (configured name or
// "url" for ad-hoc URLs).
func (m *Metrics) Outbound(peer, method string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.requests.WithLabelValues("outbound", methodLabel(method), outcome, peer, "").Inc()
	m.requestSeconds.WithLabelValues("outbound", methodLabel(method)).Observe(d.Seconds())
	m.observeCall(callKey{"", "outbound", peer}, d.Seconds(), err != nil)
}

func (m *Metrics) observeCall(k callKey, seconds float64, failed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.calls[k]
	if s == nil {
		s = &callStats{}
		m.calls[k] = s
	}
	s.calls++
	if failed {
		s.errors++
	}
	s.last = time.Now()
	if len(s.window) < statsWindow {
		s.window = append(s.window, seconds)
	} else {
		s.window[s.next] = seconds
		s.next = (s.next + 1) % statsWindow
	}
}

// TaskTransition implements tasks.Observer.
func (m *Metrics) TaskTransition(from, to a2a.TaskState) {
	if from != "" && !from.Terminal() {
		m.state(from).tasks.Dec()
	}
	if to == "" {
		return // a provisional task dropped after a direct reply
	}
	s := m.state(to)
	s.tasks.Inc()
	s.transitions.Inc()
}

// HostCall implements bridge.Observer.
func (m *Metrics) HostCall(method string, d time.Duration, err error) {
	m.hostSeconds.WithLabelValues(method).Observe(d.Seconds())
	if err != nil {
		m.hostErrors.WithLabelValues(method).Inc()
	}
}

// FilterHits implements bridge.Observer.
func (m *Metrics) FilterHits(n int) { m.filterHits.Add(float64(n)) }

// Redactions implements bridge.Observer (and counts the tools' redactions).
func (m *Metrics) Redactions(n int) { m.redactions.Add(float64(n)) }

// Delivered implements push.Observer.
func (m *Metrics) Delivered(d time.Duration) {
	m.pushDelivered.Inc()
	m.pushSeconds.Observe(d.Seconds())
}

// Retried implements push.Observer.
func (m *Metrics) Retried() { m.pushRetries.Inc() }

// GaveUp implements push.Observer.
func (m *Metrics) GaveUp() { m.pushGaveUp.Inc() }

// PeerStats is what a2a_list shows for one peer and direction.
type PeerStats struct {
	// Agent is the host agent that served an inbound peer's calls ("" with
	// one agent, and for outbound calls).
	Agent     string
	Direction string
	Peer      string
	Calls     uint64
	Errors    uint64
	P50, P99  time.Duration
	LastCall  time.Time
}

// Snapshot returns the per-peer call figures of every agent, outbound
// first, by peer.
func (m *Metrics) Snapshot() []PeerStats { return m.snapshot(func(callKey) bool { return true }) }

// SnapshotFor returns the figures an agent's views show (its inspector,
// its a2a_list): the outbound calls and the inbound calls agent served.
func (m *Metrics) SnapshotFor(agent string) []PeerStats {
	return m.snapshot(func(k callKey) bool { return k.direction == "outbound" || k.agent == agent })
}

func (m *Metrics) snapshot(keep func(callKey) bool) []PeerStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]PeerStats, 0, len(m.calls))
	for k, s := range m.calls {
		if !keep(k) {
			continue
		}
		w := append([]float64(nil), s.window...)
		sort.Float64s(w)
		out = append(out, PeerStats{Agent: k.agent, Direction: k.direction, Peer: k.peer, Calls: s.calls, Errors: s.errors,
			P50: quantile(w, 0.5), P99: quantile(w, 0.99), LastCall: s.last})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Direction != out[j].Direction {
			return out[i].Direction == "outbound"
		}
		if out[i].Peer != out[j].Peer {
			return out[i].Peer < out[j].Peer
		}
		return out[i].Agent < out[j].Agent
	})
	return out
}

// Peer returns the outbound figures for one peer (zero when it has none).
func (m *Metrics) Peer(name string) PeerStats {
	for _, s := range m.Snapshot() {
		if s.Direction == "outbound" && s.Peer == name {
			return s
		}
	}
	return PeerStats{Direction: "outbound", Peer: name}
}

func quantile(sorted []float64, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// Nearest rank: the smallest sample at or above the q-th fraction.
	i := min(max(int(math.Ceil(q*float64(len(sorted))))-1, 0), len(sorted)-1)
	return time.Duration(sorted[i] * float64(time.Second))
}
