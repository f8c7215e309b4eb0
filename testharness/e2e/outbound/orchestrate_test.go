package outbound_test

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// The team (see teamWorld): archive is slow (the test holds its turns),
// flaky fails, scout answers at once; all three advertise "research".
// linguist only translates. Boss lists them in that order, the slow one
// first, so a sequential implementation would wait for archive before
// scout ever got the message.

// orchestrate runs a2a_orchestrate on boss in the background.
func orchestrate(t *testing.T, boss *testharness.Host, args map[string]any) <-chan *pb.ToolResult {
	t.Helper()
	done := make(chan *pb.ToolResult, 1)
	go func() {
		r, _ := callTool(t, boss, "a2a_orchestrate", args)
		done <- r
	}()
	return done
}

// turnEnded waits for the end of the turn that message started on h.
func turnEnded(t *testing.T, h *testharness.Host, message string) (*pb.HandleMessageRequest, *pb.ProcessingCompleteRequest) {
	t.Helper()
	hm := waitFor(t, h, messageWith(message))
	return hm.HandleMessage(), completionOf(t, h, hm)
}

// notCalled fails if linguist (no research skill) got the message.
func notCalled(t *testing.T, w *teamWorld, message string) {
	t.Helper()
	if got := messagesWith(w.linguist, message); len(got) != 0 {
		t.Fatalf("linguist does not advertise the capability but got the message: %v", got)
	}
}

// TestOrchestrateAllRunsPeersInParallelAndReturnsEveryReply: mode all sends
// the task to every peer advertising the capability at once — scout's reply
// and flaky's failure are recorded while archive is still held — returns
// only after archive finished, and reports all three outcomes. linguist is
// not called.
func TestOrchestrateAllRunsPeersInParallelAndReturnsEveryReply(t *testing.T) {
	t.Parallel()
	w := team(t)
	msg := unique(t, "summarise the literature on tides")
	release := w.archiveAgent.Hold(t, msg, true)

	done := orchestrate(t, w.boss, map[string]any{"capability": "research", "message": msg, "mode": "all", "timeout_s": 60})

	// While archive holds its turn, the others have already answered.
	waitFor(t, w.archive, messageWith(msg))
	if _, pc := turnEnded(t, w.scout, msg); pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("scout's turn ended %v", pc)
	}
	if _, pc := turnEnded(t, w.flaky, msg); pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE {
		t.Fatalf("flaky's turn ended %v", pc)
	}
	select {
	case r := <-done:
		t.Fatalf("mode all returned before the slow peer finished:\n%s", r.GetContent())
	default:
	}
	release()

	r := <-done
	e2etest.MustOK(t, r, `Sent to 3 peer(s) advertising "research" (mode all`,
		"archive completed the task", "archive: 2 papers",
		"flaky ended the task with state FAILED", "the lab notebook is on fire",
		"scout completed the task", "scout found three recent sources that answer: "+msg)
	mustNotContain(t, r, "linguist")
	notCalled(t, w, msg)
}

// TestOrchestrateFirstReturnsTheFirstGoodReplyAndCancelsTheOthers: mode
// first returns scout's reply as soon as it is in, and really stops the
// slow peer: CancelTask reaches archive's plugin, archive's host gets
// CancelTurn for that task, and the task is CANCELED on archive's endpoint.
func TestOrchestrateFirstReturnsTheFirstGoodReplyAndCancelsTheOthers(t *testing.T) {
	t.Parallel()
	w := team(t)
	msg := unique(t, "find one source on glaciers")
	w.archiveAgent.Hold(t, msg, true)
	releaseScout := w.scoutAgent.Hold(t, msg, false)

	done := orchestrate(t, w.boss, map[string]any{"capability": "research", "message": msg, "mode": "first", "timeout_s": 60})

	// Scout answers once archive has started (and said so, which gives
	// boss archive's task id); archive never answers.
	started := waitFor(t, w.archive, messageWith(msg))
	waitFor(t, w.archive, func(c testharness.Call) bool {
		return c.Kind == testharness.KindSend && c.TaskID == started.TaskID && c.Send().GetKind() == pb.SendKind_SEND_KIND_PROGRESS
	})
	releaseScout()

	r := <-done
	e2etest.MustOK(t, r, `Sent to 3 peer(s) advertising "research" (mode first`, "First successful reply, from scout:",
		"scout found three recent sources that answer: "+msg,
		"Cancelled the others: archive (request cancelled; CancelTask sent for task \""+started.TaskID+"\")")
	mustNotContain(t, r, "archive: 2 papers")

	ct := waitFor(t, w.archive, func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.CancelTurn().GetTaskId() == started.TaskID
	})
	if ct.CancelTurn().GetChatId() == "" {
		t.Fatalf("CancelTurn without a chat: %v", ct)
	}
	if _, pc := turnEnded(t, w.archive, msg); pc.GetOutcome() != pb.Outcome_OUTCOME_CANCELLED {
		t.Fatalf("archive's turn ended %v; want CANCELLED", pc)
	}
	g, _ := callTool(t, w.boss, "a2a_task", map[string]any{"agent": "archive", "task_id": started.TaskID, "action": "get"})
	e2etest.MustOK(t, g, "state CANCELED")
	notCalled(t, w, msg)
}

