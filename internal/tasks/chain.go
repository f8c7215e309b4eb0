package tasks

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// Every task belongs to one delegation chain, the tree of tasks that one
// piece of work spread over: the chain its first message names
// (security.MetaChainID, set by the agent that delegated it), or a new
// one when it starts a tree. The id is kept in the task's metadata under
// the same key, so that the outbound calls of every turn of the task
// carry it one hop deeper, and a cancel cascading down a tree (a
// CancelTask whose metadata names the chain) reaches only its own tasks.

// newTaskChain returns the chain of a task the message msg starts: the
// chain msg names (the server checked its metadata), else a new one.
func newTaskChain(msg a2a.Message) security.Chain {
	c, err := security.ChainFromMetadata(msg.Metadata)
	if err != nil || c.ID == "" {
		c = security.Chain{ID: security.NewChainID()}
	}
	return c
}

// TaskChainID returns the delegation chain of t: the id kept in its
// metadata, else (a task stored before chains were kept) the one its first
// message names, else "".
func TaskChainID(t *a2a.Task) string {
	if id, ok := t.Metadata[security.MetaChainID].(string); ok && id != "" {
		return id
	}
	if len(t.History) > 0 {
		if c, err := security.ChainFromMetadata(t.History[0].Metadata); err == nil {
			return c.ID
		}
	}
	return ""
}

// continuedChain is the chain of a turn answering the waiting task t with
// msg: the task's chain, at the depth msg (else the first message) names.
func continuedChain(t *a2a.Task, msg a2a.Message) security.Chain {
	c, err := security.ChainFromMetadata(msg.Metadata)
	if (err != nil || c.ID == "") && len(t.History) > 0 {
		c, _ = security.ChainFromMetadata(t.History[0].Metadata)
	}
	if id := TaskChainID(t); id != "" {
		c.ID = id
	}
	return c
}

// cancelChain returns the chain a CancelTask request names: a cancel that
// cascades down a delegation tree carries the tree's chain id.
func cancelChain(req *a2a.CancelTaskRequest) string {
	id, _ := req.Metadata[security.MetaChainID].(string)
	return id
}

// checkCancelChain refuses a cascading cancel (one naming a chain) of a
// task of another chain. A task with no known chain is not refused.
func checkCancelChain(req *a2a.CancelTaskRequest, t *a2a.Task) error {
	want := cancelChain(req)
	if want == "" {
		return nil
	}
	if have := TaskChainID(t); have != "" && have != want {
		return a2a.ErrTaskNotInChain(t.ID, want, have)
	}
	return nil
}

// cancelNotice is the status message of a task canceled by req.
func cancelNotice(req *a2a.CancelTaskRequest) string {
	if id := cancelChain(req); id != "" {
		return fmt.Sprintf("The task was canceled by the agent that delegated it: the work it was part of (delegation chain %s) ended.", id)
	}
	return "The task was canceled at the client's request."
}

// ErrUnknownTask is Annotate's error for a task the store does not hold.
var ErrUnknownTask = errors.New("tasks: no such task")

// Annotate sets one key of a task's metadata to value (nil deletes it) and
// saves the task, changing nothing else: not its status, its timestamp or
// its streams. It is for what the plugin learns about a task after it
// ended — how canceling the remote tasks it delegated went
// (security.MetaCancelCascade) — so that GetTask shows it. value must
// encode as JSON.
func (m *Manager) Annotate(ctx context.Context, taskID, key string, value any) error {
	set := func(rec *store.TaskRecord) {
		md := maps.Clone(rec.Task.Metadata)
		if md == nil {
			md = map[string]any{}
		}
		if value == nil {
			delete(md, key)
		} else {
			md[key] = value
		}
		rec.Task.Metadata = md
	}
	m.mu.Lock()
	lt := m.live[taskID]
	m.mu.Unlock()
	if lt != nil {
		lt.mu.Lock()
		defer lt.mu.Unlock()
		if lt.revealed {
			before := lt.rec.Task.Metadata
			set(&lt.rec)
			if err := m.persistLocked(ctx, lt, nil); err != nil {
				lt.rec.Task.Metadata = before
				return err
			}
			return nil
		}
		// Not stored yet: the metadata goes with its first save.
		set(&lt.rec)
		return nil
	}
	rec, err := m.store.GetTask(ctx, taskID, "")
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("annotating task %s: %w", taskID, ErrUnknownTask)
	}
	if err != nil {
		return fmt.Errorf("annotating task %s: %w", taskID, err)
	}
	set(rec)
	if err := m.rep.save(context.WithoutCancel(ctx), rec, nil, nil); err != nil {
		return fmt.Errorf("annotating task %s: %w", taskID, err)
	}
	m.notify(rec)
	return nil
}
