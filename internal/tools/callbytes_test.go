package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// endlessStreamer streams one task's artifact in 64 KiB chunks until the
// client goes away; sent counts the chunks written.
func endlessStreamer(t *testing.T, sent *atomic.Int64) string {
	mux := http.NewServeMux()
	srv := fakeStreamingPeer(t, mux)
	chunk := strings.Repeat("x", 64<<10)
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		ev := func(result string) bool {
			if _, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}\n\n", result); err != nil {
				return false
			}
			fl.Flush()
			return r.Context().Err() == nil
		}
		ev(`{"task":{"id":"t-big","contextId":"c-big","status":{"state":"TASK_STATE_WORKING"}}}`)
		for i := 0; i < 100_000; i++ {
			if !ev(fmt.Sprintf(`{"artifactUpdate":{"taskId":"t-big","contextId":"c-big","append":%v,"artifact":{"artifactId":"a","parts":[{"text":%q}]}}}`, i > 0, chunk)) {
				return
			}
			sent.Add(1)
		}
	})
	return srv
}

// fakeStreamingPeer serves a streaming card for the routes of mux.
func fakeStreamingPeer(t *testing.T, mux *http.ServeMux) string {
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	srv := hs.URL
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"big","description":"streams a lot","version":"1",
		 "supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		 "capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		 "skills":[{"id":"s","name":"s","description":"s","tags":["s"]}]}`, srv)
	})
	return srv
}

func TestAStreamedCallKeepsAtMostItsByteLimit(t *testing.T) {
	var sent atomic.Int64
	url := endlessStreamer(t, &sent)
	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "big", URL: url}}}, nil)
	ts.out.maxCallBytes = 1 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	r := callToolCtx(ctx, t, ts, ToolCall, map[string]any{"agent": "big", "message": "everything", "timeout_s": 15}, nil)
	mustErr(t, r, "big sent more than 1 MiB of artifacts", `task "t-big"`, "stopped reading")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the call took %s: it kept reading", d)
	}
	// It stopped reading (the peer's writes fail soon after, once the
	// socket buffers are full), not at the end of the wait.
	time.Sleep(300 * time.Millisecond)
	n := sent.Load()
	time.Sleep(300 * time.Millisecond)
	if m := sent.Load(); m != n || n > 1000 {
		t.Fatalf("the peer could still write: %d chunks of 64 KiB, then %d", n, m)
	}
}

func TestTrackerDropsWhatPassesTheLimit(t *testing.T) {
	tr := tracker{limit: 1000}
	part := a2a.TextPart(strings.Repeat("y", 400))
	for i := range 5 {
		tr.mergeArtifact(a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{part}}, i > 0)
	}
	if !tr.over || tr.size > 1000 || len(tr.artifacts) != 1 || len(tr.artifacts[0].Parts) != 2 {
		t.Fatalf("over %v, size %d, %d artifacts, %d parts", tr.over, tr.size, len(tr.artifacts), len(tr.artifacts[0].Parts))
	}
	// New artifacts count too.
	tr = tracker{limit: 1000}
	for i := range 5 {
		tr.mergeArtifact(a2a.Artifact{ArtifactID: fmt.Sprint("a", i), Parts: []a2a.Part{part}}, false)
	}
	if !tr.over || len(tr.artifacts) != 2 {
		t.Fatalf("over %v, %d artifacts", tr.over, len(tr.artifacts))
	}
}
