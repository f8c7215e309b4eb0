package tools

import (
	"bufio"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// quietAgent says nothing for quiet, then answers (or stops when its turn
// is cancelled).
func quietAgent(quiet time.Duration, answer string) func(context.Context, *ownPeer, *tasks.Turn) {
	return func(ctx context.Context, p *ownPeer, turn *tasks.Turn) {
		select {
		case <-time.After(quiet):
			p.say(turn, tasks.UpdateFinal, answer)
		case <-ctx.Done():
		}
	}
}

// TestStreamTimeoutBeforeThePeersFirstEventIsAReceipt: a wait that ends
// before the agent's first output is a receipt with the task id (our own
// server sends the task as the stream's first event), and a2a_task wait
// gets the answer.
func TestStreamTimeoutBeforeThePeersFirstEventIsAReceipt(t *testing.T) {
	t.Parallel()
	peer := startOwnPeer(t, nil, quietAgent(4*time.Second, "quiet answer"))
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "own", URL: peer.URL}}}, nil)
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "own", "message": "quiet job", "timeout_s": 0.3}, nil)
	mustOK(t, r, "own is still working on it", `a2a_task agent="own" task_id=`)
	m := jsonLine(t, r)
	turns := peer.allTurns()
	if m["receipt"] != true || len(turns) != 1 || m["task_id"] != turns[0].TaskID {
		t.Fatalf("summary %v; the peer runs %d task(s)", m, len(turns))
	}
	r = callTool(t, ts, ToolTask, map[string]any{"agent": "own", "task_id": m["task_id"], "action": "wait", "timeout_s": 20}, nil)
	mustOK(t, r, "COMPLETED", "quiet answer")
}

