package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
)

// interopPeer is one server we did not write.
type interopPeer struct {
	name    string
	start   func(t *testing.T) *clienttest.Peer
	version string
	binding string
	// cancelText is a message that keeps a task running long enough to be
	// canceled.
	cancelText string
}

var interopPeers = []interopPeer{
	{"go-sdk-v1", func(t *testing.T) *clienttest.Peer { return clienttest.StartGoV1(t, "Go v1 Echo", true) }, "1.0", a2a.BindingJSONRPC, "hang on"},
	{"js-sdk", func(t *testing.T) *clienttest.Peer { return clienttest.StartJS(t, "JS Echo") }, "1.0", a2a.BindingJSONRPC, "slow please"},
	{"go-sdk-v0.3", func(t *testing.T) *clienttest.Peer { return clienttest.StartGoV03(t, "Go 0.3 Echo") }, "0.3", a2a.BindingJSONRPC, "slow please"},
	// A peer that offers only the HTTP+JSON binding.
	{"go-sdk-v1-rest", func(t *testing.T) *clienttest.Peer { return clienttest.StartGoV1REST(t, "Go v1 REST Echo") }, "1.0", a2a.BindingHTTPJSON, "hang on"},
	// A peer that offers only the gRPC binding.
	{"go-sdk-v1-grpc", func(t *testing.T) *clienttest.Peer { return clienttest.StartGoV1GRPC(t, "Go v1 gRPC Echo") }, "1.0", a2a.BindingGRPC, "hang on"},
	{"js-sdk-grpc", func(t *testing.T) *clienttest.Peer { return clienttest.StartJSGRPC(t, "JS gRPC Echo") }, "1.0", a2a.BindingGRPC, "slow please"},
}

func textMessage(s string) a2a.Message {
	return a2a.NewMessage(a2a.RoleUser, a2a.TextPart(s))
}

// answerOf returns the artifact texts of a task, or a message's text.
func answerOf(r *a2a.SendMessageResponse) string {
	if r.Message != nil {
		return r.Message.Text()
	}
	var parts []string
	for i := range r.Task.Artifacts {
		parts = append(parts, r.Task.Artifacts[i].Text())
	}
	return strings.Join(parts, "\n")
}

