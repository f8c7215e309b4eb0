package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// AuthResumeText is the message that resumes a task after AUTH_REQUIRED,
// once fresh credentials are in place (the new token goes with it).
const AuthResumeText = "credentials refreshed"

// needsAuth reports a task that stopped at AUTH_REQUIRED.
func needsAuth(o *outcome) bool {
	return o.err == nil && o.tr.message == nil && o.tr.taskID != "" && o.tr.state == a2a.TaskStateAuthRequired
}

// resumeAfterAuth handles a task that stopped at AUTH_REQUIRED. When the
// peer's token comes from token_file or token_command, it reads the token
// again and sends AuthResumeText on the same task — same context, same
// delegation chain — with it, then follows the task for what is left of
// the wait (a receipt when nothing is left). It does so once: a task that
// asks again is reported as it is. Without such a source, or when
// refreshing fails, o is returned with a note, and the result says how to
// resume by hand.
func (t *Toolset) resumeAfterAuth(ctx context.Context, target *resolved, o *outcome, chain security.Chain, remaining time.Duration, progress func(string) bool) *outcome {
	if !needsAuth(o) || target.conf == nil || target.conf.tokens == nil {
		return o
	}
	src := target.conf.tokens
	asked := o.tr.question()
	if _, err := src.refresh(ctx); err != nil {
		o.authNote = fmt.Sprintf("Refreshing the credentials failed: %v", err)
		t.log.Warn("the peer asked for credentials and refreshing them failed", "peer", target.name, "task_id", o.tr.taskID, "context_id", o.tr.contextID, "error", err)
		return o
	}
	t.log.Info("the peer asked for credentials; refreshed them and resuming the task", "peer", target.name, "task_id", o.tr.taskID, "context_id", o.tr.contextID, "source", src.what())
	if progress != nil && !progress(fmt.Sprintf("%s: credentials refreshed from %s; resuming task %s", target.name, src.what(), o.tr.taskID)) {
		o.err = fmt.Errorf("the caller went away; stopped following the task")
		return o
	}
	msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart(AuthResumeText))
	msg.TaskID, msg.ContextID = o.tr.taskID, o.tr.contextID
	msg.Metadata = applyChain(nil, chain)
	wait := remaining > 0
	r := t.out.deliver(ctx, sendSpec{target: target, msg: msg, wait: wait, waitFor: max(remaining, 0), progress: progress})
	if r.err == nil || r.tr.taskID != "" {
		target.rec.sent(ctx, store.ConversationEntry{ContextID: o.tr.contextID, Peer: target.name, Direction: store.DirectionSent,
			TaskID: o.tr.taskID, MessageID: msg.MessageID, Text: AuthResumeText, Parts: msg.Parts, Time: t.now().Add(-r.elapsed)})
	}
	if r.err != nil {
		o.authNote = fmt.Sprintf("Refreshed the credentials from %s, but resuming the task failed: %s", src.what(), errLine(r.err, 500))
		return o
	}
	if r.tr.taskID == "" {
		r.tr.taskID = o.tr.taskID
	}
	if r.tr.contextID == "" {
		r.tr.contextID = o.tr.contextID
	}
	r.elapsed += o.elapsed
	r.authNote = fmt.Sprintf("%s asked for credentials", target.name)
	if asked != "" {
		r.authNote += fmt.Sprintf(" (%q)", peerLine(asked, 200))
	}
	r.authNote += fmt.Sprintf("; the token was read again from %s and the task resumed.", src.what())
	if !wait {
		r.receipt, r.why = !r.tr.done(), "the wait was used up before the credentials were refreshed"
	}
	r.authResumed = true
	target.rec.received(ctx, target, r)
	return r
}

// chainFor is the delegation chain of an earlier call on peer's task: as
// remembered, else as our own message in the task's history carries it,
// else a new hop of the caller's chain.
func (t *Toolset) chainFor(ctx context.Context, org Origin, target *resolved, taskID string) (security.Chain, error) {
	if d := t.memory.remembered(org, target.name, taskID); d != nil && d.chain.ID != "" {
		return d.chain, nil
	}
	if task, err := t.out.getTask(ctx, target, taskID); err == nil {
		for i := len(task.History) - 1; i >= 0; i-- {
			m := task.History[i]
			if m.Role != a2a.RoleUser {
				continue
			}
			if c, err := security.ChainFromMetadata(m.Metadata); err == nil && c.ID != "" {
				return c, nil
			}
		}
	}
	return nextChain(org, t.cfg.MaxDepth)
}

// writeAuthHelp says what to do about a task left at AUTH_REQUIRED.
func writeAuthHelp(b *strings.Builder, peer string, o *outcome) {
	switch {
	case o.authResumed:
		b.WriteString("It asked again after the credentials were refreshed and the task resumed: the credential itself is probably not accepted; ask the peer's operator.\n")
	case o.authNote != "":
		fmt.Fprintf(b, "%s\n", o.authNote)
	case !o.refreshable:
		fmt.Fprintf(b, "No token_file, token_command or oauth2 is configured for %s, so the plugin cannot refresh the credentials itself.\n", peer)
	}
	fmt.Fprintf(b, "Once the credentials are in place, resume the same task: a2a_call agent=%q task_id=%s context_id=%s message=%q\n",
		peer, peerID(o.tr.taskID), peerID(o.tr.contextID), AuthResumeText)
}
