// Package inbound_test proves the inbound side of the A2A plugin end to end:
// every test launches the real cmd/a2a-plugin binary through the test
// harness (go-plugin handshake, Describe, Configure, Connect — exactly as a
// host does) and talks A2A to it over real HTTP. Every JSON body and SSE
// event received is validated against the A2A v1.0.1 JSON Schema through
// internal/a2a/a2atest (0.3-shaped answers: the JSON-RPC envelope only).
//
// The host's agent is testdata/agent.yaml (scripted rules matched on the
// sender's words, parts_text) behind a small Go wrapper (gatedAgent) that
// adds what a script cannot do: turns that wait until the test releases
// them, and a tool registry the test can change.
package inbound_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// The task states as they appear on the wire.
const (
	stSubmitted     = "TASK_STATE_SUBMITTED"
	stWorking       = "TASK_STATE_WORKING"
	stCompleted     = "TASK_STATE_COMPLETED"
	stFailed        = "TASK_STATE_FAILED"
	stCanceled      = "TASK_STATE_CANCELED"
	stRejected      = "TASK_STATE_REJECTED"
	stInputRequired = "TASK_STATE_INPUT_REQUIRED"
	stAuthRequired  = "TASK_STATE_AUTH_REQUIRED"
)

// waitTimeout bounds every wait of a test for something the plugin or the
// agent does. It is generous on purpose: it only decides how long a broken
// build takes to fail, never whether a working one passes.
const waitTimeout = 30 * time.Second

