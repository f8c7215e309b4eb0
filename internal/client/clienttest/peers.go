// Package clienttest starts A2A servers that this project did not write —
// the official Go SDK (a2a-go v2, protocol 1.0), the official Go SDK's 0.3
// line (a2a-go v0.3) and the official JS SDK (@a2a-js/sdk) — for interop
// tests of the outbound client and the a2a_* tools. It is imported only by
// tests.
//
// Every peer behaves the same way, by the text of the incoming message:
//
//	ask …   asks a question (input required); the next message on the same
//	        task completes it with "echo: <answer>"
//	slow …  streams three WORKING progress updates before completing
//	hang …  works until canceled (or 30s), then reports CANCELED
//	fail …  fails the task
//	else    completes with an artifact "echo: <text>" (files and data are
//	        described in it)
package clienttest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2asrv03 "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	a2asrv1 "github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Question is what every peer asks for "ask" messages.
const Question = "What is your favourite colour?"

// Peer is a running interop server.
type Peer struct {
	// URL is the base URL (the card is at URL + /.well-known/agent-card.json).
	URL string
	// Canceled receives the id of every task whose "hang" work was
	// canceled (buffered; Go peers only).
	Canceled chan string
}

// describeV1 flattens v1 parts the way the echo answers them.
func describeV1(parts a2av1.ContentParts) string {
	var out []string
	for _, p := range parts {
		switch c := p.Content.(type) {
		case a2av1.Text:
			out = append(out, string(c))
		case a2av1.Raw:
			out = append(out, fmt.Sprintf("[file %s %s %d bytes]", p.Filename, p.MediaType, len(c)))
		case a2av1.URL:
			out = append(out, fmt.Sprintf("[file url %s %s]", string(c), p.MediaType))
		case a2av1.Data:
			b, _ := json.Marshal(c.Value)
			out = append(out, "[data "+string(b)+"]")
		}
	}
	return strings.TrimSpace(strings.Join(out, " "))
}

// v1Executor is the echo agent on the a2a-go v2 server.
type v1Executor struct{ canceled chan string }

