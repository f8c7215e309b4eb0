package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// follow waits for a known task to finish or be interrupted: by
// subscribing when the peer streams (and subscribe is true), else by
// polling GetTask with backoff, until waitCtx ends (then a receipt).
func (eng *outbound) follow(ctx context.Context, target *resolved, o *outcome, waitCtx context.Context, progress func(string) bool, subscribe bool) *outcome {
	if subscribe {
		info, err := eng.card(ctx, target)
		if err == nil && info.Card.Capabilities.SupportsStreaming() {
			subCtx, cancelSub := context.WithCancel(waitCtx)
			end := &finishLine{cancel: cancelSub}
			answered := false
			err = eng.subscribe(subCtx, target, o.tr.taskID, func(ev client.Event) error {
				line := o.tr.apply(ev)
				if o.tr.over {
					return errTooMuchOutput
				}
				if line != "" && progress != nil && !progress(target.name+": "+line) {
					return errCallerGone
				}
				if ev.Final {
					answered = true
					return end.final(ev)
				}
				return nil
			})
			end.close()
			cancelSub()
			switch {
			case o.checkOver():
				return o
			case (err == nil || errors.Is(err, errStreamDone) || (answered && waitCtx.Err() == nil)) && o.tr.done():
				return o
			case errors.Is(err, errCallerGone):
				o.err = fmt.Errorf("the caller went away; stopped following the task")
				return o
			case waitCtx.Err() != nil && ctx.Err() == nil:
				o.receipt, o.why = true, "stopped waiting (timeout reached)"
				return o
			}
			// Subscribing failed (e.g. the task is already terminal, which
			// peers answer with -32004) or the stream broke: poll instead.
		}
	}
	delay := 200 * time.Millisecond
	for {
		task, err := eng.getTask(waitCtx, target, o.tr.taskID)
		if err == nil {
			prev := o.tr.state
			o.tr.applyTask(task)
			if o.checkOver() {
				return o
			}
			if o.tr.state != prev && progress != nil {
				line := target.name + ": " + stateName(o.tr.state)
				if q := o.tr.question(); q != "" {
					line += ": " + peerLine(q, maxProgressChars)
				}
				if !progress(line) {
					o.err = fmt.Errorf("the caller went away; stopped following the task")
					return o
				}
			}
			if o.tr.done() {
				return o
			}
		} else if waitCtx.Err() == nil {
			// A failed poll is not fatal unless it is an answer about the
			// task itself (not found, auth): report those.
			if _, ok := client.RPCError(err); ok || client.KindOf(err) == client.ErrAuthRefused {
				o.err = err
				return o
			}
		}
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				o.err = ctx.Err()
				return o
			}
			o.receipt, o.why = true, "stopped waiting (timeout reached)"
			return o
		case <-time.After(delay):
		}
		if delay = delay * 3 / 2; delay > 3*time.Second {
			delay = 3 * time.Second
		}
	}
}

// roundDur formats a duration for a model.
func roundDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Second).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}
