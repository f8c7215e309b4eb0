package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

var protocols = []string{proto20251125, proto20260728}

// The seven tools of the plugin reach the MCP client with their
// descriptions and object schemas, and an a2a_call reaches the reference
// host and comes back, on both protocol revisions.
func TestToolsAreListedAndA2ACallReachesTheReferenceHost(t *testing.T) {
	_, url := reference(t, testharness.EchoScenario())
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			f := startFace(t, faceOptions{protocol: proto, config: peerConfig(url, nil)})
			if got := f.session.InitializeResult().ProtocolVersion; got != proto {
				t.Errorf("negotiated %s, want %s", got, proto)
			}
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			res, err := f.session.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				schema, _ := json.Marshal(tool.InputSchema)
				var s map[string]any
				if err := json.Unmarshal(schema, &s); err != nil || s["type"] != "object" || len(tool.Description) < 40 {
					t.Errorf("tool %s: schema %s, description %q", tool.Name, schema, tool.Description)
				}
				if tool.Name == "a2a_call" && !strings.Contains(string(schema), `"agent"`) {
					t.Errorf("a2a_call's schema lacks its agent argument: %s", schema)
				}
			}
			slices.Sort(names)
			want := []string{"a2a_call", "a2a_discover", "a2a_history", "a2a_list", "a2a_orchestrate", "a2a_route", "a2a_task"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools = %v, want %v (no a2a_reply without --inbound)", names, want)
			}

			text, isErr := f.call(t, "a2a_call", map[string]any{"agent": "ref", "message": "hello over " + proto})
			if isErr || !strings.Contains(text, "hello over "+proto) || !strings.Contains(text, `"state":"COMPLETED"`) {
				t.Fatalf("a2a_call: isError=%t\n%s", isErr, text)
			}
			// A tool that fails is a result with isError, not a protocol error.
			text, isErr = f.call(t, "a2a_call", map[string]any{"agent": "nobody", "message": "x"})
			if !isErr || !strings.Contains(text, "nobody") {
				t.Fatalf("a2a_call to an unknown peer: isError=%t\n%s", isErr, text)
			}
		})
	}
}

// held is an agent that reports progress, tells the test its task id and
// holds the turn until it is canceled.
func held(ids chan<- string) testharness.Behavior {
	return testharness.BehaviorFunc(func(ctx context.Context, turn *testharness.Turn) error {
		if err := turn.SendText(ctx, pb.SendKind_SEND_KIND_PROGRESS, "working on it"); err != nil {
			return err
		}
		ids <- turn.Request.GetTaskId()
		<-ctx.Done()
		return ctx.Err()
	})
}

// taskState asks an A2A server for a task's state (JSON-RPC GetTask, as a
// Local caller).
func taskState(t *testing.T, url, id string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": map[string]any{"id": id}})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Error != nil {
		t.Fatalf("GetTask %s: %v %v", id, err, out.Error)
	}
	return out.Result.Status.State
}

// While a2a_call waits the client gets progress, and notifications/cancelled
// ends the call and cancels the remote task at the reference host.
func TestCancelledCallCancelsTheRemoteTask(t *testing.T) {
	ids := make(chan string, 4)
	_, url := reference(t, held(ids))
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			f := startFace(t, faceOptions{protocol: proto, config: peerConfig(url, nil)})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			params := &sdk.CallToolParams{Name: "a2a_call", Arguments: map[string]any{"agent": "ref", "message": "take your time", "timeout_s": 50}}
			params.SetProgressToken("p1")
			done := make(chan error, 1)
			go func() {
				_, err := f.session.CallTool(ctx, params)
				done <- err
			}()
			var remote string
			select {
			case remote = <-ids:
			case <-time.After(patience):
				t.Fatal("the reference host never got the task")
			}
			select {
			case msg := <-f.progress:
				if !strings.Contains(msg, "ref") {
					t.Errorf("progress %q does not name the peer", msg)
				}
			case <-time.After(patience):
				t.Fatal("no progress notification while a2a_call waited")
			}
			if st := taskState(t, url, remote); st != "TASK_STATE_WORKING" {
				t.Fatalf("remote task is %s before the cancel", st)
			}
			cancel() // the SDK's client sends notifications/cancelled
			select {
			case err := <-done:
				if err == nil {
					t.Error("the cancelled call returned a result")
				}
			case <-time.After(patience):
				t.Fatal("the cancelled call did not end")
			}
			deadline := time.Now().Add(patience)
			for {
				st := taskState(t, url, remote)
				if st == "TASK_STATE_CANCELED" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("remote task is %s after the MCP cancel, want TASK_STATE_CANCELED", st)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
