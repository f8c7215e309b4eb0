// Package loadresult is the JSON form of one run of the load generator
// cmd/a2a-load (its -json output), which cmd/a2a-bench reads: one type for
// both sides, so that they cannot drift apart.
package loadresult

// Result is the measurement of one a2a-load run; its JSON form is what
// a2a-load -json prints and a2a-bench reads. Latencies are in
// milliseconds, exact (from every sample).
type Result struct {
	URL         string  `json:"url"`
	Mode        string  `json:"mode"`
	Concurrency int     `json:"concurrency"`
	WarmupSec   float64 `json:"warmup_s"`
	// WindowSec is the measured time: successes and errors count when they
	// complete inside it.
	WindowSec float64 `json:"window_s"`

	OK          int64            `json:"ok"`
	ErrorsTotal int64            `json:"errors_total"`
	Errors      map[string]int64 `json:"errors,omitempty"`
	// ErrorSamples are the first failures in detail.
	ErrorSamples []string `json:"error_samples,omitempty"`
	// RPS is successful operations (tasks, streams, lists) per second.
	RPS     float64     `json:"rps"`
	Latency Percentiles `json:"latency_ms"`

	// send-async: the time of the first answer, GetTask calls per task.
	Ack          *Percentiles `json:"ack_ms,omitempty"`
	PollsPerTask float64      `json:"polls_per_task,omitempty"`
	// stream: events, and the time to the first one.
	Events          int64        `json:"events,omitempty"`
	EventsPerSec    float64      `json:"events_per_s,omitempty"`
	EventsPerStream float64      `json:"events_per_stream,omitempty"`
	FirstEvent      *Percentiles `json:"first_event_ms,omitempty"`

	// AllOps counts every completed operation, warm-up included, and
	// HTTPRequests every request sent (GetTask polls included): the
	// denominators for CPU per operation of the load tool and the server.
	AllOps       int64   `json:"all_ops"`
	HTTPRequests int64   `json:"http_requests"`
	LoadCPUSec   float64 `json:"load_cpu_s"`
	LoadCPUPerOp float64 `json:"load_cpu_us_per_op"`
}

// Percentiles of a latency distribution, in milliseconds (nearest rank).
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	N    int     `json:"n"`
}
