package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/hashicorp/go-hclog"
)

// maxCancelError bounds the text of a failed cancel (it goes into the
// metadata of the task whose end asked for it).
const maxCancelError = 400

// CancelDelegation asks peer (a configured peer name, or the URL a
// delegation called) to cancel its task taskID on behalf of the delegation
// tree chainID: the CancelTask carries the chain in its metadata, so a
// peer running these plugins cancels only a task of that tree, and cancels
// in turn what that task delegated. It implements cascade.Canceler.
//
// A task that had already ended is no error (a -32002 "not cancelable" is
// checked with GetTask): its state says how it ended. An answer whose task
// is not in a terminal state is not a cancel yet: an error with retry. retry is true for
// failures that another attempt may not meet — the peer unreachable, slow,
// overloaded, answering garbage or an internal error — and false for a
// refusal: the peer cannot stop the task (its host cannot cancel a running
// turn), does not know it, or refuses this agent's credentials. The error
// text is redacted and cut for the task metadata it is shown in.
func (t *Toolset) CancelDelegation(ctx context.Context, peer, taskID, chainID string) (a2a.TaskState, bool, error) {
	target, err := t.peers.resolve(ctx, t.sinks.record(Origin{}), peer, "agent")
	if err != nil {
		return "", false, cancelError(fmt.Errorf("%s can no longer be called: %v", peer, err))
	}
	start := t.now()
	if err := t.out.ensureToken(ctx, target); err != nil {
		return "", true, cancelError(fmt.Errorf("no credential for %s: %v", target.name, err))
	}
	task, err := t.out.cancelTask(ctx, target, taskID, chainID)
	target.rec.ended(target, "CancelTask", t.now().Sub(start), err)
	if err == nil {
		if st := task.Status.State; !st.Terminal() {
			// The peer took the cancel but the task has not stopped (or it
			// answered no state): not canceled yet. Asking again later
			// finds it canceled, or tells why not.
			if st == "" {
				st = "no state"
			}
			return "", true, cancelError(fmt.Errorf("%s answered CancelTask with task %s still %s", target.name, taskID, st))
		}
		return task.Status.State, false, nil
	}
	if re, ok := client.RPCError(err); ok {
		switch re.Code {
		case a2a.CodeTaskNotCancelable:
			// Ended by itself, or the peer cannot stop it: its state tells.
			if got, gerr := t.out.getTask(ctx, target, taskID); gerr == nil && got.Status.State.Terminal() {
				return got.Status.State, false, nil
			}
			return "", false, cancelError(fmt.Errorf("%s refused to cancel task %s: %s", target.name, taskID, peerLine(re.Message, maxCancelError)))
		case a2a.CodeTaskNotFound:
			return "", false, cancelError(fmt.Errorf("%s does not know task %s: %s", target.name, taskID, peerLine(re.Message, maxCancelError)))
		case a2a.CodeInternalError:
			return "", true, cancelError(err)
		}
		return "", false, cancelError(err)
	}
	switch client.KindOf(err) {
	case client.ErrUnreachable, client.ErrTimeout, client.ErrRateLimited, client.ErrInvalidResponse, client.ErrBadCard, client.ErrStreamCut:
		return "", true, cancelError(err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "", true, cancelError(err)
	}
	return "", false, cancelError(err)
}

// cancelError is err as one redacted line of bounded length.
func cancelError(err error) error {
	s, _ := security.Redact(errLine(err, maxCancelError))
	return errors.New(s)
}

// cascadeRecorder keeps every remote task a call starts or continues for
// an inbound task (Origin.Task; the chain of a call made for none leaves
// it out) under that task, with the delegation chain its message carried,
// so that the end of that task reaches the remote one (internal/cascade).
// It records even when the call is being given up: the cancel of the
// inbound task may be what stops the call.
type cascadeRecorder struct {
	recordsNothing
	log     hclog.Logger
	cascade DelegationRecorder
}

func (r *cascadeRecorder) named(ctx context.Context, c *callRecord, target *resolved, msg *a2a.Message, taskID, contextID string) {
	turn := c.org
	if turn.Task == "" {
		return
	}
	chain, _ := security.ChainFromMetadata(msg.Metadata)
	d := store.Delegation{ParentTaskID: turn.Task, ChainID: chain.ID, Peer: target.name, RemoteTaskID: taskID, RemoteContextID: contextID}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.cascade.Record(rctx, d); err != nil {
		r.log.Warn("could not record a delegated task: the end of the task it works for will not cancel it",
			"task_id", turn.Task, "peer", target.name, "remote_task_id", taskID, "error", err)
	}
}
