package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestEveryObservationShowsUpInTheExport(t *testing.T) {
	m := New()
	m.SetStreams(func() int64 { return 3 })
	m.Exchange(security.AuditRecord{Identity: "peer:alice", Method: "SendMessage", Outcome: "ok", DurationMS: 12})
	m.Exchange(security.AuditRecord{Identity: "ip:203.0.113.9", Method: "GetTask", Outcome: "rate-limited", DurationMS: 1})
	m.Exchange(security.AuditRecord{Identity: "anon:198.51.100.1", Method: "Bogus/Method", Outcome: "error"})
	m.Outbound("bob", "SendMessage", 30*time.Millisecond, nil)
	m.Outbound("bob", "GetTask", time.Millisecond, errors.New("down"))
	m.TaskTransition("", a2a.TaskStateSubmitted)
	m.TaskTransition(a2a.TaskStateSubmitted, a2a.TaskStateWorking)
	m.TaskTransition(a2a.TaskStateWorking, a2a.TaskStateCompleted)
	m.HostCall("HandleMessage", 200*time.Microsecond, nil)
	m.HostCall("CancelTurn", time.Millisecond, errors.New("gone"))
	m.Delivered(5 * time.Millisecond)
	m.Retried()
	m.GaveUp()
	m.FilterHits(2)
	m.Redactions(1)
	out := scrape(t, m)
	for _, want := range []string{
		`a2a_requests_total{agent="",direction="inbound",method="SendMessage",outcome="ok",peer="peer:alice"} 1`,
		`a2a_requests_total{agent="",direction="inbound",method="GetTask",outcome="rate-limited",peer="ip"} 1`,
		`a2a_requests_total{agent="",direction="inbound",method="other",outcome="error",peer="anonymous"} 1`,
		`a2a_requests_total{agent="",direction="outbound",method="GetTask",outcome="error",peer="bob"} 1`,
		`a2a_request_duration_seconds_bucket{direction="outbound",method="SendMessage",le="0.05"} 1`,
		`a2a_tasks{state="TASK_STATE_WORKING"} 0`,
		`a2a_tasks{state="TASK_STATE_COMPLETED"} 1`,
		`a2a_task_transitions_total{state="TASK_STATE_SUBMITTED"} 1`,
		`a2a_host_call_duration_seconds_count{method="HandleMessage"} 1`,
		`a2a_host_call_errors_total{method="CancelTurn"} 1`,
		`a2a_push_deliveries_total 1`, `a2a_push_retries_total 1`, `a2a_push_gave_up_total 1`,
		`a2a_rate_limited_total 1`, `a2a_injection_filter_hits_total 2`, `a2a_redactions_total 1`,
		`a2a_active_streams 3`, `go_goroutines`, `process_resident_memory_bytes`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q", want)
		}
	}
	if strings.Contains(out, "203.0.113.9") || strings.Contains(out, "198.51.100.1") {
		t.Error("raw addresses must not become label values")
	}
}

func TestSnapshotReportsTheSameCallsAsTheExport(t *testing.T) {
	m := New()
	for i := 0; i < 10; i++ {
		m.Outbound("bob", "SendMessage", time.Duration(i+1)*time.Millisecond, nil)
	}
	m.Outbound("bob", "SendMessage", time.Second, errors.New("x"))
	m.Exchange(security.AuditRecord{Identity: "peer:carol", Method: "SendMessage", Outcome: "ok", DurationMS: 2})
	snap := m.Snapshot()
	if len(snap) != 2 || snap[0].Direction != "outbound" || snap[0].Peer != "bob" || snap[1].Peer != "peer:carol" {
		t.Fatalf("snapshot = %+v", snap)
	}
	bob := m.Peer("bob")
	if bob.Calls != 11 || bob.Errors != 1 || bob.P50 != 6*time.Millisecond || bob.P99 != time.Second {
		t.Fatalf("bob = %+v", bob)
	}
	if !strings.Contains(scrape(t, m), `a2a_requests_total{agent="",direction="outbound",method="SendMessage",outcome="ok",peer="bob"} 10`) {
		t.Fatal("export and snapshot disagree")
	}
}

func TestPeerLabelsAreBounded(t *testing.T) {
	for in, want := range map[string]string{"": "anonymous", "peer:alice": "peer:alice", "ip:1.2.3.4": "ip",
		"local:127.0.0.1": "local", "anon:9.9.9.9": "anonymous", "weird": "other"} {
		if got := PeerLabel(in); got != want {
			t.Errorf("PeerLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkRequestObservations is what one blocking send costs the
// metrics: its exchange and its task's three transitions.
func BenchmarkRequestObservations(b *testing.B) {
	m := New()
	rec := security.AuditRecord{Direction: security.AuditInbound, Identity: "peer:bench", Method: "SendMessage", Outcome: "ok", DurationMS: 1.5}
	b.ReportAllocs()
	for b.Loop() {
		m.TaskTransition("", a2a.TaskStateSubmitted)
		m.TaskTransition(a2a.TaskStateSubmitted, a2a.TaskStateWorking)
		m.TaskTransition(a2a.TaskStateWorking, a2a.TaskStateCompleted)
		m.Exchange(rec)
	}
}
