package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/testclock"
)

// deadline bounds every wait for the runner; it guards against hangs and
// is never an assertion on how long something took.
const deadline = 30 * time.Second

// job is a fake job: an id, and the key whose jobs run one at a time.
type job struct {
	id  int
	key string
}

// source is a fake durable store of jobs, read through a fake clock. Its
// claims return, oldest first, the first pending job of each key that is
// due; leased, it also holds what it returns until the job is recorded
// or released.
type source struct {
	clock  *testclock.Clock
	leased bool

	mu      sync.Mutex
	pending map[int]pendingJob
	held    map[int]bool
	claims  int
	events  []string
	// claimed is told the number of every claim, when it ends.
	claimed chan int
}

type pendingJob struct {
	key string
	due time.Time
}

func newSource(leased bool) *source {
	return &source{
		clock:   testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		leased:  leased,
		pending: map[int]pendingJob{},
		held:    map[int]bool{},
		claimed: make(chan int, 100),
	}
}

func (s *source) add(id int, key string, due time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[id] = pendingJob{key: key, due: due}
}

func (s *source) event(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, fmt.Sprintf(format, args...))
}

func (s *source) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

func (s *source) claim(ctx context.Context, now time.Time, limit int) ([]job, error) {
	s.mu.Lock()
	defer func() {
		s.claims++
		n := s.claims
		s.mu.Unlock()
		s.claimed <- n
	}()
	ids := make([]int, 0, len(s.pending))
	for id := range s.pending {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	first := map[string]bool{}
	var out []job
	for _, id := range ids {
		p := s.pending[id]
		if first[p.key] {
			continue
		}
		first[p.key] = true
		if p.due.After(now) || s.held[id] || len(out) == limit {
			continue
		}
		if s.leased {
			s.held[id] = true
		}
		out = append(out, job{id, p.key})
	}
	return out, nil
}

// done records a finished job, and retry one due again at next.
func (s *source) done(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, id)
	delete(s.held, id)
}

func (s *source) retry(id int, next time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[id]
	p.due = next
	s.pending[id] = p
	delete(s.held, id)
}

func (s *source) release(ctx context.Context, j job) {
	s.event("release %d", j.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, j.id)
}

