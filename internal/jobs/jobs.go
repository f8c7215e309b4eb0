// Package jobs runs durable jobs: work kept in a store (the push outbox,
// the cancels the cascade owes) that a [Runner] claims when it is due,
// runs with bounded concurrency and whose outcome the job itself records
// there — done, due again at a later time (a retry with backoff), or given
// up.
//
// One round of the runner: Tick (the caller's housekeeping), Claim up to
// as many due jobs as there are free slots, start each in its own
// goroutine; then sleep until a job finishes, the earliest time a job is
// known to be due again, a wake-up (Notify: new work was stored), the poll
// interval (work other processes scheduled) or the end of Run's context.
// Jobs with the same key run one at a time, in the order they were
// claimed.
//
// A claim is never cut off half-way: it runs under a context that the end
// of Run does not cancel (bounded by ClaimTimeout). A claim that a store
// commits as Run stops would otherwise come back as an error with its jobs
// claimed, and they would wait out their lease; instead the jobs claimed
// but not started are given back (Release) before Run returns.
package jobs

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults for the zero values of [Options].
const (
	DefaultConcurrency  = 8
	DefaultPollInterval = 30 * time.Second
	DefaultClaimTimeout = 10 * time.Second
)

// retrySoon bounds the sleep after a failed claim or Tick.
const retrySoon = time.Second

// Result is how a job went, as far as the runner is concerned (the job has
// recorded its outcome in the store itself).
type Result struct {
	// Next is when the job's key has work due again — the retry time the
	// job was rescheduled at — so the runner wakes then. Zero: nothing to
	// wake for (done, given up, or abandoned because Run is stopping).
	Next time.Time
	// Hold keeps the key from running before Next even when Claim returns
	// its jobs as due: the outcome could not be recorded, so the store
	// cannot be trusted to say when the key is due.
	Hold bool
}

// Wake says that key has a job due at At.
type Wake[K comparable] struct {
	Key K
	At  time.Time
}

// Options configure a [Runner]: J is a claimed job, K the key whose jobs
// run one at a time. Claim, Run and Key are required; zero values get the
// documented defaults.
type Options[J any, K comparable] struct {
	// Claim takes up to limit jobs due at now. Its ctx is not canceled
	// when Run stops; it ends after ClaimTimeout.
	Claim func(ctx context.Context, now time.Time, limit int) ([]J, error)
	// Run does one job and records its outcome. Its ctx is canceled when
	// Run stops; a job then returns promptly (and gives back what it
	// holds, if it can).
	Run func(ctx context.Context, job J) Result
	// Key names the jobs that must run one at a time.
	Key func(job J) K
	// Leased says that Claim holds the jobs it returns for this runner
	// (until they are recorded, released or a lease lapses), so it does
	// not return them again: the runner claims only as many as it has
	// free slots, and a job claimed while its key is busy or held is kept
	// and run once the key is free. Without, Claim returns every due job
	// each time (a store one process uses): the runner asks for enough
	// to fill its free slots past the keys it is busy with, and drops
	// what it cannot start.
	Leased bool
	// MaxHold is how long a kept job (Leased) may wait for its key: one
	// claimed longer ago is dropped, and claimed afresh once its lease
	// lapses, so that a lease never lapses while the job runs. Zero: no
	// bound.
	MaxHold time.Duration
	// Release gives back a job claimed but not started (Leased) when Run
	// stops, so that it is due again at once instead of once its lease
	// lapses. Its ctx is not canceled; it ends after ClaimTimeout.
	Release func(ctx context.Context, job J)
	// Upcoming, when set, says when jobs that are not due yet become
	// due, so that the runner wakes for them (jobs left by an earlier
	// process, or scheduled by another one). It is asked on the first
	// round and whenever the runner slept a whole poll interval.
	Upcoming func(ctx context.Context, now time.Time) []Wake[K]
	// Tick, when set, is called at the start of every round, before the
	// claim; it reports false when its work failed and should be tried
	// again shortly.
	Tick func(ctx context.Context) bool
	// Concurrency is how many jobs run at once (default 8).
	Concurrency int
	// PollInterval is the longest the runner sleeps without claiming
	// (default 30 s): it bounds how late a job it was not told about
	// (Notify, Result.Next, Upcoming) starts.
	PollInterval time.Duration
	// ClaimTimeout bounds a claim and a release (default 10 s).
	ClaimTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger gets a line per failed claim (default: none), and
	// ClaimFailed is its message.
	Logger      hclog.Logger
	ClaimFailed string
}

// Runner claims, runs and schedules jobs; see the package documentation.
// Create it with New, run it with Run, wake it with Notify.
type Runner[J any, K comparable] struct {
	o       Options[J, K]
	wake    chan struct{}
	running atomic.Bool
	// sleeping, when set (by tests), is told how long each round sleeps
	// at most.
	sleeping func(wait time.Duration, polling bool)
}

