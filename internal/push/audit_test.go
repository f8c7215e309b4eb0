package push

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// TestEveryAttemptIsAudited: each POST is one outbound audit record,
// method "webhook", with the task, the outcome and status, the sizes and
// the webhook's host — never its path, query or the config's token.
func TestEveryAttemptIsAudited(t *testing.T) {
	st := openMemory(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
		if n == 0 {
			return reply(w, http.StatusServiceUnavailable)
		}
		return reply(w, http.StatusOK)
	})
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := security.NewAuditLog(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	const token = "webhook-token-0123456789abcdef"
	hook := rc.URL + "/hooks/secret-path?key=query-secret"
	f := newFixture(t, st, nil)
	f.config("t", "c", hook, func(c *a2a.TaskPushNotificationConfig) { c.Token = token })
	bodies := f.enqueue("t", "c", "a")
	start(t, Options{Store: st, Audit: audit, BaseBackoff: 1e6, MaxBackoff: 1e7})
	eventually(t, "the delivery", func() bool { return len(rc.accepted()) == 1 && f.outboxEmpty() }, nil)

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{token, "secret-path", "query-secret"} {
		if strings.Contains(string(raw), secret) {
			t.Fatalf("the audit log holds %q:\n%s", secret, raw)
		}
	}
	var recs []security.AuditRecord
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var r security.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	u, _ := url.Parse(rc.URL)
	if len(recs) != 2 {
		t.Fatalf("%d records, want one per attempt:\n%s", len(recs), raw)
	}
	for i, want := range []struct {
		outcome string
		code    int
	}{{"error", 503}, {"ok", 200}} {
		r := recs[i]
		if r.Direction != security.AuditOutbound || r.Method != "webhook" || r.Peer != u.Host || r.TaskID != "t" ||
			r.Outcome != want.outcome || r.Code != want.code || r.RequestBytes != int64(len(bodies[0])) || r.Time.IsZero() {
			t.Errorf("attempt %d: %+v", i+1, r)
		}
	}
	if recs[0].Error == "" {
		t.Errorf("the failed attempt says not why: %+v", recs[0])
	}
}
