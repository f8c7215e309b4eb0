package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	a2a "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// a2aClient is the official A2A Go SDK's client on the face's plugin, as a
// Local caller (loopback, no token).
func a2aClient(t *testing.T, url string) *a2aclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	card := sdkclient.ResolveCard(t, ctx, http.DefaultClient, url)
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(http.DefaultClient))
	if err != nil {
		t.Fatalf("A2A client from the card: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// taskText is what a task says: its artifacts' text and its status
// message.
func taskText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	if m := task.Status.Message; m != nil {
		for _, p := range m.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

// sent is the outcome of a blocking SendMessage made in the background.
type sent struct {
	task *a2a.Task
	err  error
}

func sendBlocking(c *a2aclient.Client, msg *a2a.Message) <-chan sent {
	out := make(chan sent, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		task, _ := res.(*a2a.Task)
		if err == nil && task == nil {
			err = errString("the answer is not a task")
		}
		out <- sent{task, err}
	}()
	return out
}

type errString string

func (e errString) Error() string { return string(e) }

func waitSent(t *testing.T, ch <-chan sent) *a2a.Task {
	t.Helper()
	select {
	case s := <-ch:
		if s.err != nil {
			t.Fatalf("SendMessage: %v", s.err)
		}
		return s.task
	case <-time.After(patience):
		t.Fatal("SendMessage did not return")
	}
	return nil
}

// checkMeta fails unless the channel message is the task's, from a Local
// caller, with meta keys of letters, digits and _ only.
func checkMeta(t *testing.T, m channelMsg) {
	t.Helper()
	for k := range m.Meta {
		if strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			t.Errorf("meta key %q has characters Claude Code drops", k)
		}
	}
	if m.Meta["task_id"] == "" || m.Meta["context_id"] == "" || m.Meta["trust_tier"] != "local" || !strings.HasPrefix(m.Meta["peer"], "local") {
		t.Errorf("meta = %v", m.Meta)
	}
}

// With --inbound, a task sent by the A2A SDK's client arrives in the
// session as a channel notification, and a2a_reply answers it: a final
// answer completes the task the client sees, a question round-trips as
// INPUT_REQUIRED, a streaming send sees the answer too, and a reply to a
// task that is not open is a tool error. A client that offers 2026-07-28
// is answered with 2025-11-25, where Claude Code keeps channels.
func TestInboundTaskArrivesAsAChannelMessageAndA2AReplyAnswersIt(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			f := startFace(t, faceOptions{protocol: proto, inbound: true, config: map[string]any{"port": 0}})
			if got := f.session.InitializeResult().ProtocolVersion; got != proto20251125 {
				t.Errorf("a session with channels negotiated %s, want %s", got, proto20251125)
			}
			caps := f.session.InitializeResult().Capabilities
			if _, ok := caps.Experimental["claude/channel"]; !ok || caps.Tools == nil {
				t.Errorf("capabilities = %+v, want experimental claude/channel and tools", caps)
			}
			if instr := f.session.InitializeResult().Instructions; !strings.Contains(instr, "a2a_reply") {
				t.Errorf("instructions do not say how to answer: %q", instr)
			}
			c := a2aClient(t, f.endpoint(t))

			// Final answer, blocking send.
			ch := sendBlocking(c, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("what is 6 times 7?")))
			m := f.nextChannel(t)
			checkMeta(t, m)
			if !strings.Contains(m.Content, "what is 6 times 7?") {
				t.Fatalf("channel content = %q", m.Content)
			}
			text, isErr := f.call(t, "a2a_reply", map[string]any{"task_id": m.Meta["task_id"], "text": "42"})
			if isErr {
				t.Fatalf("a2a_reply: %s", text)
			}
			task := waitSent(t, ch)
			if task.Status.State != a2a.TaskStateCompleted || !strings.Contains(taskText(task), "42") || string(task.ID) != m.Meta["task_id"] ||
				task.ContextID != m.Meta["context_id"] {
				t.Fatalf("the client saw %s %q (task %s), want COMPLETED \"42\" (task %s)", task.Status.State, taskText(task), task.ID, m.Meta["task_id"])
			}
			// The task is answered: a second reply is a tool error.
			text, isErr = f.call(t, "a2a_reply", map[string]any{"task_id": m.Meta["task_id"], "text": "again"})
			if !isErr || !strings.Contains(text, "no open A2A task") {
				t.Fatalf("a second reply: isError=%t %s", isErr, text)
			}
			text, isErr = f.call(t, "a2a_reply", map[string]any{"task_id": "no-such-task", "text": "x"})
			if !isErr || !strings.Contains(text, "no-such-task") {
				t.Fatalf("a reply to an unknown task: isError=%t %s", isErr, text)
			}

			// A question, then the sender's answer on the same task.
			ch = sendBlocking(c, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("book a table")))
			m = f.nextChannel(t)
			if text, isErr := f.call(t, "a2a_reply", map[string]any{"task_id": m.Meta["task_id"], "text": "for how many?", "kind": "question"}); isErr {
				t.Fatalf("a2a_reply question: %s", text)
			}
			task = waitSent(t, ch)
			if task.Status.State != a2a.TaskStateInputRequired || !strings.Contains(taskText(task), "for how many?") {
				t.Fatalf("after a question the client saw %s %q, want INPUT_REQUIRED", task.Status.State, taskText(task))
			}
			answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("four"))
			answer.TaskID, answer.ContextID = task.ID, task.ContextID
			ch = sendBlocking(c, answer)
			m2 := f.nextChannel(t)
			if m2.Meta["task_id"] != string(task.ID) || m2.Meta["continuation"] != "true" || !strings.Contains(m2.Content, "four") {
				t.Fatalf("the answer arrived as %+v", m2)
			}
			f.call(t, "a2a_reply", map[string]any{"task_id": m2.Meta["task_id"], "text": "booked for four"})
			if task = waitSent(t, ch); task.Status.State != a2a.TaskStateCompleted || !strings.Contains(taskText(task), "booked for four") {
				t.Fatalf("after the answer the client saw %s %q", task.Status.State, taskText(task))
			}

			// Streaming send.
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			var states []string
			var got strings.Builder
			go func() {
				m := f.nextChannel(t)
				f.call(t, "a2a_reply", map[string]any{"task_id": m.Meta["task_id"], "text": "streamed answer"})
			}()
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream it"))}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				switch v := ev.(type) {
				case *a2a.Task:
					states = append(states, string(v.Status.State))
				case *a2a.TaskStatusUpdateEvent:
					states = append(states, string(v.Status.State))
					if v.Status.Message != nil {
						for _, p := range v.Status.Message.Parts {
							got.WriteString(p.Text())
						}
					}
				case *a2a.TaskArtifactUpdateEvent:
					for _, p := range v.Artifact.Parts {
						got.WriteString(p.Text())
					}
				}
			}
			if len(states) == 0 || states[len(states)-1] != string(a2a.TaskStateCompleted) || !strings.Contains(got.String(), "streamed answer") {
				t.Fatalf("stream states %v, text %q", states, got.String())
			}
		})
	}
}