// baseConfig is the plugin configuration every host starts from: a free
// port, the memory store, and limits that parallel tests from one loopback
// identity would otherwise hit (rate limit, per-context turn cap, streams).
func baseConfig(extra map[string]any) map[string]any {
	cfg := map[string]any{
		"port":                 0,
		"store":                "memory",
		"rate_limit":           0,
		"max_pingpong_turns":   20,
		"max_streams_per_peer": 512,
		"audit_log":            "off",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// ---------------------------------------------------------------------------
// The host's agent
// ---------------------------------------------------------------------------

// gatedAgent is the host's agent: testdata/agent.yaml, plus turns that wait
// for the test and a tool registry the test can replace. Its Go rules come
// first, matched on the sender's words:
//
//	slow …        sends nothing until release(taskID) (or cancel), then
//	              replies "slow done": a subscriber's events are exactly
//	              the snapshot, the answer artifact and COMPLETED
//	wait-for K    progress "waiting for K", then waits until release(K) or
//	              cancel, then replies "released K"
//	release K     releases K, then replies "released K"
//	beat N MS     N progress messages MS milliseconds apart, then "beat done"
//	slowmany …    progress "thinking", waits until release(taskID) (or
//	              cancel), then two progress messages, an artifact in two
//	              chunks, and "slowmany done"
//	flood N SIZE  progress "ready", waits until release(taskID), then N
//	              artifact updates of SIZE bytes each, then "flood done";
//	              before update i (i = 100, 200, …) it waits for
//	              release(taskID/<i/100>), so a test can pace it
//	ask-late …    asks "Which colour?", and ends its turn (ProcessingComplete)
//	              only once the answer's turn reached the host, as a host
//	              whose completion call is slower than a quick client
type gatedAgent struct {
	script *testharness.Scenario
	rec    *testharness.Recorder // the host's recorder

	gates e2etest.Gates

	mu    sync.Mutex
	tools []*pb.ToolDefinition // nil: the script's tools
}

func newGatedAgent(t testing.TB) *gatedAgent {
	t.Helper()
	s, err := testharness.LoadScenario(filepath.Join("testdata", "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return &gatedAgent{script: s, rec: testharness.NewRecorder()}
}

// release lets every turn waiting on key (now or later) go on.
func (a *gatedAgent) release(key string) { a.gates.Release(key) }

// setTools replaces the host's tool registry.
func (a *gatedAgent) setTools(tools []*pb.ToolDefinition) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tools = tools
}

// HostTools implements testharness.ToolLister.
func (a *gatedAgent) HostTools() []*pb.ToolDefinition {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tools != nil {
		return a.tools
	}
	return a.script.HostTools()
}

// Play implements testharness.Behavior.
func (a *gatedAgent) Play(ctx context.Context, t *testharness.Turn) error {
	words := testharness.PartsText(t.Request)
	verb, arg, _ := strings.Cut(words, " ")
	if t.Request.GetContinuation() {
		return a.script.Play(ctx, t)
	}
	waitGate := func(key string) error {
		select {
		case <-a.gates.Gate(key):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch verb {
	case "slow":
		if err := waitGate(t.Request.GetTaskId()); err != nil {
			return err
		}
		return t.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "slow done")
	case "wait-for":
		if err := t.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, "waiting for "+arg); err != nil {
			return err
		}
		if err := waitGate(arg); err != nil {
			return err
		}
		return t.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "released "+arg)
	case "release":
		a.release(arg)
		return t.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "released "+arg)
	case "slowmany":
		if err := t.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, "thinking"); err != nil {
			return err
		}
		if err := waitGate(t.Request.GetTaskId()); err != nil {
			return err
		}
		for _, p := range []string{"step 1", "step 2"} {
			if err := t.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, p); err != nil {
				return err
			}
		}
		for i, chunk := range []string{"first half, ", "second half"} {
			if _, err := t.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_ARTIFACT, Artifact: &pb.Artifact{
				ArtifactId: "out", Name: "out.txt", Append: i > 0, LastChunk: i == 1,
				Parts: []*pb.Part{{Content: &pb.Part_Text{Text: chunk}}},
			}}); err != nil {
				return err
			}
		}
		return t.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "slowmany done")
	case "flood":
		var n, size int
		if _, err := fmt.Sscanf(arg, "%d %d", &n, &size); err != nil {
			return testharness.Failed("flood wants N SIZE: " + err.Error())
		}
		if err := t.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, "ready"); err != nil {
			return err
		}
		if err := waitGate(t.Request.GetTaskId()); err != nil {
			return err
		}
		payload := strings.Repeat("x", size)
		for i := 0; i < n; i++ {
			if i > 0 && i%100 == 0 {
				if err := waitGate(fmt.Sprintf("%s/%d", t.Request.GetTaskId(), i/100)); err != nil {
					return err
				}
			}
			// Each update replaces the artifact: the task stays small while
			// the streams carry every update.
			if _, err := t.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_ARTIFACT, Artifact: &pb.Artifact{
				ArtifactId: "flood", LastChunk: i == n-1,
				Parts: []*pb.Part{{Content: &pb.Part_Text{Text: fmt.Sprintf("%05d:%s", i, payload)}}},
			}}); err != nil {
				return err
			}
		}
		return t.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "flood done")
	case "ask-late":
		if err := t.SendText(ctx, pb.SendKind_SEND_KIND_INPUT_REQUIRED, "Which colour?"); err != nil {
			return err
		}
		_, err := a.rec.WaitFor(ctx, func(c testharness.Call) bool {
			return c.Kind == testharness.KindHandleMessage && c.TaskID == t.Request.GetTaskId() && c.HandleMessage().GetContinuation()
		})
		return err
	case "beat":
		var n, ms int
		if _, err := fmt.Sscanf(arg, "%d %d", &n, &ms); err != nil {
			return testharness.Failed("beat wants N MS: " + err.Error())
		}
		for i := 0; i < n; i++ {
			if err := t.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, fmt.Sprintf("beat %d", i+1)); err != nil {
				return err
			}
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return t.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "beat done")
	}
	return a.script.Play(ctx, t)
}

// ---------------------------------------------------------------------------
// Hosts
// ---------------------------------------------------------------------------

// host is a harness host running the plugin, with its agent and A2A URL.
type host struct {
	*testharness.Host
	agent *gatedAgent
	url   string // base URL, no trailing slash
}

// startHost launches the plugin with the gated agent and cfg over
// baseConfig.
func startHost(t testing.TB, cfg map[string]any, env map[string]string) *host {
	t.Helper()
	a := newGatedAgent(t)
	return startHostWith(t, a, testharness.Options{PluginConfig: baseConfig(cfg), Env: env})
}

func startHostWith(t testing.TB, a *gatedAgent, opts testharness.Options) *host {
	t.Helper()
	opts.Agent = a
	opts.Recorder = a.rec
	h := testharness.Start(t, opts)
	url := strings.TrimSuffix(h.Endpoint(testharness.A2APluginName), "/")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("a2a endpoint = %q", url)
	}
	return &host{Host: h, agent: a, url: url}
}

