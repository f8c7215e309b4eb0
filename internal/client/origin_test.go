package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// elsewhere is an A2A endpoint on another origin than the peer's
// configured URL; it records the credentials it was sent.
type elsewhere struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string // "Authorization|X-Api-Key" per request
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.auth = append(e.auth, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		e.mu.Unlock()
		body := make([]byte, 64<<10)
		n, _ := r.Body.Read(body)
		req, err := a2a.ParseRequest(body[:n])
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		writeResult(w, req, completedTask)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *elsewhere) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auth...)
}

// cardPointingAt is a card (for newFake) whose JSON-RPC interface is at
// ifURL; the fake's own URL goes into its description.
func cardPointingAt(ifURL string) string {
	c := strings.Replace(v1Card, `"url":"%s/rpc"`, `"url":"`+ifURL+`"`, 1)
	return strings.Replace(c, `"description":"fake agent"`, `"description":"fake agent at %s"`, 1)
}

func TestCredentialsAreNotSentToAnInterfaceOnAnotherOrigin(t *testing.T) {
	other := newElsewhere(t)
	f := newFake(t, cardPointingAt(other.srv.URL+"/rpc"))
	c := client.New(client.Options{})
	defer c.Close()

	// With credentials: refused before anything is sent, saying why.
	for _, auth := range []client.Auth{{Token: "tok"}, {HeaderName: "X-Api-Key", HeaderValue: "k"}, {TokenFunc: func() string { return "fn" }}} {
		p := c.Peer(client.Endpoint{Name: "fake", URL: f.srv.URL, Auth: auth})
		_, err := send(context.Background(), p)
		if !errors.Is(err, client.ErrCrossOrigin) {
			t.Fatalf("auth %+v: error %v, want ErrCrossOrigin", auth, err)
		}
		for _, want := range []string{"another origin", other.srv.URL, f.srv.URL, "card_keys"} {
			if !strings.Contains(err.Error(), strings.TrimPrefix(want, "http://")) {
				t.Errorf("message %q lacks %q", err, want)
			}
		}
	}
	if seen := other.seen(); len(seen) != 0 {
		t.Fatalf("the other origin got requests: %q", seen)
	}
	// Without credentials there is nothing to protect: the call is made.
	if _, err := send(context.Background(), c.Peer(client.Endpoint{Name: "anon", URL: f.srv.URL})); err != nil {
		t.Fatal(err)
	}
	if seen := other.seen(); len(seen) != 1 || seen[0] != "|" {
		t.Fatalf("the other origin saw %q, want one request without credentials", seen)
	}
	// The card itself, on the configured origin, is fetched with them.
	p := c.Peer(client.Endpoint{Name: "fake2", URL: f.srv.URL + "/", Auth: client.Auth{Token: "tok"}})
	if _, err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.header().Get("Authorization"); got != "Bearer tok" {
		t.Fatalf("card fetch Authorization %q", got)
	}
}

func TestCredentialsGoToTheInterfaceOfAVerifiedCard(t *testing.T) {
	other := newElsewhere(t)
	cs := newCardServer(t)
	signer, keys := newSigner(t, "k-1")
	card := cs.card()
	card.SupportedInterfaces[0].URL = other.srv.URL + "/rpc"
	cs.serve(signWith(t, card, signer))
	c := client.New(client.Options{})
	defer c.Close()
	p := c.Peer(client.Endpoint{Name: "b", URL: cs.srv.URL, CardKeys: keys, Auth: client.Auth{Token: "tok"}})
	if _, err := send(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if seen := other.seen(); len(seen) != 1 || seen[0] != "Bearer tok|" {
		t.Fatalf("the signed card's interface saw %q", seen)
	}
}

func TestARedirectToAnotherOriginDropsEveryCredential(t *testing.T) {
	other := newElsewhere(t)
	f := newFake(t, v1Card)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		http.Redirect(w, r, other.srv.URL+"/rpc", http.StatusTemporaryRedirect)
	}
	c := client.New(client.Options{})
	defer c.Close()
	p := c.Peer(client.Endpoint{Name: "fake", URL: f.srv.URL, Auth: client.Auth{Token: "tok", HeaderName: "X-Api-Key", HeaderValue: "k"}})
	// The redirected request cannot be re-read from the body here (the
	// fake reads it first), so only the headers matter.
	_, _ = send(context.Background(), p)
	seen := other.seen()
	if len(seen) != 1 || seen[0] != "|" {
		t.Fatalf("the redirect target saw credentials %q", seen)
	}
}

func TestConfiguredEndpointIsExemptOnlyOnItsOrigin(t *testing.T) {
	other := newElsewhere(t) // another service on loopback
	pointing := newFake(t, cardPointingAt(other.srv.URL+"/rpc"))
	redirecting := newFake(t, v1Card)
	redirecting.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		http.Redirect(w, r, other.srv.URL+"/rpc", http.StatusTemporaryRedirect)
	}
	good := newFake(t, v1Card)
	good.rpc = func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { writeResult(w, req, completedTask) }
	c := client.New(client.Options{Guard: &security.SSRFGuard{}}) // the strictest guard
	defer c.Close()

	if _, err := send(context.Background(), c.Peer(client.Endpoint{Name: "good", URL: good.srv.URL, Configured: true})); err != nil {
		t.Fatalf("configured loopback peer: %v", err)
	}
	// The same peer, not configured (an ad-hoc URL): blocked.
	if _, err := send(context.Background(), c.Peer(client.Endpoint{URL: good.srv.URL})); !errors.Is(err, client.ErrBlocked) {
		t.Fatalf("unconfigured loopback URL: %v", err)
	}
	// The same host on another scheme is another origin: blocked.
	https := strings.Replace(good.srv.URL, "http://", "https://", 1)
	if _, err := c.Peer(client.Endpoint{URL: https}).Card(context.Background()); !errors.Is(err, client.ErrBlocked) {
		t.Fatalf("https on the configured http port: %v", err)
	}
	for name, p := range map[string]*client.Peer{
		"card interface": c.Peer(client.Endpoint{Name: "pointing", URL: pointing.srv.URL, Configured: true}),
		"redirect":       c.Peer(client.Endpoint{Name: "redirecting", URL: redirecting.srv.URL, Configured: true}),
	} {
		if _, err := send(context.Background(), p); !errors.Is(err, client.ErrBlocked) {
			t.Errorf("%s on another origin: %v, want ErrBlocked", name, err)
		}
	}
	if seen := other.seen(); len(seen) != 0 {
		t.Fatalf("another loopback service got requests: %q", seen)
	}
}
