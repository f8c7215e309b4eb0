package outbound_test

import (
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// The peers below are servers this project did not write (see clienttest:
// "ask …" asks clienttest.Question and echoes the answer, "slow …" streams
// three progress updates, "hang …" works until cancelled, anything else is
// echoed as "echo: <text>"). The calls go through the plugin binary's
// tools, as the host's model makes them.

// callerOf starts a host whose a2a_agents are the given name → URL pairs.
func callerOf(t *testing.T, peers map[string]string) *testharness.Host {
	t.Helper()
	var agents []map[string]any
	for name, url := range peers {
		agents = append(agents, map[string]any{"name": name, "url": url})
	}
	return testharness.Start(t, testharness.Options{PluginConfig: peerConfig(map[string]any{"a2a_agents": agents})})
}

// askAndAnswer runs the question flow: the peer asks, the answer completes
// the task.
func askAndAnswer(t *testing.T, h *testharness.Host, peer string) {
	t.Helper()
	r, _ := callTool(t, h, "a2a_call", map[string]any{"agent": peer, "message": "ask me something"})
	e2etest.MustOK(t, r, peer+" needs more input", "Question from "+peer+":\n[A2A UNTRUSTED INPUT BEGIN from "+peer+"]", clienttest.Question+"\n[A2A UNTRUSTED INPUT END from "+peer+"]")
	q := e2etest.SummaryOf(t, r)
	r, _ = callTool(t, h, "a2a_call", map[string]any{"agent": peer, "message": "blue", "task_id": q.TaskID, "context_id": q.ContextID})
	e2etest.MustOK(t, r, peer+" completed the task", "echo: blue")
	if s := e2etest.SummaryOf(t, r); s.TaskID != q.TaskID {
		t.Fatalf("the answer went to task %s, not %s", s.TaskID, q.TaskID)
	}
}

// TestToolsInteroperateWithTheOfficialGoSDKServer: the binary's tools
// against a2a-go v2 servers, one streaming and one not: discovery, a
// blocking call, a question and its answer, progress over a stream, the
// polling path, and a cancel that reaches the SDK's executor.
func TestToolsInteroperateWithTheOfficialGoSDKServer(t *testing.T) {
	t.Parallel()
	streaming := clienttest.StartGoV1(t, "Go SDK Echo", true)
	plain := clienttest.StartGoV1(t, "Go SDK Plain", false)
	h := callerOf(t, map[string]string{"gosdk": streaming.URL, "gosdk-plain": plain.URL})

	t.Run("discover", func(t *testing.T) {
		t.Parallel()
		r, _ := callTool(t, h, "a2a_discover", map[string]any{"url": "gosdk"})
		e2etest.MustOK(t, r, `Agent "Go SDK Echo"`, "Interface used: JSONRPC, protocol 1.0, "+streaming.URL+"/rpc",
			"streaming yes", "- echo (Echo): Repeats what it is told [tags: echo, repeat]", "Authentication: none required")
	})
	t.Run("blocking call", func(t *testing.T) {
		t.Parallel()
		r, _ := callTool(t, h, "a2a_call", map[string]any{"agent": "gosdk", "message": "hello from the plugin"})
		e2etest.MustOK(t, r, "gosdk completed the task", "echo: hello from the plugin")
	})
	t.Run("question and answer", func(t *testing.T) {
		t.Parallel()
		askAndAnswer(t, h, "gosdk")
	})
	t.Run("stream progress", func(t *testing.T) {
		t.Parallel()
		r, progress := callTool(t, h, "a2a_call", map[string]any{"agent": "gosdk", "message": "slow report"})
		e2etest.MustOK(t, r, "echo: slow report")
		var lines []string
		for _, p := range progress {
			lines = append(lines, p.GetMessage())
		}
		inOrder(t, strings.Join(lines, "\n"), "progress 1/3", "progress 2/3", "progress 3/3")
	})
	t.Run("polling a peer that does not stream", func(t *testing.T) {
		t.Parallel()
		r, _ := callTool(t, h, "a2a_call", map[string]any{"agent": "gosdk-plain", "message": "slow but steady"})
		e2etest.MustOK(t, r, "gosdk-plain completed the task", "echo: slow but steady")
	})
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		r, _ := callTool(t, h, "a2a_call", map[string]any{"agent": "gosdk-plain", "message": "hang on", "wait": false})
		s := e2etest.SummaryOf(t, r)
		if !s.Receipt || s.TaskID == "" {
			t.Fatalf("summary %+v", s)
		}
		r, _ = callTool(t, h, "a2a_task", map[string]any{"agent": "gosdk-plain", "task_id": s.TaskID, "action": "cancel"})
		e2etest.MustOK(t, r, "Asked gosdk-plain to cancel task \""+s.TaskID+"\"")
		select {
		case id := <-plain.Canceled:
			if id != s.TaskID {
				t.Fatalf("the SDK cancelled task %s, not %s", id, s.TaskID)
			}
		case <-time.After(callTimeout):
			t.Fatal("the SDK's executor never saw the cancellation")
		}
		r, _ = callTool(t, h, "a2a_task", map[string]any{"agent": "gosdk-plain", "task_id": s.TaskID, "action": "wait", "timeout_s": 30})
		e2etest.MustOK(t, r, "CANCELED")
	})
}

// TestToolsInteroperateWithTheOfficialJSSDKServer: the binary's tools
// against @a2a-js/sdk: discovery, a blocking call with a data part, and a
// question and its answer.
func TestToolsInteroperateWithTheOfficialJSSDKServer(t *testing.T) {
	t.Parallel()
	js := clienttest.StartJS(t, "JS SDK Echo")
	h := callerOf(t, map[string]string{"jssdk": js.URL})

	r, _ := callTool(t, h, "a2a_discover", map[string]any{"url": "jssdk"})
	e2etest.MustOK(t, r, `Agent "JS SDK Echo"`, "protocol 1.0")

	r, _ = callTool(t, h, "a2a_call", map[string]any{"agent": "jssdk", "message": "hello JS", "data": map[string]any{"n": 1}})
	e2etest.MustOK(t, r, "jssdk completed the task", `echo: hello JS [data {"n":1}]`)

	askAndAnswer(t, h, "jssdk")
}
