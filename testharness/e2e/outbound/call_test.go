package outbound_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// TestCallReturnsThePeersReply: a blocking a2a_call reaches Bob's host as
// an unattended message with the sender's words in its parts, and Bob's
// reply comes back as the result, with the ids to continue.
func TestCallReturnsThePeersReply(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "hello Bob")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg})
	e2etest.MustOK(t, r, "bob completed the task", "state COMPLETED", "bob heard (message 1 of this chat): "+msg,
		`To continue this conversation: a2a_call agent="bob" context_id=`)
	s := e2etest.SummaryOf(t, r)
	if s.State != "COMPLETED" || s.TaskID == "" || s.ContextID == "" {
		t.Fatalf("summary %+v", s)
	}

	hm := waitFor(t, w.bob, messageWith(msg)).HandleMessage()
	if hm.GetTaskId() != s.TaskID || hm.GetChatId() != s.ContextID {
		t.Fatalf("Bob's host got task %s chat %s; the result says task %s context %s", hm.GetTaskId(), hm.GetChatId(), s.TaskID, s.ContextID)
	}
	if !hm.GetUnattended() || hm.GetPlatform() != "a2a" {
		t.Fatalf("inbound turn not marked unattended on the a2a platform: %v", hm)
	}
	// Bob's plugin frames the text for its model; the parts are the words.
	if !strings.Contains(hm.GetText(), msg) || hm.GetText() == msg {
		t.Fatalf("framed text = %q", hm.GetText())
	}
}

// TestCallContinuesAConversationThroughContextID: passing the context_id of
// an earlier result continues the conversation: Bob's host sees the same
// chat id and counts the messages of that chat.
func TestCallContinuesAConversationThroughContextID(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	first, second := unique(t, "my name is Alice"), unique(t, "what is my name?")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": first})
	e2etest.MustOK(t, r, "bob heard (message 1 of this chat): "+first)
	ctxID := e2etest.SummaryOf(t, r).ContextID

	r, _ = callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": second, "context_id": ctxID})
	e2etest.MustOK(t, r, "bob heard (message 2 of this chat): "+second)
	s := e2etest.SummaryOf(t, r)
	if s.ContextID != ctxID {
		t.Fatalf("the second call answered in context %s, not %s", s.ContextID, ctxID)
	}

	a := waitFor(t, w.bob, messageWith(first)).HandleMessage()
	b := waitFor(t, w.bob, messageWith(second)).HandleMessage()
	if a.GetChatId() != ctxID || b.GetChatId() != ctxID {
		t.Fatalf("Bob's host saw chats %s and %s; want both %s", a.GetChatId(), b.GetChatId(), ctxID)
	}
	if a.GetTaskId() == b.GetTaskId() {
		t.Fatalf("two messages of a conversation share task %s", a.GetTaskId())
	}
}

// TestCallRelaysAQuestionAndContinuesTheTask: when Bob asks a question the
// result says so plainly, with the question and the ids to answer with; an
// a2a_call with that task_id is a continuation turn on Bob's host, and its
// answer completes the task.
func TestCallRelaysAQuestionAndContinuesTheTask(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "book a table for two")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg})
	e2etest.MustOK(t, r, "bob needs more input before it can continue", "state INPUT_REQUIRED",
		"Question from bob:\n[A2A UNTRUSTED INPUT BEGIN from bob]", "Which day should I book?\n[A2A UNTRUSTED INPUT END from bob]", `To answer: a2a_call agent="bob" task_id=`)
	q := e2etest.SummaryOf(t, r)
	if q.State != "INPUT_REQUIRED" || q.TaskID == "" || q.ContextID == "" {
		t.Fatalf("summary %+v", q)
	}
	e2etest.MustContain(t, r, `task "`+q.TaskID+`"`, `context "`+q.ContextID+`"`, `task_id="`+q.TaskID+`"`, `context_id="`+q.ContextID+`"`)

	askingTurnOver(t, w.bob, q.TaskID)
	answer := unique(t, "Friday")
	r, _ = callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": answer, "task_id": q.TaskID, "context_id": q.ContextID})
	e2etest.MustOK(t, r, "bob completed the task", "booked for "+answer)
	if s := e2etest.SummaryOf(t, r); s.TaskID != q.TaskID || s.State != "COMPLETED" {
		t.Fatalf("the answer ended as %+v; want task %s COMPLETED", s, q.TaskID)
	}

	cont := waitFor(t, w.bob, messageWith(answer))
	if hm := cont.HandleMessage(); !hm.GetContinuation() || hm.GetTaskId() != q.TaskID || hm.GetChatId() != q.ContextID {
		t.Fatalf("the answer reached Bob's host as %v; want a continuation of task %s", hm, q.TaskID)
	}
	if pc := completionOf(t, w.bob, cont); pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("continuation turn ended %v", pc)
	}
}