// ---------------------------------------------------------------------------
// Wire types, decoded independently of the plugin's own model
// ---------------------------------------------------------------------------

type part struct {
	Text      *string         `json:"text,omitempty"`
	Raw       []byte          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

type message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId"`
	TaskID           string         `json:"taskId"`
	Role             string         `json:"role"`
	Parts            []part         `json:"parts"`
	Metadata         map[string]any `json:"metadata"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds"`
}

// text joins the text parts.
func (m *message) text() string {
	if m == nil {
		return ""
	}
	return partsString(m.Parts)
}

func partsString(ps []part) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Text != nil {
			b.WriteString(*p.Text)
		}
	}
	return b.String()
}

type taskStatus struct {
	State     string   `json:"state"`
	Message   *message `json:"message"`
	Timestamp string   `json:"timestamp"`
}

type artifact struct {
	ArtifactID  string `json:"artifactId"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Parts       []part `json:"parts"`
}

type task struct {
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    taskStatus `json:"status"`
	Artifacts []artifact `json:"artifacts"`
	History   []message  `json:"history"`
}

// answer is the text of the task's "answer" artifacts.
func (t *task) answer() string {
	var out []string
	for _, a := range t.Artifacts {
		if a.Name == "answer" {
			out = append(out, partsString(a.Parts))
		}
	}
	return strings.Join(out, "|")
}

// streamAnswer is the text of a stream's answer artifact events.
func streamAnswer(evs []event) string {
	var out []string
	for _, e := range evs {
		if u := e.ArtifactUpdate; u != nil && u.Artifact.Name == "answer" {
			out = append(out, partsString(u.Artifact.Parts))
		}
	}
	return strings.Join(out, "|")
}

type statusUpdate struct {
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Status    taskStatus `json:"status"`
}

type artifactUpdate struct {
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  artifact `json:"artifact"`
	Append    bool     `json:"append"`
	LastChunk bool     `json:"lastChunk"`
}

// event is a StreamResponse (v1.0) — or, decoded from a 0.3 stream, the
// bare object with its kind.
type event struct {
	Task           *task           `json:"task"`
	Message        *message        `json:"message"`
	StatusUpdate   *statusUpdate   `json:"statusUpdate"`
	ArtifactUpdate *artifactUpdate `json:"artifactUpdate"`
	Err            *rpcError       `json:"-"`
	Raw            json.RawMessage `json:"-"`
}

// label is a short description used to compare event sequences:
// "task:STATE", "message", "status:STATE", "artifact:ID[+append][/last]"
// (ID "answer" for the artifact made from the final reply).
func (e event) label() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("error:%d", e.Err.Code)
	case e.Task != nil:
		return "task:" + e.Task.Status.State
	case e.Message != nil:
		return "message"
	case e.StatusUpdate != nil:
		return "status:" + e.StatusUpdate.Status.State
	case e.ArtifactUpdate != nil:
		id := e.ArtifactUpdate.Artifact.ArtifactID
		if e.ArtifactUpdate.Artifact.Name == "answer" && strings.HasPrefix(id, e.ArtifactUpdate.TaskID+"-answer-") {
			id = "answer" // the final reply, as an artifact
		}
		l := "artifact:" + id
		if e.ArtifactUpdate.Append {
			l += "+append"
		}
		if e.ArtifactUpdate.LastChunk {
			l += "/last"
		}
		return l
	}
	return "?"
}

func labels(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.label()
	}
	return out
}

type sendResult struct {
	Task    *task    `json:"task"`
	Message *message `json:"message"`
}

type listResult struct {
	Tasks         []task  `json:"tasks"`
	NextPageToken *string `json:"nextPageToken"`
	PageSize      int     `json:"pageSize"`
	TotalSize     int     `json:"totalSize"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int       `json:"code"`
	Message string    `json:"message"`
	Data    errorData `json:"data"`
}

// errorData is an error's data: the v1.0 array of @type objects, or the
// 0.3 object (reason, domain, metadata as members), read as the array
// holding its ErrorInfo.
type errorData []map[string]any