func (e *v1Executor) Execute(ctx context.Context, ec *a2asrv1.ExecutorContext) iter.Seq2[a2av1.Event, error] {
	return func(yield func(a2av1.Event, error) bool) {
		text := describeV1(ec.Message.Parts)
		lower := strings.ToLower(text)
		done := func(answer string) {
			if !yield(a2av1.NewArtifactEvent(ec, a2av1.NewTextPart(answer)), nil) {
				return
			}
			yield(a2av1.NewStatusUpdateEvent(ec, a2av1.TaskStateCompleted, nil), nil)
		}
		if ec.StoredTask != nil {
			done("echo: " + text)
			return
		}
		if !yield(a2av1.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		agentMsg := func(s string) *a2av1.Message {
			return a2av1.NewMessageForTask(a2av1.MessageRoleAgent, ec, a2av1.NewTextPart(s))
		}
		switch {
		case strings.HasPrefix(lower, "ask"):
			yield(a2av1.NewStatusUpdateEvent(ec, a2av1.TaskStateInputRequired, agentMsg(Question)), nil)
		case strings.HasPrefix(lower, "fail"):
			yield(a2av1.NewStatusUpdateEvent(ec, a2av1.TaskStateFailed, agentMsg("failed as asked")), nil)
		case strings.HasPrefix(lower, "hang"):
			if !yield(a2av1.NewStatusUpdateEvent(ec, a2av1.TaskStateWorking, agentMsg("working until canceled")), nil) {
				return
			}
			select {
			case <-ctx.Done():
				select {
				case e.canceled <- string(ec.TaskID):
				default:
				}
			case <-time.After(30 * time.Second):
				done("echo: " + text)
			}
		case strings.HasPrefix(lower, "slow"):
			for i := 1; i <= 3; i++ {
				if !yield(a2av1.NewStatusUpdateEvent(ec, a2av1.TaskStateWorking, agentMsg(fmt.Sprintf("progress %d/3", i))), nil) {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			done("echo: " + text)
		default:
			done("echo: " + text)
		}
	}
}

func (e *v1Executor) Cancel(ctx context.Context, ec *a2asrv1.ExecutorContext) iter.Seq2[a2av1.Event, error] {
	return func(yield func(a2av1.Event, error) bool) {
		select {
		case e.canceled <- string(ec.TaskID):
		default:
		}
		yield(a2av1.NewStatusUpdateEvent(ec, a2av1.TaskStateCanceled, nil), nil)
	}
}

// authenticateAll treats every caller as one authenticated user, so that
// the SDK's ListTasks (which scopes tasks to a user) answers.
type authenticateAll struct {
	a2asrv1.PassthroughCallInterceptor
}

func (authenticateAll) Before(ctx context.Context, callCtx *a2asrv1.CallContext, req *a2asrv1.Request) (context.Context, any, error) {
	callCtx.User = a2asrv1.NewAuthenticatedUser("interop", nil)
	return ctx, nil, nil
}

// CardV1 describes the v1 echo agent at base.
func CardV1(base, name string, streaming bool) *a2av1.AgentCard {
	return &a2av1.AgentCard{
		Name:                name,
		Description:         "Echo agent on the official Go SDK (a2a-go v2)",
		Version:             "2.4.0",
		SupportedInterfaces: []*a2av1.AgentInterface{a2av1.NewAgentInterface(base+"/rpc", a2av1.TransportProtocolJSONRPC)},
		Capabilities:        a2av1.AgentCapabilities{Streaming: streaming},
		DefaultInputModes:   []string{"text/plain", "application/json", "application/octet-stream"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills: []a2av1.AgentSkill{{ID: "echo", Name: "Echo", Description: "Repeats what it is told",
			Tags: []string{"echo", "repeat"}, Examples: []string{"say hello"}}},
	}
}

// StartGoV1 starts the official Go SDK v1.0 server (a2a-go v2) with the
// echo agent; streaming says whether its card declares streaming.
func StartGoV1(t testing.TB, name string, streaming bool) *Peer {
	t.Helper()
	exec := &v1Executor{canceled: make(chan string, 16)}
	handler := a2asrv1.NewHandler(exec, a2asrv1.WithCallInterceptors(authenticateAll{}))
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.Handle("/rpc", a2asrv1.NewJSONRPCHandler(handler))
	mux.Handle("/.well-known/agent-card.json", a2asrv1.NewStaticAgentCardHandler(CardV1(srv.URL, name, streaming)))
	return &Peer{URL: srv.URL, Canceled: exec.canceled}
}

// describe03 flattens 0.3 parts.
func describe03(parts a2a03.ContentParts) string {
	var out []string
	for _, p := range parts {
		switch c := p.(type) {
		case a2a03.TextPart:
			out = append(out, c.Text)
		case a2a03.DataPart:
			b, _ := json.Marshal(c.Data)
			out = append(out, "[data "+string(b)+"]")
		case a2a03.FilePart:
			out = append(out, "[file]")
		}
	}
	return strings.TrimSpace(strings.Join(out, " "))
}

// v03Executor is the echo agent on the a2a-go v0.3 server.
type v03Executor struct{ canceled chan string }

func (e *v03Executor) Execute(ctx context.Context, rc *a2asrv03.RequestContext, q eventqueue.Queue) error {
	text := describe03(rc.Message.Parts)
	lower := strings.ToLower(text)
	agentMsg := func(s string) *a2a03.Message {
		return a2a03.NewMessageForTask(a2a03.MessageRoleAgent, rc, a2a03.TextPart{Text: s})
	}
	status := func(state a2a03.TaskState, msg *a2a03.Message, final bool) error {
		ev := a2a03.NewStatusUpdateEvent(rc, state, msg)
		ev.Final = final
		return q.Write(ctx, ev)
	}
	done := func(answer string) error {
		if err := q.Write(ctx, a2a03.NewArtifactEvent(rc, a2a03.TextPart{Text: answer})); err != nil {
			return err
		}
		return status(a2a03.TaskStateCompleted, nil, true)
	}
	if rc.StoredTask != nil {
		return done("echo: " + text)
	}
	if err := q.Write(ctx, a2a03.NewSubmittedTask(rc, rc.Message)); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(lower, "ask"):
		return status(a2a03.TaskStateInputRequired, agentMsg(Question), true)
	case strings.HasPrefix(lower, "fail"):
		return status(a2a03.TaskStateFailed, agentMsg("failed as asked"), true)
	case strings.HasPrefix(lower, "slow"):
		for i := 1; i <= 3; i++ {
			if err := status(a2a03.TaskStateWorking, agentMsg(fmt.Sprintf("progress %d/3", i)), false); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return done("echo: " + text)
}

func (e *v03Executor) Cancel(ctx context.Context, rc *a2asrv03.RequestContext, q eventqueue.Queue) error {
	select {
	case e.canceled <- string(rc.TaskID):
	default:
	}
	ev := a2a03.NewStatusUpdateEvent(rc, a2a03.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// StartGoV03 starts a protocol 0.3 server on the official Go SDK's 0.3
// line (a2a-go v0.3) with the echo agent and a 0.3 card.
func StartGoV03(t testing.TB, name string) *Peer {
	t.Helper()
	exec := &v03Executor{canceled: make(chan string, 16)}
	handler := a2asrv03.NewHandler(exec)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &a2a03.AgentCard{
		Name:               name,
		Description:        "Echo agent on the official Go SDK's 0.3 line",
		URL:                srv.URL + "/rpc",
		PreferredTransport: a2a03.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		Version:            "0.3.15",
		Capabilities:       a2a03.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a03.AgentSkill{{ID: "echo03", Name: "Echo 0.3", Description: "Repeats what it is told", Tags: []string{"echo", "legacy"}}},
	}
	mux.Handle("/rpc", a2asrv03.NewJSONRPCHandler(handler))
	mux.Handle("/.well-known/agent-card.json", a2asrv03.NewStaticAgentCardHandler(card))
	return &Peer{URL: srv.URL, Canceled: exec.canceled}
}

// jsDir returns testharness/interop/js of this module.
func jsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testharness", "interop", "js")
}

// StartJS starts testharness/interop/js/echo-server.mjs (the official JS
// SDK) with node. It skips the test when node is not installed and fails
// it, with the command to fix it, when the npm dependencies are missing.
func StartJS(t testing.TB, name string) *Peer {
	t.Helper()
	return startJS(t, name)
}

// StartJSGRPC starts the JS SDK echo agent behind the SDK's gRPC service
// only (@grpc/grpc-js, a port of its own); its card declares that one
// GRPC interface.
func StartJSGRPC(t testing.TB, name string) *Peer {
	t.Helper()
	return startJS(t, name, "BINDING=grpc")
}

// startJS runs echo-server.mjs with env added to the environment.
func startJS(t testing.TB, name string, env ...string) *Peer {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the JS SDK interop test needs Node.js >= 20 (apt-get install nodejs)")
	}
	dir := jsDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		t.Fatalf("the JS interop peer's dependencies are missing (%v): run `make deps` (or `npm ci` in %s)", err, dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, "echo-server.mjs", "0")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NAME="+name), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting node echo-server.mjs: %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = cmd.Wait() }()
	t.Cleanup(func() {
		_ = stdin.Close()
		cancel()
		wg.Wait()
	})
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				urlCh <- strings.TrimSpace(u)
			}
		}
	}()
	select {
	case u := <-urlCh:
		return &Peer{URL: u, Canceled: make(chan string, 16)}
	case <-time.After(30 * time.Second):
		t.Fatal("node echo-server.mjs did not print LISTENING within 30s")
	}
	return nil
}
