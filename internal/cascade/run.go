package cascade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/backoff"
	"github.com/a2a-plugin/a2a-plugin/internal/jobs"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// maxErrorText bounds the error text kept for a failed cancel.
const maxErrorText = 500

// Run cancels the delegations whose parents ended until ctx ends: c sends
// each CancelTask, a writes how it went into the parent's metadata. On the
// way out it settles the ends it was told about, so they are in the store
// for the next run; cancels still in flight, and cancels claimed but not
// sent, are given back and due at once in the next run. Run may be called
// once.
func (t *Tracker) Run(ctx context.Context, c Canceler, a Annotator) error {
	if c == nil || a == nil {
		return errors.New("cascade: Run needs a Canceler and an Annotator")
	}
	t.mu.Lock()
	if t.running {
		t.mu.Unlock()
		return errors.New("cascade: Run called twice")
	}
	t.running = true
	t.mu.Unlock()

	t.canceler, t.annotator = c, a
	t.reconcile(ctx, false)
	t.lastSweep = t.now()
	err := t.runner.Run(ctx)
	// The ends told so far go into the store, where the next run finds
	// them, and the metadata says where things stand.
	flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	t.handleEnds(flush)
	t.annotateDirty(flush, a)
	cancel()
	return err
}

// newRunner builds the job runner that sends the cancels due: a job is a
// delegation to cancel, claimed (leased) with ClaimCancels.
func (t *Tracker) newRunner() (*jobs.Runner[store.Delegation, int64], error) {
	lease := 2*t.timeout + 10*time.Second
	return jobs.New(jobs.Options[store.Delegation, int64]{
		Claim: func(ctx context.Context, now time.Time, limit int) ([]store.Delegation, error) {
			return t.store.ClaimCancels(ctx, now, lease, limit)
		},
		Run: func(ctx context.Context, d store.Delegation) jobs.Result {
			return jobs.Result{Next: t.cancelOne(ctx, t.canceler, d)}
		},
		Key:          func(d store.Delegation) int64 { return d.ID },
		Leased:       true,
		MaxHold:      lease / 2,
		Release:      t.giveBack,
		Tick:         t.tick,
		Concurrency:  t.concurrency,
		PollInterval: t.poll,
		Now:          t.now,
		Logger:       t.log,
		ClaimFailed:  "cannot read the cancels due; trying again shortly",
	})
}

// tick is the housekeeping of each round of the runner: it settles the
// ends it was told about, brings the metadata up to date, and now and
// then sweeps the open delegations. It reports false when an end could
// not be stored.
func (t *Tracker) tick(ctx context.Context) bool {
	ok := t.handleEnds(ctx)
	t.annotateDirty(ctx, t.annotator)
	if now := t.now(); now.Sub(t.lastSweep) >= staleAfter/4 {
		// Other replicas sharing the store (or a replica that died)
		// recorded delegations whose parents' ends may be saved here and
		// told to this Tracker, which did not know them.
		if err := t.Load(ctx); err != nil && ctx.Err() == nil {
			t.log.Warn("cannot read the open delegations; looking again at the next sweep", "error", err)
		}
		t.reconcile(ctx, true)
		t.lastSweep = now
	}
	return ok
}

// handleEnds settles the ends Ended was told about; it reports false when
// one could not be stored (it is kept for the next round).
func (t *Tracker) handleEnds(ctx context.Context) bool {
	t.mu.Lock()
	ends := t.ended
	t.ended = nil
	t.mu.Unlock()
	ok := true
	for i, e := range ends {
		if err := t.end(ctx, e.task, e.state); err != nil {
			if ctx.Err() == nil {
				t.log.Error("cannot settle the delegations of an ended task; trying again shortly", "task_id", e.task, "error", err)
			}
			t.mu.Lock()
			t.ended = append(t.ended, ends[i:]...)
			t.mu.Unlock()
			ok = false
			break
		}
	}
	return ok
}

// reconcile looks at the parents with open delegations this Tracker
// knows: one that ended is settled as if Ended had been told — its end may
// have been saved by another replica, whose Tracker did not know it had
// delegations. With stale (the periodic sweep), one the store does not
// hold although it has been known for longer than staleAfter (its turn
// answered with a direct message, so it was never stored) has its
// delegations kept; without (at start-up), it is left open.
func (t *Tracker) reconcile(ctx context.Context, stale bool) {
	now := t.now()
	t.mu.Lock()
	parents := make(map[string]time.Time, len(t.open))
	for p, since := range t.open {
		parents[p] = since
	}
	t.mu.Unlock()
	for p, since := range parents {
		rec, err := t.store.GetTask(ctx, p, "")
		switch {
		case err == nil && rec.Task.Status.State.Terminal():
			if err := t.end(ctx, p, rec.Task.Status.State); err != nil {
				t.log.Error("cannot settle the delegations of an ended task", "task_id", p, "error", err)
			}
		case errors.Is(err, store.ErrNotFound) && stale && now.Sub(since) >= staleAfter:
			if _, err := t.store.EndDelegations(ctx, p, false, "", now); err != nil {
				t.log.Error("cannot settle the delegations of a task that was never stored", "task_id", p, "error", err)
				continue
			}
			t.mu.Lock()
			delete(t.open, p)
			t.mu.Unlock()
		case err == nil || errors.Is(err, store.ErrNotFound):
			// Still running, or not stored yet: look again at the next
			// sweep.
		default:
			if ctx.Err() == nil {
				t.log.Warn("cannot read a task with open delegations", "task_id", p, "error", err)
			}
		}
	}
}

