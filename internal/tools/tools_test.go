package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// progressLog records progress events.
type progressLog struct {
	mu    sync.Mutex
	lines []string
	ch    chan string
}

func newProgress() *progressLog { return &progressLog{ch: make(chan string, 100)} }

func (p *progressLog) fn(tp *pb.ToolProgress) error {
	p.mu.Lock()
	p.lines = append(p.lines, tp.Message)
	p.mu.Unlock()
	select {
	case p.ch <- tp.Message:
	default:
	}
	return nil
}

func (p *progressLog) all() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

func newToolset(t *testing.T, cfg Config, host plugin.Host) (*Toolset, store.Store) {
	t.Helper()
	st := store.NewMemory(1000)
	ts, err := New(cfg, Deps{Store: st, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts, st
}

func callTool(t *testing.T, ts *Toolset, name string, args any, prog *progressLog) *pb.ToolResult {
	t.Helper()
	return callToolCtx(context.Background(), t, ts, name, args, prog)
}

func callToolCtx(ctx context.Context, t *testing.T, ts *Toolset, name string, args any, prog *progressLog) *pb.ToolResult {
	t.Helper()
	return callToolFrom(ctx, Origin{}, t, ts, name, args, prog)
}

// callToolFrom calls a tool for the call org describes.
func callToolFrom(ctx context.Context, org Origin, t *testing.T, ts *Toolset, name string, args any, prog *progressLog) *pb.ToolResult {
	t.Helper()
	b, _ := json.Marshal(args)
	var pf plugin.ProgressFunc
	if prog != nil {
		pf = prog.fn
	}
	res, err := ts.CallFrom(ctx, org, &pb.CallToolRequest{Name: name, ArgumentsJson: string(b)}, pf)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func mustOK(t *testing.T, r *pb.ToolResult, contains ...string) {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result:\n%s", r.Content)
	}
	for _, c := range contains {
		if !strings.Contains(r.Content, c) {
			t.Fatalf("result lacks %q:\n%s", c, r.Content)
		}
	}
}

func mustErr(t *testing.T, r *pb.ToolResult, contains ...string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an error result, got:\n%s", r.Content)
	}
	for _, c := range contains {
		if !strings.Contains(r.Content, c) {
			t.Fatalf("error lacks %q:\n%s", c, r.Content)
		}
	}
}

// jsonLine returns the trailing JSON summary of a result.
func jsonLine(t *testing.T, r *pb.ToolResult) map[string]any {
	t.Helper()
	i := strings.LastIndex(r.Content, "{\"")
	var m map[string]any
	if i < 0 || json.Unmarshal([]byte(r.Content[i:]), &m) != nil {
		t.Fatalf("no JSON summary in:\n%s", r.Content)
	}
	return m
}

func TestToolSchemas(t *testing.T) {
	ts, _ := newToolset(t, Config{}, nil)
	defs, _ := ts.ListTools(context.Background())
	if len(defs) != 7 {
		t.Fatalf("%d tools", len(defs))
	}
	for _, d := range defs {
		var s map[string]any
		if err := json.Unmarshal([]byte(d.ParametersJsonSchema), &s); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if s["type"] != "object" || s["additionalProperties"] != false || s["properties"] == nil || s["required"] == nil || d.Description == "" {
			t.Errorf("%s: schema %v", d.Name, s)
		}
	}
	if _, err := ts.CallTool(context.Background(), &pb.CallToolRequest{Name: "nope"}, nil); err == nil {
		t.Fatal("unknown tool accepted")
	}
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": "x", "message": "m", "bogus": 1}, nil), `"bogus"`, "allowed")
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": 5, "message": "m"}, nil), `"agent" must be a string`)
	mustErr(t, callTool(t, ts, ToolTask, map[string]any{"agent": "x", "task_id": "t", "action": "x"}, nil), "no configured peer")
	mustErr(t, callTool(t, ts, ToolHistory, map[string]any{}, nil), `"context_id" is required`)
}

func TestDiscoverV1AndV03Cards(t *testing.T) {
	v1 := clienttest.StartGoV1(t, "Go Echo", true)
	v03 := clienttest.StartGoV03(t, "Old Echo")
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "v1", URL: v1.URL}, {Name: "old", URL: v03.URL}}}, nil)
	r := callTool(t, ts, ToolDiscover, map[string]any{"url": "v1"}, nil)
	mustOK(t, r, `Agent "Go Echo"`, "protocol 1.0", "streaming yes", "- echo (Echo)", "tags: echo, repeat", "Authentication: none required", "fetched now")
	r = callTool(t, ts, ToolDiscover, map[string]any{"url": "v1"}, nil)
	mustOK(t, r, "from cache")
	r = callTool(t, ts, ToolDiscover, map[string]any{"url": "v1", "refresh": true}, nil)
	mustOK(t, r, "Go Echo")
	r = callTool(t, ts, ToolDiscover, map[string]any{"url": "old"}, nil)
	mustOK(t, r, `Agent "Old Echo"`, "protocol 0.3", "compatibility path", "echo03")
}

