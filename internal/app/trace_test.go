package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// tracePeer is a minimal A2A peer that records the trace headers of every
// SendMessage and completes it at once.
type tracePeer struct {
	*httptest.Server
	mu     sync.Mutex
	traces []string
}

func newTracePeer(t *testing.T) *tracePeer {
	p := &tracePeer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"name":"Bob","description":"a peer","version":"1",
				"supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
				"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
				"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`, p.URL)
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		p.mu.Lock()
		p.traces = append(p.traces, r.Header.Get("traceparent"))
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"task":{"id":"bt","contextId":"bc","status":{"state":"TASK_STATE_COMPLETED"},
			"artifacts":[{"artifactId":"a","parts":[{"text":"bob done"}]}]}}}`, req.ID)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *tracePeer) last(t *testing.T) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.traces) == 0 {
		t.Fatal("the peer got no SendMessage")
	}
	return p.traces[len(p.traces)-1]
}

// delegatorAgent is a scripted agent that answers every message by calling
// a2a_call to bob with its text and replying with bob's answer.
func delegatorAgent(t *testing.T) *testharness.Agent {
	t.Helper()
	sc, err := testharness.ParseScenario([]byte(`
name: delegator
default:
  actions:
    - call_tool:
        name: a2a_call
        args: {agent: bob, message: "{{parts_text}}"}
        reply: "bob says: {{result}}"
`), "delegator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	agent, err := testharness.NewAgent(sc, testharness.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	return agent
}

// delegatingPlugin serves the plugin in process with an agent that answers
// every message by calling a2a_call to bob.
func delegatingPlugin(t *testing.T, bob string, env map[string]string) (string, *hostsdk.Plugin) {
	t.Helper()
	agent := delegatorAgent(t)
	cfg := fmt.Sprintf(`{"port":0,"store":"memory","allow_loopback_urls":true,"a2a_agents":[{"name":"bob","url":%q}]}`, bob)
	p := serve(t, cfg, env, hostsdk.InProcessOptions{Host: agent.Handler()})
	platform, _ := p.Platform()
	toolset, _ := p.Toolset()
	agent.Attach(platform)
	agent.SetToolCaller(toolset.CallTool)
	return p.Endpoints()[0], p
}

// sendTraced sends a blocking SendMessage with the given traceparent ("" for
// none) and returns the answer's text.
func sendTraced(t *testing.T, url, traceparent string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"summarise the news"}]}}}`
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "bob says") {
		t.Fatalf("answer %s, want bob's", b)
	}
	return string(b)
}

func TestToolCallDuringAnInboundTurnContinuesItsTrace(t *testing.T) {
	bob := newTracePeer(t)
	url, p := delegatingPlugin(t, bob.URL, nil)
	const inbound = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sendTraced(t, url, inbound)
	out := bob.last(t)
	if tracing.TraceID(out) != tracing.TraceID(inbound) {
		t.Errorf("outbound traceparent %q, want trace id %s", out, tracing.TraceID(inbound))
	}
	if tracing.SpanID(out) == tracing.SpanID(inbound) {
		t.Errorf("outbound traceparent %q reuses the caller's span id", out)
	}

	// Without a trace the inbound turn starts one, and the call continues it.
	sendTraced(t, url, "")
	untraced := bob.last(t)
	if !tracing.Valid(untraced) || tracing.TraceID(untraced) == tracing.TraceID(inbound) {
		t.Errorf("untraced turn's call sent %q, want a new trace", untraced)
	}

	// A host's own trace wins; a call outside any A2A turn without one
	// starts a new trace.
	toolset, _ := p.Toolset()
	const hostTrace = "00-11111111111111111111111111111111-2222222222222222-01"
	args := `{"agent":"bob","message":"hello"}`
	if _, err := toolset.CallTool(context.Background(), &pb.CallToolRequest{Name: "a2a_call", ArgumentsJson: args,
		Trace: &pb.TraceContext{Traceparent: hostTrace}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := bob.last(t); tracing.TraceID(got) != tracing.TraceID(hostTrace) || tracing.SpanID(got) == tracing.SpanID(hostTrace) {
		t.Errorf("call with the host's trace sent %q, want a child of %s", got, hostTrace)
	}
	if _, err := toolset.CallTool(context.Background(), &pb.CallToolRequest{Name: "a2a_call", ArgumentsJson: args, Platform: "cli", ChatId: "c"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := bob.last(t); !tracing.Valid(got) || tracing.TraceID(got) == tracing.TraceID(hostTrace) || tracing.TraceID(got) == tracing.TraceID(untraced) {
		t.Errorf("untraced call outside a turn sent %q, want a new trace", got)
	}
}

// collector is a fake OTLP/HTTP endpoint counting span exports.
type collector struct {
	*httptest.Server
	mu    sync.Mutex
	posts int
}

func TestOpenTelemetrySpansAreExportedToTheConfiguredEndpoint(t *testing.T) {
	col := &collector{}
	col.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			col.mu.Lock()
			col.posts++
			col.mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer col.Close()
	bob := newTracePeer(t)
	url, p := delegatingPlugin(t, bob.URL, map[string]string{"A2A_OTEL_ENDPOINT": col.URL})
	const inbound = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sendTraced(t, url, inbound)
	if out := bob.last(t); tracing.TraceID(out) != tracing.TraceID(inbound) || tracing.SpanID(out) == tracing.SpanID(inbound) {
		t.Errorf("outbound traceparent %q, want a span of trace %s", out, tracing.TraceID(inbound))
	}
	// Drain flushes the spans.
	if _, err := p.Lifecycle().Drain(context.Background(), &pb.DrainRequest{TimeoutMs: 5000}); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if col.posts == 0 {
		t.Error("no spans reached the OTLP endpoint")
	}
}
