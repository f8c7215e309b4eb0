package push

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/jobs"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// Defaults for the zero values of [Options].
const (
	DefaultMaxAttempts  = 12
	DefaultBaseBackoff  = time.Second
	DefaultMaxBackoff   = 5 * time.Minute
	DefaultTimeout      = 15 * time.Second
	DefaultConcurrency  = 8
	DefaultPollInterval = 30 * time.Second
)

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("push: dispatcher closed")

// Observer is told about delivery outcomes, for metrics. Calls must be
// fast and must not block.
type Observer interface {
	// Delivered reports a notification the webhook acknowledged (2xx) and
	// how long that successful POST took.
	Delivered(d time.Duration)
	// Retried reports a failed attempt that will be tried again.
	Retried()
	// GaveUp reports a notification dropped without being delivered: a
	// refused URL, a 4xx answer, or MaxAttempts failed attempts.
	GaveUp()
}

// Store is the part of the store a Dispatcher uses: the outbox it drains
// and the push configs its deliveries name.
type Store interface {
	store.Outbox
	store.PushConfigs
}

// Options configure a [Dispatcher]. Zero values get the documented
// defaults.
type Options struct {
	// Store holds the outbox and the push configs. Required.
	Store Store
	// Logger receives one line per failed attempt and give-up (and debug
	// lines per delivery). Default: no logging.
	Logger hclog.Logger
	// Secret is the HMAC-SHA256 key of X-A2A-Signature: A2A_PUSH_SECRET,
	// or the key generated into the data directory (never an inbound
	// credential). Empty means notifications are sent unsigned (New logs
	// a warning).
	Secret []byte
	// Guard checks every webhook URL at delivery time and every address
	// the POST connects to. Nil means the zero SSRFGuard, the strictest.
	Guard *security.SSRFGuard
	// MaxAttempts is how many POSTs a notification gets before it is
	// given up (default 12).
	MaxAttempts int
	// BaseBackoff is the delay after the first failed attempt; it doubles
	// with every further failure up to MaxBackoff (defaults 1 s and 5 min).
	// Each delay is drawn uniformly from its upper half (jitter).
	BaseBackoff, MaxBackoff time.Duration
	// Timeout bounds one POST, from connecting to reading the status
	// (default 15 s).
	Timeout time.Duration
	// Concurrency is how many webhooks are delivered to in parallel
	// (default 8). Notifications for one config are always sent one at a
	// time, in order.
	Concurrency int
	// PollInterval is the longest the dispatcher sleeps without looking
	// at the outbox (default 30 s). It only matters for deliveries it was
	// not told about: those scheduled by another process, or enqueued
	// without Notify.
	PollInterval time.Duration
	// Now is the clock used for timestamps and schedules (default
	// time.Now).
	Now func() time.Time
	// HTTPClient replaces the client built around Guard (for tests). Its
	// redirect policy is replaced by the dispatcher's; its Transport should
	// dial through Guard.
	HTTPClient *http.Client
	// Observer, when set, is told about every outcome.
	Observer Observer
	// Tracer records a span per POST (nil: export off). Either way a
	// notification whose task's turn had a W3C trace continues it.
	Tracer *tracing.Tracer
	// Audit, when set, gets one outbound record per delivery attempt:
	// method "webhook", the webhook's host as the peer (never its path or
	// query, which may carry credentials), the task, the outcome, the
	// HTTP status, the sizes and the duration.
	Audit *security.AuditLog
	// Replica, when set, says that other replicas' dispatchers share the
	// outbox (store.Postgres): deliveries are claimed in this replica's
	// name with Store.ClaimDeliveries, so each is sent by one replica at
	// a time. Empty: this dispatcher is the only one.
	Replica string
	// ClaimLease is how long a claim lasts: if this replica dies while it
	// holds a delivery, another replica sends it once the claim lapses.
	// It must exceed Timeout, so that a POST in flight is never sent twice
	// by two live replicas (default: 2 × Timeout + 10 s).
	ClaimLease time.Duration
}