func TestCallBlockingStreamingAndReceipts(t *testing.T) {
	plain := clienttest.StartGoV1(t, "Plain", false)
	streamer := clienttest.StartGoV1(t, "Streamer", true)
	ts, st := newToolset(t, Config{Agents: []config.Peer{{Name: "plain", URL: plain.URL}, {Name: "streamer", URL: streamer.URL}}}, nil)

	t.Run("blocking", func(t *testing.T) {
		r := callTool(t, ts, ToolCall, map[string]any{"agent": "plain", "message": "hello"}, nil)
		mustOK(t, r, "plain completed the task", "echo: hello", "context_id=")
	})
	t.Run("streaming with progress", func(t *testing.T) {
		prog := newProgress()
		r := callTool(t, ts, ToolCall, map[string]any{"agent": "streamer", "message": "slow job"}, prog)
		mustOK(t, r, "COMPLETED", "echo: slow job")
		if p := prog.all(); !strings.Contains(p, "progress 1/3") || !strings.Contains(p, "progress 3/3") {
			t.Fatalf("progress events: %q", p)
		}
	})
	t.Run("wait=false receipt, then get and cancel", func(t *testing.T) {
		r := callTool(t, ts, ToolCall, map[string]any{"agent": "plain", "message": "hang around", "wait": false}, nil)
		mustOK(t, r, "still working", "not waiting", "a2a_task")
		m := jsonLine(t, r)
		if m["receipt"] != true || m["task_id"] == "" {
			t.Fatalf("summary %v", m)
		}
		id := m["task_id"].(string)
		mustOK(t, callTool(t, ts, ToolTask, map[string]any{"agent": "plain", "task_id": id, "action": "get"}, nil), id)
		mustOK(t, callTool(t, ts, ToolTask, map[string]any{"agent": "plain", "task_id": id, "action": "cancel"}, nil), "CANCELED")
		mustOK(t, callTool(t, ts, ToolTask, map[string]any{"agent": "plain", "task_id": id, "action": "get"}, nil), "CANCELED")
	})
	t.Run("timeout receipt on a stream", func(t *testing.T) {
		r := callTool(t, ts, ToolCall, map[string]any{"agent": "streamer", "message": "hang on", "timeout_s": 0.3}, nil)
		mustOK(t, r, "still working", "stopped waiting after", "action=\"wait\"")
		id := jsonLine(t, r)["task_id"].(string)
		callTool(t, ts, ToolTask, map[string]any{"agent": "streamer", "task_id": id, "action": "cancel"}, nil)
	})
	t.Run("timeout receipt while polling, then wait", func(t *testing.T) {
		r := callTool(t, ts, ToolCall, map[string]any{"agent": "plain", "message": "slow poll", "timeout_s": 0.05}, nil)
		mustOK(t, r, "a2a_task")
		m := jsonLine(t, r)
		if m["receipt"] == true {
			r = callTool(t, ts, ToolTask, map[string]any{"agent": "plain", "task_id": m["task_id"], "action": "wait", "timeout_s": 10}, nil)
		}
		mustOK(t, r, "COMPLETED", "echo: slow poll")
	})
	t.Run("metrics", func(t *testing.T) {
		if m := ts.Metrics().Peer("plain"); m.Calls == 0 || m.P50 <= 0 {
			t.Fatalf("metrics %+v", m)
		}
	})
	_ = st
}

