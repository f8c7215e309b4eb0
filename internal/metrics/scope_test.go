package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// TestAPeerSeesOnlyItsOwnAgentsCallers: with several host agents the
// metrics are shared; a peer scraping them as a caller of one agent sees
// that agent's inbound callers and the tools' outbound calls, never who
// calls the other agents — in /metrics and in the per-agent figures the
// inspector and a2a_list show. The operator sees everything.
func TestAPeerSeesOnlyItsOwnAgentsCallers(t *testing.T) {
	m := New()
	m.Exchange(security.AuditRecord{Direction: security.AuditInbound, Identity: "peer:alice", Method: "SendMessage", Outcome: "ok", Agent: "sales"})
	m.Exchange(security.AuditRecord{Direction: security.AuditInbound, Identity: "peer:bob", Method: "SendMessage", Outcome: "ok", Agent: "support"})
	m.Outbound("weather", "SendMessage", time.Millisecond, nil)

	scrape := func(h http.Handler) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(w.Body)
		return string(b)
	}
	all := scrape(m.Handler())
	for _, want := range []string{`peer="peer:alice"`, `peer="peer:bob"`, `agent="sales"`, `peer="weather"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the operator's /metrics lacks %s", want)
		}
	}
	sales := scrape(m.ScopedHandler("sales"))
	if !strings.Contains(sales, `peer="peer:alice"`) || !strings.Contains(sales, `peer="weather"`) {
		t.Errorf("a peer of sales does not see its own agent's figures:\n%s", sales)
	}
	if strings.Contains(sales, "peer:bob") {
		t.Errorf("a peer of sales sees who calls support:\n%s", sales)
	}
	if !strings.Contains(sales, "a2a_tasks") && !strings.Contains(sales, "go_goroutines") {
		t.Errorf("the process's series are gone from the scoped view")
	}
	for _, s := range m.SnapshotFor("sales") {
		if s.Peer == "peer:bob" {
			t.Errorf("the figures of sales show support's caller: %+v", s)
		}
	}
	if n := len(m.SnapshotFor("sales")); n != 2 {
		t.Errorf("the figures of sales have %d rows, want alice and the outbound weather", n)
	}
}
