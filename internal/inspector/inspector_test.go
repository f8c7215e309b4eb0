package inspector

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/metrics"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// fakeWatcher plays tasks.Manager.Watch.
type fakeWatcher struct {
	mu  sync.Mutex
	fns []func(tasks.Change)
}

func (w *fakeWatcher) Watch(fn func(tasks.Change)) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fns = append(w.fns, fn)
	i := len(w.fns) - 1
	return func() { w.mu.Lock(); w.fns[i] = nil; w.mu.Unlock() }
}

func (w *fakeWatcher) tell(c tasks.Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, fn := range w.fns {
		if fn != nil {
			fn(c)
		}
	}
}

// cardJSON is what the fake server's card route answers.
const cardJSON = `{"name":"Test Agent","description":"Answers tests.","version":"2.0.0",
 "supportedInterfaces":[{"url":"http://127.0.0.1:1/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
 "capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "skills":[{"id":"web_search","name":"web_search","description":"Search the web <fast>.","tags":["search"]}]}`

type env struct {
	t       *testing.T
	in      *Inspector
	store   *store.Memory
	watch   *fakeWatcher
	srv     *httptest.Server
	calls   chan toolCall
	metrics *metrics.Metrics
}

// toolCall is a tool call the inspector made.
type toolCall struct{ tool, args string }

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, store: store.NewMemory(100), watch: &fakeWatcher{}, calls: make(chan toolCall, 4), metrics: metrics.New()}
	card := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, cardJSON)
	})
	in, err := New(Options{
		Tasks: e.watch, Store: e.store, Metrics: e.metrics, AgentName: "Test Agent",
		Server: func() http.Handler { return card },
		Peers: func(context.Context) []Peer {
			return []Peer{{Name: "bob", URL: "http://bob.example", Trust: "trusted", Reachable: true, Checked: time.Now(),
				Card: &a2a.AgentCard{Name: "Bob", Description: "Bob's agent", Version: "1"}}}
		},
		CallTool: func(ctx context.Context, tool, args string, progress func(string) error) (ToolResult, error) {
			e.calls <- toolCall{tool, args}
			_ = progress("bob: working")
			return ToolResult{Content: "bob completed the task:\nhi\n" + `{"peer":"bob","state":"COMPLETED","task_id":"t1","context_id":"c1"}`}, nil
		},
		PublicURL: "https://agent.example.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	e.in = in
	e.srv = httptest.NewServer(in.Handler())
	t.Cleanup(func() { in.Close(); e.srv.Close() })
	return e
}

func (e *env) do(method, path string, hdr map[string]string, body string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (e *env) get(path string) (*http.Response, string) { return e.do(http.MethodGet, path, nil, "") }

func (e *env) save(rec *store.TaskRecord) {
	e.t.Helper()
	if err := e.store.SaveTask(context.Background(), rec, nil); err != nil {
		e.t.Fatal(err)
	}
}

func text(s string) a2a.Part { return a2a.TextPart(s) }

func TestEveryAnswerForbidsFramingAndForeignContent(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/inspector/", "/inspector/tasks", "/inspector/send", "/inspector/peers", "/inspector/api/metrics", "/inspector/nope"} {
		resp, _ := e.get(path)
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy = %q", path, h.Get("Content-Security-Policy"))
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: X-Frame-Options %q, X-Content-Type-Options %q, Cache-Control %q", path, h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"), h.Get("Cache-Control"))
		}
	}
}