func TestCallInputRequiredAndHistory(t *testing.T) {
	js := clienttest.StartJS(t, "JS Echo")
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "js", URL: js.URL}}}, nil)
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "js", "message": "ask me"}, newProgress())
	mustOK(t, r, "needs more input", clienttest.Question, "To answer: a2a_call")
	m := jsonLine(t, r)
	if m["state"] != "INPUT_REQUIRED" {
		t.Fatalf("summary %v", m)
	}
	r = callTool(t, ts, ToolCall, map[string]any{"agent": "js", "message": "blue", "task_id": m["task_id"], "context_id": m["context_id"]}, nil)
	mustOK(t, r, "COMPLETED", "echo: blue")

	h := callTool(t, ts, ToolHistory, map[string]any{"context_id": m["context_id"]}, nil)
	mustOK(t, h, "4 entries")
	order := []string{"→ sent to js", "ask me", "← from js", clienttest.Question, "→ sent to js", "blue", "← from js", "echo: blue"}
	pos := 0
	for _, want := range order {
		i := strings.Index(h.Content[pos:], want)
		if i < 0 {
			t.Fatalf("history out of order at %q:\n%s", want, h.Content)
		}
		pos += i + len(want)
	}
	last := callTool(t, ts, ToolHistory, map[string]any{"context_id": m["context_id"], "limit": 1}, nil)
	mustOK(t, last, "1 entries", "echo: blue")

	l := callTool(t, ts, ToolList, map[string]any{}, nil)
	mustOK(t, l, "- js (", "reachable", m["context_id"].(string), "js: 2 calls, 0 errors")
}

func TestCallFilesAndDataOn03Peer(t *testing.T) {
	v1 := clienttest.StartGoV1(t, "Files", false)
	old := clienttest.StartGoV03(t, "Old")
	dir := t.TempDir()
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "files", URL: v1.URL}, {Name: "old", URL: old.URL}}, AttachmentRoots: []string{dir}}, nil)
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "files", "message": "see attached",
		"files": []any{map[string]any{"path": path}, map[string]any{"url": "https://example.com/a.pdf"}, map[string]any{"base64": "aGk=", "filename": "hi.bin"}},
		"data":  map[string]any{"k": 1}}, nil)
	mustOK(t, r, "[file notes.txt text/plain; charset=utf-8 10 bytes]", "[file url https://example.com/a.pdf application/pdf]", "hi.bin", `[data {"k":1}]`)
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": "files", "message": "x", "files": []any{map[string]any{"path": path, "url": "https://e.x"}}}, nil), "files[0]", "exactly one")
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": "files", "message": "x", "files": []any{map[string]any{"path": filepath.Join(dir, "no-such-file")}}}, nil), "files[0]", "cannot read")

	r = callTool(t, ts, ToolCall, map[string]any{"agent": "old", "message": "hello old friend", "data": []int{1, 2}}, nil)
	mustOK(t, r, "COMPLETED", "echo: hello old friend [data {\"value\":[1,2]}]")
	r = callTool(t, ts, ToolCall, map[string]any{"agent": "old", "message": "slow old", "wait": false}, nil)
	mustOK(t, r)
	if m := jsonLine(t, r); m["receipt"] == true {
		r = callTool(t, ts, ToolTask, map[string]any{"agent": "old", "task_id": m["task_id"], "action": "wait", "timeout_s": 10}, newProgress())
	}
	mustOK(t, r, "COMPLETED", "echo: slow old")
}

