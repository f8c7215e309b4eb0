package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// historyArgs are the arguments of a2a_history.
type historyArgs struct {
	ContextID string `json:"context_id"`
	Limit     *int   `json:"limit"`
}

func (t *Toolset) history(ctx context.Context, ci *callInfo) *result {
	var a historyArgs
	if err := decodeArgs(ToolHistory, ci.args, &a, "context_id", "limit"); err != nil {
		return errorResult("%v", err)
	}
	cid := strings.TrimSpace(a.ContextID)
	if cid == "" {
		return errorResult("a2a_history: argument \"context_id\" is required: the context_id of a conversation (see a2a_list)")
	}
	limit := 0
	if a.Limit != nil {
		if *a.Limit < 1 {
			return errorResult("a2a_history: argument \"limit\" must be a positive integer")
		}
		limit = *a.Limit
	}
	if t.deps.Store == nil {
		return errorResult("a2a_history: no conversation store is available in this plugin instance")
	}
	entries, err := store.ConversationsOf(t.deps.Store, ci.rec.org.Agent).Conversation(ctx, cid, limit)
	if err != nil {
		return errorResult("a2a_history: could not read conversation %s: %v", cid, err)
	}
	if len(entries) == 0 {
		return textResult(fmt.Sprintf("No conversation with context_id %q is known. a2a_list shows the known conversations.", cid))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation %s (%d entries, oldest first):\n", peerID(cid), len(entries))
	for _, e := range entries {
		arrow, verb := "→", "sent to"
		if e.Direction == store.DirectionReceived {
			arrow, verb = "←", "from"
		}
		fmt.Fprintf(&b, "%s %s %s %s", e.Time.UTC().Format(time.RFC3339), arrow, verb, e.Peer)
		var meta []string
		if e.TaskID != "" {
			meta = append(meta, "task "+peerID(e.TaskID))
		}
		if e.State != "" {
			meta = append(meta, strings.TrimPrefix(e.State, "TASK_STATE_"))
		}
		if len(meta) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(meta, ", "))
		}
		if e.Direction == store.DirectionReceived {
			fmt.Fprintf(&b, ":\n%s\n", t.peers.voiceOf(e.Peer).textOr(e.Text, noAnswer))
			continue
		}
		fmt.Fprintf(&b, ": %s\n", clip(orNone(e.Text)))
	}
	return textResult(strings.TrimRight(b.String(), "\n"))
}