func TestPagesHaveNoInlineScriptAndAreLandmarked(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/inspector/", "/inspector/tasks", "/inspector/send", "/inspector/peers"} {
		resp, body := e.get(path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		if strings.Count(body, "<script") != 1 || !strings.Contains(body, `<script src="/inspector/static/inspector.js" defer></script>`) {
			t.Errorf("%s: want exactly the one external script, got %d <script tags", path, strings.Count(body, "<script"))
		}
		for _, want := range []string{`<main id="main"`, `<nav aria-label="Inspector">`, `<header`, `lang="en"`, `aria-current="page"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: lacks %s", path, want)
			}
		}
		if strings.Contains(body, " style=") || strings.Contains(body, "onclick") {
			t.Errorf("%s: inline style or handler (the CSP refuses them)", path)
		}
	}
	for _, name := range []string{"inspector.js", "inspector.css"} {
		resp, body := e.get("/inspector/static/" + name)
		if resp.StatusCode != 200 || len(body) < 1000 || resp.Header.Get("ETag") == "" {
			t.Errorf("static %s: %d, %d bytes, ETag %q", name, resp.StatusCode, len(body), resp.Header.Get("ETag"))
		}
	}
}

func TestOverviewShowsTheLiveCardEscaped(t *testing.T) {
	e := newEnv(t)
	_, body := e.get("/inspector/")
	for _, want := range []string{`id="card-name">Test Agent`, `data-skill="web_search"`, "Search the web &lt;fast&gt;.", "JSONRPC", `id="charts"`} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if strings.Contains(body, "<fast>") {
		t.Error("overview did not escape the card's text")
	}
}

func TestTaskListFiltersByStateAndPeerAndServesRowsFragment(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	e.save(&store.TaskRecord{Task: a2a.Task{ID: "task-alice", ContextID: "ctx-a", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}},
		Owner: "peer:alice", CreatedAt: now, UpdatedAt: now})
	e.save(&store.TaskRecord{Task: a2a.Task{ID: "task-bob", ContextID: "ctx-b", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{text("<b>thinking</b>")}}}},
		Owner: "peer:bob", CreatedAt: now, UpdatedAt: now.Add(time.Second)})

	_, body := e.get("/inspector/tasks")
	if !strings.Contains(body, `data-task-id="task-alice"`) || !strings.Contains(body, `data-task-id="task-bob"`) || !strings.Contains(body, "peer:alice") {
		t.Fatalf("list lacks a task or its peer:\n%s", body)
	}
	if !strings.Contains(body, "&lt;b&gt;thinking&lt;/b&gt;") {
		t.Error("the latest message is not shown escaped")
	}
	_, body = e.get("/inspector/tasks?state=TASK_STATE_WORKING")
	if strings.Contains(body, `data-task-id="task-alice"`) || !strings.Contains(body, `data-task-id="task-bob"`) {
		t.Error("state filter: want only task-bob")
	}
	_, body = e.get("/inspector/tasks?peer=peer:alice")
	if !strings.Contains(body, `data-task-id="task-alice"`) || strings.Contains(body, `data-task-id="task-bob"`) {
		t.Error("peer filter: want only task-alice")
	}
	_, frag := e.get("/inspector/tasks?peer=peer:bob&fragment=rows")
	if !strings.HasPrefix(strings.TrimSpace(frag), `<tbody id="task-rows"`) || strings.Contains(frag, "<html") || !strings.Contains(frag, "task-bob") {
		t.Errorf("rows fragment = %q", frag)
	}
}

func TestTaskPageRendersHistoryArtifactsAndServesFilesSafely(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	html := []byte("<script>alert(1)</script>")
	e.save(&store.TaskRecord{Owner: "local:127.0.0.1", CreatedAt: now, UpdatedAt: now, Task: a2a.Task{ID: "t1", ContextID: "c1",
		Status:  a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: &a2a.Message{MessageID: "q", Role: a2a.RoleAgent, Parts: []a2a.Part{text("Which day?")}}},
		History: []a2a.Message{{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{text("book a table <now>")}}},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Name: "report", Parts: []a2a.Part{
			a2a.FilePart(png, "image/png", "chart.png"),
			a2a.FilePart(html, "text/html", "page.html"),
			a2a.DataPart(map[string]any{"score": 0.9}),
			a2a.URLPart("https://example.com/x.pdf", "application/pdf", "x.pdf"),
			a2a.URLPart("javascript:alert(1)", "text/plain", ""),
		}}}}})

	_, body := e.get("/inspector/tasks/t1")
	for _, want := range []string{"book a table &lt;now&gt;", "Which day?", `id="reply-form"`, `src="/inspector/tasks/t1/parts/a0-0"`,
		`&#34;score&#34;: 0.9`, `href="https://example.com/x.pdf"`, "chart.png", "page.html", `<code>javascript:alert(1)</code>`} {
		if !strings.Contains(body, want) {
			t.Errorf("task page lacks %q", want)
		}
	}
	if strings.Contains(body, `id="reply-form" hidden`) {
		t.Error("the reply form is hidden for an input-required task")
	}
	if strings.Contains(body, `href="javascript:`) {
		t.Error("a javascript: URL part became a link")
	}

	resp, got := e.get("/inspector/tasks/t1/parts/a0-0")
	if resp.Header.Get("Content-Type") != "image/png" || got != string(png) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("image part: %s, CSP %q", resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"))
	}
	resp, _ = e.get("/inspector/tasks/t1/parts/a0-1")
	if resp.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("an HTML part must download, never render: %s, %s", resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}
	for _, where := range []string{"a0-2", "a9-0", "h0-0", "x0-0", "a0-99", "s-7"} {
		if resp, _ := e.get("/inspector/tasks/t1/parts/" + where); resp.StatusCode != 404 {
			t.Errorf("part %s: %d, want 404 (not an inline file)", where, resp.StatusCode)
		}
	}
	_, frag := e.get("/inspector/tasks/t1?fragment=body")
	if strings.Contains(frag, "<html") || !strings.Contains(frag, `id="task-facts" data-state="TASK_STATE_INPUT_REQUIRED"`) {
		t.Errorf("body fragment = %.200q", frag)
	}
	if resp, _ := e.get("/inspector/tasks/nope"); resp.StatusCode != 404 {
		t.Errorf("unknown task: %d", resp.StatusCode)
	}
}

func TestOnlyLoopbackOrPublicHostNamesAreServed(t *testing.T) {
	e := newEnv(t)
	for host, want := range map[string]int{
		"127.0.0.1:41241": 200, "[::1]:41241": 200, "localhost:41241": 200, "inspector.localhost": 200,
		"agent.example.com": 200, "10.0.0.5": 200,
		"evil.example:41241": http.StatusMisdirectedRequest, "127.0.0.1.nip.io": http.StatusMisdirectedRequest,
	} {
		resp, _ := e.do(http.MethodGet, "/inspector/", map[string]string{"Host": host}, "")
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
	if e.in.hostAllowed("") {
		t.Error("an empty Host is accepted")
	}
}

func TestPeerSendRefusesCrossSiteRequests(t *testing.T) {
	e := newEnv(t)
	body := `{"message":"hi"}`
	json := map[string]string{"Content-Type": "application/json"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", CSRFHeader: "1"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for name, tc := range map[string]struct {
		hdr  map[string]string
		want int
	}{
		"no CSRF header":     {json, 403},
		"other origin":       {with(map[string]string{"Origin": "http://evil.example"}), 403},
		"cross-site fetch":   {with(map[string]string{"Sec-Fetch-Site": "cross-site"}), 403},
		"form content type":  {map[string]string{"Content-Type": "text/plain", CSRFHeader: "1"}, 415},
		"unknown peer":       {with(nil), 404},
		"unknown body field": {with(nil), 400},
	} {
		path, b := "/inspector/api/peers/bob/send", body
		switch name {
		case "unknown peer":
			path = "/inspector/api/peers/mallory/send"
		case "unknown body field":
			b = `{"message":"hi","files":[{"path":"/etc/passwd"}]}`
		}
		resp, got := e.do(http.MethodPost, path, tc.hdr, b)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, got, tc.want)
		}
	}
	select {
	case req := <-e.calls:
		t.Fatalf("a refused request reached the tool: %v", req)
	default:
	}
}

