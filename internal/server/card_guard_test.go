package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/testcert"
	"github.com/a2a-plugin/a2a-plugin/internal/testclock"
)

func newTestClock() *testclock.Clock {
	return testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// countingTools is a host tool registry that counts its calls and, while
// gate is not nil, makes them wait for it.
type countingTools struct {
	calls atomic.Int64
	mu    sync.Mutex
	tools []a2a.AgentSkill
	gate  chan struct{}
}

// skill is a skill of a host tool, as bridge.SkillsOf makes it.
func skill(name string) a2a.AgentSkill {
	return a2a.AgentSkill{ID: name, Name: name, Description: "Uses the " + name + " tool.", Tags: []string{"tool"}}
}

func (c *countingTools) set(tools ...a2a.AgentSkill) {
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
}

func (c *countingTools) list(ctx context.Context) ([]a2a.AgentSkill, error) {
	c.calls.Add(1)
	c.mu.Lock()
	gate, tools := c.gate, c.tools
	c.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return tools, nil
}

// skillIDs lists the skill ids of a served card.
func skillIDs(t *testing.T, body []byte) string {
	t.Helper()
	var ids []string
	if strings.Contains(string(body), `"supportedInterfaces"`) {
		card, _ := splitCard(t, body)
		for _, s := range card.Skills {
			ids = append(ids, s.ID)
		}
	} else { // the 0.3 card
		for _, s := range card03(t, body)["skills"].([]any) {
			ids = append(ids, s.(map[string]any)["id"].(string))
		}
	}
	return strings.Join(ids, ",")
}

func TestAgentCardRequestsShareOneToolListCall(t *testing.T) {
	clock := newTestClock()
	host := &countingTools{}
	host.set(skill("search"))
	e := newEnv(t, func(o *Options) { o.Skills = host.list; o.Now = clock.Now })
	if n := host.calls.Load(); n != 0 {
		t.Fatalf("New asked the host for its tools %d time(s)", n)
	}

	// N concurrent card requests while the host is slow to answer: one
	// request asks the host, the others wait for its answer.
	const n = 20
	host.mu.Lock()
	host.gate = make(chan struct{})
	gate := host.gate
	host.mu.Unlock()
	var wg sync.WaitGroup
	etags := make([]string, n)
	bodies := make([][]byte, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/.well-known/agent-card.json"
			if i%2 == 1 {
				path = "/.well-known/agent.json"
			}
			resp, body := fetchCard(t, e, path, nil)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("request %d: HTTP %d", i, resp.StatusCode)
			}
			etags[i], bodies[i] = resp.Header.Get("ETag"), body
		}()
	}
	waitFor(t, "the other requests to wait for the running fetch", func() bool {
		c := &e.srv.card.skillCache
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.flight != nil && c.flight.waiters == n-1
	})
	close(gate)
	wg.Wait()
	if got := host.calls.Load(); got != 1 {
		t.Fatalf("%d concurrent card requests made %d tool-list calls into the host, want 1", n, got)
	}
	for i := range n {
		// One ETag per document: the v1.0 card, the 0.3 card.
		if etags[i] != etags[i%2] || skillIDs(t, bodies[i]) != "search" {
			t.Errorf("request %d: ETag %s (first of its kind %s), skills %s", i, etags[i], etags[i%2], skillIDs(t, bodies[i]))
		}
	}

	// Within the interval, later requests do not reach the host either.
	host.mu.Lock()
	host.gate = nil
	host.mu.Unlock()
	for range 10 {
		fetchCard(t, e, "/.well-known/agent-card.json", nil)
	}
	clock.Advance(skillsTTL - time.Millisecond)
	fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if got := host.calls.Load(); got != 1 {
		t.Fatalf("within %s: %d tool-list calls, want 1", skillsTTL, got)
	}
	clock.Advance(time.Millisecond)
	fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if got := host.calls.Load(); got != 2 {
		t.Fatalf("after %s: %d tool-list calls, want 2", skillsTTL, got)
	}
}

