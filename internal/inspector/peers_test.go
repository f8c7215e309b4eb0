package inspector

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// TestPeersPageShowsRateLimitedAsSuch: a peer that answered 429 is shown
// as rate limited, not as unreachable; one that did not answer is
// unreachable.
func TestPeersPageShowsRateLimitedAsSuch(t *testing.T) {
	in, err := New(Options{
		Tasks: &fakeWatcher{}, Store: store.NewMemory(10), AgentName: "Test Agent",
		Peers: func(context.Context) []Peer {
			return []Peer{
				{Name: "busy", URL: "http://busy.example", RateLimited: true, Checked: time.Now(),
					Error: "answering, but rate limited (HTTP 429): wait 30s before retrying"},
				{Name: "down", URL: "http://down.example", Checked: time.Now(), Error: "unreachable"},
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in.Handler())
	t.Cleanup(func() { in.Close(); srv.Close() })
	resp, err := srv.Client().Get(srv.URL + "/inspector/peers")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	card := func(name string) string {
		i := strings.Index(page, `data-peer="`+name+`"`)
		if i < 0 {
			t.Fatalf("the page has no card for %s:\n%s", name, page)
		}
		rest := page[i:]
		if j := strings.Index(rest[1:], "data-peer="); j >= 0 {
			rest = rest[:j+1]
		}
		return rest
	}
	if c := card("busy"); !strings.Contains(c, ">rate limited<") || strings.Contains(c, ">unreachable<") {
		t.Errorf("the rate-limited peer's card does not say rate limited:\n%s", c)
	}
	if c := card("down"); !strings.Contains(c, ">unreachable<") {
		t.Errorf("the unreachable peer's card does not say unreachable:\n%s", c)
	}
}
