package tools

import (
	"context"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// What a call sent and received is kept in the store's conversations, for
// a2a_history.

// conversations is the store of the conversations of the agent whose turn
// makes the tool call (Origin.Agent).
func (rec *recorder) conversations(org Origin) store.Conversations {
	return store.ConversationsOf(rec.store, org.Agent)
}

// record writes a conversation entry, logging (not failing) on error.
func (rec *recorder) record(ctx context.Context, org Origin, e store.ConversationEntry) {
	if rec.store == nil || e.ContextID == "" {
		return
	}
	if e.Time.IsZero() {
		e.Time = rec.now()
	}
	if _, err := rec.conversations(org).AppendConversation(context.WithoutCancel(ctx), &e); err != nil {
		rec.log.Warn("could not record conversation entry", "task_id", e.TaskID, "context_id", e.ContextID, "peer", e.Peer, "error", err)
	}
}

// recordReceived writes what came back once per task and state.
func (rec *recorder) recordReceived(ctx context.Context, org Origin, peer string, o *outcome) {
	if o.err != nil || o.tr.contextID == "" {
		return
	}
	key := o.tr.taskID + "|" + o.tr.state.String()
	if o.tr.message != nil {
		key = "msg|" + o.tr.message.MessageID
	}
	if o.receipt && !o.tr.done() {
		return // nothing final came back yet
	}
	rec.mu.Lock()
	seen := rec.recorded.add(key)
	rec.mu.Unlock()
	if seen {
		return
	}
	text := o.tr.answer()
	if o.tr.state == a2a.TaskStateInputRequired {
		text = o.tr.question()
	}
	e := store.ConversationEntry{ContextID: o.tr.contextID, Peer: peer, Direction: store.DirectionReceived, TaskID: o.tr.taskID, Text: text}
	if o.tr.message != nil {
		e.MessageID = o.tr.message.MessageID
		e.Parts = o.tr.message.Parts
	} else {
		e.State = o.tr.state.String()
		for _, a := range o.tr.artifacts {
			e.Parts = append(e.Parts, a.Parts...)
		}
	}
	rec.record(ctx, org, e)
}
