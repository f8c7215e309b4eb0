package tasks

import (
	"context"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

var local = security.Identity{ID: "local:127.0.0.1", Tier: security.TierLocal}

// localParams is sendParams for the Local operator, who sees every task.
func localParams(text string, mod func(*a2a.SendMessageRequest)) SendParams {
	p := sendParams(local, text, mod)
	p.Scope = ""
	return p
}

func inContext(cid string) func(*a2a.SendMessageRequest) {
	return func(r *a2a.SendMessageRequest) { r.Message.ContextID = cid }
}

// TestAnotherPeersContextAnswersLikeAnUnknownOne: a peer may name only a
// conversation this agent opened for it. Another peer's context and a
// context nobody has used answer the same -32602 with the same message
// (the id aside), so a peer can neither learn that a conversation exists
// nor talk into it, and naming an unused id claims nothing: its rightful
// owner is not locked out later.
func TestAnotherPeersContextAnswersLikeAnUnknownOne(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "hello", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("hi")}))
	aliceCtx := wait(t, ch).resp.Task.ContextID

	refusal := func(who security.Identity, cid string) string {
		t.Helper()
		_, err := e.m.Send(ctx, sendParams(who, "join", inContext(cid)))
		var aerr *a2a.Error
		if err == nil || !asA2A(err, &aerr) || aerr.Code != a2a.CodeInvalidParams {
			t.Fatalf("%s naming context %q: %v, want -32602", who.ID, cid, err)
		}
		return strings.ReplaceAll(string(mustMarshal(t, aerr)), cid, "<ID>")
	}
	const unused = "0192f000-0000-7000-8000-000000000001"
	foreign, unknown := refusal(bob, aliceCtx), refusal(bob, unused)
	if foreign != unknown {
		t.Errorf("another peer's context and an unknown one answer differently:\nforeign %s\nunknown %s", foreign, unknown)
	}
	if strings.Contains(foreign, "alice") {
		t.Errorf("the refusal names the owner: %s", foreign)
	}
	e.exec.none(t, 0)
	// Naming an unused id claimed nothing: alice is refused it just the
	// same, and still uses her own conversation.
	if got := refusal(alice, unused); got != unknown {
		t.Errorf("alice on the unused id: %s", got)
	}
	ch = e.sendAsync(sendParams(alice, "again", inContext(aliceCtx)))
	turn = e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("again")}))
	if r := wait(t, ch); r.err != nil || r.resp.Task.ContextID != aliceCtx {
		t.Fatalf("alice in her own context: %+v, %v", r.resp, r.err)
	}
	// The Local operator may use any context, a new one too.
	ch = e.sendAsync(localParams("operator", inContext("operator-chosen")))
	turn = e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateFinal, Message: agentMsg("ok")}))
	if r := wait(t, ch); r.err != nil || r.resp.Task.ContextID != "operator-chosen" {
		t.Fatalf("local caller in a context it chose: %+v, %v", r.resp, r.err)
	}
}

// TestADirectReplyOpensAConversationForItsPeer: a message-only answer (no
// task) still opens its context for the peer it answered, and for it only.
func TestADirectReplyOpensAConversationForItsPeer(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ch := e.sendAsync(sendParams(alice, "ping", nil))
	turn := e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateDirectReply, Message: agentMsg("pong")}))
	cid := wait(t, ch).resp.Message.ContextID
	ch = e.sendAsync(sendParams(alice, "ping again", inContext(cid)))
	turn = e.exec.next(t)
	must(t, e.m.Apply(ctx, turn.TaskID, Update{Kind: UpdateDirectReply, Message: agentMsg("pong again")}))
	if r := wait(t, ch); r.err != nil || r.resp.Message == nil || r.resp.Message.ContextID != cid {
		t.Fatalf("alice continuing her message-only conversation: %+v, %v", r.resp, r.err)
	}
	if _, err := e.m.Send(ctx, sendParams(bob, "join", inContext(cid))); code(err) != a2a.CodeInvalidParams {
		t.Fatalf("bob joined alice's message-only conversation: %v", err)
	}
}

func asA2A(err error, target **a2a.Error) bool {
	e, ok := err.(*a2a.Error)
	if ok {
		*target = e
	}
	return ok
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := a2a.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