// Dispatcher delivers the push outbox to webhooks. Create it with New,
// run it with Run, wake it with Notify, stop it with Close (or by
// cancelling Run's context). What it has not delivered stays in the
// outbox for the next run.
type Dispatcher struct {
	store       Store
	log         hclog.Logger
	secret      []byte
	guard       *security.SSRFGuard
	client      *http.Client
	ownClient   bool
	obs         Observer
	tracer      *tracing.Tracer
	audit       *security.AuditLog
	now         func() time.Time
	maxAttempts int
	base, max   time.Duration
	timeout     time.Duration
	concurrency int
	poll        time.Duration
	replica     string
	claimLease  time.Duration

	runner *jobs.Runner[store.Delivery, configKey]
	// closing is cancelled by Close; Run's context is derived from it.
	closing context.Context
	stop    context.CancelFunc

	mu      sync.Mutex
	running bool
	closed  bool
	done    chan struct{}
}

// The task manager wakes the dispatcher through this method.
var _ interface{ Notify() } = (*Dispatcher)(nil)

// New checks opts and returns a dispatcher that is not yet running.
func New(opts Options) (*Dispatcher, error) {
	if opts.Store == nil {
		return nil, errors.New("push: Options.Store is required")
	}
	if opts.MaxAttempts < 0 || opts.BaseBackoff < 0 || opts.MaxBackoff < 0 || opts.Timeout < 0 || opts.Concurrency < 0 || opts.PollInterval < 0 {
		return nil, fmt.Errorf("push: negative option in MaxAttempts=%d BaseBackoff=%s MaxBackoff=%s Timeout=%s Concurrency=%d PollInterval=%s; use 0 for the default",
			opts.MaxAttempts, opts.BaseBackoff, opts.MaxBackoff, opts.Timeout, opts.Concurrency, opts.PollInterval)
	}
	d := &Dispatcher{
		store:       opts.Store,
		log:         opts.Logger,
		secret:      append([]byte(nil), opts.Secret...),
		guard:       opts.Guard,
		obs:         opts.Observer,
		tracer:      opts.Tracer,
		audit:       opts.Audit,
		now:         opts.Now,
		maxAttempts: orDefault(opts.MaxAttempts, DefaultMaxAttempts),
		base:        orDefault(opts.BaseBackoff, DefaultBaseBackoff),
		max:         orDefault(opts.MaxBackoff, DefaultMaxBackoff),
		timeout:     orDefault(opts.Timeout, DefaultTimeout),
		concurrency: orDefault(opts.Concurrency, DefaultConcurrency),
		poll:        orDefault(opts.PollInterval, DefaultPollInterval),
		replica:     opts.Replica,
		claimLease:  opts.ClaimLease,
		done:        make(chan struct{}),
	}
	if d.max < d.base {
		return nil, fmt.Errorf("push: MaxBackoff %s is shorter than BaseBackoff %s", d.max, d.base)
	}
	if d.claimLease <= 0 {
		d.claimLease = 2*d.timeout + 10*time.Second
	}
	if d.replica != "" && d.claimLease <= d.timeout {
		return nil, fmt.Errorf("push: ClaimLease %s must be longer than Timeout %s, or a slow POST could be sent again by another replica", d.claimLease, d.timeout)
	}
	if d.log == nil {
		d.log = hclog.NewNullLogger()
	}
	if d.guard == nil {
		d.guard = &security.SSRFGuard{}
	}
	if err := d.guard.Validate(); err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	if d.obs == nil {
		d.obs = nopObserver{}
	}
	if d.now == nil {
		d.now = time.Now
	}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		d.client = &c
	} else {
		t := d.guard.Transport()
		t.MaxIdleConnsPerHost = d.concurrency
		d.client = &http.Client{Transport: t}
		d.ownClient = true
	}
	d.client.CheckRedirect = d.checkRedirect
	var err error
	if d.runner, err = d.newRunner(); err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	d.closing, d.stop = context.WithCancel(context.Background())
	if len(d.secret) == 0 {
		d.log.Warn("no push secret is set: webhook notifications are sent without " +
			HeaderSignature + ", so receivers cannot check that they come from this agent")
	}
	return d, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Notify wakes the dispatcher because deliveries were added to the outbox.
