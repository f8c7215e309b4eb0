package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// taskArgs are the arguments of a2a_task.
type taskArgs struct {
	Agent    string   `json:"agent"`
	TaskID   string   `json:"task_id"`
	Action   string   `json:"action"`
	TimeoutS *float64 `json:"timeout_s"`
}

func (t *Toolset) task(ctx context.Context, ci *callInfo) *result {
	var a taskArgs
	if err := decodeArgs(ToolTask, ci.args, &a, "agent", "task_id", "action", "timeout_s"); err != nil {
		return errorResult("%v", err)
	}
	target, err := t.peers.resolve(ctx, &ci.rec, a.Agent, "agent")
	if err != nil {
		return errorResult("a2a_task: %v", err)
	}
	taskID := strings.TrimSpace(a.TaskID)
	if taskID == "" {
		return errorResult("a2a_task: argument \"task_id\" is required: the task id from an a2a_call result")
	}
	action := strings.ToLower(strings.TrimSpace(a.Action))
	start := t.now()
	if err := t.out.ensureToken(ctx, target); err != nil {
		return errorResult("a2a_task %s on %s failed: %v", action, target.name, err)
	}
	v := voiceOf(target)
	switch action {
	case "get":
		task, err := t.out.getTask(ctx, target, taskID)
		target.rec.ended(target, "GetTask", t.now().Sub(start), err)
		if err != nil {
			return errorResult("a2a_task get on %s failed: %s", target.name, v.errText(err))
		}
		o := t.out.newOutcome(target)
		o.tr.applyTask(task)
		if o.checkOver() {
			return errorResult("a2a_task get on %s failed: %v", target.name, o.err)
		}
		o.receipt, o.why = !o.tr.done(), "current state"
		target.rec.received(ctx, target, o)
		var b strings.Builder
		writeOutcome(&b, target.name, o)
		writeJSONLine(&b, target.name, o)
		return textResult(b.String())
	case "wait":
		waitFor, err := t.clampWait(a.TimeoutS, t.defaultWait(target))
		if err != nil {
			return errorResult("a2a_task: %v", err)
		}
		o := t.out.newOutcome(target)
		o.tr.taskID = taskID
		waitCtx, cancel := context.WithTimeout(ctx, waitFor)
		defer cancel()
		o = t.out.follow(ctx, target, o, waitCtx, ci.report, true)
		target.rec.ended(target, "SubscribeToTask", t.now().Sub(start), o.err)
		if o.err != nil {
			return errorResult("a2a_task wait on %s failed: %s", target.name, v.errText(o.err))
		}
		if o.receipt {
			o.why = fmt.Sprintf("stopped waiting after %s", roundDur(waitFor))
		}
		target.rec.received(ctx, target, o)
		d := t.memory.remembered(ci.rec.org, target.name, taskID)
		if needsAuth(o) && o.refreshable {
			chain, err := t.chainFor(ctx, ci.rec.org, target, taskID)
			if err != nil {
				return errorResult("a2a_task wait: task %s on %s needs authentication, and resuming it is refused: %v", taskID, target.name, err)
			}
			o = t.resumeAfterAuth(ctx, target, o, chain, waitFor-t.now().Sub(start), ci.report)
			if d == nil {
				d = &delegationInfo{chain: chain}
			}
		}
		if d == nil {
			d = &delegationInfo{}
		}
		target.rec.settled(ctx, target, *d, o)
		var b strings.Builder
		writeOutcome(&b, target.name, o)
		writeJSONLine(&b, target.name, o)
		return textResult(b.String())
	case "cancel":
		var chainID string
		if d := t.memory.remembered(ci.rec.org, target.name, taskID); d != nil {
			chainID = d.chain.ID // the tree the task was delegated in
		}
		task, err := t.out.cancelTask(ctx, target, taskID, chainID)
		target.rec.ended(target, "CancelTask", t.now().Sub(start), err)
		if err != nil {
			if re, ok := client.RPCError(err); ok && re.Code == a2a.CodeTaskNotCancelable {
				return errorResult("a2a_task cancel: task %s on %s has already finished and cannot be canceled (%q). Use action=\"get\" to see its result.", peerID(taskID), target.name, peerLine(re.Message, 300))
			}
			return errorResult("a2a_task cancel on %s failed: %s", target.name, v.errText(err))
		}
		o := t.out.newOutcome(target)
		o.tr.applyTask(task)
		target.rec.received(ctx, target, o)
		msg := fmt.Sprintf("Asked %s to cancel task %s; its state is now %s.", target.name, peerID(taskID), stateName(task.Status.State))
		if !task.Status.State.Terminal() {
			msg += fmt.Sprintf(" The cancellation may take a moment: check with a2a_task agent=%q task_id=%s action=\"get\".", target.name, peerID(taskID))
		}
		return textResult(msg)
	case "":
		return errorResult("a2a_task: argument \"action\" is required: one of \"get\", \"wait\", \"cancel\"")
	}
	return errorResult("a2a_task: argument \"action\" must be \"get\", \"wait\" or \"cancel\", not %q", a.Action)
}

// cancelRemote asks a peer to cancel a task, best effort, with a short
// timeout independent of the caller's context (which may be cancelled).
func (t *Toolset) cancelRemote(ctx context.Context, target *resolved, taskID, chainID string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := t.out.cancelTask(ctx, target, taskID, chainID)
	if re, ok := client.RPCError(err); ok && re.Code == a2a.CodeTaskNotCancelable {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