func TestInteropClientAgainstOfficialServers(t *testing.T) {
	for _, ip := range interopPeers {
		t.Run(ip.name, func(t *testing.T) {
			peer := ip.start(t)
			c := client.New(client.Options{Timeout: 10 * time.Second})
			defer c.Close()
			p := c.Peer(client.Endpoint{Name: ip.name, URL: peer.URL})
			ctx := context.Background()

			info, err := p.Card(ctx)
			if err != nil {
				t.Fatalf("discover: %v", err)
			}
			if info.Interface.ProtocolVersion != ip.version || info.Interface.ProtocolBinding != ip.binding {
				t.Fatalf("chose interface %+v, want %s %s", info.Interface, ip.binding, ip.version)
			}
			if !info.Card.Capabilities.SupportsStreaming() || len(info.Card.Skills) == 0 {
				t.Fatalf("card lost capabilities or skills: %+v", info.Card)
			}

			t.Run("blocking send", func(t *testing.T) {
				resp, err := p.SendMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("hello there")})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Task == nil || resp.Task.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("want a completed task, got %+v", resp)
				}
				if got := answerOf(resp); !strings.Contains(got, "echo: hello there") {
					t.Fatalf("answer %q", got)
				}
				task, err := p.GetTask(ctx, &a2a.GetTaskRequest{ID: resp.Task.ID})
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				if task.ID != resp.Task.ID || task.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("get returned %+v", task)
				}
			})

			t.Run("streaming", func(t *testing.T) {
				var states []a2a.TaskState
				var kinds []string
				err := p.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("slow stream")}, func(ev client.Event) error {
					kinds = append(kinds, ev.Response.Kind())
					if s := ev.State(); s != "" {
						states = append(states, s)
					}
					return nil
				})
				if err != nil {
					t.Fatalf("stream: %v (events %v)", err, kinds)
				}
				if len(kinds) < 3 || kinds[0] != "task" {
					t.Fatalf("events %v: want a task first and progress after", kinds)
				}
				if last := states[len(states)-1]; last != a2a.TaskStateCompleted {
					t.Fatalf("last state %s, want completed (states %v)", last, states)
				}
				working := 0
				for _, s := range states {
					if s == a2a.TaskStateWorking {
						working++
					}
				}
				if working < 2 {
					t.Fatalf("want progress updates, states %v", states)
				}
			})

			t.Run("multi-turn", func(t *testing.T) {
				resp, err := p.SendMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("ask me something")})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Task == nil || resp.Task.Status.State != a2a.TaskStateInputRequired {
					t.Fatalf("want input-required, got %+v", resp)
				}
				if q := resp.Task.Status.Message; q == nil || !strings.Contains(q.Text(), "colour") {
					t.Fatalf("question missing: %+v", resp.Task.Status)
				}
				answer := textMessage("blue")
				answer.TaskID, answer.ContextID = resp.Task.ID, resp.Task.ContextID
				resp2, err := p.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer})
				if err != nil {
					t.Fatal(err)
				}
				if resp2.Task == nil || resp2.Task.ID != resp.Task.ID || resp2.Task.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("continuation: %+v", resp2)
				}
				if got := answerOf(resp2); !strings.Contains(got, "echo: blue") {
					t.Fatalf("answer %q", got)
				}
				// A new task in the same context.
				again := textMessage("second")
				again.ContextID = resp.Task.ContextID
				resp3, err := p.SendMessage(ctx, &a2a.SendMessageRequest{Message: again})
				if err != nil {
					t.Fatal(err)
				}
				if resp3.Task.ContextID != resp.Task.ContextID || resp3.Task.ID == resp.Task.ID {
					t.Fatalf("same context, new task expected: %+v", resp3.Task)
				}
			})

			t.Run("cancel", func(t *testing.T) {
				var taskID string
				streamCtx, stop := context.WithCancel(ctx)
				defer stop()
				errc := make(chan error, 1)
				started := make(chan struct{})
				go func() {
					errc <- p.SendStreamingMessage(streamCtx, &a2a.SendMessageRequest{Message: textMessage(ip.cancelText)}, func(ev client.Event) error {
						if taskID == "" && ev.Response.TaskID() != "" {
							taskID = ev.Response.TaskID()
							close(started)
						}
						return nil
					})
				}()
				select {
				case <-started:
				case err := <-errc:
					t.Fatalf("stream ended before a task: %v", err)
				case <-time.After(10 * time.Second):
					t.Fatal("no task within 10s")
				}
				task, err := p.CancelTask(ctx, &a2a.CancelTaskRequest{ID: taskID})
				if err != nil {
					if re, ok := client.RPCError(err); ok && re.Code == a2a.CodeTaskNotCancelable {
						t.Skipf("%s finished the task before the cancel arrived", ip.name)
					}
					t.Fatalf("cancel: %v", err)
				}
				if task.ID != taskID {
					t.Fatalf("cancel returned task %s", task.ID)
				}
				deadline := time.Now().Add(10 * time.Second)
				for task.Status.State != a2a.TaskStateCanceled && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
					if task, err = p.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID}); err != nil {
						t.Fatal(err)
					}
				}
				if task.Status.State != a2a.TaskStateCanceled {
					t.Fatalf("state after cancel: %s", task.Status.State)
				}
				stop()
				<-errc
			})

			t.Run("unknown task", func(t *testing.T) {
				_, err := p.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
				re, ok := client.RPCError(err)
				if !ok || re.Code != a2a.CodeTaskNotFound || !errors.Is(err, client.ErrRPC) {
					t.Fatalf("want -32001 as ErrRPC, got %v", err)
				}
			})

			t.Run("list", func(t *testing.T) {
				resp, err := p.ListTasks(ctx, &a2a.ListTasksRequest{})
				if ip.version == "0.3" {
					if !errors.Is(err, client.ErrUnsupported) {
						t.Fatalf("ListTasks on 0.3: want ErrUnsupported, got %v", err)
					}
					return
				}
				if err != nil {
					var re *a2a.Error
					if errors.As(err, &re) && (re.Code == a2a.CodeMethodNotFound || re.Code == a2a.CodeUnsupportedOperation) {
						t.Skipf("%s does not implement ListTasks: %v", ip.name, err)
					}
					t.Fatal(err)
				}
				if len(resp.Tasks) == 0 {
					t.Fatalf("no tasks listed")
				}
			})
		})
	}
}