// capture is a minimal A2A peer that records what it was sent.
type capture struct {
	mu   sync.Mutex
	text []string
	srv  *httptest.Server
}

func newCapture(t *testing.T) *capture {
	c := &capture{}
	c.srv = fakePeer(t, "capture", "echo", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		var p a2a.SendMessageRequest
		_ = a2a.Unmarshal(req.Params, &p)
		c.mu.Lock()
		c.text = append(c.text, p.Message.Text())
		c.mu.Unlock()
		writeTask(w, req, "ctx-capture", "got it")
	})
	return c
}

// fakePeer serves a card with one skill and the given JSON-RPC handler.
func fakePeer(t *testing.T, name, skill string, rpc func(http.ResponseWriter, *http.Request, *a2a.Request)) *httptest.Server {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":%q,"description":"fake %s","version":"1","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		 "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		 "skills":[{"id":%q,"name":%q,"description":"does %s","tags":[%q,"fake"]}]}`, name, name, srv.URL, skill, skill, skill, skill)
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, perr := a2a.ParseRequest(body)
		if perr != nil {
			t.Errorf("invalid request: %v", perr)
			return
		}
		rpc(w, r, req)
	})
	return srv
}

func writeTask(w http.ResponseWriter, req *a2a.Request, contextID, answer string) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := a2a.EncodeResult(req.ID, map[string]any{"task": map[string]any{"id": "task-" + contextID, "contextId": contextID,
		"status":    map[string]any{"state": "TASK_STATE_COMPLETED"},
		"artifacts": []any{map[string]any{"artifactId": "a", "parts": []any{map[string]any{"text": answer}}}}}})
	w.Write(b)
}

func TestRedactionBeforeSending(t *testing.T) {
	c := newCapture(t)
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}}, nil)
	secret := "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "cap", "message": "use key " + secret + " please"}, nil)
	mustOK(t, r, "1 secret(s) were redacted")
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.text) != 1 || strings.Contains(c.text[0], secret) || !strings.Contains(c.text[0], security.RedactedMark) {
		t.Fatalf("peer saw %q", c.text)
	}
}

func TestDelegationDepthLimit(t *testing.T) {
	c := newCapture(t)
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}, MaxDepth: 2}, nil)
	org := Origin{Chain: security.Chain{ID: "chain-1", Depth: 2}}
	mustErr(t, callToolFrom(context.Background(), org, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "loop"}, nil), "refused", "depth 3")
	org = Origin{Chain: security.Chain{ID: "chain-1", Depth: 1}}
	mustOK(t, callToolFrom(context.Background(), org, t, ts, ToolCall, map[string]any{"agent": "cap", "message": "ok"}, nil), "got it")
}

func TestSSRFRefusals(t *testing.T) {
	c := newCapture(t) // a loopback server, not configured
	closed, _ := newToolset(t, Config{}, nil)
	mustErr(t, callTool(t, closed, ToolCall, map[string]any{"agent": c.srv.URL, "message": "hi"}, nil), "allow_unconfigured_urls, A2A_ALLOW_UNCONFIGURED_URLS, is off")
	mustErr(t, callTool(t, closed, ToolDiscover, map[string]any{"url": c.srv.URL}, nil), "allow_unconfigured_urls, A2A_ALLOW_UNCONFIGURED_URLS, is off")

	open, _ := newToolset(t, Config{AllowUnconfigured: true}, nil)
	for _, u := range []string{"http://10.1.2.3/", "http://192.168.1.1:8080", "http://169.254.169.254/latest/meta-data", "http://[fd00::1]/", c.srv.URL} {
		mustErr(t, callTool(t, open, ToolCall, map[string]any{"agent": u, "message": "hi"}, nil), "SSRF guard")
	}
	loop, _ := newToolset(t, Config{AllowUnconfigured: true, AllowLoopback: true}, nil)
	mustOK(t, callTool(t, loop, ToolCall, map[string]any{"agent": c.srv.URL, "message": "hi"}, nil), "got it")
	mustErr(t, callTool(t, loop, ToolCall, map[string]any{"agent": "http://10.1.2.3/", "message": "hi"}, nil), "SSRF guard")
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.text) != 1 {
		t.Fatalf("refused calls reached the peer: %q", c.text)
	}
}