// TestOrchestrateFirstCancelsAPeerThatHasNotAnsweredYet: the same when the
// slow peer has said nothing at all by the time scout answers. Its task
// exists on its side all the same and must be stopped, not left running.
func TestOrchestrateFirstCancelsAPeerThatHasNotAnsweredYet(t *testing.T) {
	t.Parallel()
	w := team(t)
	msg := unique(t, "find one source on volcanoes")
	w.archiveAgent.Hold(t, msg, false)

	r := <-orchestrate(t, w.boss, map[string]any{"capability": "research", "message": msg, "mode": "first", "timeout_s": 60})
	e2etest.MustOK(t, r, "First successful reply, from scout:")
	hm := waitFor(t, w.archive, messageWith(msg))
	// Cancelling takes milliseconds when it happens; 15s is a generous bound.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := w.archive.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindCancelTurn && c.CancelTurn().GetTaskId() == hm.TaskID
	}); err != nil {
		t.Fatalf("archive's host never got CancelTurn for its task %s: %v", hm.TaskID, err)
	}
}

// TestOrchestrateBestPicksTheGoodReplyNeverTheError: mode best waits for
// every peer and picks scout's completed, longest answer over archive's
// shorter one and flaky's failure, listing the others.
func TestOrchestrateBestPicksTheGoodReplyNeverTheError(t *testing.T) {
	t.Parallel()
	w := team(t)
	msg := unique(t, "explain the causes of tides")

	r := <-orchestrate(t, w.boss, map[string]any{"capability": "research", "message": msg, "mode": "best", "timeout_s": 60})
	e2etest.MustOK(t, r, "Best reply, from scout", "scout found three recent sources that answer: "+msg, "Others:", "- archive: COMPLETED", "- flaky: FAILED")
	best := r.GetContent()[strings.Index(r.GetContent(), "Best reply"):strings.Index(r.GetContent(), "Others:")]
	if strings.Contains(best, "flaky") || strings.Contains(best, "archive: 2 papers") {
		t.Fatalf("the best reply is not scout's alone:\n%s", best)
	}
	notCalled(t, w, msg)
}

// allFail runs a task every research peer fails in the given mode and
// checks that each peer's turn failed and linguist was left alone.
func allFail(t *testing.T, w *teamWorld, mode string) *pb.ToolResult {
	t.Helper()
	msg := unique(t, "doomed question")
	r := <-orchestrate(t, w.boss, map[string]any{"capability": "research", "message": msg, "mode": mode, "timeout_s": 60})
	for _, h := range []*testharness.Host{w.archive, w.flaky, w.scout} {
		if _, pc := turnEnded(t, h, msg); pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE {
			t.Fatalf("turn ended %v", pc)
		}
	}
	notCalled(t, w, msg)
	return r
}

// TestOrchestrateReportsEveryFailureWhenEveryPeerFails: when every peer
// with the capability fails, modes all and first report each peer's
// failure with its reason and pick no reply.
func TestOrchestrateReportsEveryFailureWhenEveryPeerFails(t *testing.T) {
	t.Parallel()
	w := team(t)
	for _, mode := range []string{"all", "first"} {
		t.Run(mode, func(t *testing.T) {
			r := allFail(t, w, mode)
			e2etest.MustContain(t, r, "archive ended the task with state FAILED", "the archive is flooded",
				"flaky ended the task with state FAILED", "the lab notebook is on fire",
				"scout ended the task with state FAILED", "the web is down")
			mustNotContain(t, r, "First successful reply", "Best reply")
			if mode == "first" {
				e2etest.MustContain(t, r, "No peer succeeded")
			}
		})
	}
}

// TestOrchestratePicksNoneAndIsAnErrorWhenEveryPeerFails: a peer whose
// task FAILED is a failure like an unreachable peer: mode best must not
// pick one as the best reply, and in every mode a result where every peer
// failed is an error for the model.
func TestOrchestratePicksNoneAndIsAnErrorWhenEveryPeerFails(t *testing.T) {
	t.Parallel()
	w := team(t)
	for _, mode := range []string{"all", "first", "best"} {
		t.Run(mode, func(t *testing.T) {
			r := allFail(t, w, mode)
			e2etest.MustErr(t, r, "the archive is flooded", "the lab notebook is on fire", "the web is down")
			mustNotContain(t, r, "First successful reply", "Best reply")
		})
	}
}

// TestOrchestrateWithAnUnknownCapabilityCallsNobody: no peer advertises the
// capability, so nobody is called and the result says where to look.
func TestOrchestrateWithAnUnknownCapabilityCallsNobody(t *testing.T) {
	t.Parallel()
	w := team(t)
	msg := unique(t, "bake a cake")
	r, _ := callTool(t, w.boss, "a2a_orchestrate", map[string]any{"capability": "baking", "message": msg, "mode": "all"})
	e2etest.MustErr(t, r, `no configured peer advertises "baking"`, "a2a_list")
	for _, h := range []*testharness.Host{w.archive, w.flaky, w.scout, w.linguist} {
		if got := messagesWith(h, msg); len(got) != 0 {
			t.Fatalf("a peer got the message: %v", got)
		}
	}
}