// A task nobody answers is failed by the plugin's watchdog with a message
// that says why, and the session is told to drop it.
func TestUnansweredInboundTaskFailsWithItsReason(t *testing.T) {
	f := startFace(t, faceOptions{protocol: proto20251125, inbound: true, config: map[string]any{"port": 0, "task_silence_timeout": "1s"}})
	c := a2aClient(t, f.endpoint(t))
	ch := sendBlocking(c, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("anyone there?")))
	m := f.nextChannel(t)
	task := waitSent(t, ch)
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(taskText(task), "silent") {
		t.Fatalf("an unanswered task ended %s %q, want FAILED saying the agent went silent", task.Status.State, taskText(task))
	}
	ended := f.nextChannel(t)
	if ended.Meta["event"] != "canceled" || ended.Meta["task_id"] != m.Meta["task_id"] {
		t.Fatalf("after the watchdog the session got %+v", ended)
	}
	if text, isErr := f.call(t, "a2a_reply", map[string]any{"task_id": m.Meta["task_id"], "text": "too late"}); !isErr {
		t.Fatalf("a reply to a failed task succeeded: %s", text)
	}
}

// Two tasks of one context reach the session in order: the second only
// after the first was answered.
func TestTasksOfOneContextArriveInOrder(t *testing.T) {
	f := startFace(t, faceOptions{protocol: proto20251125, inbound: true, config: map[string]any{"port": 0}})
	c := a2aClient(t, f.endpoint(t))
	first := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("first"))
	first.ContextID = "ctx-order"
	second := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("second"))
	second.ContextID = "ctx-order"
	ch1 := sendBlocking(c, first)
	m1 := f.nextChannel(t)
	ch2 := sendBlocking(c, second)
	select {
	case m := <-f.channel:
		t.Fatalf("a second task of the context arrived while the first was open: %+v", m)
	case <-time.After(300 * time.Millisecond):
	}
	f.call(t, "a2a_reply", map[string]any{"task_id": m1.Meta["task_id"], "text": "one"})
	m2 := f.nextChannel(t)
	if !strings.Contains(m1.Content, "first") || !strings.Contains(m2.Content, "second") || m1.Meta["context_id"] != "ctx-order" || m2.Meta["context_id"] != "ctx-order" {
		t.Fatalf("arrived: %q (%v) then %q (%v)", m1.Content, m1.Meta, m2.Content, m2.Meta)
	}
	f.call(t, "a2a_reply", map[string]any{"task_id": m2.Meta["task_id"], "text": "two"})
	if t1, t2 := waitSent(t, ch1), waitSent(t, ch2); !strings.Contains(taskText(t1), "one") || !strings.Contains(taskText(t2), "two") {
		t.Fatalf("answers: %q, %q", taskText(t1), taskText(t2))
	}
}