func (d *errorData) UnmarshalJSON(b []byte) error {
	var obj map[string]any
	if json.Unmarshal(b, &obj) == nil && obj != nil {
		obj["@type"] = "type.googleapis.com/google.rpc.ErrorInfo"
		*d = errorData{obj}
		return nil
	}
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	*d = items
	return nil
}

// isV03 reports whether a JSON-RPC request body calls a 0.3 method.
func isV03(body []byte) bool {
	var req struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	_, v03 := a2av03.LookupMethod(req.Method)
	return v03
}

// validateAnswer validates a JSON-RPC answer to body: in the 0.3 shape
// for a 0.3 method, else in the v1.0 shape with its result against def.
func validateAnswer(t testing.TB, body, out []byte, def string) json.RawMessage {
	t.Helper()
	if isV03(body) {
		return a2atest.ValidateJSONRPCResponseV03(t, out)
	}
	return a2atest.ValidateJSONRPCResponse(t, out, def)
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// info returns the google.rpc.ErrorInfo of the error's data.
func (e *rpcError) info() map[string]any {
	for _, d := range e.Data {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			return d
		}
	}
	return nil
}

// reason is the ErrorInfo reason.
func (e *rpcError) reason() string {
	r, _ := e.info()["reason"].(string)
	return r
}

// ---------------------------------------------------------------------------
// JSON-RPC over HTTP
// ---------------------------------------------------------------------------

// client talks JSON-RPC to one plugin endpoint.
type client struct {
	url    string
	token  string
	hc     *http.Client
	header http.Header // extra headers on every request
	ids    atomic.Int64
}

func newClient(url string) *client {
	return &client{url: url, hc: http.DefaultClient}
}

// withToken returns a copy that sends "Authorization: Bearer token".
func (c *client) withToken(token string) *client {
	return &client{url: c.url, token: token, hc: c.hc, header: c.header}
}

// definition is the schema definition a v1.0 method's result validates
// against; "" for 0.3 methods (envelope only) and streams.
func definition(method string) string {
	switch method {
	case "SendMessage":
		return "Send Message Response"
	case "GetTask", "CancelTask":
		return "Task"
	case "ListTasks", "tasks/list":
		return "List Tasks Response"
	case "CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/create", "GetTaskPushNotificationConfig":
		return "Task Push Notification Config"
	case "ListTaskPushNotificationConfigs":
		return "List Task Push Notification Configs Response"
	}
	return ""
}

// rpcResponse is one JSON-RPC answer.
type rpcResponse struct {
	Status int
	Header http.Header
	Body   []byte
	ID     json.RawMessage
	Result json.RawMessage
	Err    *rpcError
}

// post sends a raw body and returns the answer, validating it.
func (c *client) post(t testing.TB, ctx context.Context, body []byte, def string, hdr http.Header) *rpcResponse {
	t.Helper()
	return c.postTo(t, ctx, c.url+"/", body, def, hdr)
}

// postTo is post to an exact URL (e.g. with a query).
func (c *client) postTo(t testing.TB, ctx context.Context, url string, body []byte, def string, hdr http.Header) *rpcResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", c.url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	r := &rpcResponse{Status: resp.StatusCode, Header: resp.Header, Body: out}
	if resp.StatusCode == http.StatusNoContent {
		return r
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("answer Content-Type = %q, want application/json\n%s", ct, out)
	}
	r.Result = validateAnswer(t, body, out, def)
	var env struct {
		ID    json.RawMessage `json:"id"`
		Error *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, out)
	}
	r.ID, r.Err = env.ID, env.Error
	return r
}

// call sends one JSON-RPC request; the result (or error) is validated
// against the method's schema definition.
func (c *client) call(t testing.TB, ctx context.Context, method string, params any, hdr ...string) *rpcResponse {
	t.Helper()
	body := mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": c.ids.Add(1), "method": method, "params": params})
	return c.post(t, ctx, body, definition(method), headers(hdr...))
}

// headers builds an http.Header from name, value pairs.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// ok returns the result of a call that must succeed, decoded into v.
func (r *rpcResponse) ok(t testing.TB, v any) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("unexpected error: %v %s", r.Err, r.Body)
	}
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.Status, r.Body)
	}
	if v != nil {
		if err := json.Unmarshal(r.Result, v); err != nil {
			t.Fatalf("decoding the result: %v\n%s", err, r.Result)
		}
	}
}

