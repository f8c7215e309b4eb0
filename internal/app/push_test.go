package app

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// downResolver fails every lookup, as on a machine whose DNS is down.
type downResolver struct{}

func (downResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
}

// TestPushConfigCreationSurvivesAResolverFailure: the webhook URL check
// the server runs when a push config is created refuses only what is
// certainly forbidden; a host name that cannot be resolved at that moment
// is accepted (the address is checked when the notification connects).
func TestPushConfigCreationSurvivesAResolverFailure(t *testing.T) {
	cfg, err := config.Load([]byte(`{"store":"memory","push_secret":"a-configured-push-secret"}`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var undo undoList
	t.Cleanup(func() { _ = undo.run(context.Background()) })
	p, err := newParts(cfg, t.TempDir(), "test", nil, nil, store.NewMemory(10), nil, hclog.NewNullLogger(), &undo)
	if err != nil {
		t.Fatal(err)
	}
	p.guard.Resolver = downResolver{}
	check := p.srvOpts.Push.CheckURL
	if err := check(context.Background(), "https://example.com/hook"); err != nil {
		t.Errorf("a valid webhook URL is refused while DNS is down: %v", err)
	}
	for _, u := range []string{"ftp://example.com/hook", "http://127.0.0.1:9/hook", "http://10.0.0.1/hook", "http://localhost/hook"} {
		if err := check(context.Background(), u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}