func TestPeerSendStreamsProgressAndResultOfA2ACall(t *testing.T) {
	e := newEnv(t)
	origin := e.srv.URL
	resp, body := e.do(http.MethodPost, "/inspector/api/peers/bob/send",
		map[string]string{"Content-Type": "application/json", CSRFHeader: "1", "Origin": origin, "Sec-Fetch-Site": "same-origin"},
		`{"message":"hello bob","context_id":"c1"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	req := <-e.calls
	var args map[string]any
	if err := json.Unmarshal([]byte(req.args), &args); err != nil || req.tool != "a2a_call" ||
		args["agent"] != "bob" || args["message"] != "hello bob" || args["context_id"] != "c1" || len(args) != 3 {
		t.Fatalf("tool call %s %s", req.tool, req.args)
	}
	for _, want := range []string{"event: start", "event: progress\ndata: {\"message\":\"bob: working\"}", "event: result", `"task_id":"t1"`, `"state":"COMPLETED"`} {
		if !strings.Contains(body, want) {
			t.Errorf("stream lacks %q:\n%s", want, body)
		}
	}
}

func TestLiveFeedTellsTaskChangesAndEndsOnEndStreams(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.srv.URL + "/inspector/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	readUntil := func(prefix string) string {
		t.Helper()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("feed ended before %q: %v", prefix, err)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
	}
	readUntil("retry:")
	// The watcher registered in New; subscribe happened before the first write.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.watch.tell(tasks.Change{TaskID: "t9", ContextID: "c9", Owner: "peer:alice", State: a2a.TaskStateWorking, CreatedAt: now, UpdatedAt: now})
	readUntil("event: task")
	data := readUntil("data: ")
	var ev map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &ev); err != nil || ev["taskId"] != "t9" || ev["peer"] != "peer:alice" ||
		ev["state"] != "TASK_STATE_WORKING" || ev["contextId"] != "c9" {
		t.Fatalf("event %s (%v)", data, err)
	}
	e.in.EndStreams()
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(r); done <- err }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("EndStreams did not end the open feed")
	}
}

func TestMetricsReportSamplesAndPeerFigures(t *testing.T) {
	e := newEnv(t)
	e.metrics.Exchange(security.AuditRecord{Identity: "peer:alice", Method: "SendMessage", Outcome: "ok", DurationMS: 3})
	e.metrics.Outbound("bob", "SendMessage", 5*time.Millisecond, nil)
	e.metrics.TaskTransition("", a2a.TaskStateWorking)
	_, body := e.get("/inspector/api/metrics")
	var got struct {
		Samples []sample      `json:"samples"`
		Peers   []peerFigures `json:"peers"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Samples) != 1 || got.Samples[0].InRequests != 1 || got.Samples[0].OutCalls != 1 || got.Samples[0].ActiveTasks != 1 {
		t.Fatalf("samples = %+v", got.Samples)
	}
	if len(got.Peers) != 2 || got.Peers[0].Direction != "outbound" || got.Peers[0].Peer != "bob" {
		t.Fatalf("peers = %+v", got.Peers)
	}
	// A second read within a second takes no new sample.
	_, body = e.get("/inspector/api/metrics")
	_ = json.Unmarshal([]byte(body), &got)
	if len(got.Samples) != 1 {
		t.Fatalf("%d samples after two quick reads, want 1", len(got.Samples))
	}
}

