package tools

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// benchPeer is a peer that answers every SendMessage at once with a new
// completed task (a new task and context id each time, so that nothing a
// call records is a repeat of an earlier call's).
func benchPeer(b *testing.B) *httptest.Server {
	var n atomic.Int64
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"bench","description":"answers at once","version":"1","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		 "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		 "skills":[{"id":"echo","name":"echo","description":"echoes","tags":["echo"]}]}`, srv.URL)
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, perr := a2a.ParseRequest(body)
		if perr != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		writeTask(w, req, fmt.Sprintf("ctx-%d", n.Add(1)), "pong")
	})
	return srv
}

// benchHost answers RecordDelegation and counts the calls.
type benchHost struct {
	plugin.Host
	n atomic.Int64
}

func (h *benchHost) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	h.n.Add(1)
	return &pb.RecordDelegationResponse{}, nil
}

// benchDelegations plays cascade.Tracker and counts the records.
type benchDelegations struct{ n atomic.Int64 }

func (d *benchDelegations) Record(ctx context.Context, del store.Delegation) error {
	d.n.Add(1)
	return nil
}

// cpuTime is the processor time (user and system) this process has used,
// the peer's included: on a shared machine a steadier measure than wall
// time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallTool measures one a2a_call (blocking, to a peer that answers
// at once) through CallFrom, in process: the outbound path of the tools
// and the client without the host's RPC around it. "bare" has no sink but
// the metrics (the host's own user asks, nothing is stored); "every-sink"
// is a call made for an inbound task with every side effect on: the audit
// log, the metrics, the cascade's delegation record, the conversation
// store and the host's RecordDelegation. Besides ns/op it reports the
// processor time per call (cpu-ns/op, the in-process peer's included).
//
//	go test ./internal/tools -run '^$' -bench CallTool -benchmem
func BenchmarkCallTool(b *testing.B) {
	srv := benchPeer(b)
	cfg := Config{Agents: []config.Peer{{Name: "bench", URL: srv.URL}}, AllowLoopback: true, MaxCallsPerTask: -1, MaxCallsPerMinute: -1}
	req := &pb.CallToolRequest{Name: ToolCall, ArgumentsJson: `{"agent":"bench","message":"ping"}`}
	run := func(b *testing.B, ts *Toolset, org Origin) {
		ctx := context.Background()
		for range 3 { // the card, the connection
			if res, err := ts.CallFrom(ctx, org, req, nil); err != nil || res.IsError {
				b.Fatalf("a2a_call: %v %s", err, res.GetContent())
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuTime()
		for range b.N {
			if res, err := ts.CallFrom(ctx, org, req, nil); err != nil || res.IsError {
				b.Fatalf("a2a_call: %v %s", err, res.GetContent())
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	b.Run("bare", func(b *testing.B) {
		ts, err := New(cfg, Deps{})
		if err != nil {
			b.Fatal(err)
		}
		defer ts.Close()
		run(b, ts, Origin{})
	})
	b.Run("every-sink", func(b *testing.B) {
		audit, err := security.NewAuditLog(filepath.Join(b.TempDir(), "audit.jsonl"), 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer audit.Close()
		host, dels := &benchHost{}, &benchDelegations{}
		ts, err := New(cfg, Deps{Store: store.NewMemory(100), Host: host, Audit: audit, Delegations: dels, HostRPCs: []string{"RecordDelegation"}})
		if err != nil {
			b.Fatal(err)
		}
		defer ts.Close()
		run(b, ts, Origin{Platform: "bench", ChatID: "c1", Task: "inbound-1", Caller: "peer:bench"})
		if got := dels.n.Load(); got < int64(b.N) {
			b.Fatalf("%d delegation records for %d calls", got, b.N)
		}
		if got := host.n.Load(); got < int64(b.N) {
			b.Fatalf("%d RecordDelegation calls for %d calls", got, b.N)
		}
	})
}
