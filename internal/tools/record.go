package tools

import (
	"context"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/hashicorp/go-hclog"
)

// conversationLog is the recorder of what a call sent and received, kept
// in the store's conversations of the agent whose turn makes the call
// (Origin.Agent) for a2a_history. What came back is written once per task
// and state (recorded). An entry that cannot be written is logged.
type conversationLog struct {
	recordsNothing
	log   hclog.Logger
	store store.Conversations // Deps.Store
	now   func() time.Time

	mu       sync.Mutex
	recorded *seenSet // replies already written (bounded)
}

// sent writes what went out.
func (l *conversationLog) sent(ctx context.Context, c *callRecord, e store.ConversationEntry) {
	l.write(ctx, c.org, e)
}

// write writes a conversation entry, logging (not failing) on error.
func (l *conversationLog) write(ctx context.Context, org Origin, e store.ConversationEntry) {
	if e.ContextID == "" {
		return
	}
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	if _, err := store.ConversationsOf(l.store, org.Agent).AppendConversation(context.WithoutCancel(ctx), &e); err != nil {
		l.log.Warn("could not record conversation entry", "task_id", e.TaskID, "context_id", e.ContextID, "peer", e.Peer, "error", err)
	}
}

// received writes what came back once per task and state.
func (l *conversationLog) received(ctx context.Context, c *callRecord, target *resolved, o *outcome) {
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
	l.mu.Lock()
	seen := l.recorded.add(key)
	l.mu.Unlock()
	if seen {
		return
	}
	text := o.tr.answer()
	if o.tr.state == a2a.TaskStateInputRequired {
		text = o.tr.question()
	}
	e := store.ConversationEntry{ContextID: o.tr.contextID, Peer: target.name, Direction: store.DirectionReceived, TaskID: o.tr.taskID, Text: text}
	if o.tr.message != nil {
		e.MessageID = o.tr.message.MessageID
		e.Parts = o.tr.message.Parts
	} else {
		e.State = o.tr.state.String()
		for _, a := range o.tr.artifacts {
			e.Parts = append(e.Parts, a.Parts...)
		}
	}
	l.write(ctx, c.org, e)
}