// TestCallStreamsProgressFromAStreamingPeer: Bob's card says it streams, so
// a waiting a2a_call follows the task over SSE and Bob's two progress
// updates reach the host's model as tool progress events, in order, before
// the result.
func TestCallStreamsProgressFromAStreamingPeer(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "stream me a report")

	r, progress := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg})
	e2etest.MustOK(t, r, "bob completed the task", "streamed answer")
	var lines []string
	for _, p := range progress {
		lines = append(lines, p.GetMessage())
	}
	all := strings.Join(lines, "\n")
	inOrder(t, all, "bob: ", "step 1 of 2: reading", "step 2 of 2: writing")
}

// TestCallWithoutWaitingReturnsAReceiptThatTaskGetAndWaitFinish: wait=false
// returns a task receipt at once; a2a_task get shows the task and
// a2a_task wait returns Bob's answer.
func TestCallWithoutWaitingReturnsAReceiptThatTaskGetAndWaitFinish(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "later please")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg, "wait": false})
	e2etest.MustOK(t, r, "bob is still working on it", "not waiting (wait=false)", `a2a_task agent="bob" task_id=`)
	s := e2etest.SummaryOf(t, r)
	if !s.Receipt || s.TaskID == "" {
		t.Fatalf("summary %+v", s)
	}

	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "get"})
	e2etest.MustOK(t, r, s.TaskID)

	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "wait", "timeout_s": 30})
	e2etest.MustOK(t, r, "bob completed the task", "done later")
	if g := e2etest.SummaryOf(t, r); g.TaskID != s.TaskID || g.State != "COMPLETED" || g.Receipt {
		t.Fatalf("wait ended as %+v", g)
	}
}

// TestCallTimeoutReturnsAReceiptAndTaskWaitGetsTheAnswer: a timeout_s
// shorter than Bob's job is a task receipt, not a failure (Bob has said it
// started, so the task is known); a2a_task wait later returns the answer.
func TestCallTimeoutReturnsAReceiptAndTaskWaitGetsTheAnswer(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "slow job")

	// Bob works 3s after saying it started; the call waits 2s. (The margin
	// on both sides is for loaded machines; nothing here is timed.)
	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg, "timeout_s": 2})
	e2etest.MustOK(t, r, "bob is still working on it", "stopped waiting after 2s", `action="wait"`)
	s := e2etest.SummaryOf(t, r)
	if !s.Receipt || s.TaskID == "" {
		t.Fatalf("summary %+v", s)
	}

	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "wait", "timeout_s": 30})
	e2etest.MustOK(t, r, "bob completed the task", "slow answer")
}

// TestCallTimeoutBeforeThePeersFirstOutputIsAReceipt: the same as above
// when Bob says nothing until it is done. The call should still be a
// receipt the model can follow up, because the task exists on Bob's side.
func TestCallTimeoutBeforeThePeersFirstOutputIsAReceipt(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "quiet job")

	// Bob is silent for 4s; the call waits 1s.
	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg, "timeout_s": 1})
	e2etest.MustOK(t, r, "bob is still working on it")
	s := e2etest.SummaryOf(t, r)
	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "wait", "timeout_s": 30})
	e2etest.MustOK(t, r, "quiet answer")
}

