package push

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// scriptedResolver answers one lookup after another from a script (the
// last answer repeats); an empty answer is a resolver failure. No real
// DNS is asked.
type scriptedResolver struct {
	mu     sync.Mutex
	script [][]string
	calls  int
}

func (r *scriptedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answer := r.script[min(r.calls, len(r.script)-1)]
	r.calls++
	if len(answer) == 0 {
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
	}
	var out []netip.Addr
	for _, a := range answer {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// hookURL names the receiver by a host name, so every delivery resolves it.
func hookURL(rc *receiver) string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rc.URL, "http://"))
	return "http://hooks.test:" + port + "/hook"
}

// TestResolverFailureAtDeliveryIsRetriedThroughTheOutbox: while the
// webhook's host name does not resolve, the notification stays in the
// outbox and is tried again; once it resolves, it is delivered.
func TestResolverFailureAtDeliveryIsRetriedThroughTheOutbox(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		rc := newReceiver(t, nil)
		rs := &recStore{Store: st}
		f := newFixture(t, st, nil)
		f.config("t", "c", hookURL(rc))
		f.enqueue("t", "c", "1")
		res := &scriptedResolver{script: [][]string{nil, nil, nil, {"127.0.0.1"}}}
		start(t, Options{Store: rs, Guard: &security.SSRFGuard{AllowLoopback: true, Resolver: res},
			BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, PollInterval: 10 * time.Millisecond})
		eventually(t, "the delivery", func() bool { return len(rc.accepted()) == 1 }, nil)
		retries := rs.retryCalls()
		if len(retries) == 0 || len(rs.gaveUp()) != 0 {
			t.Fatalf("retries %+v, given up %+v", retries, rs.gaveUp())
		}
		if !strings.Contains(retries[0].lastErr, "resolve") {
			t.Errorf("retry reason %q does not say the host did not resolve", retries[0].lastErr)
		}
	})
}

// TestRebindingToAForbiddenAddressIsRefusedAtConnect: the webhook's name
// resolved to a public address when it was registered (and at the first
// look at delivery), then to loopback: the guard checks the address the
// connection really goes to, so nothing reaches loopback and the
// notification is given up as refused.
func TestRebindingToAForbiddenAddressIsRefusedAtConnect(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		rc := newReceiver(t, nil)
		rs := &recStore{Store: st}
		f := newFixture(t, st, nil)
		f.config("t", "c", hookURL(rc))
		f.enqueue("t", "c", "1")
		res := &scriptedResolver{script: [][]string{{"93.184.216.34"}, {"127.0.0.1"}}}
		start(t, Options{Store: rs, Guard: &security.SSRFGuard{Resolver: res}})
		eventually(t, "the refusal", func() bool { return len(rs.gaveUp()) == 1 }, nil)
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("the receiver on loopback got %d requests", n)
		}
		if g := rs.gaveUp()[0]; !strings.Contains(g.reason, "refused") || !strings.Contains(g.reason, "127.0.0.1") {
			t.Errorf("reason %q", g.reason)
		}
	})
}
