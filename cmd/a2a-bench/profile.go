package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/google/pprof/profile"
)

// With -profile, a2a-bench takes a CPU profile of the plugin during each
// measured run of ours (the plugin serves net/http/pprof on its A2A port
// when its settings say pprof: true) and breaks it down by part: each
// sample counts once, in the part of the innermost frame of its stack
// that belongs to one, so the allocator, the collector's assists and the
// system calls count where they were called from. What no part claims —
// the collector's own workers, the scheduler, the runtime — is the last
// part. These are the rows of docs/performance.md's profile tables.

// profilePart is one part of the plugin and the functions that are its.
type profilePart struct {
	Name string
	re   *regexp.Regexp
}

// profileParts are tried in order on each frame, innermost first.
var profileParts = []profilePart{
	{"store", regexp.MustCompile(`a2a-plugin/internal/store\.|^modernc\.org/|^database/sql\.`)},
	{"security", regexp.MustCompile(`a2a-plugin/internal/security\.`)},
	{"metrics, tracing", regexp.MustCompile(`a2a-plugin/internal/(metrics|tracing)\.|^go\.opentelemetry\.io/`)},
	{"contract, gRPC", regexp.MustCompile(`a2a-plugin/internal/bridge\.|a2a-plugin/plugin\.|^google\.golang\.org/(grpc|protobuf)/|^golang\.org/x/net/http2|^crypto/`)},
	{"task manager", regexp.MustCompile(`a2a-plugin/internal/tasks\.`)},
	{"HTTP, JSON", regexp.MustCompile(`^net/http\.|^net/textproto\.|^net/url\.|^bufio\.|a2a-plugin/internal/(server|a2a|jsonenc|grpcwire)\.|^encoding/json\.`)},
}

// partRest is what no part claims.
const partRest = "runtime, GC, scheduler"

// profilePartNames are the parts in report order.
func profilePartNames() []string {
	names := make([]string, 0, len(profileParts)+1)
	for _, p := range profileParts {
		names = append(names, p.Name)
	}
	return append(names, partRest)
}

// breakdown sums p's CPU time by part, in seconds.
func breakdown(p *profile.Profile) (map[string]float64, float64) {
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	out := map[string]float64{}
	if vi < 0 {
		return out, 0
	}
	memo := map[uint64]string{} // location id → its part ("" for none)
	var total float64
	for _, s := range p.Sample {
		v := float64(s.Value[vi]) / 1e9
		total += v
		part := partRest
	walk:
		for _, loc := range s.Location {
			name, seen := memo[loc.ID]
			if !seen {
				name = locationPart(loc)
				memo[loc.ID] = name
			}
			if name != "" {
				part = name
				break walk
			}
		}
		out[part] += v
	}
	return out, total
}

// locationPart is the part of the innermost of loc's (inlined) frames
// that has one.
func locationPart(loc *profile.Location) string {
	for _, ln := range loc.Line { // innermost first
		if ln.Function == nil {
			continue
		}
		for _, pp := range profileParts {
			if pp.re.MatchString(ln.Function.Name) {
				return pp.Name
			}
		}
	}
	return ""
}

// profilePlugin fetches a CPU profile of d from the plugin serving base.
func profilePlugin(ctx context.Context, base string, d time.Duration) (*profile.Profile, error) {
	secs := max(1, int(d/time.Second))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs), nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: d + 30*time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("the plugin's pprof answered %s: %s (is pprof on in its settings?)", resp.Status, b)
	}
	return profile.Parse(resp.Body)
}

// profileWindow is when, within a run of warm-up w and measured time d,
// the profile is taken: from half a second into the measured time, for
// whole seconds, ending before it does.
func profileWindow(w, d time.Duration) (delay, length time.Duration) {
	length = (d - time.Second).Truncate(time.Second)
	if length < time.Second {
		length = time.Second
	}
	return w + 500*time.Millisecond, length
}

// profileResult is a run's profile, broken down (seconds by part).
type profileResult struct {
	seconds map[string]float64
	length  time.Duration
	err     error
}

// profileDuring profiles the plugin of s during the measured part of the
// load run about to start.
func (b *bench) profileDuring(s *server) <-chan profileResult {
	out := make(chan profileResult, 1)
	delay, length := profileWindow(b.cfg.Warmup, b.cfg.Duration)
	go func() {
		time.Sleep(delay)
		p, err := profilePlugin(context.Background(), s.base, length)
		if err != nil {
			out <- profileResult{err: err}
			return
		}
		secs, _ := breakdown(p)
		out <- profileResult{seconds: secs, length: length}
	}()
	return out
}

// perOp turns seconds by part into µs per operation over ops operations.
func perOp(secs map[string]float64, ops float64) map[string]float64 {
	if ops <= 0 {
		return nil
	}
	out := make(map[string]float64, len(secs))
	for k, v := range secs {
		out[k] = v * 1e6 / ops
	}
	return out
}