// The official JS SDK's client (testharness/interop/js/client-mcp.mjs)
// sends a blocking and a streaming task; both arrive as channel
// notifications and a2a_reply's answers reach it.
func TestJSClientTasksAreAnsweredThroughTheChannel(t *testing.T) {
	f := startFace(t, faceOptions{protocol: proto20251125, inbound: true, config: map[string]any{"port": 0}})
	url := f.endpoint(t)
	stop := make(chan struct{})
	answered := make(chan string, 4)
	go func() { // the model: answer every task that arrives
		for {
			select {
			case m := <-f.channel:
				ctx, cancel := context.WithTimeout(context.Background(), patience)
				res, err := f.session.CallTool(ctx, &sdk.CallToolParams{Name: "a2a_reply",
					Arguments: map[string]any{"task_id": m.Meta["task_id"], "text": "answer to: " + m.Content}})
				cancel()
				if err != nil || res.IsError {
					answered <- fmt.Sprintf("a2a_reply failed: %v %s", err, resultText(res))
					continue
				}
				answered <- m.Meta["task_id"]
			case <-stop:
				return
			}
		}
	}()
	defer close(stop)
	steps := testharness.RunJSClient(t, testharness.NodeOptions{}, nil, "client-mcp.mjs", url)
	b := steps["blocking"]
	if !b.OK || b.State != "TASK_STATE_COMPLETED" || !strings.Contains(b.Answer, "answer to:") || !strings.Contains(b.Answer, "hello from js") {
		t.Errorf("blocking: %+v", b)
	}
	s := steps["streaming"]
	if !s.OK || len(s.Events) == 0 || s.Events[len(s.Events)-1] != "statusUpdate:TASK_STATE_COMPLETED" || !strings.Contains(s.Answer, "answer to:") || !strings.Contains(s.Answer, "stream from js") {
		t.Errorf("streaming: %+v", s)
	}
	for range 2 {
		if a := <-answered; strings.HasPrefix(a, "a2a_reply failed") {
			t.Error(a)
		}
	}
}

// An a2a_call the model makes while working on an inbound task works for
// that task: canceling the inbound task (A2A CancelTask by its sender)
// cancels the remote task the call started, through the plugin's cascade,
// and the session is told the inbound task ended.
func TestCancelOfAnInboundTaskCancelsTheWorkItsCallsStarted(t *testing.T) {
	ids := make(chan string, 2)
	_, refURL := reference(t, held(ids))
	f := startFace(t, faceOptions{protocol: proto20251125, inbound: true, config: peerConfig(refURL, map[string]any{"port": 0})})
	c := a2aClient(t, f.endpoint(t))
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("ask ref")),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	inboundTask := res.(*a2a.Task)
	m := f.nextChannel(t)
	if m.Meta["task_id"] != string(inboundTask.ID) {
		t.Fatalf("channel message for %s, sent %s", m.Meta["task_id"], inboundTask.ID)
	}
	calls := make(chan string, 1)
	// The call outlives every wait below: only the cascade may end its
	// remote task (an MCP cancel of the call would too, and prove nothing).
	callCtx, callCancel := context.WithCancel(context.Background())
	defer callCancel()
	go func() { // the model delegates, naming the task it works for
		r, err := f.session.CallTool(callCtx, &sdk.CallToolParams{Name: "a2a_call",
			Arguments: map[string]any{"agent": "ref", "message": "help me", "timeout_s": 300, "inbound_task_id": m.Meta["task_id"]}})
		if err != nil {
			calls <- err.Error()
			return
		}
		calls <- resultText(r)
	}()
	var remote string
	select {
	case remote = <-ids:
	case <-time.After(patience):
		t.Fatal("the reference host never got the delegated task")
	}
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: inboundTask.ID}); err != nil {
		t.Fatalf("CancelTask of the inbound task: %v", err)
	}
	ended := f.nextChannel(t)
	if ended.Meta["event"] != "canceled" || ended.Meta["task_id"] != m.Meta["task_id"] {
		t.Errorf("after the cancel the session got %+v", ended)
	}
	deadline := time.Now().Add(patience)
	for st := taskState(t, refURL, remote); st != "TASK_STATE_CANCELED"; st = taskState(t, refURL, remote) {
		if time.Now().After(deadline) {
			t.Fatalf("the delegated task is %s after its parent was canceled, want TASK_STATE_CANCELED", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case out := <-calls:
		if !strings.Contains(out, "CANCELED") || !strings.Contains(out, "delegat") {
			t.Errorf("the a2a_call ended with:\n%s", out)
		}
	case <-time.After(patience):
		t.Fatal("the a2a_call did not end after its remote task was canceled")
	}
}
