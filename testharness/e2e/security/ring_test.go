package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// dropper is an A2A agent that forwards every message it gets to next as
// a new message — without the delegation chain's metadata, in a new
// context — and answers with what next answered: the kind of hop that
// defeats the depth check. It stops forwarding after failsafeHops so that
// a ring with no bound still ends.
type dropper struct {
	srv  *httptest.Server
	next string // A2A endpoint to forward to
	hops atomic.Int32
	// withChain counts the forwarded messages that came with chain metadata.
	withChain atomic.Int32
}

const failsafeHops = 25

func startDropper(t *testing.T, token string) *dropper {
	t.Helper()
	d := &dropper{}
	mux := http.NewServeMux()
	d.srv = httptest.NewServer(mux)
	t.Cleanup(d.srv.Close)
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":"Dropper","description":"forwards, dropping metadata","version":"1",
			"supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
			"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
			"skills":[{"id":"forward","name":"forward","description":"forwards","tags":["forward"]}]}`, d.srv.URL+"/")
	})
	var mu sync.Mutex
	mux.HandleFunc("POST /{$}", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Message struct {
					Parts    []struct{ Text string } `json:"parts"`
					Metadata map[string]any          `json:"metadata"`
				} `json:"message"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		text := ""
		for _, p := range req.Params.Message.Parts {
			text += p.Text
		}
		if _, ok := req.Params.Message.Metadata["a2a-plugin/chain-id"]; ok {
			d.withChain.Add(1)
		}
		answer := "ring cut by the test after " + fmt.Sprint(failsafeHops) + " hops"
		if n := d.hops.Add(1); n <= failsafeHops {
			mu.Lock()
			next := d.next
			mu.Unlock()
			ctx, cancel := context.WithTimeout(r.Context(), 40*time.Second)
			resp, err := newClient(next, token).call(ctx, "SendMessage", sendParams(message(text))) // no metadata, no context
			cancel()
			var res struct {
				Task json.RawMessage `json:"task"`
			}
			switch {
			case err != nil:
				answer = "forwarding failed: " + err.Error()
			case resp.Err != nil || json.Unmarshal(resp.Result, &res) != nil || res.Task == nil:
				answer = "forwarding failed: " + resp.String()
			default:
				answer = answerOf(res.Task)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"task": map[string]any{
			"id": fmt.Sprintf("drop-%d", time.Now().UnixNano()), "contextId": "drop-ctx",
			"status": map[string]any{"state": "TASK_STATE_COMPLETED", "message": map[string]any{"messageId": fmt.Sprintf("dm-%d", time.Now().UnixNano()),
				"role": "ROLE_AGENT", "parts": []any{map[string]any{"text": answer}}}}}}})
		_, _ = w.Write(b)
	})
	return d
}

// TestRingThroughAMetadataDroppingAgentStopsAtTheBound: host A's agent
// forwards every message to the dropper with a2a_call, and the dropper
// forwards it back to A as a new message without the chain's metadata —
// so every hop looks like a first one to the depth check, and the turn
// cap never sees one context twice. A2A_MAX_CALLS_PER_MINUTE, counted
// for the dropper's identity whatever its contexts, stops the ring: the
// hop past it is refused with a tool error naming the setting, that
// error travels back as the answers, and every task ends.
func TestRingThroughAMetadataDroppingAgentStopsAtTheBound(t *testing.T) {
	t.Parallel()
	const perMinute = 5
	const tokDropper = "dropper-token-8c1e5a7b3d9f2e4a6c0b"
	d := startDropper(t, tokDropper)
	a := startHost(t, hostOpts{
		agent: scenario(nil, testharness.CallTool(testharness.ToolCallSpec{
			Name: "a2a_call", Args: map[string]any{"agent": "dropper", "message": "{{parts_text}}"},
			Reply: "{{result}}", IgnoreError: true,
		})),
		config: map[string]any{
			"allow_loopback_urls": true, "call_timeout": "40s", "request_timeout": "45s",
			"max_calls_per_minute": perMinute,
			"a2a_agents":           []map[string]any{{"name": "dropper", "url": d.srv.URL}},
		},
		env: map[string]string{"A2A_PEER_TOKENS": "dropper:" + tokDropper},
	})
	d.next = a.Endpoint("a2a")
	ctx := ctxFor(t, 90*time.Second)

	start := newClient(a.Endpoint("a2a"), "").mustSend(t, ctx, "go round")
	if start.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("the first task ended %s: %q", start.Status.State, statusText(start))
	}
	_, got := newClient(a.Endpoint("a2a"), "").getTask(t, ctx, start.ID)
	answer := answerOf(got.Result)
	// The test's own message (Local) makes one call; then each of the
	// dropper's messages makes one, perMinute in all; the next is refused.
	if got := d.hops.Load(); got != 1+perMinute {
		t.Errorf("the ring made %d hops through the dropper, want %d (1 for the test's message, %d for the dropper's: A2A_MAX_CALLS_PER_MINUTE)", got, 1+perMinute, perMinute)
	}
	if d.withChain.Load() == 0 {
		t.Error("A sent no chain metadata: the test does not show the dropper dropping it")
	}
	if !strings.Contains(answer, "A2A_MAX_CALLS_PER_MINUTE") || !strings.Contains(answer, "peer:dropper") {
		t.Errorf("the refusal did not travel back as the answer: %q", answer)
	}
	isHM := func(c testharness.Call) bool { return c.Kind == testharness.KindHandleMessage }
	for _, call := range a.Recorder().Filter(isHM) {
		if _, _, ok := chainOf(call.HandleMessage().GetMetadata()); ok {
			t.Errorf("a message reached A with chain metadata: the dropper did not drop it")
		}
		if _, err := a.Recorder().WaitForCompletion(ctx, call.TaskID); err != nil {
			t.Errorf("task %s never completed: %v", call.TaskID, err)
		}
	}
	refused := a.Recorder().Filter(func(c testharness.Call) bool {
		return c.Kind == testharness.KindCallTool && c.ToolResult().GetIsError() &&
			strings.Contains(c.ToolResult().GetContent(), "max_calls_per_minute")
	})
	if len(refused) != 1 {
		t.Errorf("A refused %d outbound calls, want 1", len(refused))
	}
}

// answerOf is the text of a task's artifacts (where its answer is) and of
// its status message, joined.
func answerOf(raw json.RawMessage) string {
	var tk struct {
		Status struct {
			Message struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"message"`
		} `json:"status"`
		Artifacts []struct {
			Parts []struct{ Text string } `json:"parts"`
		} `json:"artifacts"`
	}
	_ = json.Unmarshal(raw, &tk)
	var b strings.Builder
	for _, a := range tk.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text)
		}
	}
	for _, p := range tk.Status.Message.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
