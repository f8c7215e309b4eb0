package security_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/testcert"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// Tokens used across the suite. They are long and distinctive so that a
// test can grep for them in logs, audit files and responses.
const (
	tokAlice  = "alice-token-7f3c9a1e5b2d4c6f8a0b"
	tokBob    = "bob-token-2e4d6f8a0c1b3d5e7f9a"
	tokCarol  = "carol-token-9a8b7c6d5e4f3a2b1c0d"
	tokShared = "shared-token-1234abcd5678efgh9012"
)

// secretKey is what a host's agent must never leak to a peer.
const secretKey = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f"

// peerTokens is A2A_PEER_TOKENS for alice, bob and carol.
var peerTokens = "alice:" + tokAlice + ",bob:" + tokBob + ",carol:" + tokCarol

// hostOpts are the knobs of startHost.
type hostOpts struct {
	agent   testharness.Behavior
	config  map[string]any
	env     map[string]string
	dataDir string
}

// startHost launches the real plugin binary under a harness host with an
// in-memory store on a free port; opts.config and opts.env are merged over
// that.
func startHost(t *testing.T, o hostOpts) *testharness.Host {
	t.Helper()
	cfg := map[string]any{"port": 0, "store": "memory"}
	for k, v := range o.config {
		cfg[k] = v
	}
	h := testharness.Start(t, testharness.Options{
		Agent:        o.agent,
		PluginConfig: cfg,
		Env:          o.env,
		DataDir:      o.dataDir,
		LogLevel:     "info",
	})
	if h.Endpoint("a2a") == "" {
		t.Fatalf("the a2a plugin has no endpoint (endpoints %v)", h.Endpoints("a2a"))
	}
	return h
}

// scenario builds a scripted agent from rules and a default action list.
func scenario(rules []testharness.Rule, def ...testharness.Action) *testharness.Scenario {
	s := &testharness.Scenario{Name: "security-e2e", Rules: rules}
	if len(def) > 0 {
		s.Default = &testharness.Rule{Actions: def}
	}
	return s
}

// when is a rule for messages whose own words (parts_text) contain marker.
func when(marker string, actions ...testharness.Action) testharness.Rule {
	return testharness.Rule{
		Name:    marker,
		Match:   []testharness.Condition{testharness.Match("parts_text", testharness.OpContains, marker)},
		Actions: actions,
	}
}

// ---- JSON-RPC client -------------------------------------------------------

// client talks JSON-RPC to one endpoint with one token ("" for none).
type client struct {
	base  string
	token string
	hc    *http.Client
	hdr   map[string]string
}

// newClient returns a client with its own connection pool.
func newClient(base, token string) *client {
	return &client{base: strings.TrimSuffix(base, "/"), token: token, hc: &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second},
	}}
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) String() string {
	if e == nil {
		return "<no error>"
	}
	return fmt.Sprintf("%d %q data=%s", e.Code, e.Message, e.Data)
}

// resp is one HTTP answer to a JSON-RPC request.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
	Result json.RawMessage
	Err    *rpcError
}

func (r *resp) String() string {
	if r == nil {
		return "<nil>"
	}
	b := r.Body
	if len(b) > 600 {
		b = append(b[:600:600], "…"...)
	}
	return fmt.Sprintf("HTTP %d %s", r.Status, b)
}

