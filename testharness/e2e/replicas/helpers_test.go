// Package replicas_test proves, with three harness hosts each launching the
// real a2a-plugin binary on one PostgreSQL database (store: postgres), that
// replicas behind a load balancer serve every task from any replica:
//
//   - tasks created on one replica are read, listed, streamed and
//     re-attached to, and their push configs managed, on the others;
//   - a cancel received by any replica reaches the host running the turn;
//   - a replica killed mid-task: after its lease the others fail its task
//     with the documented reason, and streams on them see it;
//   - push notifications are delivered exactly once while a replica is
//     killed with deliveries in flight.
//
// The tests need a PostgreSQL server: `make test` starts a throwaway one
// (testharness/pg/up.sh) and sets A2A_TEST_POSTGRES_DSN; without it they
// skip. Each test gets a schema of its own.
package replicas_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/store/storetest"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// The peer token every replica knows, so a client is the same identity
// (peer:alice) whichever replica the load balancer picks.
const (
	tokAlice   = "alice-token-replicas"
	tokBob     = "bob-token-replicas"
	peerTokens = "alice:" + tokAlice + ",bob:" + tokBob
)

// Leases short enough for tests: a killed replica's task fails about 2 s
// after its last renewal; its push claims lapse after 6 s.
const (
	replicaLease = "2s"
	claimLease   = "6s"
)

// replica is one harness host running the plugin on the shared database.
type replica struct {
	h   *testharness.Host
	url string
}

// startReplicas launches n harness hosts, each with the real plugin binary
// on the database at dsn. Crashed plugins are not restarted: a killed
// replica stays dead, as a crashed machine would.
func startReplicas(t testing.TB, dsn string, n int, extra map[string]any) []*replica {
	t.Helper()
	return launch(t, dsn, n, extra, "", nil)
}

// launch is startReplicas with the plugins' log level ("" for debug) and
// the hosts' agents (nil: a host without agents).
func launch(t testing.TB, dsn string, n int, extra map[string]any, logLevel string, agents []testharness.HostAgent) []*replica {
	t.Helper()
	s, err := testharness.LoadScenario(filepath.Join("testdata", "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*replica, n)
	for i := range out {
		cfg := map[string]any{
			"port":                0,
			"store":               "postgres",
			"postgres_dsn":        dsn,
			"replica_id":          fmt.Sprintf("replica-%d", i),
			"replica_lease":       replicaLease,
			"push_claim_lease":    claimLease,
			"allow_loopback_urls": true,
			"loopback_is_local":   false, // callers are peers, scoped to their own tasks
			"trusted_peers":       []string{"alice", "bob"},
			"rate_limit":          0,
			"audit_log":           "off",
			"push_secret":         "replicas-push-secret",
		}
		maps.Copy(cfg, extra)
		h := testharness.Start(t, testharness.Options{
			Agent:        s,
			PluginConfig: cfg,
			Env:          map[string]string{"A2A_PEER_TOKENS": peerTokens},
			Restart:      hostsdk.RestartPolicy{MaxRestarts: -1},
			HostName:     fmt.Sprintf("host-%d", i),
			LogLevel:     logLevel,
			Agents:       agents,
		})
		u := h.Endpoint(testharness.A2APluginName)
		if u == "" {
			t.Fatalf("replica %d has no endpoint", i)
		}
		out[i] = &replica{h: h, url: u}
	}
	return out
}

// pgDSN is a fresh schema of the test server, or a skip saying how to get
// one.
func pgDSN(t testing.TB) string { return storetest.PostgresDSN(t) }

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// call makes one v1.0 JSON-RPC call as the peer with token.
func (r *replica) call(t testing.TB, token, method string, params any) (json.RawMessage, *rpcError) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s on %s: %v", method, r.url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("%s: HTTP %d, not JSON: %s", method, resp.StatusCode, out)
	}
	return env.Result, env.Error
}

// ok makes a call that must succeed; definition (when set) names the v1.0
// schema definition the result must validate against.
func (r *replica) ok(t testing.TB, method string, params any, definition string) json.RawMessage {
	t.Helper()
	res, e := r.call(t, tokAlice, method, params)
	if e != nil {
		t.Fatalf("%s on %s: %v", method, r.url, e)
	}
	if definition != "" {
		if err := a2atest.CheckJSON(definition, res); err != nil {
			t.Errorf("%s result: %v\n%s", method, err, res)
		}
	}
	return res
}