// TestTaskCancelStopsTheHostTurn: a2a_task cancel on a running task
// reaches Bob's host as CancelTurn for that task, the turn ends CANCELLED,
// and the task is CANCELED when asked again.
func TestTaskCancelStopsTheHostTurn(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "hang around")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg, "wait": false})
	s := e2etest.SummaryOf(t, r)
	if !s.Receipt || s.TaskID == "" {
		t.Fatalf("summary %+v:\n%s", s, r.GetContent())
	}
	turn := waitFor(t, w.bob, messageWith(msg))

	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "cancel"})
	e2etest.MustOK(t, r, "Asked bob to cancel task \""+s.TaskID+"\"", "its state is now CANCELED")

	ct := waitFor(t, w.bob, func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.CancelTurn().GetTaskId() == s.TaskID
	})
	if ct.CancelTurn().GetChatId() != s.ContextID {
		t.Fatalf("CancelTurn for chat %s; the task is in %s", ct.CancelTurn().GetChatId(), s.ContextID)
	}
	if pc := completionOf(t, w.bob, turn); pc.GetOutcome() != pb.Outcome_OUTCOME_CANCELLED {
		t.Fatalf("Bob's turn ended %v; want CANCELLED", pc)
	}

	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "get"})
	e2etest.MustOK(t, r, "state CANCELED")

	r, _ = callTool(t, w.alice, "a2a_task", map[string]any{"agent": "bob", "task_id": s.TaskID, "action": "cancel"})
	e2etest.MustErr(t, r, "has already finished and cannot be canceled")
}

// TestCallDeliversFilesAndDataAsParts: a local file, a base64 file and a
// data value given to a2a_call reach Bob's host as parts with their bytes,
// media types and file names.
func TestCallDeliversFilesAndDataAsParts(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	msg := unique(t, "see the attachments")
	dir, err := os.MkdirTemp(w.attachments, "call-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte("line one\nline two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nnot really")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": msg,
		"files": []any{
			map[string]any{"path": path},
			map[string]any{"base64": base64.StdEncoding.EncodeToString(png), "filename": "chart.png", "media_type": "image/png"},
		},
		"data": map[string]any{"order": 42, "items": []string{"tea", "cake"}},
	})
	e2etest.MustOK(t, r, "bob completed the task")

	hm := waitFor(t, w.bob, messageWith(msg)).HandleMessage()
	var file, image, data *pb.Part
	for _, p := range hm.GetParts() {
		switch {
		case p.GetFilename() == "notes.txt":
			file = p
		case p.GetFilename() == "chart.png":
			image = p
		case p.GetData() != nil:
			data = p
		}
	}
	if file == nil || string(file.GetRaw()) != "line one\nline two\n" || !strings.HasPrefix(file.GetMediaType(), "text/plain") {
		t.Fatalf("the local file reached Bob's host as %v (parts %v)", file, hm.GetParts())
	}
	if image == nil || string(image.GetRaw()) != string(png) || image.GetMediaType() != "image/png" {
		t.Fatalf("the base64 file reached Bob's host as %v", image)
	}
	if data == nil {
		t.Fatalf("no data part reached Bob's host: %v", hm.GetParts())
	}
	got := data.GetData().GetStructValue().AsMap()
	if items, _ := got["items"].([]any); got["order"] != float64(42) || len(items) != 2 {
		t.Fatalf("data part = %v", data.GetData())
	}
}

// TestCallRedactsSecretsBeforeTheyLeave: a credential in the model's
// message is redacted before it is sent: Bob's host never sees it (in the
// text, the parts or the metadata) and the result says a secret was
// redacted.
func TestCallRedactsSecretsBeforeTheyLeave(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	secret := "sk-proj-Zq3xT8vN2mK5pL9wR4yB7cD1fG6hJ0aS"
	marker := unique(t, "use this key")

	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": marker + ": " + secret + " for the upload"})
	e2etest.MustOK(t, r, "bob completed the task", "1 secret(s) were redacted from the outgoing message")
	mustNotContain(t, r, secret)

	// Not even part of it: search for the key's body, without its prefix.
	body := strings.TrimPrefix(secret, "sk-proj-")
	hm := waitFor(t, w.bob, messageWith(marker)).HandleMessage()
	if strings.Contains(hm.String(), body) {
		t.Fatalf("the secret reached Bob's host: %v", hm)
	}
	for _, c := range w.bob.Recorder().Calls() {
		if strings.Contains(c.String()+messageString(c), body) {
			t.Fatalf("the secret appears in Bob's recorder: %v", c)
		}
	}
}