// wantError checks a call failed with code and ErrorInfo reason (reason ""
// skips that check) and returns the error.
func (r *rpcResponse) wantError(t testing.TB, code int, reason string) *rpcError {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("want error %d %s, got result %s", code, reason, r.Body)
	}
	if r.Err.Code != code {
		t.Fatalf("error code = %d, want %d: %s", r.Err.Code, code, r.Body)
	}
	if reason != "" && r.Err.reason() != reason {
		t.Fatalf("ErrorInfo reason = %q, want %q: %s", r.Err.reason(), reason, r.Body)
	}
	if d, _ := r.Err.info()["domain"].(string); d != "a2a-protocol.org" {
		t.Fatalf("ErrorInfo domain = %q: %s", d, r.Body)
	}
	return r.Err
}

// send calls SendMessage and returns its result.
func (c *client) send(t testing.TB, ctx context.Context, params map[string]any) sendResult {
	t.Helper()
	var res sendResult
	c.call(t, ctx, "SendMessage", params).ok(t, &res)
	if (res.Task == nil) == (res.Message == nil) {
		t.Fatalf("SendMessage result must hold exactly one of task and message")
	}
	return res
}

// sendTask calls SendMessage and returns the task it must answer with.
func (c *client) sendTask(t testing.TB, ctx context.Context, params map[string]any) *task {
	t.Helper()
	res := c.send(t, ctx, params)
	if res.Task == nil {
		t.Fatalf("SendMessage answered with a message, want a task: %+v", res.Message)
	}
	return res.Task
}

// getTask calls GetTask.
func (c *client) getTask(t testing.TB, ctx context.Context, id string, historyLength ...int) *task {
	t.Helper()
	p := map[string]any{"id": id}
	if len(historyLength) > 0 {
		p["historyLength"] = historyLength[0]
	}
	var tk task
	c.call(t, ctx, "GetTask", p).ok(t, &tk)
	return &tk
}