// New checks o and returns a runner that is not yet running.
func New[J any, K comparable](o Options[J, K]) (*Runner[J, K], error) {
	if o.Claim == nil || o.Run == nil || o.Key == nil {
		return nil, errors.New("jobs: Options.Claim, Run and Key are required")
	}
	if o.Concurrency < 0 || o.PollInterval < 0 || o.ClaimTimeout < 0 || o.MaxHold < 0 {
		return nil, errors.New("jobs: negative Concurrency, PollInterval, ClaimTimeout or MaxHold; use 0 for the default")
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.ClaimTimeout == 0 {
		o.ClaimTimeout = DefaultClaimTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.ClaimFailed == "" {
		o.ClaimFailed = "cannot claim the jobs due; trying again shortly"
	}
	return &Runner[J, K]{o: o, wake: make(chan struct{}, 1)}, nil
}

// Notify wakes the runner because jobs were stored. It never blocks;
// calls made while a wake-up is pending are merged into it. It may be
// called before Run.
func (r *Runner[J, K]) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run claims and runs jobs until ctx is done, then waits for the jobs it
// started, gives back the ones it claimed and did not start, and returns
// nil. It may be called once.
func (r *Runner[J, K]) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("jobs: Run called twice")
	}
	l := &loop[J, K]{
		r:        r,
		inflight: make(map[K]struct{}),
		wakeAt:   make(map[K]time.Time),
		held:     make(map[K]time.Time),
		kept:     make(map[K]kept[J]),
		results:  make(chan finished[K], r.o.Concurrency),
		peek:     r.o.Upcoming != nil,
	}
	timer := time.NewTimer(r.o.PollInterval)
	defer timer.Stop()
	for ctx.Err() == nil {
		wait, polling := l.round(ctx)
		if r.sleeping != nil {
			r.sleeping(wait, polling)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
		case <-r.wake:
		case f := <-l.results:
			l.finish(f)
		case <-timer.C:
			l.peek = polling && r.o.Upcoming != nil
		}
	}
	for len(l.inflight) > 0 {
		l.finish(<-l.results)
	}
	for k, c := range l.kept {
		delete(l.kept, k)
		l.release(ctx, c.job)
	}
	return nil
}

// finished is what a job's goroutine reports.
type finished[K comparable] struct {
	key K
	res Result
}

// kept is a job claimed (Leased) while its key was busy or held.
type kept[J any] struct {
	job J
	at  time.Time
}

// loop is the state of one Run, owned by its goroutine.
type loop[J any, K comparable] struct {
	r *Runner[J, K]
	// inflight holds the keys with a job running.
	inflight map[K]struct{}
	// wakeAt holds when keys have jobs due; the earliest decides how long
	// the loop sleeps.
	wakeAt map[K]time.Time
	// held holds keys not to run before a time (Result.Hold).
	held map[K]time.Time
	// kept holds jobs claimed for this runner whose key was busy or held.
	kept    map[K]kept[J]
	results chan finished[K]
	// peek asks the next round to ask Upcoming.
	peek bool
}

// round starts jobs while there are free slots and returns how long to
// sleep at most; polling says the bound is the poll interval rather than
// a known due time.
func (l *loop[J, K]) round(ctx context.Context) (wait time.Duration, polling bool) {
	o := &l.r.o
	wait, polling = o.PollInterval, true
	if o.Tick != nil && !o.Tick(ctx) {
		wait, polling = min(wait, retrySoon), false
	}
	now := o.Now()
	if l.peek {
		l.peek = false
		for _, w := range o.Upcoming(ctx, now) {
			if _, busy := l.inflight[w.Key]; !busy && w.At.After(now) {
				l.wakeAt[w.Key] = w.At
			}
		}
	}
	for _, m := range []map[K]time.Time{l.wakeAt, l.held} {
		for k, t := range m {
			if !t.After(now) {
				delete(m, k)
			}
		}
	}
	free := o.Concurrency - len(l.inflight)
	// Jobs kept while their key was busy or held go first, once it is
	// neither.
	for k, c := range l.kept {
		if free == 0 {
			break
		}
		if !l.ready(k) {
			continue
		}
		delete(l.kept, k)
		if o.MaxHold > 0 && now.Sub(c.at) > o.MaxHold {
			continue // its lease may lapse while it runs: let it be claimed afresh
		}
		l.start(ctx, k, c.job)
		free--
	}
	if free > 0 && ctx.Err() == nil {
		limit := free
		if !o.Leased {
			// At most one job per key comes back, and the store returns
			// the busy and held keys' too.
			limit = o.Concurrency + len(l.held)
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ClaimTimeout)
		due, err := o.Claim(cctx, now, limit)
		cancel()
		switch {
		case ctx.Err() != nil:
			// Stopped during the claim: what it took is given back.
			for _, j := range due {
				l.release(ctx, j)
			}
			return 0, false
		case err != nil:
			o.Logger.Error(o.ClaimFailed, "error", err)
			wait, polling = min(wait, retrySoon), false
		}
		for _, j := range due {
			k := o.Key(j)
			switch {
			case free > 0 && l.ready(k):
				l.start(ctx, k, j)
				free--
			case o.Leased:
				// Claimed for us: it must not wait for its lease to
				// lapse.
				if old, ok := l.kept[k]; ok {
					l.release(ctx, old.job)
				}
				l.kept[k] = kept[J]{job: j, at: now}
			}
		}
	}
	for _, t := range l.wakeAt {
		if w := t.Sub(now); w < wait {
			wait, polling = w, false
		}
	}
	return max(wait, 0), polling
}

// ready reports whether a job of key k may start.
func (l *loop[J, K]) ready(k K) bool {
	_, busy := l.inflight[k]
	_, held := l.held[k]
	return !busy && !held
}

// start runs job in its own goroutine.
func (l *loop[J, K]) start(ctx context.Context, k K, job J) {
	l.inflight[k] = struct{}{}
	go func() { l.results <- finished[K]{key: k, res: l.r.o.Run(ctx, job)} }()
}

// finish frees the key of a finished job.
func (l *loop[J, K]) finish(f finished[K]) {
	delete(l.inflight, f.key)
	if f.res.Next.IsZero() {
		return
	}
	l.wakeAt[f.key] = f.res.Next
	if f.res.Hold {
		l.held[f.key] = f.res.Next
	}
}

// release gives back a claimed job that will not run.
func (l *loop[J, K]) release(ctx context.Context, job J) {
	o := &l.r.o
	if !o.Leased || o.Release == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ClaimTimeout)
	defer cancel()
	o.Release(rctx, job)
}