// TestStreamThatNeverNamesItsTaskFailsAfterTheGrace: a peer that accepted
// the message but names no task within the grace after the wait (its
// stream stays silent) is an error that says so (nothing can be followed
// up). This plugin's own server sends the task at once, so the peer here
// is a stand-in.
func TestStreamThatNeverNamesItsTaskFailsAfterTheGrace(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"silent","description":"says nothing","version":"1","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		 "capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		 "skills":[{"id":"s","name":"s","description":"s","tags":["s"]}]}`, srv.URL)
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "own", URL: srv.URL}}}, nil)
	ts.out.ackGrace = 200 * time.Millisecond
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "own", "message": "quiet job", "timeout_s": 0.2}, nil)
	mustErr(t, r, "own did not name a task within 200ms of the end of the wait")
}

// TestOrchestrateFirstCancelsAPeerThatHasNotNamedItsTask: the losing peer
// has said nothing when the winner answers; its task is canceled all the
// same (its id arrives within the grace).
func TestOrchestrateFirstCancelsAPeerThatHasNotNamedItsTask(t *testing.T) {
	t.Parallel()
	fast := startOwnPeer(t, nil, func(ctx context.Context, p *ownPeer, turn *tasks.Turn) {
		p.say(turn, tasks.UpdateFinal, "fast answer")
	})
	silent := startOwnPeer(t, nil, quietAgent(time.Minute, "too late"))
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "silent", URL: silent.URL}, {Name: "fast", URL: fast.URL}}}, nil)
	r := callTool(t, ts, ToolOrchestrate, map[string]any{"capability": "chat", "message": "anyone?", "mode": "first", "timeout_s": 30}, nil)
	mustOK(t, r, "First successful reply, from fast", "fast answer", "Cancelled the others: silent (request cancelled; CancelTask sent for task ")
	select {
	case id := <-silent.cancelled:
		if turns := silent.allTurns(); len(turns) != 1 || turns[0].TaskID != id {
			t.Fatalf("canceled %s; the silent peer runs %v", id, turns)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the silent peer's turn was never canceled")
	}
}

// TestOrchestrateCountsFailedTasksAsFailures: a task the peer ended FAILED,
// REJECTED or CANCELED is never the best reply, and a fan-out where every
// peer failed is an is_error result that lists every failure.
func TestOrchestrateCountsFailedTasksAsFailures(t *testing.T) {
	t.Parallel()
	ended := func(name, state, why string) config.Peer {
		srv := fakePeer(t, name, "research", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
			writeTaskState(w, req, "ctx-"+name, state, why)
		})
		return config.Peer{Name: name, URL: srv.URL}
	}
	failing := Config{Agents: []config.Peer{ended("f1", "TASK_STATE_FAILED", "the lab is on fire"), ended("f2", "TASK_STATE_REJECTED", "not my job"),
		ended("f3", "TASK_STATE_CANCELED", "stopped")}}
	ts, _ := newToolset(t, failing, nil)
	for _, mode := range []string{"all", "first", "best"} {
		r := callTool(t, ts, ToolOrchestrate, map[string]any{"capability": "research", "message": "x", "mode": mode}, nil)
		mustErr(t, r, "the lab is on fire", "not my job", "stopped")
		for _, never := range []string{"First successful reply", "Best reply"} {
			if strings.Contains(r.Content, never) {
				t.Fatalf("mode %s picked a failure:\n%s", mode, r.Content)
			}
		}
	}
	mixed := Config{Agents: append(failing.Agents, ended("ok", "TASK_STATE_WORKING", "still at it"))}
	ts2, _ := newToolset(t, mixed, nil)
	r := callTool(t, ts2, ToolOrchestrate, map[string]any{"capability": "research", "message": "x", "mode": "best", "timeout_s": 0.2}, nil)
	mustOK(t, r, "Best reply, from ok")
}

func writeTaskState(w http.ResponseWriter, req *a2a.Request, contextID, state, text string) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := a2a.EncodeResult(req.ID, map[string]any{"task": map[string]any{"id": "task-" + contextID, "contextId": contextID,
		"status": map[string]any{"state": state, "message": map[string]any{"messageId": "m-" + contextID, "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": text}}}}}})
	w.Write(b)
}

// TestListAsksEveryTimeAndCheaply: every a2a_list makes a conditional
// card request (answered 304 while the card is unchanged), so a peer that
// stopped shows as unreachable on the next list, in plain words.
func TestListAsksEveryTimeAndCheaply(t *testing.T) {
	t.Parallel()
	var hits, notModified atomic.Int32
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Cache-Control", "max-age=300")
		if r.Header.Get("If-None-Match") == `"v1"` {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprintf(w, `{"name":"L","description":"d","version":"1","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		 "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`, srv.URL)
	})
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "l", URL: srv.URL}}}, nil)
	mustOK(t, callTool(t, ts, ToolList, map[string]any{}, nil), "- l ("+srv.URL+", trust public): reachable", `card: "L"`)
	mustOK(t, callTool(t, ts, ToolList, map[string]any{}, nil), "): reachable")
	if hits.Load() != 2 || notModified.Load() != 1 {
		t.Fatalf("card requests %d (304: %d); want one per list, the second conditional", hits.Load(), notModified.Load())
	}
	srv.Close()
	r := callTool(t, ts, ToolList, map[string]any{}, nil)
	mustOK(t, r, "): unreachable\n")
	if strings.Contains(r.Content, "unreachable: unreachable") {
		t.Fatalf("stutter:\n%s", r.Content)
	}
}

// TestDataArgumentIsRedacted: credentials in a2a_call's data (by shape, or
// under a key that names a secret) and in a file name never leave; the
// result counts them with the text's.
func TestDataArgumentIsRedacted(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []a2a.Part
	srv := fakePeer(t, "cap", "echo", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		var p a2a.SendMessageRequest
		_ = a2a.Unmarshal(req.Params, &p)
		mu.Lock()
		got = p.Message.Parts
		mu.Unlock()
		writeTask(w, req, "ctx-cap", "ok")
	})
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "cap", URL: srv.URL}}}, nil)
	key := "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "cap", "message": "see data",
		"data":  map[string]any{"note": "use " + key, "password": "hunter2", "n": json.Number("12345678901234567890"), "list": []any{"plain", key}},
		"files": []any{map[string]any{"base64": "aGk=", "filename": key + ".txt"}}}, nil)
	mustOK(t, r, "4 secret(s) were redacted")
	mu.Lock()
	defer mu.Unlock()
	all, _ := json.Marshal(got)
	if strings.Contains(string(all), key) || strings.Contains(string(all), "hunter2") || !strings.Contains(string(all), security.RedactedMark) {
		t.Fatalf("the peer got %s", all)
	}
	if !strings.Contains(string(all), "12345678901234567890") || !strings.Contains(string(all), `"plain"`) {
		t.Fatalf("the data lost what was not secret: %s", all)
	}
}

// TestOutboundExchangesAreAudited: every request to a peer is one outbound
// audit record with the peer, method, ids, outcome, code and sizes, and
// never the message text or the token.
func TestOutboundExchangesAreAudited(t *testing.T) {
	t.Parallel()
	streamer := startOwnPeer(t, nil, func(ctx context.Context, p *ownPeer, turn *tasks.Turn) {
		p.say(turn, tasks.UpdateProgress, "working")
		p.say(turn, tasks.UpdateFinal, "streamed answer")
	})
	c := newCapture(t)
	audit, path := newAuditLog(t)
	const token = "peer-token-0123456789abcdef"
	ts, err := New(Config{Agents: []config.Peer{{Name: "own", URL: streamer.URL}, {Name: "cap", URL: c.srv.URL, Token: token}}},
		Deps{Store: store.NewMemory(100), Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	secretText := "the launch code is 0000"
	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "own", "message": secretText}, nil), "streamed answer")
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "cap", "message": secretText, "wait": false}, nil)
	mustOK(t, r, "got it")
	mustErr(t, callTool(t, ts, ToolTask, map[string]any{"agent": "cap", "task_id": "nope", "action": "get"}, nil))
	mustOK(t, callTool(t, ts, ToolList, map[string]any{}, nil))

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secretText) || strings.Contains(string(raw), token) {
		t.Fatalf("the audit log holds the text or the token:\n%s", raw)
	}
	var recs []security.AuditRecord
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var rec security.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	find := func(peer, method string) security.AuditRecord {
		t.Helper()
		for _, r := range recs {
			if r.Peer == peer && r.Method == method {
				return r
			}
		}
		t.Fatalf("no %s record for %s in:\n%s", method, peer, raw)
		return security.AuditRecord{}
	}
	s := find("own", "SendStreamingMessage")
	if s.Direction != security.AuditOutbound || s.Outcome != "ok" || s.TaskID == "" || s.ContextID == "" || s.RequestBytes == 0 || s.ResponseBytes == 0 {
		t.Errorf("stream record %+v", s)
	}
	if s := find("cap", "SendMessage"); s.Outcome != "ok" || s.TaskID != "task-ctx-capture" || s.RequestBytes == 0 {
		t.Errorf("send record %+v", s)
	}
	if g := find("cap", "GetTask"); g.Outcome != "error" || g.TaskID != "nope" || g.Error == "" {
		t.Errorf("failed GetTask record %+v", g)
	}
	if c := find("own", "card"); c.Outcome != "ok" {
		t.Errorf("card record %+v", c)
	}
}

// tokenPeer is a non-streaming peer that requires a bearer token and can
// ask for credentials: a message starting "mail" is answered AUTH_REQUIRED
// (after onAuth ran), and the next message on that task completes it.
type tokenPeer struct {
	srv    *httptest.Server
	accept atomic.Value // the token it accepts
	onAuth func()

	mu   sync.Mutex
	seen []a2a.Message
	auth []string // Authorization of each message
}

func newTokenPeer(t *testing.T, accept string) *tokenPeer {
	p := &tokenPeer{}
	p.accept.Store(accept)
	p.srv = fakePeer(t, "mail", "mail", func(w http.ResponseWriter, r *http.Request, req *a2a.Request) {
		if r.Header.Get("Authorization") != "Bearer "+p.accept.Load().(string) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch req.Method {
		case "GetTask":
			writeTaskState(w, req, "ctx-mail", "TASK_STATE_AUTH_REQUIRED", "sign in to the mail service")
			return
		case "SendMessage":
		default:
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var sp a2a.SendMessageRequest
		_ = a2a.Unmarshal(req.Params, &sp)
		p.mu.Lock()
		p.seen = append(p.seen, sp.Message)
		p.auth = append(p.auth, r.Header.Get("Authorization"))
		p.mu.Unlock()
		switch {
		case sp.Message.TaskID != "":
			writeTaskState(w, req, "ctx-mail", "TASK_STATE_COMPLETED", "3 new mails")
		case strings.HasPrefix(sp.Message.Text(), "mail"):
			if p.onAuth != nil {
				p.onAuth()
			}
			writeTaskState(w, req, "ctx-mail", "TASK_STATE_AUTH_REQUIRED", "sign in to the mail service")
		default:
			writeTaskState(w, req, "ctx-mail", "TASK_STATE_COMPLETED", "hello")
		}
	})
	return p
}

func (p *tokenPeer) messages() ([]a2a.Message, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]a2a.Message(nil), p.seen...), append([]string(nil), p.auth...)
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTokenFileIsReadAgainOnA401: the token comes from token_file; once
// the peer stops accepting it, the next call is refused with 401, reads
// the file again and succeeds with the new token.
func TestTokenFileIsReadAgainOnA401(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "token")
	writeFile(t, file, "old-token\n")
	p := newTokenPeer(t, "old-token")
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "mail", URL: p.srv.URL, TokenFile: file}}}, nil)
	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "mail", "message": "hi"}, nil), "hello")
	p.accept.Store("new-token")
	writeFile(t, file, "new-token")
	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "mail", "message": "hi again"}, nil), "hello")
	if _, auth := p.messages(); fmt.Sprint(auth) != "[Bearer old-token Bearer new-token]" {
		t.Fatalf("authorizations %v", auth)
	}
	// A token that is refused and unchanged is an error that says so.
	p.accept.Store("newer-token")
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": "mail", "message": "hi"}, nil), "authentication refused (HTTP 401)")
	// A file that cannot be read is named, without its content.
	ts2, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "mail", URL: p.srv.URL, TokenFile: file + ".missing"}}}, nil)
	mustErr(t, callTool(t, ts2, ToolCall, map[string]any{"agent": "mail", "message": "hi"}, nil), "token_file "+file+".missing", "cannot read the token")
}

// TestAuthRequiredRefreshesTheTokenAndResumesTheTask: the peer asks for
// credentials; with token_command configured the plugin runs it again and
// resumes the same task on the same context and delegation chain with the
// new token, and the model gets the final answer.
func TestAuthRequiredRefreshesTheTokenAndResumesTheTask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	writeFile(t, file, "first-token")
	p := newTokenPeer(t, "first-token")
	p.onAuth = func() { p.accept.Store("second-token"); writeFile(t, file, "second-token") }
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "mail", URL: p.srv.URL, TokenCommand: "cat '" + file + "'"}}}, nil)
	org := Origin{Chain: security.Chain{ID: "chain-42", Depth: 1}}
	prog := newProgress()
	r := callToolFrom(context.Background(), org, t, ts, ToolCall, map[string]any{"agent": "mail", "message": "mail me my inbox"}, prog)
	mustOK(t, r, "mail completed the task", "3 new mails", `asked for credentials ("sign in to the mail service")`, "read again from token_command")
	msgs, auth := p.messages()
	if len(msgs) != 2 || fmt.Sprint(auth) != "[Bearer first-token Bearer second-token]" {
		t.Fatalf("the peer got %d message(s) with %v", len(msgs), auth)
	}
	cont := msgs[1]
	if cont.TaskID != "task-ctx-mail" || cont.ContextID != "ctx-mail" || cont.Text() != AuthResumeText {
		t.Fatalf("continuation %+v", cont)
	}
	c1, _ := security.ChainFromMetadata(msgs[0].Metadata)
	c2, _ := security.ChainFromMetadata(cont.Metadata)
	if c1.ID != "chain-42" || c2 != c1 {
		t.Fatalf("chains %+v then %+v; want the same chain-42 hop", c1, c2)
	}
	if !strings.Contains(prog.all(), "credentials refreshed") {
		t.Fatalf("progress %q", prog.all())
	}
}

// TestAuthRequiredWithoutATokenSourceSaysHowToResume: without token_file
// or token_command the result says plainly what the peer needs and how to
// resume the same task.
func TestAuthRequiredWithoutATokenSourceSaysHowToResume(t *testing.T) {
	t.Parallel()
	p := newTokenPeer(t, "static")
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "mail", URL: p.srv.URL, Token: "static"}}}, nil)
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "mail", "message": "mail me"}, nil)
	mustOK(t, r, "mail needs authentication before it can continue", "state AUTH_REQUIRED", "What mail needs:\n[A2A UNTRUSTED INPUT BEGIN from mail]", "sign in to the mail service\n[A2A UNTRUSTED INPUT END from mail]",
		"No token_file, token_command or oauth2 is configured for mail",
		`resume the same task: a2a_call agent="mail" task_id="task-ctx-mail" context_id="ctx-mail" message="credentials refreshed"`)
	if m := jsonLine(t, r); m["state"] != "AUTH_REQUIRED" || m["task_id"] != "task-ctx-mail" {
		t.Fatalf("summary %v", m)
	}
	if msgs, _ := p.messages(); len(msgs) != 1 {
		t.Fatalf("the plugin resumed without a way to refresh: %d messages", len(msgs))
	}
}

// TestAuthRequiredOverAStreamIsResumedOnOurOwnServer: our server keeps the
// stream open at AUTH_REQUIRED and resumes the task on the next message.
// a2a_call stops following at AUTH_REQUIRED, refreshes the token from the
// file (the agent changed it meanwhile) and gets the final answer; the
// continuation reaches the agent as the same task and chain, sent with the
// new token. The server knows the peer by both tokens (a rotation: the
// proxy in front of it maps the new token onto the one it was configured
// with), since a token names its holder: another peer's token could not
// continue the task. a2a_task wait does the same for a task started
// without waiting.
func TestAuthRequiredOverAStreamIsResumedOnOurOwnServer(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "token")
	writeFile(t, file, "tok-one")
	auth, err := security.NewAuthenticator(security.AuthConfig{PeerTokens: map[string]string{"one": "tok-one"}, LoopbackIsLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	var rotated atomic.Int32
	rotation := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "Bearer tok-two" {
				rotated.Add(1)
				r.Header.Set("Authorization", "Bearer tok-one")
			}
			h.ServeHTTP(w, r)
		})
	}
	peer := startOwnPeerWrapped(t, auth, rotation, func(ctx context.Context, p *ownPeer, turn *tasks.Turn) {
		if !turn.Continuation {
			writeFile(t, file, "tok-two")
			p.say(turn, tasks.UpdateAuthRequired, "sign in to the mail service")
			_ = p.mgr.EndTurn(context.Background(), turn.TaskID, tasks.OutcomeSuccess, "")
			return
		}
		p.say(turn, tasks.UpdateFinal, "resumed by "+turn.Sender.ID+": "+turn.Message.Text())
	})
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "own", URL: peer.URL, TokenFile: file}}}, nil)
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "own", "message": "fetch my mail", "timeout_s": 20}, nil)
	mustOK(t, r, "own completed the task", "resumed by peer:one: "+AuthResumeText)
	if rotated.Load() == 0 {
		t.Fatal("the continuation was not sent with the refreshed token")
	}
	turns := peer.allTurns()
	if len(turns) != 2 || turns[0].TaskID != turns[1].TaskID || turns[0].Sender.ID != "peer:one" {
		t.Fatalf("turns %+v", turns)
	}
	c1, _ := security.ChainFromMetadata(turns[0].Message.Metadata)
	c2, _ := security.ChainFromMetadata(turns[1].Message.Metadata)
	if c1.ID == "" || c1 != c2 {
		t.Fatalf("chains %+v then %+v", c1, c2)
	}

	writeFile(t, file, "tok-one")
	r = callTool(t, ts, ToolCall, map[string]any{"agent": "own", "message": "fetch my mail", "wait": false}, nil)
	m := jsonLine(t, r)
	r = callTool(t, ts, ToolTask, map[string]any{"agent": "own", "task_id": m["task_id"], "action": "wait", "timeout_s": 20}, nil)
	mustOK(t, r, "own completed the task", "resumed by peer:one")
	turns = peer.allTurns()
	c3, _ := security.ChainFromMetadata(turns[2].Message.Metadata)
	c4, _ := security.ChainFromMetadata(turns[3].Message.Metadata)
	if len(turns) != 4 || c3.ID == "" || c3 != c4 || turns[3].TaskID != m["task_id"] {
		t.Fatalf("a2a_task wait resumed %+v on chains %+v, %+v", turns, c3, c4)
	}
}

// delegationHost records RecordDelegation calls, or answers Unimplemented.
type delegationHost struct {
	plugin.Host
	unimplemented bool
	mu            sync.Mutex
	got           []*pb.RecordDelegationRequest
}

func (h *delegationHost) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, req)
	if h.unimplemented {
		return nil, fmt.Errorf("no memory: %w", plugin.ErrUnimplemented)
	}
	return &pb.RecordDelegationResponse{}, nil
}

func (h *delegationHost) calls() []*pb.RecordDelegationRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*pb.RecordDelegationRequest(nil), h.got...)
}

// TestFinishedDelegationsAreToldToTheHost: a delegation that ended is told
// to the host's memory once, with the calling conversation, the peer, the
// remote ids, the chain and redacted summaries; a receipt is told when
// a2a_task wait sees the end; a host that lacks RecordDelegation is asked
// at most once, and not at all when it said so in Configure.
func TestFinishedDelegationsAreToldToTheHost(t *testing.T) {
	t.Parallel()
	peer := startOwnPeer(t, nil, func(ctx context.Context, p *ownPeer, turn *tasks.Turn) {
		if strings.HasPrefix(turn.Message.Text(), "later") {
			time.Sleep(300 * time.Millisecond)
		}
		p.say(turn, tasks.UpdateFinal, "done: "+turn.Message.Text()+" with key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
	})
	cfg := Config{Agents: []config.Peer{{Name: "own", URL: peer.URL}}}
	host := &delegationHost{}
	ts, _ := newToolset(t, cfg, host)
	call := func(ts *Toolset, args map[string]any) *pb.ToolResult {
		res, err := ts.CallTool(context.Background(), &pb.CallToolRequest{Name: args["tool"].(string), ArgumentsJson: argsJSON(args), Platform: "slack", ChatId: "C42"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r := call(ts, map[string]any{"tool": ToolCall, "agent": "own", "message": "summarise the report"})
	mustOK(t, r, "done: summarise the report")
	m := jsonLine(t, r)
	got := host.calls()
	if len(got) != 1 {
		t.Fatalf("RecordDelegation calls: %v", got)
	}
	d := got[0]
	if d.GetPlatform() != "slack" || d.GetChatId() != "C42" || d.GetPeer() != "own" || d.GetRemoteTaskId() != m["task_id"] ||
		d.GetRemoteContextId() != m["context_id"] || d.GetChainId() == "" || d.GetState() != "TASK_STATE_COMPLETED" ||
		d.GetRequestSummary() != "summarise the report" || !strings.Contains(d.GetResultSummary(), "done: summarise the report") ||
		strings.Contains(d.GetResultSummary(), "abcdefghijklmnopqrstuvwxyz") {
		t.Fatalf("delegation %v", d)
	}

	r = call(ts, map[string]any{"tool": ToolCall, "agent": "own", "message": "later please", "wait": false})
	m = jsonLine(t, r)
	if len(host.calls()) != 1 {
		t.Fatal("a receipt was told to the host as a finished delegation")
	}
	call(ts, map[string]any{"tool": ToolTask, "agent": "own", "task_id": m["task_id"], "action": "wait", "timeout_s": 10})
	call(ts, map[string]any{"tool": ToolTask, "agent": "own", "task_id": m["task_id"], "action": "wait", "timeout_s": 10})
	if got := host.calls(); len(got) != 2 || got[1].GetRemoteTaskId() != m["task_id"] || got[1].GetRequestSummary() != "later please" || got[1].GetChainId() == "" {
		t.Fatalf("after a2a_task wait: %v", got)
	}

	lacking := &delegationHost{unimplemented: true}
	ts2, _ := newToolset(t, cfg, lacking)
	call(ts2, map[string]any{"tool": ToolCall, "agent": "own", "message": "one"})
	call(ts2, map[string]any{"tool": ToolCall, "agent": "own", "message": "two"})
	if n := len(lacking.calls()); n != 1 {
		t.Fatalf("a host answering Unimplemented was asked %d times", n)
	}
	silent := &delegationHost{}
	ts3, err := New(cfg, Deps{Host: silent, HostRPCs: []string{"Complete"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts3.Close()
	call(ts3, map[string]any{"tool": ToolCall, "agent": "own", "message": "three"})
	if n := len(silent.calls()); n != 0 {
		t.Fatalf("a host without RecordDelegation in optional_rpcs was asked %d times", n)
	}
}

// argsJSON encodes a tool call's arguments (without the "tool" key).
func argsJSON(args map[string]any) string {
	c := make(map[string]any, len(args))
	for k, v := range args {
		if k != "tool" {
			c[k] = v
		}
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// TestAnswerToANonStreamingPeerGetsItsReply: answering a question of a
// peer that does not stream returns the peer's reply to the answer, not
// the task as it stood before it (still asking the question).
func TestAnswerToANonStreamingPeerGetsItsReply(t *testing.T) {
	t.Parallel()
	plain := clienttest.StartGoV1(t, "Plain", false)
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "plain", URL: plain.URL}}}, nil)
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "plain", "message": "ask me"}, nil)
	mustOK(t, r, "needs more input", clienttest.Question)
	m := jsonLine(t, r)
	r = callTool(t, ts, ToolCall, map[string]any{"agent": "plain", "message": "blue", "task_id": m["task_id"], "context_id": m["context_id"]}, nil)
	mustOK(t, r, "plain completed the task", "echo: blue")
}

// TestTokenCommandFailuresAreReportedNotLogged: a failing token_command is
// an error naming the command's complaint (redacted), the token of a
// working one never appears in the logs, and a hanging one is cut off.
func TestTokenCommandFailuresAreReportedNotLogged(t *testing.T) {
	t.Parallel()
	p := newTokenPeer(t, "tok-from-command-0123456789")
	var logs strings.Builder
	var mu sync.Mutex
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	})})
	cfg := Config{Agents: []config.Peer{
		{Name: "ok", URL: p.srv.URL, TokenCommand: "printf '%s\\n' tok-from-command-0123456789"},
		{Name: "failing", URL: p.srv.URL, TokenCommand: "echo 'vault: permission denied for sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789' >&2; exit 3"},
		{Name: "empty", URL: p.srv.URL, TokenCommand: "true"},
	}}
	ts, err := New(cfg, Deps{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "ok", "message": "hi"}, nil), "hello")
	r := callTool(t, ts, ToolCall, map[string]any{"agent": "failing", "message": "hi"}, nil)
	mustErr(t, r, `a2a_agents["failing"]: token_command: the command failed`, "vault: permission denied")
	if strings.Contains(r.Content, "abcdefghijklmnopqrstuvwxyz") {
		t.Fatalf("the command's complaint was not redacted:\n%s", r.Content)
	}
	mustErr(t, callTool(t, ts, ToolCall, map[string]any{"agent": "empty", "message": "hi"}, nil), "the token is empty")
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "tok-from-command-0123456789") {
		t.Fatalf("the token reached the logs:\n%s", logs.String())
	}

	hang := &tokenSource{peer: "slow", command: "sleep 5", timeout: 100 * time.Millisecond, log: hclog.NewNullLogger(), now: time.Now}
	start := time.Now()
	if err := hang.ensure(context.Background()); err == nil || !strings.Contains(err.Error(), "did not finish within 100ms") || time.Since(start) > 3*time.Second {
		t.Fatalf("a hanging command: %v after %s", err, time.Since(start))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// newAuditLog opens an audit log in a temporary directory, closed when the
// test ends, and returns it with its path.
func newAuditLog(t *testing.T) (*security.AuditLog, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := security.NewAuditLog(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = audit.Close() })
	return audit, path
}

// TestToolsReadTheTimeFromTheirClock: the tools read the time through
// Deps.Now only — an audit record's time and duration are the injected
// clock's.
func TestToolsReadTheTimeFromTheirClock(t *testing.T) {
	c := newCapture(t)
	audit, path := newAuditLog(t)
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	ts, err := New(Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}},
		Deps{Store: store.NewMemory(100), Audit: audit, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	mustOK(t, callTool(t, ts, ToolCall, map[string]any{"agent": "cap", "message": "hi", "wait": false}, nil), "got it")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	n := 0
	for sc.Scan() {
		var rec security.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if !rec.Time.Equal(at) || rec.DurationMS != 0 {
			t.Errorf("record %s at %v lasting %vms, want the injected clock's %v and 0", rec.Method, rec.Time, rec.DurationMS, at)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no audit record:\n%s", raw)
	}
}