// waitState polls GetTask until the task is in state (or fails the test).
// Polling is only used where no event exists to wait on.
func (c *client) waitState(t testing.TB, ctx context.Context, id, state string) *task {
	t.Helper()
	for {
		tk := c.getTask(t, ctx, id)
		if tk.Status.State == state {
			return tk
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s stayed %s, want %s", id, tk.Status.State, state)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// msg builds a v1.0 user message params object for SendMessage.
func msg(text string, kv ...any) map[string]any {
	m := map[string]any{"role": "ROLE_USER", "messageId": newID("m"), "parts": []any{map[string]any{"text": text}}}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return map[string]any{"message": m}
}

// nonBlocking adds configuration.returnImmediately to send params.
func nonBlocking(p map[string]any) map[string]any {
	p["configuration"] = map[string]any{"returnImmediately": true}
	return p
}

var idSeq atomic.Int64

// newID returns an id unique within the test binary.
func newID(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), idSeq.Add(1))
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ---------------------------------------------------------------------------
// SSE
// ---------------------------------------------------------------------------

// stream is an open SSE answer, read event by event.
type stream struct {
	t    testing.TB
	resp *http.Response
	rd   *bufio.Reader
	def  string
	v03  bool         // a 0.3 method's stream: 0.3 error shape
	body bytes.Buffer // everything read, for ValidateSSE at the end
	done bool
}

// openStream sends a streaming request and returns the open stream. A
// refusal before the stream starts (a plain JSON answer) is returned as
// the *rpcResponse instead.
func (c *client) openStream(t testing.TB, ctx context.Context, method string, params any, hdr ...string) (*stream, *rpcResponse) {
	t.Helper()
	body := mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": c.ids.Add(1), "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range headers(hdr...) {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s %s: %v", method, c.url, err)
	}
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/event-stream") {
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		r := &rpcResponse{Status: resp.StatusCode, Header: resp.Header, Body: out}
		r.Result = validateAnswer(t, body, out, "")
		var env struct {
			Error *rpcError `json:"error"`
		}
		_ = json.Unmarshal(out, &env)
		r.Err = env.Error
		return nil, r
	}
	def := "Stream Response"
	if strings.Contains(method, "/") && method != "tasks/subscribe" {
		def = "" // a 0.3 stream: envelope only
	}
	return &stream{t: t, resp: resp, rd: bufio.NewReader(resp.Body), def: def, v03: isV03(body)}, nil
}

// errStreamEnd is returned by next when the server closed the stream.
var errStreamEnd = errors.New("stream closed")

// next reads the next event; errStreamEnd when the server closed the
// stream. Each event's data is validated as a JSON-RPC response whose
// result is a Stream Response (0.3 streams: the envelope only).
func (s *stream) next() (event, error) {
	var data []string
	for {
		line, err := s.rd.ReadString('\n')
		s.body.WriteString(line)
		if err != nil {
			if errors.Is(err, io.EOF) && len(data) == 0 {
				s.done = true
				return event{}, errStreamEnd
			}
			if len(data) == 0 || !errors.Is(err, io.EOF) {
				return event{}, err
			}
			line = ""
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if len(data) == 0 {
				continue
			}
			raw := []byte(strings.Join(data, "\n"))
			res, cerr := a2atest.CheckJSONRPCResponse(raw, s.def)
			if s.v03 {
				res, cerr = a2atest.CheckJSONRPCResponseV03(raw)
			}
			var env struct {
				Error *rpcError `json:"error"`
			}
			_ = json.Unmarshal(raw, &env)
			if cerr != nil {
				s.t.Errorf("a2atest: SSE event: %v\n%s", cerr, raw)
			}
			ev := event{Err: env.Error, Raw: res}
			if res != nil {
				if err := json.Unmarshal(res, &ev); err != nil {
					s.t.Errorf("SSE event result: %v\n%s", err, res)
				}
			}
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue // comment (keep-alive)
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
		}
	}
}

// all reads every event until the server closes the stream, then
// validates the whole body once more with a2atest.ValidateSSE.
func (s *stream) all() []event {
	s.t.Helper()
	defer s.close()
	var out []event
	for {
		ev, err := s.next()
		if errors.Is(err, errStreamEnd) {
			break
		}
		if err != nil {
			s.t.Fatalf("reading the stream after %v: %v", labels(out), err)
		}
		out = append(out, ev)
	}
	if s.v03 {
		a2atest.ValidateSSEV03(s.t, s.body.Bytes())
	} else {
		a2atest.ValidateSSE(s.t, s.body.Bytes(), s.def)
	}
	return out
}

func (s *stream) close() {
	_ = s.resp.Body.Close()
}

// ---------------------------------------------------------------------------
// Recorder helpers
// ---------------------------------------------------------------------------

// handleMessage waits for the HandleMessage of a task (its first turn).
func (h *host) handleMessage(t testing.TB, ctx context.Context, taskID string) testharness.Call {
	t.Helper()
	c, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindHandleMessage && c.TaskID == taskID
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// handleMessageWith waits for the HandleMessage whose parts_text is text.
func (h *host) handleMessageWith(t testing.TB, ctx context.Context, text string) testharness.Call {
	t.Helper()
	c, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindHandleMessage && testharness.PartsText(c.HandleMessage()) == text
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// completion waits for the ProcessingComplete of a turn.
func (h *host) completion(t testing.TB, ctx context.Context, turnID string) *pb.ProcessingCompleteRequest {
	t.Helper()
	pc, err := h.Recorder().WaitForTurn(ctx, turnID)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

// turnEnded waits until the host ended the task's first turn
// (ProcessingComplete), for tests that need the host's session idle.
func (h *host) turnEnded(t testing.TB, ctx context.Context, taskID string) {
	t.Helper()
	if _, err := h.Recorder().WaitForCompletion(ctx, taskID); err != nil {
		t.Fatal(err)
	}
}

// cancelTurn waits for a CancelTurn of the task.
func (h *host) cancelTurn(t testing.TB, ctx context.Context, taskID string) testharness.Call {
	t.Helper()
	c, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.TaskID == taskID
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sendKinds returns the kinds of the Sends of a turn, in order.
func (h *host) sendKinds(turnID string) []string {
	var out []string
	for _, c := range h.Recorder().Filter(func(c testharness.Call) bool {
		return c.Kind == testharness.KindSend && c.TurnID == turnID
	}) {
		out = append(out, strings.TrimPrefix(c.Send().GetKind().String(), "SEND_KIND_"))
	}
	return out
}

func within(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func equal(a, b []string) bool { return slices.Equal(a, b) }