// messageString renders a recorded call's request for a leak search.
func messageString(c testharness.Call) string {
	if c.Request == nil {
		return ""
	}
	return c.Request.(interface{ String() string }).String()
}

// TestAnswerSentBeforeTheAskingTurnEndedStillGetsTheReply: a host reports
// the end of the turn that asked a question (ProcessingComplete) a little
// after the question itself; a fast caller may answer in between. The
// answer's turn must still be the one that completes the task. The peer
// here makes that window deterministic: its asking turn ends only once the
// answer has reached its host.
func TestAnswerSentBeforeTheAskingTurnEndedStillGetsTheReply(t *testing.T) {
	t.Parallel()
	var self atomic.Pointer[testharness.Host]
	painter := testharness.Start(t, testharness.Options{
		PluginConfig: peerConfig(nil),
		Agent: testharness.BehaviorFunc(func(ctx context.Context, turn *testharness.Turn) error {
			req := turn.Request
			if !req.GetContinuation() {
				if err := turn.SendText(ctx, pb.SendKind_SEND_KIND_INPUT_REQUIRED, "Which colour?"); err != nil {
					return err
				}
				// The model is still finishing this turn when the answer
				// comes. (Bounded: a plugin that holds the answer back until
				// this turn ended is a fix too, and must not deadlock here.)
				wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				_, _ = self.Load().Recorder().WaitFor(wctx, func(c testharness.Call) bool {
					return c.Kind == testharness.KindHandleMessage && c.TaskID == req.GetTaskId() && c.HandleMessage().GetContinuation()
				})
				return ctx.Err()
			}
			return turn.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "painted it "+testharness.PartsText(req))
		}),
	})
	self.Store(painter)
	caller := testharness.Start(t, testharness.Options{PluginConfig: peerConfig(map[string]any{
		"a2a_agents": []map[string]any{{"name": "painter", "url": painter.Endpoint(testharness.A2APluginName)}},
	})})

	r, _ := callTool(t, caller, "a2a_call", map[string]any{"agent": "painter", "message": "paint the fence"})
	q := e2etest.SummaryOf(t, r)
	if q.State != "INPUT_REQUIRED" {
		t.Fatalf("summary %+v", q)
	}
	r, _ = callTool(t, caller, "a2a_call", map[string]any{"agent": "painter", "message": "green", "task_id": q.TaskID, "context_id": q.ContextID})
	e2etest.MustOK(t, r, "painted it green")
}

// TestCallToAFinishedTaskSaysSoOnceWithTheNextStep: a message to a task that
// is already finished gets one plain sentence and the call to make instead,
// not the peer's explanation followed by a hint that contradicts it.
func TestCallToAFinishedTaskSaysSoOnceWithTheNextStep(t *testing.T) {
	t.Parallel()
	w := plugins(t)
	r, _ := callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": unique(t, "first")})
	s := e2etest.SummaryOf(t, r)

	r, _ = callTool(t, w.alice, "a2a_call", map[string]any{"agent": "bob", "message": "again", "task_id": s.TaskID, "context_id": s.ContextID})
	want := `a2a_call to bob: task "` + s.TaskID + `" is finished and takes no more messages. ` +
		`To go on with the same conversation, send a new message without task_id: a2a_call agent="bob" context_id="` + s.ContextID + `" message="…".`
	if !r.GetIsError() || r.GetContent() != want {
		t.Fatalf("result (is_error %v):\n%s\nwant:\n%s", r.GetIsError(), r.GetContent(), want)
	}
}