func (s *source) heldIDs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int
	for id := range s.held {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

func (s *source) left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// options are a runner's options on s, with run as the job.
func (s *source) options(run func(ctx context.Context, j job) Result) Options[job, string] {
	return Options[job, string]{
		Claim:        s.claim,
		Run:          run,
		Key:          func(j job) string { return j.key },
		Leased:       s.leased,
		Release:      s.release,
		Now:          s.clock.Now,
		PollInterval: time.Hour,
	}
}

// start runs r until the test ends or stop is called; stop returns once
// Run has.
func start(t *testing.T, r *Runner[job, string]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-ran:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(deadline):
				t.Error("Run did not return after its context was canceled")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitFor receives from ch or fails the test.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("still waiting after %s for %s", deadline, what)
		panic("unreachable")
	}
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("still not the case after %s: %s", deadline, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// sleeps records how long each round of r sleeps at most.
type sleeps struct {
	ch chan time.Duration
}

func watchSleeps(r *Runner[job, string]) *sleeps {
	s := &sleeps{ch: make(chan time.Duration, 1000)}
	r.sleeping = func(wait time.Duration, polling bool) { s.ch <- wait }
	return s
}

// until waits for a round that sleeps want.
func (s *sleeps) until(t *testing.T, want time.Duration) {
	t.Helper()
	end := time.After(deadline)
	var seen []time.Duration
	for {
		select {
		case w := <-s.ch:
			if w == want {
				return
			}
			seen = append(seen, w)
		case <-end:
			t.Fatalf("no round slept %s; the rounds slept %v", want, seen)
		}
	}
}

// TestAFailedJobIsClaimedAgainAtTheTimeItSays: a job that fails is
// rescheduled; the runner sleeps until then, not before claims it again,
// and a job that succeeds is not run again.
func TestAFailedJobIsClaimedAgainAtTheTimeItSays(t *testing.T) {
	src := newSource(false)
	t0 := src.clock.Now()
	src.add(1, "a", t0)
	ran := make(chan int, 10)
	r, err := New(src.options(func(ctx context.Context, j job) Result {
		src.event("run %d at +%s", j.id, src.clock.Now().Sub(t0))
		defer func() { ran <- j.id }()
		if src.clock.Now().Before(t0.Add(42 * time.Second)) {
			next := src.clock.Now().Add(42 * time.Second)
			src.retry(j.id, next)
			return Result{Next: next}
		}
		src.done(j.id)
		return Result{}
	}))
	if err != nil {
		t.Fatal(err)
	}
	sl := watchSleeps(r)
	start(t, r)
	waitFor(t, ran, "the first attempt")
	sl.until(t, 42*time.Second)
	// Woken before the retry is due: the job is not claimed.
	r.Notify()
	n := waitFor(t, src.claimed, "a claim")
	for n < 3 {
		n = waitFor(t, src.claimed, "a claim")
	}
	src.clock.Advance(42 * time.Second)
	r.Notify()
	waitFor(t, ran, "the retry")
	eventually(t, "the job is done", func() bool { return src.left() == 0 })
	// With nothing known to be due, the runner polls.
	sl.until(t, time.Hour)
	if got, want := src.log(), []string{"run 1 at +0s", "run 1 at +42s"}; !slices.Equal(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
}

// TestJobsRunBoundedAndOneAtATimePerKey: at most Concurrency jobs run at
// once, never two of one key, and a key's jobs run in order.
func TestJobsRunBoundedAndOneAtATimePerKey(t *testing.T) {
	for _, leased := range []bool{false, true} {
		t.Run(fmt.Sprintf("leased=%v", leased), func(t *testing.T) {
			src := newSource(leased)
			now := src.clock.Now()
			id := 0
			for _, key := range []string{"a", "b", "c", "d"} {
				for range 5 {
					id++
					src.add(id, key, now)
				}
			}
			var (
				mu            sync.Mutex
				running, most int
				busy          = map[string]bool{}
				order         = map[string][]int{}
				violations    []string
				all           = make(chan struct{})
				finishedCount int
				totalJobs     = id
			)
			o := src.options(func(ctx context.Context, j job) Result {
				mu.Lock()
				running++
				most = max(most, running)
				if busy[j.key] {
					violations = append(violations, fmt.Sprintf("two jobs of %s at once", j.key))
				}
				busy[j.key] = true
				order[j.key] = append(order[j.key], j.id)
				mu.Unlock()
				time.Sleep(time.Millisecond) // let the others overlap
				src.done(j.id)
				mu.Lock()
				running--
				busy[j.key] = false
				finishedCount++
				if finishedCount == totalJobs {
					close(all)
				}
				mu.Unlock()
				return Result{}
			})
			o.Concurrency = 2
			r, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			start(t, r)
			// A finished job frees its slot and wakes the runner, which
			// claims the key's next job: no Notify needed.
			waitFor(t, all, "every job to run")
			mu.Lock()
			defer mu.Unlock()
			if most > 2 {
				t.Errorf("%d jobs ran at once, want at most 2", most)
			}
			if len(violations) > 0 {
				t.Error(violations)
			}
			for key, ids := range order {
				if !slices.IsSorted(ids) || len(ids) != 5 {
					t.Errorf("%s's jobs ran as %v, want 5 in order", key, ids)
				}
			}
		})
	}
}

// TestAHeldKeyWaitsForItsTime: a job whose outcome could not be recorded
// holds its key back until the time it said, although the store still
// returns it as due.
func TestAHeldKeyWaitsForItsTime(t *testing.T) {
	src := newSource(false)
	t0 := src.clock.Now()
	src.add(1, "a", t0)
	o := src.options(func(ctx context.Context, j job) Result {
		src.event("run %d at +%s", j.id, src.clock.Now().Sub(t0))
		if src.clock.Now().Before(t0.Add(time.Minute)) {
			// The store failed: the job stays due there.
			return Result{Next: src.clock.Now().Add(time.Minute), Hold: true}
		}
		src.done(j.id)
		return Result{}
	})
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	sl := watchSleeps(r)
	start(t, r)
	sl.until(t, time.Minute)
	// Claimed again while held: not run.
	for range 3 {
		r.Notify()
		sl.until(t, time.Minute)
	}
	src.clock.Advance(time.Minute)
	r.Notify()
	eventually(t, "the job is done", func() bool { return src.left() == 0 })
	if got, want := src.log(), []string{"run 1 at +0s", "run 1 at +1m0s"}; !slices.Equal(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
}

// TestUpcomingJobsWakeTheRunner: the runner sleeps until the earliest
// time Upcoming says a job becomes due, then until the next.
func TestUpcomingJobsWakeTheRunner(t *testing.T) {
	src := newSource(false)
	t0 := src.clock.Now()
	o := src.options(func(ctx context.Context, j job) Result { src.done(j.id); return Result{} })
	o.PollInterval = 2 * time.Hour
	o.Upcoming = func(ctx context.Context, now time.Time) []Wake[string] {
		return []Wake[string]{{"a", t0.Add(time.Hour)}, {"b", t0.Add(90 * time.Minute)}, {"c", t0.Add(-time.Minute)}}
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	sl := watchSleeps(r)
	start(t, r)
	sl.until(t, time.Hour)
	src.clock.Advance(time.Hour)
	r.Notify()
	sl.until(t, 30*time.Minute)
}

// TestUpcomingIsAskedAgainAfterAPoll: after sleeping a whole poll
// interval, the runner asks Upcoming again (work another process
// scheduled).
func TestUpcomingIsAskedAgainAfterAPoll(t *testing.T) {
	src := newSource(false)
	asked := make(chan struct{}, 100)
	o := src.options(func(ctx context.Context, j job) Result { return Result{} })
	o.PollInterval = 5 * time.Millisecond // the poll fires for real
	o.Upcoming = func(ctx context.Context, now time.Time) []Wake[string] {
		asked <- struct{}{}
		return nil
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	waitFor(t, asked, "the first question")
	waitFor(t, asked, "the question after a poll")
}

// TestAStopDuringAClaimGivesBackWhatItTook: a claim under way when Run
// stops is not cut off; what it took is given back, not left held until
// a lease lapses, and not run.
func TestAStopDuringAClaimGivesBackWhatItTook(t *testing.T) {
	src := newSource(true)
	src.add(1, "a", src.clock.Now())
	src.add(2, "b", src.clock.Now())
	claiming, proceed := make(chan struct{}), make(chan struct{})
	o := src.options(func(ctx context.Context, j job) Result {
		src.event("run %d", j.id)
		return Result{}
	})
	o.Claim = func(ctx context.Context, now time.Time, limit int) ([]job, error) {
		close(claiming)
		<-proceed
		// A store commits the claim, then sees its context canceled (as
		// pgx does when the query's answer and the cancel cross).
		due, _ := src.claim(ctx, now, limit)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return due, nil
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	<-claiming
	cancel() // the runner stops while its claim is under way
	close(proceed)
	if err := waitFor(t, ran, "Run to return"); err != nil {
		t.Errorf("Run: %v", err)
	}
	if held := src.heldIDs(); len(held) != 0 {
		t.Errorf("jobs %v are still held by a runner that stopped", held)
	}
	got := src.log()
	sort.Strings(got)
	if want := []string{"release 1", "release 2"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q (given back, not run)", got, want)
	}
}

// TestAJobClaimedWhileItsKeyIsBusyRunsNextOrIsGivenBack: with leases, a
// job claimed while another of its key runs is kept and runs when the key
// is free, without another claim; one still kept when Run stops is given
// back.
func TestAJobClaimedWhileItsKeyIsBusyRunsNextOrIsGivenBack(t *testing.T) {
	src := newSource(true)
	now := src.clock.Now()
	src.add(1, "a", now)
	gate := map[int]chan struct{}{1: make(chan struct{}), 2: make(chan struct{})}
	started := make(chan int, 10)
	o := src.options(func(ctx context.Context, j job) Result {
		src.event("run %d", j.id)
		started <- j.id
		select {
		case <-gate[j.id]:
			src.done(j.id)
		case <-ctx.Done():
			src.event("abandon %d", j.id)
			src.release(ctx, j)
		}
		return Result{}
	})
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	if id := waitFor(t, started, "job 1"); id != 1 {
		t.Fatalf("job %d started, want 1", id)
	}
	// Job 2 of the same key becomes the store's first pending one of a
	// (as when a shared outbox returns a config's next delivery before
	// its previous one's worker has reported back).
	src.mu.Lock()
	delete(src.pending, 1)
	src.pending[2] = pendingJob{key: "a", due: now}
	src.mu.Unlock()
	src.add(3, "a", now)
	r.Notify()
	eventually(t, "job 2 is claimed", func() bool { return slices.Contains(src.heldIDs(), 2) })
	close(gate[1])
	if id := waitFor(t, started, "job 2"); id != 2 {
		t.Fatalf("job %d started, want 2", id)
	}
	close(gate[2])
	if id := waitFor(t, started, "job 3"); id != 3 {
		t.Fatalf("job %d started, want 3", id)
	}
	// Job 4 is claimed while job 3 runs, then the runner stops.
	src.mu.Lock()
	delete(src.pending, 3)
	src.pending[4] = pendingJob{key: "a", due: now}
	src.mu.Unlock()
	r.Notify()
	eventually(t, "job 4 is claimed", func() bool { return slices.Contains(src.heldIDs(), 4) })
	stop()
	if held := src.heldIDs(); len(held) != 0 {
		t.Errorf("jobs %v are still held by a runner that stopped", held)
	}
	if got, want := src.log(), []string{"run 1", "run 2", "run 3", "abandon 3", "release 3", "release 4"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestRunWaitsForItsJobs: Run returns only after the jobs it started
// have returned, and claims nothing more once stopped.
func TestRunWaitsForItsJobs(t *testing.T) {
	src := newSource(false)
	src.add(1, "a", src.clock.Now())
	started := make(chan struct{})
	o := src.options(func(ctx context.Context, j job) Result {
		close(started)
		<-ctx.Done()
		time.Sleep(5 * time.Millisecond)
		src.event("job returns")
		return Result{}
	})
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	<-started
	stop()
	src.event("Run returned")
	if got, want := src.log(), []string{"job returns", "Run returned"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a second Run: %v, want an error", err)
	}
}

// TestAFailedClaimIsTriedAgainShortly: a claim error is logged and the
// runner sleeps at most a second before the next.
func TestAFailedClaimIsTriedAgainShortly(t *testing.T) {
	src := newSource(false)
	o := src.options(func(ctx context.Context, j job) Result { return Result{} })
	o.Claim = func(ctx context.Context, now time.Time, limit int) ([]job, error) {
		return nil, errors.New("store down")
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	sl := watchSleeps(r)
	start(t, r)
	sl.until(t, retrySoon)
}

// TestATickThatFailsShortensTheSleep: Tick runs before each claim, and a
// failed one is tried again shortly.
func TestATickThatFailsShortensTheSleep(t *testing.T) {
	src := newSource(false)
	src.add(1, "a", src.clock.Now())
	o := src.options(func(ctx context.Context, j job) Result { src.done(j.id); return Result{} })
	claim := o.Claim
	o.Claim = func(ctx context.Context, now time.Time, limit int) ([]job, error) {
		src.event("claim")
		return claim(ctx, now, limit)
	}
	o.Tick = func(ctx context.Context) bool {
		src.event("tick")
		return false // as when an end cannot be stored
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	sl := watchSleeps(r)
	stop := start(t, r)
	sl.until(t, retrySoon)
	stop()
	if got := src.log(); len(got) < 2 || got[0] != "tick" || got[1] != "claim" {
		t.Errorf("events %q, want a tick then a claim", got)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	src := newSource(false)
	ok := src.options(func(ctx context.Context, j job) Result { return Result{} })
	for name, edit := range map[string]func(*Options[job, string]){
		"no Claim":             func(o *Options[job, string]) { o.Claim = nil },
		"no Run":               func(o *Options[job, string]) { o.Run = nil },
		"no Key":               func(o *Options[job, string]) { o.Key = nil },
		"negative Concurrency": func(o *Options[job, string]) { o.Concurrency = -1 },
		"negative poll":        func(o *Options[job, string]) { o.PollInterval = -time.Second },
	} {
		o := ok
		edit(&o)
		if _, err := New(o); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := New(ok); err != nil {
		t.Errorf("good options: %v", err)
	}
}

// TestAJobKeptTooLongIsLeftToItsLease: a job kept for its busy key longer
// than MaxHold is not run (its lease could lapse while it runs, and
// another runner take it) nor given back; it is left for a fresh claim
// once its lease lapses.
func TestAJobKeptTooLongIsLeftToItsLease(t *testing.T) {
	src := newSource(true)
	now := src.clock.Now()
	src.add(1, "a", now)
	gate := make(chan struct{})
	started := make(chan int, 10)
	o := src.options(func(ctx context.Context, j job) Result {
		src.event("run %d", j.id)
		started <- j.id
		<-gate
		src.done(j.id)
		return Result{}
	})
	o.MaxHold = time.Minute
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	waitFor(t, started, "job 1")
	src.mu.Lock()
	delete(src.pending, 1)
	src.pending[2] = pendingJob{key: "a", due: now}
	src.mu.Unlock()
	r.Notify()
	eventually(t, "job 2 is claimed", func() bool { return slices.Contains(src.heldIDs(), 2) })
	src.clock.Advance(2 * time.Minute)
	claims := func() int { src.mu.Lock(); defer src.mu.Unlock(); return src.claims }
	before := claims()
	close(gate)
	// The round after job 1 decides about job 2, then claims.
	eventually(t, "a claim after job 1", func() bool { return claims() > before })
	stop() // Run returns after the jobs it started
	if got, want := src.log(), []string{"run 1"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if got := src.heldIDs(); !slices.Equal(got, []int{2}) {
		t.Errorf("held %v, want job 2 left to its lease", got)
	}
}