// fakeHost answers Complete with a fixed text or Unimplemented.
type fakeHost struct {
	plugin.Host
	answer string
	prompt string
}

func (h *fakeHost) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	h.prompt = req.GetPrompt()
	if h.answer == "" {
		return nil, fmt.Errorf("no model: %w", plugin.ErrUnimplemented)
	}
	return &pb.CompleteResponse{Text: h.answer}, nil
}

func (h *fakeHost) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	return nil, fmt.Errorf("no memory: %w", plugin.ErrUnimplemented)
}

func TestRoute(t *testing.T) {
	trans := fakePeer(t, "translator", "translate", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		writeTask(w, req, "ctx-tr", "bonjour")
	})
	weather := fakePeer(t, "meteo", "forecast", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		writeTask(w, req, "ctx-wx", "sunny")
	})
	cfg := Config{Agents: []config.Peer{{Name: "translator", URL: trans.URL}, {Name: "meteo", URL: weather.URL}}}

	ts, _ := newToolset(t, cfg, nil)
	mustOK(t, callTool(t, ts, ToolRoute, map[string]any{"message": "ask meteo whether to bring an umbrella"}, nil), "Route: meteo", "matched by name")
	mustOK(t, callTool(t, ts, ToolRoute, map[string]any{"message": "please translate this sentence to French"}, nil), "Route: translator")
	mustOK(t, callTool(t, ts, ToolRoute, map[string]any{"message": "what is the forecast for tomorrow", "send": true}, nil), "Route: meteo", "sunny")
	mustOK(t, callTool(t, ts, ToolRoute, map[string]any{"message": "will it rain in Paris?"}, nil), "No peer clearly fits")

	picker := &fakeHost{answer: "meteo"}
	withModel, _ := newToolset(t, cfg, picker)
	mustOK(t, callTool(t, withModel, ToolRoute, map[string]any{"message": "will it rain in Paris?"}, nil), "Route: meteo", "host's model")
	if !strings.Contains(picker.prompt, "translator") || !strings.Contains(picker.prompt, "forecast") {
		t.Fatalf("prompt lacks the candidates' cards: %s", picker.prompt)
	}
	noModel, _ := newToolset(t, cfg, &fakeHost{})
	mustOK(t, callTool(t, noModel, ToolRoute, map[string]any{"message": "will it rain in Paris?"}, nil), "No peer clearly fits", "no model for semantic routing")
}

// orchestra is one good, one failing and one slow peer advertising
// "summarize".
type orchestra struct {
	release       chan struct{}
	slowCancelled chan struct{}
	slowStarted   chan struct{}
	cfg           Config
}

func newOrchestra(t *testing.T) *orchestra {
	o := &orchestra{release: make(chan struct{}), slowCancelled: make(chan struct{}, 1), slowStarted: make(chan struct{}, 1)}
	good := fakePeer(t, "good", "summarize", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		// Answer only once the slow peer is busy, so that "first" has an
		// in-flight request to cancel.
		select {
		case <-o.slowStarted:
		case <-time.After(5 * time.Second):
		}
		writeTask(w, req, "ctx-good", "short")
	})
	bad := fakePeer(t, "bad", "summarize", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(a2a.EncodeError(req.ID, a2a.ErrInternal("model crashed")))
	})
	slow := fakePeer(t, "slow", "summarize", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		select {
		case o.slowStarted <- struct{}{}:
		default:
		}
		select {
		case <-o.release:
			writeTask(w, req, "ctx-slow", "a much longer and more thorough summary")
		case <-r.Context().Done():
			o.slowCancelled <- struct{}{}
		}
	})
	t.Cleanup(func() {
		select {
		case <-o.release:
		default:
			close(o.release)
		}
	})
	o.cfg = Config{Agents: []config.Peer{{Name: "good", URL: good.URL}, {Name: "bad", URL: bad.URL}, {Name: "slow", URL: slow.URL, Timeout: config.Duration(30 * time.Second)}}}
	return o
}

