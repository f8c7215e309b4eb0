package security_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestRequestLimitsFromTheEnvironment: A2A_MAX_BODY_BYTES, A2A_MAX_PARTS
// and A2A_MAX_PART_BYTES bound every message, with refusals that name the
// limit; a message right at the limits is served.
func TestRequestLimitsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{
		config: map[string]any{"loopback_is_local": false},
		env: map[string]string{"A2A_PEER_TOKENS": peerTokens, "A2A_MAX_BODY_BYTES": "65536",
			"A2A_MAX_PARTS": "8", "A2A_MAX_PART_BYTES": "4096"},
	})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 30*time.Second)
	alice := newClient(ep, tokAlice)

	textParts := func(n, size int) []map[string]any {
		parts := make([]map[string]any, n)
		for i := range parts {
			parts[i] = map[string]any{"text": strings.Repeat("x", size)}
		}
		return parts
	}
	before := len(h.Recorder().CallsOf("HandleMessage"))

	// At the limits: 8 parts of 4096 bytes.
	tk := alice.mustSend(t, ctx, "", withParts(textParts(8, 4096)...))
	if hm := handleMessageFor(t, ctx, h, tk.ID); len(hm.GetParts()) != 8 {
		t.Errorf("the host got %d parts, want 8", len(hm.GetParts()))
	}
	before++

	for _, tc := range []struct {
		name   string
		parts  []map[string]any
		status int
		code   int
		phrase string
	}{
		{"body over A2A_MAX_BODY_BYTES", textParts(8, 9000), http.StatusRequestEntityTooLarge, -32600, "65536 bytes"},
		{"parts over A2A_MAX_PARTS", textParts(9, 1), http.StatusOK, -32602, "at most 8"},
		{"text part over A2A_MAX_PART_BYTES", textParts(1, 4097), http.StatusOK, -32602, "at most 4096"},
		{"file part over A2A_MAX_PART_BYTES", []map[string]any{{"raw": base64.StdEncoding.EncodeToString(make([]byte, 5000)),
			"mediaType": "application/octet-stream", "filename": "zeros.bin"}}, http.StatusOK, -32602, "at most 4096"},
		{"data part over A2A_MAX_PART_BYTES", []map[string]any{{"data": map[string]any{"blob": strings.Repeat("d", 5000)}}},
			http.StatusOK, -32602, "at most 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := alice.mustCall(t, ctx, "SendMessage", sendParams(message("", withParts(tc.parts...))))
			wantRefusal(t, r, tc.status, tc.code, tc.phrase)
		})
	}
	if after := len(h.Recorder().CallsOf("HandleMessage")); after != before {
		t.Errorf("refused messages reached the host (%d → %d)", before, after)
	}
}

// TestStreamsPerIdentity: with A2A_MAX_STREAMS_PER_PEER=2 a peer's third
// concurrent stream (send or subscribe) is HTTP 429 / -32051; another peer
// is not affected, and a closed stream frees its slot.
func TestStreamsPerIdentity(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{
		agent:  scenario([]testharness.Rule{when("hang", testharness.Progress("working"), testharness.Hang())}, testharness.Echo("echo: ")),
		config: map[string]any{"loopback_is_local": false},
		env:    map[string]string{"A2A_PEER_TOKENS": peerTokens, "A2A_MAX_STREAMS_PER_PEER": "2"},
	})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 40*time.Second)
	alice, bob := newClient(ep, tokAlice), newClient(ep, tokBob)

	var taskIDs []string
	// open starts a stream of a hanging task and waits for its first event.
	open := func(c *client, text string) (context.CancelFunc, bool) {
		t.Helper()
		sctx, cancel := context.WithCancel(ctx)
		hr, events, err := c.stream(sctx, "SendStreamingMessage", sendParams(message(text)))
		if err != nil {
			t.Fatalf("stream %q: %v", text, err)
		}
		ev, ok := <-events
		if !ok {
			hr.Body.Close()
			cancel()
			return nil, false
		}
		var first struct {
			Result struct {
				Task struct {
					ID string `json:"id"`
				} `json:"task"`
				StatusUpdate struct {
					TaskID string `json:"taskId"`
				} `json:"statusUpdate"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(ev), &first)
		taskIDs = append(taskIDs, first.Result.Task.ID+first.Result.StatusUpdate.TaskID)
		go func() {
			for range events {
			}
		}()
		return cancel, true
	}
	refused := func(c *client, method string, params any) {
		t.Helper()
		hr, events, err := c.stream(ctx, method, params)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := <-events; ok {
			t.Fatalf("%s: a stream beyond the cap was opened", method)
		}
		var body struct {
			Error *rpcError `json:"error"`
		}
		_ = json.NewDecoder(hr.Body).Decode(&body)
		hr.Body.Close()
		r := &resp{Status: hr.StatusCode, Header: hr.Header, Err: body.Error}
		wantRefusal(t, r, http.StatusTooManyRequests, -32051, "streams")
	}

	cancel1, ok1 := open(alice, "hang one")
	_, ok2 := open(alice, "hang two")
	if !ok1 || !ok2 {
		t.Fatal("alice's first two streams were not opened")
	}
	if taskIDs[0] == "" {
		t.Fatal("the first stream event named no task")
	}
	refused(alice, "SendStreamingMessage", sendParams(message("hang three")))
	refused(alice, "SubscribeToTask", map[string]any{"id": taskIDs[0]})
	if _, ok := open(bob, "hang bob"); !ok {
		t.Error("bob's stream was refused because of alice's")
	}

	// Closing a stream frees its slot.
	cancel1()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := open(alice, "hang again"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("alice's closed stream never freed its slot")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range taskIDs {
		if id == "" {
			continue
		}
		if r := alice.mustCall(t, ctx, "CancelTask", map[string]any{"id": id}); r.Err != nil && r.Err.Code == -32001 {
			_ = bob.mustCall(t, ctx, "CancelTask", map[string]any{"id": id})
		}
	}
}
