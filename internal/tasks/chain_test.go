package tasks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// TestEveryTaskBelongsToOneDelegationChain: a task takes the chain its
// first message names, or starts a new one; the id is in the task's
// metadata and on every turn of it, continuations too, so its outbound
// calls continue one tree.
func TestEveryTaskBelongsToOneDelegationChain(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	nonBlocking := func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}

	root, err := e.m.Send(ctx, sendParams(alice, "a new piece of work", nonBlocking))
	must(t, err)
	turn := e.exec.next(t)
	id := TaskChainID(root.Task)
	if !strings.HasPrefix(id, "chain-") || root.Task.Metadata[security.MetaChainID] != id {
		t.Fatalf("root task chain %q, metadata %v; want a new chain id kept in the metadata", id, root.Task.Metadata)
	}
	if turn.Chain.ID != id || turn.Chain.Depth != 0 {
		t.Errorf("root turn's chain = %+v, want %s at depth 0", turn.Chain, id)
	}

	other, err := e.m.Send(ctx, sendParams(bob, "another piece of work", nonBlocking))
	must(t, err)
	e.exec.next(t)
	if TaskChainID(other.Task) == id {
		t.Errorf("two root tasks share chain %s", id)
	}

	// A hop of an existing tree keeps its chain, one level down.
	hop, err := e.m.Send(ctx, sendParams(alice, "delegated to us", func(r *a2a.SendMessageRequest) {
		nonBlocking(r)
		r.Message.Metadata = security.Chain{ID: "chain-upstream", Depth: 2}.Apply(nil)
	}))
	must(t, err)
	hopTurn := e.exec.next(t)
	if TaskChainID(hop.Task) != "chain-upstream" || hopTurn.Chain != (security.Chain{ID: "chain-upstream", Depth: 2}) {
		t.Fatalf("hop task chain %q, turn %+v; want the upstream chain at depth 2", TaskChainID(hop.Task), hopTurn.Chain)
	}

	// The answer to a question runs on the task's chain, whatever the
	// answer's metadata says.
	must(t, e.m.Apply(ctx, hopTurn.TaskID, Update{Kind: UpdateInputRequired, Message: agentMsg("which?")}))
	must(t, e.m.EndTurn(ctx, hopTurn.TaskID, OutcomeSuccess, ""))
	_, err = e.m.Send(ctx, sendParams(alice, "this one", func(r *a2a.SendMessageRequest) {
		nonBlocking(r)
		r.Message.TaskID, r.Message.ContextID = hop.Task.ID, hop.Task.ContextID
		r.Message.Metadata = security.Chain{ID: "chain-elsewhere", Depth: 1}.Apply(nil)
	}))
	must(t, err)
	if next := e.exec.next(t); next.Chain.ID != "chain-upstream" || !next.Continuation {
		t.Errorf("continuation turn chain = %+v, want the task's chain-upstream", next.Chain)
	}
}

// TestCascadingCancelReachesOnlyItsOwnTree: a cancel whose metadata names
// a delegation chain — one cascading down a tree — cancels a task of that
// chain, says so in the status, and is refused (-32002, nothing changed)
// for a task of another chain; a cancel naming no chain cancels any.
func TestCascadingCancelReachesOnlyItsOwnTree(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	start := func(chain string) *a2a.Task {
		t.Helper()
		resp, err := e.m.Send(ctx, sendParams(alice, "work of "+chain, func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
			r.Message.Metadata = security.Chain{ID: chain, Depth: 1}.Apply(nil)
		}))
		must(t, err)
		e.exec.next(t)
		return resp.Task
	}
	mine, theirs, plain := start("chain-mine"), start("chain-theirs"), start("chain-plain")
	cascade := func(id string) (*a2a.Task, error) {
		return e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: id, Metadata: map[string]any{security.MetaChainID: "chain-mine"}})
	}

	_, err := cascade(theirs.ID)
	var aerr *a2a.Error
	if !errors.As(err, &aerr) || aerr.Code != a2a.CodeTaskNotCancelable || aerr.Metadata["why"] != "not-in-delegation-chain" ||
		!strings.Contains(aerr.Message, "chain-theirs") {
		t.Fatalf("cascading cancel of another tree's task = %v; want -32002 not-in-delegation-chain", err)
	}
	if got, _ := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: theirs.ID}); got.Status.State != a2a.TaskStateWorking && got.Status.State != a2a.TaskStateSubmitted {
		t.Errorf("the refused task is now %s", got.Status.State)
	}
	if got := e.exec.cancelledIDs(); len(got) != 0 {
		t.Errorf("the host was told to cancel %v", got)
	}

	task, err := cascade(mine.ID)
	must(t, err)
	if task.Status.State != a2a.TaskStateCanceled || !strings.Contains(a2a.FlattenParts(task.Status.Message.Parts), "delegation chain chain-mine") {
		t.Fatalf("cascading cancel of its own tree's task: %s %q", task.Status.State, a2a.FlattenParts(task.Status.Message.Parts))
	}
	task, err = e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: plain.ID})
	must(t, err)
	if task.Status.State != a2a.TaskStateCanceled || !strings.Contains(a2a.FlattenParts(task.Status.Message.Parts), "client's request") {
		t.Fatalf("a plain cancel: %s %q", task.Status.State, a2a.FlattenParts(task.Status.Message.Parts))
	}
}

// TestAnnotateSetsMetadataOfAnEndedTask: Annotate adds a key to a task's
// metadata, live or only stored, without touching its status; nil removes
// it; an unknown task is ErrUnknownTask.
func TestAnnotateSetsMetadataOfAnEndedTask(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	resp, err := e.m.Send(ctx, sendParams(alice, "soon canceled", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}))
	must(t, err)
	e.exec.next(t)
	_, err = e.m.Cancel(ctx, alice.ID, &a2a.CancelTaskRequest{ID: resp.Task.ID})
	must(t, err)
	canceled, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: resp.Task.ID})
	must(t, err)

	must(t, e.m.Annotate(ctx, resp.Task.ID, "a2a-plugin/note", map[string]any{"n": 1}))
	got, err := e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: resp.Task.ID})
	must(t, err)
	if note, _ := got.Metadata["a2a-plugin/note"].(map[string]any); note["n"] != 1 && note["n"] != 1.0 {
		t.Fatalf("metadata after Annotate = %v", got.Metadata)
	}
	if got.Metadata[security.MetaChainID] != canceled.Metadata[security.MetaChainID] {
		t.Errorf("Annotate lost the chain id: %v", got.Metadata)
	}
	if got.Status.State != a2a.TaskStateCanceled || !got.Status.Timestamp.Time.Equal(canceled.Status.Timestamp.Time) {
		t.Errorf("Annotate changed the status: %+v, was %+v", got.Status, canceled.Status)
	}
	must(t, e.m.Annotate(ctx, resp.Task.ID, "a2a-plugin/note", nil))
	got, err = e.m.Get(ctx, alice.ID, &a2a.GetTaskRequest{ID: resp.Task.ID})
	must(t, err)
	if _, ok := got.Metadata["a2a-plugin/note"]; ok {
		t.Errorf("nil did not remove the key: %v", got.Metadata)
	}
	if err := e.m.Annotate(ctx, "no-such-task", "k", 1); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("Annotate of an unknown task = %v, want ErrUnknownTask", err)
	}
}