func TestAgentCardShowsAToolChangeAfterTheIntervalWithCorrectValidators(t *testing.T) {
	clock := newTestClock()
	host := &countingTools{}
	host.set(skill("one"))
	e := newEnv(t, func(o *Options) { o.Skills = host.list; o.Now = clock.Now })
	const path = "/.well-known/agent-card.json"

	r1, b1 := fetchCard(t, e, path, nil)
	etag1, lm1 := r1.Header.Get("ETag"), r1.Header.Get("Last-Modified")
	host.set(skill("one"),
		skill("two"))

	// Still within the interval: the same card, and the validators agree.
	clock.Advance(time.Second)
	r2, b2 := fetchCard(t, e, path, nil)
	if string(b2) != string(b1) || r2.Header.Get("ETag") != etag1 || r2.Header.Get("Last-Modified") != lm1 {
		t.Fatalf("within the interval the card changed: ETag %s → %s", etag1, r2.Header.Get("ETag"))
	}
	if r, _ := fetchCard(t, e, path, map[string]string{"If-None-Match": etag1}); r.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation within the interval: HTTP %d, want 304", r.StatusCode)
	}

	// Past it the change shows, with a new ETag and Last-Modified; the old
	// validators no longer match.
	clock.Advance(skillsTTL)
	r3, b3 := fetchCard(t, e, path, nil)
	if got := skillIDs(t, b3); got != "one,two" {
		t.Fatalf("skills after the interval = %s, want one,two", got)
	}
	etag3, lm3 := r3.Header.Get("ETag"), r3.Header.Get("Last-Modified")
	if etag3 == etag1 || lm3 == lm1 {
		t.Fatalf("validators did not change with the card: ETag %s → %s, Last-Modified %s → %s", etag1, etag3, lm1, lm3)
	}
	if r, b := fetchCard(t, e, path, map[string]string{"If-None-Match": etag1}); r.StatusCode != http.StatusOK || skillIDs(t, b) != "one,two" {
		t.Fatalf("revalidation with the old ETag: HTTP %d", r.StatusCode)
	}
	if r, _ := fetchCard(t, e, path, map[string]string{"If-Modified-Since": lm1}); r.StatusCode != http.StatusOK {
		t.Fatalf("If-Modified-Since the old card: HTTP %d, want 200", r.StatusCode)
	}
	if r, _ := fetchCard(t, e, path, map[string]string{"If-None-Match": etag3}); r.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation with the new ETag: HTTP %d, want 304", r.StatusCode)
	}
	if got := host.calls.Load(); got != 2 {
		t.Errorf("%d tool-list calls, want 2 (one per interval)", got)
	}
}

func TestAgentCardFetchOutlivesTheRequestThatStartedIt(t *testing.T) {
	clock := newTestClock()
	host := &countingTools{gate: make(chan struct{})}
	host.set(skill("one"))
	e := newEnv(t, func(o *Options) { o.Skills = host.list; o.Now = clock.Now })

	// The first request starts the fetch and its client gives up.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/.well-known/agent-card.json", nil)
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the fetch to start", func() bool { return host.calls.Load() == 1 })
	secondDone := make(chan []byte)
	go func() {
		_, b := fetchCard(t, e, "/.well-known/agent-card.json", nil)
		secondDone <- b
	}()
	waitFor(t, "the second request to wait", func() bool {
		c := &e.srv.card.skillCache
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.flight != nil && c.flight.waiters == 1
	})
	cancel()
	<-firstDone
	close(host.gate)
	if got := skillIDs(t, <-secondDone); got != "one" {
		t.Fatalf("the waiting request got skills %s, want one (the shared fetch was cut)", got)
	}
	if got := host.calls.Load(); got != 1 {
		t.Fatalf("%d tool-list calls, want 1", got)
	}
}

