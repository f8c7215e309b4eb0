package main

import (
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/loadresult"
)

// Results is everything one suite run measured; results.json is this.
type Results struct {
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Env      envInfo           `json:"env"`
	Config   config            `json:"config"`
	Servers  map[string]string `json:"servers"`

	// Runs are the comparison's runs, every round.
	Runs    []runRecord  `json:"runs"`
	Summary []summaryRow `json:"summary"`
	Ratios  []ratioRow   `json:"ratios"`
	Targets []targetRow  `json:"targets"`

	Startup        []startupRecord  `json:"startup"`
	StartupSummary []startupSummary `json:"startup_summary"`

	GrowthClients []growthClientRecord `json:"growth_clients"`
	GrowthTasks   []growthTaskRecord   `json:"growth_tasks"`
	Restart       *restartRecord       `json:"restart_with_stored_tasks,omitempty"`

	// Costs are the cost, memory and scale measurements (-costs).
	Costs *costsResults `json:"costs,omitempty"`
}

type envInfo struct {
	CPUs         int    `json:"cpus"`
	CPUModel     string `json:"cpu_model"`
	Kernel       string `json:"kernel"`
	OS           string `json:"os"`
	GoVersion    string `json:"go_version"`
	NodeVersion  string `json:"node_version"`
	Plugin       string `json:"plugin_version"` // a2a-plugin --version, first line
	LoadAvgStart string `json:"loadavg_start"`
	LoadAvgEnd   string `json:"loadavg_end"`
}

// loadResult is a2a-load's -json output.
type loadResult = loadresult.Result

// pct are latency percentiles in milliseconds.
type pct = loadresult.Percentiles

// runRecord is one load run against one server.
type runRecord struct {
	Round   int    `json:"round"`
	Server  string `json:"server"`
	Mode    string `json:"mode"`
	Clients int    `json:"clients"`
	// Load is a2a-load's result.
	Load loadResult `json:"load"`
	// Server CPU (all its processes; for ours agenthost + plugin) over the
	// whole load run, per operation (warm-up included on both sides).
	ServerCPUSec     float64 `json:"server_cpu_s"`
	ServerCPUPerOpUS float64 `json:"server_cpu_us_per_op"`
	PluginCPUPerOpUS float64 `json:"plugin_cpu_us_per_op,omitempty"`
	// PluginParts is the plugin's CPU per operation by part, from a
	// profile of the measured run (-profile; profile.go).
	PluginParts map[string]float64 `json:"plugin_parts_us_per_op,omitempty"`
	// Mem after the run: the plugin's for ours, the server process's else.
	Mem     memKB  `json:"mem"`
	LoadAvg string `json:"loadavg"`
}

// stat is a median with the range it came from.
type stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// summaryRow is one server in one mode, across rounds.
type summaryRow struct {
	Mode           string `json:"mode"`
	Server         string `json:"server"`
	Rounds         int    `json:"rounds"`
	RPS            stat   `json:"rps"`
	P50            stat   `json:"p50_ms"`
	P90            stat   `json:"p90_ms"`
	P99            stat   `json:"p99_ms"`
	ServerCPUPerOp stat   `json:"server_cpu_us_per_op"`
	LoadCPUPerOp   stat   `json:"load_cpu_us_per_op"`
	// PluginCPUPerOp is the a2a-plugin process alone (ours only).
	PluginCPUPerOp stat `json:"plugin_cpu_us_per_op"`
	// PluginParts are the medians of the runs' PluginParts (-profile).
	PluginParts map[string]float64 `json:"plugin_parts_us_per_op,omitempty"`
	// Mode extras (medians): stream first event and events/s, send-async
	// ack and polls per task.
	FirstEventP50 float64 `json:"first_event_p50_ms,omitempty"`
	EventsPerSec  float64 `json:"events_per_s,omitempty"`
	AckP50        float64 `json:"ack_p50_ms,omitempty"`
	PollsPerTask  float64 `json:"polls_per_task,omitempty"`
	OK            int64   `json:"ok"`
	Errors        int64   `json:"errors"`
	MaxRSSKB      int64   `json:"max_rss_kb"`
}

// ratioRow compares one of ours with another server in one mode: medians
// of the per-round ratios (the two ran minutes apart in the same round).
type ratioRow struct {
	Mode     string `json:"mode"`
	Ours     string `json:"ours"`
	Other    string `json:"other"`
	RPS      stat   `json:"rps_ratio"`
	P99      stat   `json:"p99_ratio"`
	CPUPerOp stat   `json:"server_cpu_per_op_ratio"`
}

// targetRow is one of the project's performance targets (issue 7).
type targetRow struct {
	Target   string  `json:"target"`
	Measured string  `json:"measured"`
	Value    float64 `json:"value"`
	Pass     bool    `json:"pass"`
}

type startupRecord struct {
	Server   string  `json:"server"`
	Iter     int     `json:"iter"`
	ReadyMS  float64 `json:"ready_ms"`
	IdleMem  memKB   `json:"idle_mem"`
	ErrorMsg string  `json:"error,omitempty"`
}

type startupSummary struct {
	Server    string `json:"server"`
	N         int    `json:"n"`
	ReadyMS   stat   `json:"ready_ms"`
	IdleRSSKB int64  `json:"idle_rss_kb_median"`
}

type growthClientRecord struct {
	Server           string     `json:"server"`
	Clients          int        `json:"clients"`
	IdleMem          memKB      `json:"idle_mem"`
	Mem              memKB      `json:"mem"`
	ServerCPUPerOpUS float64    `json:"server_cpu_us_per_op"`
	Load             loadResult `json:"load"`
}

type growthTaskRecord struct {
	Target           int64      `json:"target"`
	Stored           int64      `json:"stored"` // ListTasks totalSize before measuring
	PrefillSec       float64    `json:"prefill_s"`
	PrefillRPS       float64    `json:"prefill_rps"`
	MemBefore        memKB      `json:"mem_before"` // after the fill, before measuring
	List             loadResult `json:"list"`
	Send             loadResult `json:"send"`
	StoredAfter      int64      `json:"stored_after"`
	Mem              memKB      `json:"mem"` // after the send run
	DBBytes          int64      `json:"db_bytes"`
	ServerCPUPerOpUS float64    `json:"server_cpu_us_per_op"`
}

type restartRecord struct {
	Stored  int64      `json:"stored"`
	ReadyMS float64    `json:"ready_ms"`
	IdleMem memKB      `json:"idle_mem"`
	List    loadResult `json:"list"`
	Mem     memKB      `json:"mem"` // after the list run
}
