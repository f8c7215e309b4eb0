package security_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// auditRecord is one line of the audit log.
type auditRecord struct {
	Time          time.Time `json:"time"`
	Direction     string    `json:"direction"`
	Identity      string    `json:"identity"`
	Tier          string    `json:"tier"`
	Method        string    `json:"method"`
	TaskID        string    `json:"taskId"`
	ContextID     string    `json:"contextId"`
	Peer          string    `json:"peer"`
	Outcome       string    `json:"outcome"`
	Code          int       `json:"code"`
	RequestBytes  int64     `json:"requestBytes"`
	ResponseBytes int64     `json:"responseBytes"`
	DurationMS    float64   `json:"durationMs"`
	Error         string    `json:"error"`
}

// readAudit parses every line of an audit file; a line that is not one
// JSON record fails the test.
func readAudit(t *testing.T, path string) []auditRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	var out []auditRecord
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var r auditRecord
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s:%d is not an audit record: %v: %s", path, n, err, sc.Bytes())
		}
		out = append(out, r)
	}
	return out
}

// waitAudit polls the audit file until match holds for its records.
func waitAudit(t *testing.T, ctx context.Context, path string, what string, match func([]auditRecord) bool) []auditRecord {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			if recs := readAudit(t, path); match(recs) {
				return recs
			}
		}
		select {
		case <-ctx.Done():
			var recs []auditRecord
			if _, err := os.Stat(path); err == nil {
				recs = readAudit(t, path)
			}
			t.Fatalf("audit log %s never showed %s; records:\n%s", path, what, dumpAudit(recs))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func dumpAudit(recs []auditRecord) string {
	var b strings.Builder
	for _, r := range recs {
		j, _ := json.Marshal(r)
		b.WriteString("  " + string(j) + "\n")
	}
	return b.String()
}

// find returns the first record for which keep holds.
func find(recs []auditRecord, keep func(auditRecord) bool) (auditRecord, bool) {
	for _, r := range recs {
		if keep(r) {
			return r, true
		}
	}
	return auditRecord{}, false
}

// TestAuditLogRecordsEveryExchangeWithoutSecrets: <data dir>/audit.jsonl
// gets one record per exchange in both directions — identity, tier, method,
// ids, outcome, sizes — and no token or secret appears anywhere in it.
func TestAuditLogRecordsEveryExchangeWithoutSecrets(t *testing.T) {
	t.Parallel()
	peerData := t.TempDir()
	peer := startHost(t, hostOpts{
		config:  map[string]any{"loopback_is_local": false},
		env:     map[string]string{"A2A_PEER_TOKENS": peerTokens},
		dataDir: peerData,
	})
	data := t.TempDir()
	h := startHost(t, hostOpts{
		agent: scenario([]testharness.Rule{when("secret", testharness.Reply("key "+secretKey))}, testharness.Echo("echo: ")),
		config: map[string]any{
			"loopback_is_local": false, "allow_loopback_urls": true,
			"a2a_agents": []map[string]any{{"name": "p", "url": peer.Endpoint("a2a"), "token": tokCarol}},
		},
		env:     map[string]string{"A2A_PEER_TOKENS": peerTokens, "A2A_BEARER_TOKEN": tokShared},
		dataDir: data,
	})
	path := filepath.Join(data, "a2a", "audit.jsonl")
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 40*time.Second)
	alice, shared := newClient(ep, tokAlice), newClient(ep, tokShared)
	hook := newWebhook(t)
	const wrongToken = "wrong-token-0123456789abcdef0123"
	const hookToken = "webhook-token-5e5e5e5e5e5e5e5e"

	// Inbound exchanges.
	tk := alice.mustSend(t, ctx, "what is the secret?")
	alice.mustCall(t, ctx, "GetTask", map[string]any{"id": "no-such-task"})
	alice.mustCall(t, ctx, "ListTasks", map[string]any{})
	newClient(ep, wrongToken).mustCall(t, ctx, "GetTask", map[string]any{"id": tk.ID})
	fetchCard(t, ctx, alice)
	params := sendParams(message("notify me"))
	params["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.srv.URL + "/hook", "token": hookToken}}
	pushed := taskOf(t, shared.mustCall(t, ctx, "SendMessage", params))

	// Outbound exchanges: an a2a_call to the peer and the webhook delivery.
	res, _, err := h.CallTool(ctx, "a2a_call", `{"agent":"p","message":"use `+secretKey+` please"}`)
	if err != nil || res.GetIsError() {
		t.Fatalf("a2a_call: %v %v", res, err)
	}
	if _, err := hook.waitFor(ctx, pushed.ID, "TASK_STATE_COMPLETED"); err != nil {
		t.Fatal(err)
	}

	recs := waitAudit(t, ctx, path, "the six inbound exchanges", func(rs []auditRecord) bool {
		n := 0
		for _, r := range rs {
			if r.Direction == "inbound" {
				n++
			}
		}
		return n >= 6
	})
	checks := []struct {
		what string
		keep func(auditRecord) bool
		want func(t *testing.T, r auditRecord)
	}{
		{"alice's SendMessage", func(r auditRecord) bool { return r.Method == "SendMessage" && r.Identity == "peer:alice" },
			func(t *testing.T, r auditRecord) {
				if r.Direction != "inbound" || r.Tier != "public" || r.TaskID != tk.ID || r.ContextID != tk.ContextID ||
					r.Outcome != "ok" || r.Code != 0 || r.RequestBytes == 0 || r.ResponseBytes == 0 || r.Time.IsZero() {
					t.Errorf("record %+v", r)
				}
			}},
		{"a GetTask of an unknown task", func(r auditRecord) bool { return r.Method == "GetTask" && r.Identity == "peer:alice" },
			func(t *testing.T, r auditRecord) {
				if r.Outcome != "error" || r.Code != -32001 || r.TaskID != "no-such-task" {
					t.Errorf("record %+v", r)
				}
			}},
		{"a ListTasks the policy refused", func(r auditRecord) bool { return r.Method == "ListTasks" },
			func(t *testing.T, r auditRecord) {
				if r.Outcome != "error" || r.Code != -32050 || r.Tier != "public" {
					t.Errorf("record %+v", r)
				}
			}},
		{"a wrong token", func(r auditRecord) bool { return r.Identity == "unauthenticated:127.0.0.1" },
			func(t *testing.T, r auditRecord) {
				if r.Outcome != "refused" || r.Code != -32050 || !strings.Contains(r.Error, "UNAUTHENTICATED") {
					t.Errorf("record %+v", r)
				}
			}},
		{"the card", func(r auditRecord) bool { return r.Method == "card" },
			func(t *testing.T, r auditRecord) {
				if r.Outcome != "ok" || r.ResponseBytes == 0 || r.Identity != "peer:alice" {
					t.Errorf("record %+v", r)
				}
			}},
		{"the shared token's SendMessage", func(r auditRecord) bool { return r.Method == "SendMessage" && r.Identity == "ip:127.0.0.1" },
			func(t *testing.T, r auditRecord) {
				if r.Tier != "trusted" || r.TaskID != pushed.ID || r.Outcome != "ok" {
					t.Errorf("record %+v", r)
				}
			}},
	}
	n := 0
	for _, r := range recs {
		if r.TaskID == tk.ID && r.Method == "SendMessage" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("alice's SendMessage has %d audit records, want exactly 1", n)
	}
	for _, c := range checks {
		r, ok := find(recs, c.keep)
		if !ok {
			t.Errorf("no audit record of %s; records:\n%s", c.what, dumpAudit(recs))
			continue
		}
		c.want(t, r)
	}

	// Outbound: the a2a_call and the webhook delivery are exchanges too.
	// (Give them a moment: they may be written after the call returned.)
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for octx.Err() == nil {
		recs = readAudit(t, path)
		_, call := find(recs, func(r auditRecord) bool {
			return r.Direction == "outbound" && r.Peer != "" && !strings.Contains(r.Method, "webhook")
		})
		_, hook := find(recs, func(r auditRecord) bool { return r.Direction == "outbound" && strings.Contains(r.Method, "webhook") })
		if call && hook {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r, ok := find(recs, func(r auditRecord) bool {
		return r.Direction == "outbound" && r.Peer != "" && !strings.Contains(r.Method, "webhook")
	}); !ok {
		t.Errorf("no outbound audit record of the a2a_call to peer p; records:\n%s", dumpAudit(recs))
	} else if r.Outcome != "ok" || r.TaskID == "" || r.RequestBytes == 0 {
		t.Errorf("outbound a2a_call record %+v", r)
	}
	if _, ok := find(recs, func(r auditRecord) bool { return r.Direction == "outbound" && strings.Contains(r.Method, "webhook") }); !ok {
		t.Errorf("no outbound audit record of the webhook delivery; records:\n%s", dumpAudit(recs))
	}

	// The peer recorded the call it received, under the caller's identity.
	waitAudit(t, ctx, filepath.Join(peerData, "a2a", "audit.jsonl"), "the inbound call from the first host", func(rs []auditRecord) bool {
		_, ok := find(rs, func(r auditRecord) bool {
			return strings.HasPrefix(r.Method, "Send") && r.Identity == "peer:carol" && r.Outcome == "ok" && r.TaskID != ""
		})
		return ok
	})

	// No secret anywhere, in either host's file.
	for _, p := range []string{path, filepath.Join(peerData, "a2a", "audit.jsonl")} {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if l := containsAny(string(raw), tokAlice, tokBob, tokCarol, tokShared, wrongToken, hookToken, secretKey); len(l) > 0 {
			t.Errorf("%s contains %q", p, l)
		}
		if st, err := os.Stat(p); err == nil && st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, st.Mode().Perm())
		}
	}
}

// TestAuditLogRotatesBySize: with A2A_AUDIT_LOG and a small
// A2A_AUDIT_MAX_BYTES the log is rotated into audit.jsonl.1 … .5, every
// file stays under the limit and holds whole records, and the newest
// records are in the live file.
func TestAuditLogRotatesBySize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "logs", "audit.jsonl")
	const maxBytes = 1500
	h := startHost(t, hostOpts{env: map[string]string{"A2A_AUDIT_LOG": path, "A2A_AUDIT_MAX_BYTES": fmt.Sprint(maxBytes)}})
	c := newClient(h.Endpoint("a2a"), "")
	ctx := ctxFor(t, 40*time.Second)
	const n = 60
	for i := range n {
		c.mustCall(t, ctx, "GetTask", map[string]any{"id": fmt.Sprintf("rotation-%03d", i)})
	}
	last := fmt.Sprintf("rotation-%03d", n-1)
	waitAudit(t, ctx, path, "the last request", func(rs []auditRecord) bool {
		_, ok := find(rs, func(r auditRecord) bool { return r.TaskID == last })
		return ok
	})
	total := 0
	for i := 0; i <= 6; i++ {
		p := path
		if i > 0 {
			p = fmt.Sprintf("%s.%d", path, i)
		}
		st, err := os.Stat(p)
		switch {
		case i == 6:
			if err == nil {
				t.Errorf("%s exists: more than 5 rotated files are kept", p)
			}
			continue
		case err != nil:
			t.Errorf("rotated file %s: %v", p, err)
			continue
		}
		if st.Size() > maxBytes {
			t.Errorf("%s is %d bytes, over A2A_AUDIT_MAX_BYTES=%d", p, st.Size(), maxBytes)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, st.Mode().Perm())
		}
		recs := readAudit(t, p)
		if len(recs) == 0 {
			t.Errorf("%s holds no record", p)
		}
		total += len(recs)
	}
	if total >= n {
		t.Errorf("the kept files hold %d records of %d: nothing was dropped, so nothing was rotated away", total, n)
	}
}