func TestAgentCardCountsAgainstTheRateLimit(t *testing.T) {
	const path = "/.well-known/agent-card.json"
	t.Run("peers", func(t *testing.T) {
		clock := newTestClock()
		host := &countingTools{}
		e := newEnv(t, func(o *Options) {
			o.Skills = host.list
			o.RateLimit = security.NewRateLimiter(3, clock.Now)
		})
		// An anonymous remote caller has its own budget of 3.
		for i := range 3 {
			if r, _ := fetchCard(t, e, path, nil); r.StatusCode != http.StatusOK {
				t.Fatalf("request %d: HTTP %d", i, r.StatusCode)
			}
		}
		r, body := fetchCard(t, e, path, nil)
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "60" ||
			r.Header.Get("Cache-Control") != "no-store" || !strings.Contains(string(body), "rate limit") {
			t.Fatalf("over the limit: HTTP %d, Retry-After %q, Cache-Control %q, body %q",
				r.StatusCode, r.Header.Get("Retry-After"), r.Header.Get("Cache-Control"), body)
		}
		// The conditional and legacy paths count too.
		if r, _ := fetchCard(t, e, "/.well-known/agent.json", map[string]string{"If-None-Match": "*"}); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("legacy path over the limit: HTTP %d", r.StatusCode)
		}
		var limited int
		for _, rec := range e.audit.all() {
			if rec.Method == "card" && rec.Outcome == outcomeRateLimited && rec.Identity == "anon:127.0.0.1" {
				limited++
			}
		}
		if limited != 2 {
			t.Errorf("%d rate-limited card records, want 2: %+v", limited, e.audit.all())
		}

		// A bad token counts against the caller's address, as everywhere.
		for range 3 {
			fetchCard(t, e, path, map[string]string{"Authorization": "Bearer wrong"})
		}
		if r, _ := fetchCard(t, e, path, map[string]string{"Authorization": "Bearer wrong"}); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("bad token over the limit: HTTP %d", r.StatusCode)
		}

		// Card requests and JSON-RPC requests share alice's budget.
		e.ok(tokAlice, "ListTasks", &a2a.ListTasksRequest{})
		if r, _ := fetchCard(t, e, path, map[string]string{"Authorization": "Bearer " + tokAlice}); r.StatusCode != http.StatusOK {
			t.Fatalf("alice's card: HTTP %d", r.StatusCode)
		}
		e.ok(tokAlice, "ListTasks", &a2a.ListTasksRequest{})
		if r, _ := fetchCard(t, e, path, map[string]string{"Authorization": "Bearer " + tokAlice}); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("alice's 4th request (a card): HTTP %d, want 429", r.StatusCode)
		}
		if rr := e.rpc(tokAlice, "ListTasks", &a2a.ListTasksRequest{}); rr.status != http.StatusTooManyRequests {
			t.Fatalf("alice's 5th request (JSON-RPC): HTTP %d, want 429", rr.status)
		}
		// The window passes.
		clock.Advance(security.RateWindow)
		if r, _ := fetchCard(t, e, path, nil); r.StatusCode != http.StatusOK {
			t.Fatalf("after the window: HTTP %d", r.StatusCode)
		}
	})
	t.Run("local", func(t *testing.T) {
		// With RateLimitLocal, loopback callers (the Local tier) are limited
		// per identity as on the A2A endpoints: card and JSON-RPC share one
		// budget. (By default they are exempt: see local_test.go.)
		clock := newTestClock()
		e := newEnv(t, func(o *Options) {
			o.Auth = testAuth(t, true)
			o.RateLimit = security.NewRateLimiter(3, clock.Now)
			o.RateLimitLocal = true
		})
		for i := range 2 {
			if r, _ := fetchCard(t, e, path, nil); r.StatusCode != http.StatusOK {
				t.Fatalf("request %d: HTTP %d", i, r.StatusCode)
			}
		}
		e.ok("", "ListTasks", &a2a.ListTasksRequest{})
		if r, _ := fetchCard(t, e, path, nil); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("local caller's 4th request (a card): HTTP %d, want 429", r.StatusCode)
		}
		if rr := e.rpc("", "ListTasks", &a2a.ListTasksRequest{}); rr.status != http.StatusTooManyRequests {
			t.Fatalf("local caller's 5th request (JSON-RPC): HTTP %d, want 429", rr.status)
		}
	})
}

// interfaceURLs fetches the public card with Host set to host and returns
// its interface URLs, and the url of the 0.3 card.
func interfaceURLs(t *testing.T, client *http.Client, base, host string) (urls []string, url03 string) {
	t.Helper()
	get := func(path string) []byte {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("Host %s: HTTP %d %s", host, resp.StatusCode, body)
		}
		return body
	}
	card, _ := splitCard(t, get("/.well-known/agent-card.json"))
	for _, in := range card.SupportedInterfaces {
		urls = append(urls, in.URL)
	}
	u, _ := card03(t, get("/.well-known/agent.json"))["url"].(string)
	return urls, u
}

