package cascade

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/jobs"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxAttempts  = 12
	DefaultBaseBackoff  = time.Second
	DefaultMaxBackoff   = 5 * time.Minute
	DefaultTimeout      = 15 * time.Second
	DefaultConcurrency  = 8
	DefaultPollInterval = 10 * time.Second
)

// staleAfter is how long a parent the store does not hold may keep open
// delegations: its turn answered with a direct message, so the task was
// never stored, and its delegations are kept. Every staleAfter/4 the
// Tracker reads the open delegations of the store again and looks at each
// parent: its end may have gone unseen (saved by another replica sharing
// the store, or missed by the process).
const staleAfter = time.Hour

// Canceler sends the cancels: the outbound tools, which know the peers,
// their credentials and the SSRF guard.
type Canceler interface {
	// CancelDelegation asks peer (a configured peer name, or the URL the
	// delegation called) to cancel its task taskID, carrying the
	// delegation chain chainID in the request's metadata. It returns the
	// task's state after the request. A task that had already ended by
	// itself is no error: state says how it ended. An error says why the
	// task was not canceled; retry says whether asking again later may
	// help (the peer was unreachable, timed out, overloaded) rather than
	// not (it refused).
	CancelDelegation(ctx context.Context, peer, taskID, chainID string) (state a2a.TaskState, retry bool, err error)
}

// Annotator writes into a task's metadata (tasks.Manager.Annotate).
type Annotator interface {
	Annotate(ctx context.Context, taskID, key string, value any) error
}

// Store is the part of the store a Tracker uses: the delegations, and the
// tasks whose ends settle them.
type Store interface {
	store.Delegations
	store.Tasks
}