func TestPeersPageShowsPeersCallsAndConversations(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	at := time.Now()
	for i, d := range []string{store.DirectionSent, store.DirectionReceived} {
		if _, err := e.store.AppendConversation(ctx, &store.ConversationEntry{ContextID: "conv-1", Peer: "bob", Direction: d, TaskID: "rt1",
			Text: []string{"question <1>", "answer 2"}[i], State: "TASK_STATE_COMPLETED", Time: at.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	_, body := e.get("/inspector/peers")
	for _, want := range []string{`data-peer="bob"`, `data-reachable="true"`, "Bob&#39;s agent", "question &lt;1&gt;", "answer 2", `href="/inspector/conversations/conv-1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("peers page lacks %q", want)
		}
	}
	if _, err := e.store.AppendConversation(ctx, &store.ConversationEntry{ContextID: "odd/ctx?x=1", Peer: "bob", Direction: store.DirectionSent,
		Text: "odd", Time: at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	_, body = e.get("/inspector/peers")
	if !strings.Contains(body, `href="/inspector/conversations/odd%2Fctx%3Fx=1"`) {
		t.Error("a context id is not escaped as one path segment")
	}
	if resp, got := e.get("/inspector/conversations/odd%2Fctx%3Fx=1"); resp.StatusCode != 200 || !strings.Contains(got, "odd") {
		t.Errorf("conversation with an odd id: %d", resp.StatusCode)
	}
	_, body = e.get("/inspector/conversations/conv-1")
	if !strings.Contains(body, "Conversation with bob") || !strings.Contains(body, "answer 2") {
		t.Errorf("conversation page:\n%s", body)
	}
	if resp, _ := e.get("/inspector/conversations/none"); resp.StatusCode != 404 {
		t.Errorf("unknown conversation: %d", resp.StatusCode)
	}
}

// TestTaskPageListsItsDelegationsAndWhyACancelFailed: the page of a task
// whose turn delegated shows its chain and each remote task with where
// its cancel stands, the error of one that failed or is retried
// (escaped), and no such panel for a task that delegated nothing.
func TestTaskPageListsItsDelegationsAndWhyACancelFailed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	e.save(&store.TaskRecord{Owner: "peer:alice", CreatedAt: now, UpdatedAt: now, Task: a2a.Task{ID: "root", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}, Metadata: map[string]any{security.MetaChainID: "chain-tree1"}}})
	e.save(&store.TaskRecord{Owner: "peer:alice", CreatedAt: now, UpdatedAt: now, Task: a2a.Task{ID: "lonely", ContextID: "c2",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}})
	for _, d := range []store.Delegation{
		{ParentTaskID: "root", ChainID: "chain-tree1", Peer: "bob", RemoteTaskID: "tb", RemoteContextID: "cb", State: store.DelegationOpen},
		{ParentTaskID: "root", ChainID: "chain-tree1", Peer: "carol", RemoteTaskID: "tc", RemoteContextID: "cc", State: store.DelegationOpen},
		{ParentTaskID: "root", ChainID: "chain-tree1", Peer: "dave", RemoteTaskID: "td", RemoteContextID: "cd", State: store.DelegationOpen},
	} {
		if err := e.store.AddDelegation(ctx, &d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.EndDelegations(ctx, "root", true, "TASK_STATE_CANCELED", now); err != nil {
		t.Fatal(err)
	}
	ds, _ := e.store.Delegations(ctx, "root")
	ds[0].State, ds[0].RemoteState, ds[0].Attempts = store.DelegationCanceled, "TASK_STATE_CANCELED", 1
	ds[1].State, ds[1].Attempts, ds[1].LastError = store.DelegationFailed, 1, `carol refused to cancel task tc: "<b>cannot stop a running turn</b>"`
	ds[2].Attempts, ds[2].LastError, ds[2].NextTry = 2, "a2a peer dave: CancelTask: unreachable", now.Add(time.Minute)
	for i := range ds {
		ds[i].UpdatedAt = now
		if err := e.store.UpdateDelegation(ctx, &ds[i]); err != nil {
			t.Fatal(err)
		}
	}

	resp, body := e.get("/inspector/tasks/root")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("task page: HTTP %d", resp.StatusCode)
	}
	for _, want := range []string{"Delegated tasks", `id="task-chain">chain-tree1<`,
		`data-agent="bob" data-task-id="tb" data-state="canceled"`,
		`data-agent="carol" data-task-id="tc" data-state="cancel failed"`, "&lt;b&gt;cannot stop a running turn&lt;/b&gt;",
		`data-agent="dave" data-task-id="td" data-state="cancel retrying"`, "CancelTask: unreachable", "next attempt",
		`href="/inspector/conversations/cc"`} {
		if !strings.Contains(body, want) {
			t.Errorf("task page lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>cannot") {
		t.Error("the peer's error text was not escaped")
	}
	if _, body := e.get("/inspector/tasks/lonely"); strings.Contains(body, "Delegated tasks") {
		t.Error("a task that delegated nothing shows a delegations panel")
	}
}