// It never blocks; calls made while a wake-up is pending are merged into
// it.
func (d *Dispatcher) Notify() { d.runner.Notify() }

// Close stops Run, waits for it to return (in-flight POSTs are abandoned
// and stay in the outbox) and releases idle connections. It is safe to
// call more than once and without Run.
func (d *Dispatcher) Close() error {
	d.mu.Lock()
	d.closed = true
	running := d.running
	d.mu.Unlock()
	d.stop()
	if running {
		<-d.done
	}
	if d.ownClient {
		d.client.CloseIdleConnections()
	}
	return nil
}

// Run delivers the outbox until ctx is cancelled or Close is called, and
// then returns nil once every POST it started has ended. It may be called
// once.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return ErrClosed
	case d.running:
		d.mu.Unlock()
		return errors.New("push: Run called twice")
	}
	d.running = true
	d.mu.Unlock()
	defer close(d.done)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(d.closing, cancel)()

	return d.runner.Run(ctx)
}

// configKey names one webhook: deliveries with the same key go out one at
// a time, in id order.
type configKey struct{ task, config string }

func keyOf(d *store.Delivery) configKey { return configKey{d.TaskID, d.ConfigID} }

// peekHorizon is how far ahead a peek looks, and peekLimit how many
// configs it learns about.
const (
	peekHorizon = 10 * 365 * 24 * time.Hour
	peekLimit   = 1000
)

// newRunner builds the job runner that drains the outbox: a job is a
// delivery, its key the webhook's config.
func (d *Dispatcher) newRunner() (*jobs.Runner[store.Delivery, configKey], error) {
	o := jobs.Options[store.Delivery, configKey]{
		Claim: func(ctx context.Context, now time.Time, limit int) ([]store.Delivery, error) {
			return d.store.ClaimDeliveries(ctx, d.replica, now, d.claimLease, limit)
		},
		Run: func(ctx context.Context, del store.Delivery) jobs.Result {
			next, pause := d.deliver(ctx, &del)
			return jobs.Result{Next: next, Hold: pause}
		},
		Key:          func(del store.Delivery) configKey { return keyOf(&del) },
		Upcoming:     d.upcoming,
		Concurrency:  d.concurrency,
		PollInterval: d.poll,
		Now:          d.now,
		Logger:       d.log,
		ClaimFailed:  "cannot read the push outbox; trying again shortly",
	}
	if d.replica != "" {
		// A shared outbox holds what it returns for this replica until it
		// is sent: a delivery claimed while its config is busy goes out
		// next (unless the claim may lapse mid-POST), and one claimed as
		// the dispatcher stops is given back as it was.
		o.Leased, o.MaxHold = true, d.claimLease/2
		o.Release = func(ctx context.Context, del store.Delivery) { d.giveBack(ctx, &del) }
	}
	return jobs.New(o)
}

// upcoming tells the runner when configs whose next delivery is not yet
// due become due (deliveries left by a previous process, or scheduled by
// another one).
func (d *Dispatcher) upcoming(ctx context.Context, now time.Time) []jobs.Wake[configKey] {
	pending, err := d.store.DueDeliveries(ctx, now.Add(peekHorizon), peekLimit)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("cannot read the push outbox", "error", err)
		}
		return nil
	}
	wakes := make([]jobs.Wake[configKey], len(pending))
	for i := range pending {
		wakes[i] = jobs.Wake[configKey]{Key: keyOf(&pending[i]), At: pending[i].NextTry}
	}
	return wakes
}

type nopObserver struct{}

func (nopObserver) Delivered(time.Duration) {}
func (nopObserver) Retried()                {}
func (nopObserver) GaveUp()                 {}