func TestAgentCardDoesNotReflectAForeignHost(t *testing.T) {
	e := newEnv(t)
	port := e.ts.Listener.Addr().(*net.TCPAddr).Port
	listener := e.url // http://127.0.0.1:<port>
	for host, want := range map[string]string{
		"evil.example":                       listener,
		"evil.example:" + strconv.Itoa(port): listener,
		"agent.internal.example:80":          listener,
		"10.1.2.3:" + strconv.Itoa(port):     listener,                // an IP literal that is not this listener
		"127.0.0.1:9999":                     "http://127.0.0.1:9999", // loopback: e.g. a proxy on this machine
		"localhost":                          "http://localhost",
		"127.0.0.1:" + strconv.Itoa(port):    listener,
		"localhost:" + strconv.Itoa(port):    "http://localhost:" + strconv.Itoa(port),
		"[::1]:" + strconv.Itoa(port):        "http://[::1]:" + strconv.Itoa(port),
	} {
		urls, url03 := interfaceURLs(t, http.DefaultClient, e.url, host)
		wantURLs := []string{want + "/", want + "/", want, grpcTarget(want)}
		if strings.Join(urls, " ") != strings.Join(wantURLs, " ") || url03 != want+"/" {
			t.Errorf("Host %q: interfaces %v, 0.3 url %q; want %v", host, urls, url03, wantURLs)
		}
	}

	// The extended card (JSON-RPC, authenticated) follows the same rule.
	withExt := newEnv(t, func(o *Options) {
		o.Card.ExtendedSkills = []a2a.AgentSkill{{ID: "x", Name: "X", Description: "Extra.", Tags: []string{"x"}}}
	})
	req, _ := http.NewRequest(http.MethodPost, withExt.url+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`))
	req.Host = "evil.example"
	_, _, body := withExt.do(req, tokAlice, map[string]string{"Content-Type": "application/json"})
	res := decode[struct {
		Result a2a.AgentCard `json:"result"`
	}](t, body)
	if len(res.Result.SupportedInterfaces) == 0 || res.Result.SupportedInterfaces[0].URL != withExt.url+"/" {
		t.Errorf("extended card with a foreign Host: %s", body)
	}

	// A configured public URL wins over any Host.
	pub := newEnv(t, func(o *Options) { o.Card.PublicURL = "https://agent.example.com/a2a" })
	for _, host := range []string{"evil.example", "127.0.0.1:" + strconv.Itoa(pub.ts.Listener.Addr().(*net.TCPAddr).Port)} {
		urls, _ := interfaceURLs(t, http.DefaultClient, pub.url, host)
		if urls[0] != "https://agent.example.com/a2a/" {
			t.Errorf("public URL, Host %q: interfaces %v", host, urls)
		}
	}
}

// selfSignedFor writes a self-signed certificate for dnsName and 127.0.0.1
// into dir and returns the file paths and a pool trusting it.
func selfSignedFor(t *testing.T, dir, dnsName string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	return testcert.Write(t, dir, dnsName)
}

func TestAgentCardOverTLSNamesOnlyHostsTheCertificateCovers(t *testing.T) {
	e := newEnv(t)
	certFile, keyFile, pool := selfSignedFor(t, t.TempDir(), "agent.example.com")
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(base)
	port := u.Port()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	for host, want := range map[string]string{
		"agent.example.com:" + port: "https://agent.example.com:" + port, // the certificate's name
		"agent.example.com":         "https://agent.example.com",         // e.g. through port forwarding
		"evil.example:" + port:      base,
		"127.0.0.1:" + port:         base,
	} {
		urls, _ := interfaceURLs(t, client, base, host)
		if urls[0] != want+"/" {
			t.Errorf("Host %q: interface %s, want %s/", host, urls[0], want)
		}
	}
}

// TestAgentCardsOverTLSNameHostsTheCertificateCovers: with several
// agents, every agent's card (not only the default one's) knows the
// certificate Start serves, so each names the host the certificate
// covers rather than the address the request came in on.
func TestAgentCardsOverTLSNameHostsTheCertificateCovers(t *testing.T) {
	e := newAgentsEnv(t)
	certFile, keyFile, pool := selfSignedFor(t, t.TempDir(), "agent.example.com")
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(base)
	host := "agent.example.com:" + u.Port()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	for path, want := range map[string]string{
		"/.well-known/agent-card.json":             "https://" + host + "/",
		"/agents/beta/.well-known/agent-card.json": "https://" + host + "/agents/beta/",
	} {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, body)
		}
		card, _ := splitCard(t, body)
		var got string
		for _, in := range card.SupportedInterfaces {
			if in.ProtocolBinding == a2a.BindingJSONRPC {
				got = in.URL
			}
		}
		if got != want {
			t.Errorf("%s: JSON-RPC interface %q, want %q", path, got, want)
		}
	}
}
