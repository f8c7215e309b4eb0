package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// listRequest is a small authenticated JSON-RPC request, whole.
func listRequest(addr, token string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`
	return fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s",
		addr, token, len(body), body)
}

// jsonRPCError decodes the error of a JSON-RPC answer.
func jsonRPCError(t *testing.T, body string) *a2a.Error {
	t.Helper()
	var r struct {
		Error *a2a.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", body)
	}
	return r.Error
}

// TestConnectionCapRefusesWith503: past Limits.MaxConnections a new
// connection is answered HTTP 503 with a JSON-RPC error naming the
// setting and closed; keep-alive connections idle for long enough make
// room for new ones (one in use keeps its place); once connections close,
// new ones are served again.
func TestConnectionCapRefusesWith503(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxConnections = 3 })
	e.srv.conns.minIdle = 0          // any idle connection may make room
	e.srv.conns.minFresh = time.Hour // the stalled ones keep their places
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(base, "http://")

	// One keep-alive client, served and then idle.
	idle := rawRequest(t, addr, listRequest(addr, tokAlice))
	idleR := bufio.NewReader(idle)
	if resp, b := readAnswer(t, idle, idleR); resp.StatusCode != http.StatusOK {
		t.Fatalf("keep-alive client: HTTP %d %s", resp.StatusCode, b)
	}
	// Two connections that never finish their headers: busy, not idle.
	var stalled []net.Conn
	for range 2 {
		stalled = append(stalled, rawRequest(t, addr, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Ty"))
	}
	waitFor(t, "three open connections, one idle", func() bool { return e.srv.conns.open() == 3 && e.srv.conns.idle() == 1 })

	// A new client takes the idle connection's place.
	c := rawRequest(t, addr, listRequest(addr, tokBob))
	if resp, b := readAnswer(t, c, bufio.NewReader(c)); resp.StatusCode != http.StatusOK {
		t.Fatalf("a new client while one connection was idle: HTTP %d %s", resp.StatusCode, b)
	}
	if !closedAfter(idle, idleR) {
		t.Error("the idle connection was not closed to make room")
	}
	// Now every connection is busy (c is idle again, but one more stall
	// fills its place): the next one is refused.
	stalled = append(stalled, rawRequest(t, addr, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Ty"))
	waitFor(t, "three busy connections", func() bool { return e.srv.conns.open() == 3 && e.srv.conns.idle() == 0 })
	refused := rawRequest(t, addr, listRequest(addr, tokCarol))
	rr := bufio.NewReader(refused)
	resp, body := readAnswer(t, refused, rr)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("past the cap: HTTP %d (Retry-After %q) %s, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if e := jsonRPCError(t, body); e.Code != a2a.CodeInternalError || !strings.Contains(e.Message, "max_connections") || !strings.Contains(e.Message, "retry") {
		t.Errorf("the refusal does not say what to do: %+v", e)
	}
	if !closedAfter(refused, rr) {
		t.Error("the refused connection was left open")
	}
	// The stalled ones leave; new connections are served again.
	for _, s := range stalled {
		s.Close()
	}
	waitFor(t, "the stalled connections to be gone", func() bool { return e.srv.conns.open() <= 1 })
	ok := rawRequest(t, addr, listRequest(addr, tokCarol))
	if resp, b := readAnswer(t, ok, bufio.NewReader(ok)); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the stalled connections closed: HTTP %d %s", resp.StatusCode, b)
	}
}

// TestGlobalStreamCap: past Limits.MaxStreams open streams (whoever holds
// them) a new stream is refused with HTTP 503 and a JSON-RPC error that
// says what to do, before any task is made; unary requests go on; a
// closed stream frees its slot.
func TestGlobalStreamCap(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxStreams = 2 })
	var tasks []*a2a.Task
	for _, tok := range []string{tokAlice, tokBob} {
		task := e.startGated(tok, "slow stream")
		defer e.exec.release(task.ID)
		s := e.openStream(tok, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: task.ID})
		if s.r == nil {
			t.Fatalf("stream of %s: HTTP %d %s", tok, s.status, s.errBody)
		}
		s.next()
		tasks = append(tasks, task)
	}
	before := len(e.exec.turnTexts())
	for _, method := range []string{"SendStreamingMessage", "SubscribeToTask"} {
		var params any = sendParams("one stream too many", nil)
		if method == "SubscribeToTask" {
			params = &a2a.SubscribeToTaskRequest{ID: e.send(tokCarol, "mine", nil).ID}
			before++
		}
		s := e.openStream(tokCarol, method, params)
		if s.status != http.StatusServiceUnavailable {
			t.Fatalf("%s past the global cap: HTTP %d %s, want 503", method, s.status, s.errBody)
		}
		if s.resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", method)
		}
		er := jsonRPCError(t, string(s.errBody))
		if !strings.Contains(er.Message, "max_streams") || !strings.Contains(er.Message, "GetTask") {
			t.Errorf("%s: the refusal does not say what to do: %+v", method, er)
		}
	}
	if got := len(e.exec.turnTexts()); got != before {
		t.Errorf("a refused stream reached the host (%d turns, want %d)", got, before)
	}
	e.send(tokCarol, "unary requests go on", nil)
	// A stream that ends gives its slot back.
	e.exec.release(tasks[0].ID)
	waitFor(t, "a stream slot to free", func() bool { return e.srv.pipe.streamSlots.Load() < 2 })
	s := e.openStream(tokCarol, "SendStreamingMessage", sendParams("now there is room", nil))
	if evs, errEv := s.all(); errEv != nil || len(evs) == 0 {
		t.Errorf("after a slot freed: %v %v (HTTP %d %s)", kinds(evs), errEv, s.status, s.errBody)
	}
}

// TestConnectionInUseKeepsItsPlace: a keep-alive connection that was idle
// only briefly is not closed for a newcomer: the newcomer is refused.
func TestConnectionInUseKeepsItsPlace(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxConnections = 2 })
	e.srv.conns.minIdle, e.srv.conns.minFresh = time.Hour, time.Hour
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(base, "http://")
	user := rawRequest(t, addr, listRequest(addr, tokAlice))
	ur := bufio.NewReader(user)
	if resp, b := readAnswer(t, user, ur); resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d %s", resp.StatusCode, b)
	}
	rawRequest(t, addr, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Ty")
	waitFor(t, "two open connections, one idle", func() bool { return e.srv.conns.open() == 2 && e.srv.conns.idle() == 1 })
	c := rawRequest(t, addr, listRequest(addr, tokBob))
	if resp, _ := readAnswer(t, c, bufio.NewReader(c)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("newcomer: HTTP %d, want 503", resp.StatusCode)
	}
	if _, err := io.WriteString(user, listRequest(addr, tokAlice)); err != nil {
		t.Fatal(err)
	}
	if resp, b := readAnswer(t, user, ur); resp.StatusCode != http.StatusOK {
		t.Fatalf("the connection in use lost its place: HTTP %d %s", resp.StatusCode, b)
	}
}

// TestOversizeHeadersAreAnsweredThroughTheConnectionCap: net/http refuses
// headers past MaxHeaderBytes with 431 and half-closes the connection
// first so that the client reads the answer; the connection cap's wrapper
// must let it (a wrapper without CloseWrite turned the 431 into a reset).
func TestOversizeHeadersAreAnsweredThroughTheConnectionCap(t *testing.T) {
	e := newEnv(t)
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/", strings.NewReader(`{}`))
	req.Header.Set("X-Padding", strings.Repeat("h", 256<<10))
	resp, err := (&http.Client{Timeout: failsafe}).Do(req)
	if err != nil {
		t.Fatalf("256 KiB of headers: %v, want an answer", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("HTTP %d, want 431", resp.StatusCode)
	}
}