// reason returns the ErrorInfo reason of the error, if any.
func (r *resp) reason() string {
	if r.Err == nil {
		return ""
	}
	var details []struct {
		Type   string `json:"@type"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(r.Err.Data, &details)
	for _, d := range details {
		if strings.HasSuffix(d.Type, "ErrorInfo") {
			return d.Reason
		}
	}
	return ""
}

// call sends a JSON-RPC request with params and decodes the answer.
func (c *client) call(ctx context.Context, method string, params any) (*resp, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	return c.post(ctx, body, nil)
}

// post sends a raw body with extra headers.
func (c *client) post(ctx context.Context, body []byte, hdr map[string]string) (*resp, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return c.do(req)
}

func (c *client) do(req *http.Request) (*resp, error) {
	hr, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	b, err := io.ReadAll(hr.Body)
	if err != nil {
		return nil, err
	}
	out := &resp{Status: hr.StatusCode, Header: hr.Header, Body: b}
	if len(b) > 0 {
		var env struct {
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			return out, fmt.Errorf("answer is not JSON-RPC: %w (%s)", err, out)
		}
		out.Result, out.Err = env.Result, env.Error
	}
	return out, nil
}

// mustCall is call that fails the test on a transport error.
func (c *client) mustCall(t testing.TB, ctx context.Context, method string, params any) *resp {
	t.Helper()
	r, err := c.call(ctx, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return r
}

// msgOpt changes a message built by message.
type msgOpt func(m map[string]any)

func inContext(id string) msgOpt { return func(m map[string]any) { m["contextId"] = id } }
func inTask(id string) msgOpt    { return func(m map[string]any) { m["taskId"] = id } }
func withMeta(md map[string]any) msgOpt {
	return func(m map[string]any) { m["metadata"] = md }
}
func withParts(parts ...map[string]any) msgOpt {
	return func(m map[string]any) { m["parts"] = parts }
}

var msgSeq atomic.Int64

// message builds a v1.0 user message with one text part.
func message(text string, opts ...msgOpt) map[string]any {
	m := map[string]any{
		"role":      "ROLE_USER",
		"messageId": fmt.Sprintf("sec-e2e-%d-%d", time.Now().UnixNano(), msgSeq.Add(1)),
		"parts":     []map[string]any{{"text": text}},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

// sendParams wraps a message as SendMessage params.
func sendParams(m map[string]any) map[string]any { return map[string]any{"message": m} }

// task is the part of a task the tests look at.
type task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string          `json:"state"`
		Message json.RawMessage `json:"message"`
	} `json:"status"`
}

// send sends a blocking SendMessage and returns the task it answered with.
func (c *client) send(t testing.TB, ctx context.Context, text string, opts ...msgOpt) (*task, *resp) {
	t.Helper()
	r := c.mustCall(t, ctx, "SendMessage", sendParams(message(text, opts...)))
	if r.Status != http.StatusOK || r.Err != nil {
		return nil, r
	}
	var res struct {
		Task *task `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.Task == nil {
		t.Fatalf("SendMessage: no task in %s (%v)", r, err)
	}
	return res.Task, r
}

// mustSend is send that fails the test unless a task came back.
func (c *client) mustSend(t testing.TB, ctx context.Context, text string, opts ...msgOpt) *task {
	t.Helper()
	tk, r := c.send(t, ctx, text, opts...)
	if tk == nil {
		t.Fatalf("SendMessage %q: %s", text, r)
	}
	return tk
}

// getTask returns a task by id (full history).
func (c *client) getTask(t testing.TB, ctx context.Context, id string) (*task, *resp) {
	t.Helper()
	r := c.mustCall(t, ctx, "GetTask", map[string]any{"id": id})
	if r.Err != nil || r.Status != http.StatusOK {
		return nil, r
	}
	var tk task
	if err := json.Unmarshal(r.Result, &tk); err != nil {
		t.Fatalf("GetTask: %v (%s)", err, r)
	}
	return &tk, r
}

// stream opens a streaming request and returns the raw events as they
// come; the channel closes when the stream ends. The first value is the
// HTTP answer (for a refused stream: the JSON body).
func (c *client) stream(ctx context.Context, method string, params any) (*http.Response, <-chan string, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hr, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	events := make(chan string, 64)
	if !strings.HasPrefix(hr.Header.Get("Content-Type"), "text/event-stream") {
		close(events)
		return hr, events, nil
	}
	go func() {
		defer close(events)
		defer hr.Body.Close()
		sc := bufio.NewScanner(hr.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case events <- data:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return hr, events, nil
}

// ---- recorder helpers ------------------------------------------------------

// handleMessageFor waits for the HandleMessage of a task.
func handleMessageFor(t testing.TB, ctx context.Context, h *testharness.Host, taskID string) *pb.HandleMessageRequest {
	t.Helper()
	c, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindHandleMessage && c.TaskID == taskID
	})
	if err != nil {
		t.Fatalf("no HandleMessage for task %s: %v", taskID, err)
	}
	return c.HandleMessage()
}

// reachedHost reports whether any HandleMessage was recorded for the task.
func reachedHost(h *testharness.Host, taskID string) bool {
	return len(h.Recorder().Filter(func(c testharness.Call) bool {
		return c.Kind == testharness.KindHandleMessage && c.TaskID == taskID
	})) > 0
}

// ---- webhook receiver ------------------------------------------------------

// webhook is a loopback push-notification receiver.
type webhook struct {
	srv *httptest.Server

	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	got    chan struct{}
}

func newWebhook(t *testing.T) *webhook {
	w := &webhook{got: make(chan struct{}, 1024)}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.bodies = append(w.bodies, b)
		w.heads = append(w.heads, r.Header.Clone())
		w.mu.Unlock()
		select {
		case w.got <- struct{}{}:
		default:
		}
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

// all returns every body received so far.
func (w *webhook) all() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]byte(nil), w.bodies...)
}

// waitFor waits until some received body contains every substring.
func (w *webhook) waitFor(ctx context.Context, subs ...string) ([]byte, error) {
	for {
		for _, b := range w.all() {
			ok := true
			for _, s := range subs {
				ok = ok && bytes.Contains(b, []byte(s))
			}
			if ok {
				return b, nil
			}
		}
		select {
		case <-w.got:
		case <-ctx.Done():
			return nil, fmt.Errorf("no webhook body with %q; got %d bodies: %s", subs, len(w.all()), bytes.Join(w.all(), []byte("\n")))
		}
	}
}

// ---- TLS -------------------------------------------------------------------

// selfSigned writes a self-signed certificate for 127.0.0.1 and localhost
// into dir and returns the file paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	return testcert.Write(t, dir, "localhost")
}

// tlsClient returns a client trusting pool.
func tlsClient(base, token string, pool *x509.CertPool) *client {
	c := newClient(base, token)
	c.hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return c
}

// ---- networking ------------------------------------------------------------

// externalIPv4 returns a non-loopback IPv4 address of this machine, or "".
// Connecting to it from here stays on this machine; it shows whether a
// server listens beyond loopback.
func externalIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// portOf returns the port of a base URL.
func portOf(t testing.TB, base string) string {
	t.Helper()
	hp := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	hp = strings.TrimSuffix(hp, "/")
	_, port, err := net.SplitHostPort(hp)
	if err != nil {
		t.Fatalf("endpoint %q: %v", base, err)
	}
	return port
}

// reserveLoopbackPort returns a free loopback port. The listener is closed
// when the function returns, so another process could take the port in the
// meantime; the window is short and only used where a configuration must
// name a port before the server starts (a ring of agents).
func reserveLoopbackPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ctxFor returns a context bounded by d and the test's deadline.
func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// containsAny reports which of subs occur in s.
func containsAny(s string, subs ...string) []string {
	var out []string
	for _, x := range subs {
		if strings.Contains(s, x) {
			out = append(out, x)
		}
	}
	return out
}
