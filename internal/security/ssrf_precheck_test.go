package security

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// failingResolver fails every lookup as a machine without DNS does.
type failingResolver struct{ calls int }

func (r *failingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.calls++
	return nil, &net.DNSError{Err: "dial udp 127.0.0.53:53: connect: network is unreachable", Name: host, IsTemporary: true}
}

// TestPrecheckURLRefusesOnlyWhatIsCertainlyForbidden: a webhook URL is
// refused when registered only for what is certain then — its scheme, a
// literal address, a forbidden name, a name that resolves to a forbidden
// address. A name that cannot be resolved at that moment passes (the
// dial-time check decides at delivery); CheckURL still refuses it.
func TestPrecheckURLRefusesOnlyWhatIsCertainlyForbidden(t *testing.T) {
	down := &SSRFGuard{Resolver: &failingResolver{}}
	for _, u := range []string{"https://example.com/hook", "http://hooks.example.org:8443/a2a"} {
		if err := down.PrecheckURL(context.Background(), u); err != nil {
			t.Errorf("%s with DNS down: %v", u, err)
		}
		if err := down.CheckURL(context.Background(), u); err == nil || !errors.Is(err, ErrUnresolved) {
			t.Errorf("CheckURL(%s) with DNS down: %v, want ErrUnresolved", u, err)
		}
	}
	res := newFakeResolver(map[string][]string{"inside.example": {"10.1.2.3"}, "public.example": {"93.184.216.34"}})
	up := &SSRFGuard{Resolver: res}
	for u, want := range map[string]string{
		"ftp://example.com/x":               "only http and https",
		"http://127.0.0.1:8080/hook":        "loopback",
		"http://[::1]/hook":                 "loopback",
		"http://10.0.0.7/hook":              "private",
		"http://169.254.169.254/latest":     "metadata",
		"http://localhost/hook":             "loopback host name",
		"http://metadata.google.internal/x": "metadata",
		"http://2130706433/hook":            "non-standard notation",
		"http://inside.example/hook":        "resolves to 10.1.2.3",
		"http:///nohost":                    "no host",
	} {
		for _, g := range []*SSRFGuard{up, {Resolver: &failingResolver{}}} {
			if u == "http://inside.example/hook" && g != up {
				continue // only a working resolver can tell
			}
			err := g.PrecheckURL(context.Background(), u)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("PrecheckURL(%s) = %v, want a refusal saying %q", u, err, want)
			}
		}
	}
	if err := up.PrecheckURL(context.Background(), "https://public.example/hook"); err != nil {
		t.Errorf("a public host: %v", err)
	}
}