// cancelOne sends one cancel and stores how it went; it returns when the
// cancel is tried again (zero: it is settled, or it was abandoned).
func (t *Tracker) cancelOne(ctx context.Context, c Canceler, d store.Delegation) (retryAt time.Time) {
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	state, retry, err := c.CancelDelegation(cctx, d.Peer, d.RemoteTaskID, d.ChainID)
	cancel()
	if ctx.Err() != nil {
		// Shutting down: give the claim back, so that the next run tries
		// at once (after a crash the lease lapses instead).
		t.giveBack(context.WithoutCancel(ctx), d)
		return time.Time{}
	}
	now := t.now()
	d.Attempts++
	d.UpdatedAt = now
	log := []any{"task_id", d.ParentTaskID, "peer", d.Peer, "remote_task_id", d.RemoteTaskID, "attempt", d.Attempts}
	switch {
	case err == nil && state != "" && state != a2a.TaskStateCanceled && state.Terminal():
		d.State, d.RemoteState, d.LastError = store.DelegationFinished, state.String(), ""
		t.log.Debug("a delegated task had already ended", append(log, "state", state.String())...)
	case err == nil:
		d.State, d.RemoteState, d.LastError = store.DelegationCanceled, state.String(), ""
		t.log.Debug("canceled a delegated task", append(log, "state", state.String())...)
	case retry && d.Attempts < t.maxAttempts:
		d.LastError = clip(err.Error())
		retryAt = now.Add(t.backoff(d.Attempts))
		d.NextTry = retryAt
		t.log.Warn("could not cancel a delegated task; trying again later", append(log, "retry_at", retryAt, "error", err)...)
	default:
		d.State = store.DelegationFailed
		d.LastError = clip(err.Error())
		if retry {
			d.LastError = clip(fmt.Sprintf("gave up after %d attempts: %v", d.Attempts, err))
		}
		t.log.Warn("could not cancel a delegated task", append(log, "error", d.LastError)...)
	}
	if err := t.store.UpdateDelegation(context.WithoutCancel(ctx), &d); err != nil {
		// The claim lapses and the cancel is tried again.
		t.log.Error("cannot record how a cancel went", append(log, "error", err)...)
		return time.Time{}
	}
	t.mu.Lock()
	t.dirty[d.ParentTaskID] = struct{}{}
	t.mu.Unlock()
	return retryAt
}

// giveBack gives back the claim on a cancel that was not sent, as the
// Tracker stops, so that the next run tries it at once (after a crash the
// lease lapses instead).
func (t *Tracker) giveBack(ctx context.Context, d store.Delegation) {
	d.NextTry = t.now()
	if err := t.store.UpdateDelegation(ctx, &d); err != nil {
		t.log.Warn("cannot give back a cancel claimed at shutdown; it is tried again once its lease lapses", "task_id", d.ParentTaskID, "error", err)
	}
}

// backoff is the wait after the attempt-th failed attempt: BaseBackoff
// doubled per earlier failure up to MaxBackoff, drawn from its upper half.
func (t *Tracker) backoff(attempt int) time.Duration {
	return backoff.Jittered(t.base, t.max, attempt)
}

// annotateDirty writes the cascade summary of every parent whose
// delegations changed into its metadata.
func (t *Tracker) annotateDirty(ctx context.Context, a Annotator) {
	t.mu.Lock()
	parents := make([]string, 0, len(t.dirty))
	for p := range t.dirty {
		parents = append(parents, p)
	}
	clear(t.dirty)
	t.mu.Unlock()
	for _, p := range parents {
		ds, err := t.store.Delegations(ctx, p)
		if err != nil {
			t.log.Warn("cannot read the delegations of a task", "task_id", p, "error", err)
			continue
		}
		s := Summarize(ds)
		if s == nil {
			continue
		}
		if err := a.Annotate(ctx, p, security.MetaCancelCascade, s.metadata()); err != nil && ctx.Err() == nil {
			t.log.Warn("cannot write how the cancel of its delegations went into a task's metadata", "task_id", p, "error", err)
		}
	}
}

// clip bounds an error text.
func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