// task decodes a Task result.
func task(t testing.TB, raw json.RawMessage) *a2a.Task {
	t.Helper()
	var tk a2a.Task
	if err := a2a.Unmarshal(raw, &tk); err != nil {
		t.Fatalf("not a task: %v\n%s", err, raw)
	}
	return &tk
}

// send sends text and returns the task; async makes it non-blocking, push
// (when set) registers a webhook inline.
func (r *replica) send(t testing.TB, text string, async bool, push map[string]any) *a2a.Task {
	t.Helper()
	cfg := map[string]any{"returnImmediately": async}
	if push != nil {
		cfg["taskPushNotificationConfig"] = push
	}
	res := r.ok(t, "SendMessage", map[string]any{
		"message":       map[string]any{"messageId": a2a.NewID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}},
		"configuration": cfg,
	}, "")
	var sr a2a.SendMessageResponse
	if err := a2a.Unmarshal(res, &sr); err != nil || sr.Task == nil {
		t.Fatalf("SendMessage: %v\n%s", err, res)
	}
	return sr.Task
}

// getTask reads a task.
func (r *replica) getTask(t testing.TB, id string) *a2a.Task {
	t.Helper()
	return task(t, r.ok(t, "GetTask", map[string]any{"id": id}, "Task"))
}

// stream is an open SSE stream: its events, decoded, until it ends.
type stream struct {
	events chan a2a.StreamResponse
	errs   chan *rpcError
	cancel context.CancelFunc
}

// openStream starts a streaming method (SendStreamingMessage or
// SubscribeToTask) and reads its events in the background.
func (r *replica) openStream(t testing.TB, method string, params any) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s on %s: %v", method, r.url, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("%s on %s: HTTP %d %s: %s", method, r.url, resp.StatusCode, ct, b)
	}
	s := &stream{events: make(chan a2a.StreamResponse, 256), errs: make(chan *rpcError, 1), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var env struct {
				Result json.RawMessage `json:"result"`
				Error  *rpcError       `json:"error"`
			}
			if err := json.Unmarshal([]byte(data), &env); err != nil {
				continue
			}
			if env.Error != nil {
				s.errs <- env.Error
				return
			}
			if err := a2atest.CheckJSON("Stream Response", env.Result); err != nil {
				t.Errorf("%s event: %v\n%s", method, err, env.Result)
			}
			var ev a2a.StreamResponse
			if err := a2a.Unmarshal(env.Result, &ev); err == nil {
				s.events <- ev
			}
		}
	}()
	return s
}

// next returns the stream's next event, or false when it ended.
func (s *stream) next(t testing.TB, within time.Duration) (a2a.StreamResponse, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(within):
		t.Fatalf("no stream event within %v", within)
		return a2a.StreamResponse{}, false
	}
}

// rest reads the stream to its end and describes every event.
func (s *stream) rest(t testing.TB, within time.Duration) []string {
	t.Helper()
	var out []string
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				select {
				case e := <-s.errs:
					t.Errorf("stream ended with %v", e)
				default:
				}
				return out
			}
			out = append(out, describe(ev))
		case <-deadline:
			t.Fatalf("the stream did not end within %v; got %v", within, out)
		}
	}
}

// describe renders an event as kind:detail, e.g. "status:WORKING:step 1",
// "artifact:<id>", "task:WORKING".
func describe(ev a2a.StreamResponse) string {
	switch {
	case ev.Task != nil:
		return "task:" + strings.TrimPrefix(string(ev.Task.Status.State), "TASK_STATE_")
	case ev.StatusUpdate != nil:
		s := "status:" + strings.TrimPrefix(string(ev.StatusUpdate.Status.State), "TASK_STATE_")
		if m := ev.StatusUpdate.Status.Message; m != nil && len(m.Parts) > 0 {
			s += ":" + m.Parts[0].TextValue()
		}
		return s
	case ev.ArtifactUpdate != nil:
		return "artifact:" + ev.ArtifactUpdate.Artifact.ArtifactID
	case ev.Message != nil:
		return "message"
	}
	return "?"
}

// statusText is the first text of a status message.
func statusText(s a2a.TaskStatus) string {
	if s.Message == nil || len(s.Message.Parts) == 0 {
		return ""
	}
	return s.Message.Parts[0].TextValue()
}

// eventually polls cond every 50 ms for up to d.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