func TestOrchestrateAllWaitsForTheSlowestOnly(t *testing.T) {
	o := newOrchestra(t)
	ts, st := newToolset(t, o.cfg, nil)
	prog := newProgress()
	done := make(chan *pb.ToolResult, 1)
	go func() {
		done <- callTool(t, ts, ToolOrchestrate, map[string]any{"capability": "SUMMARIZE", "message": "summarise x", "mode": "all", "timeout_s": 30}, prog)
	}()
	seen := map[string]bool{}
	for !(seen["good"] && seen["bad"]) {
		select {
		case line := <-prog.ch:
			seen[strings.SplitN(line, ":", 2)[0]] = true
		case r := <-done:
			t.Fatalf("orchestrate returned before the slow peer was released:\n%s", r.Content)
		case <-time.After(10 * time.Second):
			t.Fatal("good and bad peers did not report")
		}
	}
	// The good reply is recorded while the slow peer still works.
	if e, err := st.Conversation(context.Background(), "ctx-good", 0); err != nil || len(e) == 0 {
		t.Fatalf("good reply not recorded before release: %v %v", e, err)
	}
	select {
	case r := <-done:
		t.Fatalf("returned before release:\n%s", r.Content)
	default:
	}
	close(o.release)
	r := <-done
	mustOK(t, r, "good completed the task", "short", "bad failed", "model crashed", "slow completed the task", "thorough")
}

func TestOrchestrateFirstCancelsTheOthers(t *testing.T) {
	o := newOrchestra(t)
	ts, _ := newToolset(t, o.cfg, nil)
	r := callTool(t, ts, ToolOrchestrate, map[string]any{"capability": "summarize", "message": "summarise x", "mode": "first"}, nil)
	mustOK(t, r, "First successful reply, from good", "short")
	select {
	case <-o.slowCancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow peer's request was not cancelled")
	}
	if !strings.Contains(r.Content, "Cancelled the others: slow") && !strings.Contains(r.Content, "slow (request cancelled") {
		t.Fatalf("result does not report the cancellation:\n%s", r.Content)
	}
}

func TestOrchestrateBest(t *testing.T) {
	o := newOrchestra(t)
	close(o.release) // slow answers at once, with the longer answer
	ts, _ := newToolset(t, o.cfg, nil)
	r := callTool(t, ts, ToolOrchestrate, map[string]any{"capability": "fake", "message": "summarise x", "mode": "best"}, nil)
	mustOK(t, r, "Best reply, from slow", "thorough", "- bad: error", "- good: COMPLETED")

	failing := fakePeer(t, "bad2", "broken", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) { w.WriteHeader(500) })
	ts2, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "bad2", URL: failing.URL}}}, nil)
	mustErr(t, callTool(t, ts2, ToolOrchestrate, map[string]any{"capability": "broken", "message": "x", "mode": "best"}, nil), "Every peer failed", "bad2 failed")
	mustErr(t, callTool(t, ts2, ToolOrchestrate, map[string]any{"capability": "nothing", "message": "x", "mode": "all"}, nil), "no configured peer advertises")
	mustErr(t, callTool(t, ts2, ToolOrchestrate, map[string]any{"capability": "broken", "message": "x", "mode": "most"}, nil), `"mode" must be`)
}
