package rest_test

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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestOfficialGoSDKGRPCClientAgainstTheBinary: the official Go SDK with
// only its gRPC transport dials the binary's GRPC interface (the A2A
// port) and runs the operations; our statuses arrive as its typed errors.
func TestOfficialGoSDKGRPCClientAgainstTheBinary(t *testing.T) {
	h := startHost(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	card := sdkclient.ResolveCard(t, ctx, sdkclient.Bearer(tokAlice, nil), h.url)
	var grpcURL string
	for _, in := range card.SupportedInterfaces {
		if in.ProtocolBinding == sdk.TransportProtocolGRPC {
			grpcURL = in.URL
		}
	}
	if grpcURL != strings.TrimPrefix(h.url, "http://") {
		t.Fatalf("GRPC interface %q, want the A2A port of %s", grpcURL, h.url)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(sdkclient.BearerRPC(tokAlice))))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()

	goSDKOperations(t, ctx, client, "grpc")
}

// TestOfficialJSSDKGRPCClientAgainstTheBinary runs
// testharness/interop/js/client-binding.mjs with the JS SDK's gRPC
// transport against the binary.
func TestOfficialJSSDKGRPCClientAgainstTheBinary(t *testing.T) {
	steps := jsBindingSession(t, "grpc")
	if r := steps["done"].Requests; len(r) != 1 {
		t.Errorf("HTTP requests of the gRPC client: %v", r)
	}
}

// TestToolsCallOfficialGRPCOnlyPeers: the binary's tools against the
// official Go and JS SDK servers offering only gRPC: discovery names the
// GRPC interface, a blocking call, a question and its answer, a stream
// with progress, a cancel.
func TestToolsCallOfficialGRPCOnlyPeers(t *testing.T) {
	for _, p := range []struct {
		name  string
		start func(testing.TB, string) *clienttest.Peer
	}{{"gogrpc", clienttest.StartGoV1GRPC}, {"jsgrpc", clienttest.StartJSGRPC}} {
		t.Run(p.name, func(t *testing.T) {
			peer := p.start(t, "gRPC Echo")
			h := callerHost(t, []map[string]any{{"name": p.name, "url": peer.URL}})
			r := callTool(t, h, "a2a_discover", map[string]any{"url": p.name})
			contains(t, r, false, `Agent "gRPC Echo"`, "Interface used: GRPC, protocol 1.0, http://127.0.0.1:")

			r = callTool(t, h, "a2a_call", map[string]any{"agent": p.name, "message": "hello over grpc"})
			contains(t, r, false, p.name+" completed the task", "echo: hello over grpc")

			r = callTool(t, h, "a2a_call", map[string]any{"agent": p.name, "message": "ask me something"})
			contains(t, r, false, clienttest.Question)
			ids := callIDs(t, r.GetContent())
			r = callTool(t, h, "a2a_call", map[string]any{"agent": p.name, "message": "blue", "task_id": ids.TaskID, "context_id": ids.ContextID})
			contains(t, r, false, p.name+" completed the task", "echo: blue")

			r = callTool(t, h, "a2a_call", map[string]any{"agent": p.name, "message": "slow report"})
			contains(t, r, false, "echo: slow report")

			r = callTool(t, h, "a2a_task", map[string]any{"agent": p.name, "task_id": "no-such-task", "action": "get"})
			contains(t, r, true, "a2a_task get on "+p.name+" failed", "-32001")
		})
	}
}

// taskIDs is the summary line a2a_call ends with.
type taskIDs struct {
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id"`
}

func callIDs(t *testing.T, c string) taskIDs {
	t.Helper()
	var s taskIDs
	if i := strings.LastIndex(c, "\n{\""); i < 0 || json.Unmarshal([]byte(c[i+1:]), &s) != nil || s.TaskID == "" {
		t.Fatalf("no summary line in:\n%s", c)
	}
	return s
}

// TestToolsCallThePluginOverGRPC: one binary calls another over gRPC, both
// sides this project's. Bob's card, seen through a proxy on one port that
// passes HTTP/2 connections through to bob and serves a card whose GRPC
// interface (on the proxy's own origin, so alice's token goes there)
// comes first, makes alice's client choose gRPC.
func TestToolsCallThePluginOverGRPC(t *testing.T) {
	bob := startHost(t, nil)
	proxy := grpcFirstProxy(t, bob)
	alice := callerHost(t, []map[string]any{
		{"name": "bob", "url": proxy, "token": tokAlice},
		{"name": "bob-wrong", "url": proxy, "token": "not-a-token-0123456789"},
	})
	r := callTool(t, alice, "a2a_discover", map[string]any{"url": "bob"})
	contains(t, r, false, "Interface used: GRPC, protocol 1.0, "+proxy)

	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "hello bob"})
	contains(t, r, false, "bob completed the task", "echo: hello bob")
	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "progress please"})
	contains(t, r, false, "bob completed the task", "part one;", "part two", "done: please")

	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "ask away"})
	contains(t, r, false, "Which colour?")
	ids := callIDs(t, r.GetContent())
	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "green", "task_id": ids.TaskID, "context_id": ids.ContextID})
	contains(t, r, false, "bob completed the task", "got: green")
	r = callTool(t, alice, "a2a_task", map[string]any{"agent": "bob", "task_id": "no-such-task", "action": "get"})
	contains(t, r, true, "TASK_NOT_FOUND")
	r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob-wrong", "message": "hello"})
	contains(t, r, true, "authentication refused")
}

// grpcFirstProxy listens on one port for bob: connections that open with
// the HTTP/2 preface (gRPC) are passed through to bob byte for byte;
// HTTP/1.1 requests get bob's card with the GRPC interface moved to the
// front and pointed at the proxy. It returns the proxy's base URL.
func grpcFirstProxy(t *testing.T, bob *host) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	base := "http://" + ln.Addr().String()
	backend := strings.TrimPrefix(bob.url, "http://")
	card := func() []byte {
		a := bob.do(t, "", http.MethodGet, "/.well-known/agent-card.json", nil, nil)
		var c map[string]any
		if err := json.Unmarshal(a.body, &c); err != nil {
			t.Errorf("bob's card: %v", err)
			return nil
		}
		ifs := []any{map[string]any{"url": ln.Addr().String(), "protocolBinding": "GRPC", "protocolVersion": "1.0"}}
		for _, in := range c["supportedInterfaces"].([]any) {
			if in.(map[string]any)["protocolBinding"] != "GRPC" {
				ifs = append(ifs, in)
			}
		}
		c["supportedInterfaces"] = ifs
		b, _ := json.Marshal(c)
		return b
	}
	serve := func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		head, err := br.Peek(3)
		if err != nil {
			return
		}
		if string(head) == "PRI" {
			up, err := net.Dial("tcp", backend)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { _, _ = io.Copy(up, br) }()
			_, _ = io.Copy(c, up)
			return
		}
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			body := card()
			if req.URL.Path != "/.well-known/agent-card.json" {
				body = []byte("not here")
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return base
}