// Options configure a Tracker. Zero values get the documented defaults.
type Options struct {
	// Store keeps the delegations. Required.
	Store Store
	// OnFailure cancels the delegations of a task that failed or was
	// rejected too, not only of one that was canceled (the setting
	// cancel_on_failure, on by default).
	OnFailure bool
	// MaxAttempts is how many times one cancel is tried before it is
	// recorded as failed (default 12).
	MaxAttempts int
	// BaseBackoff is the wait after the first failed attempt; it doubles
	// with each further failure up to MaxBackoff (defaults 1 s and 5 min),
	// each wait drawn from its upper half.
	BaseBackoff, MaxBackoff time.Duration
	// Timeout bounds one CancelTask (default 15 s).
	Timeout time.Duration
	// Concurrency is how many cancels are in flight at most (default 8).
	Concurrency int
	// PollInterval is the longest the Tracker sleeps without looking for
	// cancels due (default 10 s): it bounds how late a retry scheduled by
	// an earlier process is sent.
	PollInterval time.Duration
	Logger       hclog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Tracker records delegations and cancels them when their parent ends. It
// is safe for concurrent use; Run does the work in the background.
type Tracker struct {
	store       Store
	onFailure   bool
	maxAttempts int
	base, max   time.Duration
	timeout     time.Duration
	concurrency int
	poll        time.Duration
	log         hclog.Logger
	now         func() time.Time

	runner *jobs.Runner[store.Delegation, int64]
	// canceler and annotator are Run's; lastSweep is when Run last
	// swept the open delegations (owned by the runner's goroutine).
	canceler  Canceler
	annotator Annotator
	lastSweep time.Time

	mu sync.Mutex
	// open holds the parents with open delegations and since when they
	// have been known, so that the end of a task without delegations
	// costs a map lookup.
	open map[string]time.Time
	// ended are ends Ended was told about that Run has not handled.
	ended []end
	// dirty are parents whose metadata Run must bring up to date.
	dirty   map[string]struct{}
	running bool
}

// end is a parent task's end.
type end struct {
	task  string
	state a2a.TaskState
}

// New checks opts and returns a Tracker that is not yet running.
func New(opts Options) (*Tracker, error) {
	if opts.Store == nil {
		return nil, errors.New("cascade: Options.Store is required")
	}
	if opts.MaxAttempts < 0 || opts.BaseBackoff < 0 || opts.MaxBackoff < 0 || opts.Timeout < 0 || opts.Concurrency < 0 || opts.PollInterval < 0 {
		return nil, fmt.Errorf("cascade: negative option in MaxAttempts=%d BaseBackoff=%s MaxBackoff=%s Timeout=%s Concurrency=%d PollInterval=%s; use 0 for the default",
			opts.MaxAttempts, opts.BaseBackoff, opts.MaxBackoff, opts.Timeout, opts.Concurrency, opts.PollInterval)
	}
	t := &Tracker{
		store:       opts.Store,
		onFailure:   opts.OnFailure,
		maxAttempts: orDefault(opts.MaxAttempts, DefaultMaxAttempts),
		base:        orDefault(opts.BaseBackoff, DefaultBaseBackoff),
		max:         orDefault(opts.MaxBackoff, DefaultMaxBackoff),
		timeout:     orDefault(opts.Timeout, DefaultTimeout),
		concurrency: orDefault(opts.Concurrency, DefaultConcurrency),
		poll:        orDefault(opts.PollInterval, DefaultPollInterval),
		log:         opts.Logger,
		now:         opts.Now,
		open:        map[string]time.Time{},
		dirty:       map[string]struct{}{},
	}
	if t.max < t.base {
		return nil, fmt.Errorf("cascade: MaxBackoff %s is shorter than BaseBackoff %s", t.max, t.base)
	}
	if t.log == nil {
		t.log = hclog.NewNullLogger()
	}
	if t.now == nil {
		t.now = time.Now
	}
	var err error
	if t.runner, err = t.newRunner(); err != nil {
		return nil, fmt.Errorf("cascade: %w", err)
	}
	return t, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Load reads the parents that had open delegations when the plugin last
// stopped. Call it before the task manager starts (which fails the tasks
// the previous process left running, and so ends them): those ends, and
// any end the previous process did not get to, then reach their
// delegations.
func (t *Tracker) Load(ctx context.Context) error {
	parents, err := t.store.OpenDelegationParents(ctx)
	if err != nil {
		return fmt.Errorf("cascade: reading the open delegations: %w", err)
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range parents {
		if _, ok := t.open[p]; !ok {
			t.open[p] = now
		}
	}
	return nil
}

// Record keeps d, a remote task a turn started or continued while it
// answered d.ParentTaskID, so that the task's end can reach it. When the
// parent has already ended — it was canceled while the call was on its
// way — the cancel is due at once.
func (t *Tracker) Record(ctx context.Context, d store.Delegation) error {
	now := t.now()
	d.ID, d.State, d.CreatedAt, d.UpdatedAt = 0, store.DelegationOpen, now, now
	if err := t.store.AddDelegation(ctx, &d); err != nil {
		return err
	}
	t.mu.Lock()
	if _, ok := t.open[d.ParentTaskID]; !ok {
		t.open[d.ParentTaskID] = now
	}
	t.mu.Unlock()
	// Read after the delegation is stored and known: an end saved before
	// this read is seen here; one saved after it finds the parent open.
	rec, err := t.store.GetTask(ctx, d.ParentTaskID, "")
	if err == nil && rec.Task.Status.State.Terminal() {
		return t.end(ctx, d.ParentTaskID, rec.Task.Status.State)
	}
	return nil
}

// Ended tells the Tracker that a task reached a final state. It never
// blocks and costs a map lookup for a task without delegations: it is
// called from the task manager's Watch, with the task locked.
func (t *Tracker) Ended(taskID string, state a2a.TaskState) {
	t.mu.Lock()
	_, ok := t.open[taskID]
	if ok {
		t.ended = append(t.ended, end{taskID, state})
	}
	t.mu.Unlock()
	if ok {
		t.notify()
	}
}

// cancels reports whether a parent ending in state cancels its
// delegations.
func (t *Tracker) cancels(state a2a.TaskState) bool {
	switch state {
	case a2a.TaskStateCanceled:
		return true
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		return t.onFailure
	}
	return false
}

// end settles the open delegations of a parent that ended in state: due
// to cancel, or kept.
func (t *Tracker) end(ctx context.Context, parent string, state a2a.TaskState) error {
	cancel := t.cancels(state)
	n, err := t.store.EndDelegations(ctx, parent, cancel, state.String(), t.now())
	if err != nil {
		return fmt.Errorf("cascade: ending the delegations of task %s: %w", parent, err)
	}
	t.mu.Lock()
	delete(t.open, parent)
	if cancel && n > 0 {
		t.dirty[parent] = struct{}{}
	}
	t.mu.Unlock()
	if cancel && n > 0 {
		t.log.Info("canceling the remote tasks an ended task delegated", "task_id", parent, "state", state.String(), "delegations", n)
		t.notify()
	}
	return nil
}

// notify wakes Run.
func (t *Tracker) notify() { t.runner.Notify() }
