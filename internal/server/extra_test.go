package server

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

func TestExtraRoutesAreForLocalCallersAndWhomAllowAdmits(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "secret figures") })
	trustedOnly := func(id security.Identity) bool { return id.Tier == security.TierTrusted }
	e := newEnv(t, func(o *Options) {
		o.Extra = []ExtraRoute{{Pattern: "GET /ops", Handler: ok, Allow: trustedOnly}, {Pattern: "GET /local", Handler: ok}}
	})
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/ops", tokAlice, 200},      // trusted peer
		{"/ops", tokCarol, 403},      // public peer
		{"/ops", "", 403},            // anonymous (loopback is not local in these tests)
		{"/ops", "wrong-token", 401}, // bad token
		{"/local", tokAlice, 403},    // nil Allow: local callers only
	} {
		code, body := get(tc.path, tc.token)
		if code != tc.want {
			t.Errorf("GET %s with %q: %d %q, want %d", tc.path, tc.token, code, body, tc.want)
		}
		if code != 200 && strings.Contains(body, "secret figures") {
			t.Errorf("GET %s leaked the body to a refused caller", tc.path)
		}
	}
}

func TestObserverSeesEveryExchange(t *testing.T) {
	var mu sync.Mutex
	var recs []security.AuditRecord
	e := newEnv(t, func(o *Options) {
		o.Observer = func(r security.AuditRecord) { mu.Lock(); recs = append(recs, r); mu.Unlock() }
	})
	e.fails(tokAlice, "GetTask", map[string]any{"id": "nope"})
	e.send(tokBob, "hello", nil)
	mu.Lock()
	defer mu.Unlock()
	if len(recs) < 2 || recs[0].Method != "GetTask" || recs[0].Identity != "peer:alice" || recs[0].Outcome != "error" {
		t.Fatalf("records = %+v", recs)
	}
	if last := recs[len(recs)-1]; last.Method != "SendMessage" || last.Outcome != "ok" || last.Identity != "peer:bob" {
		t.Fatalf("last record = %+v", last)
	}
}

func TestBrowserPagesOfOtherOriginsCannotDriveTheAgent(t *testing.T) {
	e := newEnv(t)
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": map[string]any{"id": "x"}})
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"other origin", map[string]string{"Origin": "https://evil.example"}, 403},
		{"null origin", map[string]string{"Origin": "null"}, 403},
		{"fetch metadata", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same origin", map[string]string{"Origin": e.url}, 200},
		{"no origin (A2A clients)", nil, 200},
	} {
		status, _, raw := e.post(tokAlice, body, tc.hdr)
		if status != tc.want {
			t.Errorf("%s: HTTP %d, want %d: %s", tc.name, status, tc.want, raw)
		}
	}
	// The HTTP+JSON binding shares the check.
	req, _ := http.NewRequest(http.MethodGet, e.url+"/tasks/x", nil)
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("REST from another origin: HTTP %d, want 403", resp.StatusCode)
	}
}

func TestLoopbackCallersNamingADNSHostAreNotLocal(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Auth = testAuth(t, true) }) // loopback is Local
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": map[string]any{}})
	for host, want := range map[string]int{
		"rebind.evil.example:41241": 421, // a DNS-rebinding page sends its own name
		"localhost:41241":           200,
		"127.0.0.1:41241":           200,
	} {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader(string(body)))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+host) // same-origin from the page's point of view
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: HTTP %d, want %d", host, resp.StatusCode, want)
		}
	}
	// With a token the caller is identified by it, whatever the Host.
	req, _ := http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader(string(body)))
	req.Host = "agent.internal.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("token holder via a DNS name: HTTP %d", resp.StatusCode)
	}
}

func TestRefusedSendsDoNotUseUpAConversationsTurns(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Turns = security.NewTurnGuard(2) })
	first := e.send(tokAlice, "one", nil)
	// Bob knocks on alice's conversation many times and is refused.
	for i := 0; i < 5; i++ {
		e.fails(tokBob, "SendMessage", sendParams("intrude", func(r *a2a.SendMessageRequest) { r.Message.ContextID = first.ContextID }))
	}
	second := e.send(tokAlice, "two", func(r *a2a.SendMessageRequest) { r.Message.ContextID = first.ContextID })
	if second.Status.State == a2a.TaskStateRejected {
		t.Fatal("alice's second turn was rejected by the turn cap after bob's refused messages")
	}
}
