// Package cluster lets several replicas of the A2A plugin — each launched
// by its own host, all on one PostgreSQL database, behind a load balancer —
// serve every task from any replica. It implements tasks.Cluster on
// store.Postgres:
//
//   - Leases. Each replica has a row in the replicas table whose lease
//     (database clock) it renews every Lease/3. Every task a replica saves
//     records the replica (tasks.replica). When a replica's lease has
//     expired, any other replica fails that replica's running tasks
//     (SUBMITTED or WORKING; tasks waiting for their client keep waiting)
//     with tasks.OrphanReason, which tells their streams and webhooks. Two
//     replicas racing to do so, or a replica that was only cut off and
//     comes back, are kept apart by the store's fence: a finished task is
//     never overwritten by another replica.
//   - Events. A save publishes its events in the same transaction: while a
//     replica follows the task (a task_watch row), they are written to
//     task_events with the task's sequence number and the followers are
//     woken by NOTIFY. A follower registers its watch, then reads the task
//     (waiting for a save in progress), then reads the events numbered
//     after that snapshot whenever it is woken — so it gets every event, in
//     order, with none lost between snapshot and subscription. Nothing is
//     written or notified for tasks nobody follows elsewhere, which keeps
//     the common path (streams on the replica that runs the task) as cheap
//     as on one machine.
//   - Forwarding. A cancel (or a push-config change) for a task that the
//     replica receiving it does not run is sent by NOTIFY to the replica
//     that saved the task last, which does it (its host gets CancelTurn)
//     and answers by NOTIFY. When that replica is gone or does not answer
//     in time, the receiving replica does it itself.
//
// Several agents. A host that declares several agents has one task manager
// per agent, all on this one Cluster: each manager is given the agent's
// view (ForAgent), which saves its tasks as the agent's, recovers only the
// agent's tasks, and registers the manager for the agent when it runs. A
// forwarded request and an orphaned task go to the manager of the task's
// agent (the tasks table says which); a replica that does not serve that
// agent leaves the request to the sender and the orphan to a replica that
// does.
//
// The push outbox needs no help from here: store.Postgres.ClaimDeliveries
// lets each replica's dispatcher claim deliveries with FOR UPDATE SKIP
// LOCKED and a claim lease.
package cluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// Defaults for the zero values of Options.
const (
	DefaultLease          = 15 * time.Second
	DefaultForwardTimeout = 10 * time.Second
)

// eventsKept is how long published events stay in task_events: a follower
// reads them within milliseconds of the NOTIFY, and a new follower starts
// from the stored task, so only a follower that stalled this long misses
// any (its stream ends; the client resubscribes).
const eventsKept = 5 * time.Minute

// Options configure a Cluster.
type Options struct {
	// Store is the shared database; its Replica names this replica.
	// Required.
	Store *store.Postgres
	// Lease is how long a replica that stopped renewing its lease keeps
	// its running tasks before another replica fails them (default 15 s).
	// It is renewed every Lease/3 and checked as often.
	Lease time.Duration
	// ForwardTimeout bounds how long a forwarded cancel waits for the
	// replica running the task (default 10 s).
	ForwardTimeout time.Duration
	Logger         hclog.Logger
}

// Cluster is this replica's part of the cluster. Create it with New (which
// takes the lease) and hand it to the task manager (tasks.Options.Cluster),
// whose Start runs it; Close it after closing the manager.
type Cluster struct {
	st      *store.Postgres
	self    string
	lease   time.Duration
	fwdWait time.Duration
	log     hclog.Logger
	// inbox is this replica's NOTIFY channel for forwarded requests and
	// answers.
	inbox string

	mu sync.Mutex
	// mgrs are the task managers of this replica by agent ("" for the one
	// agent of a host without agents), registered by Run.
	mgrs      map[string]tasks.Local
	running   bool
	followers map[string]map[*follower]struct{}
	pending   map[string]chan reply
	closed    bool
	// watchMu orders task_watch inserts and deletes of this replica.
	watchMu sync.Mutex

	listener *pgx.Conn
	stop     context.CancelFunc
	stopCtx  context.Context
	wg       sync.WaitGroup
}

var (
	_ tasks.Cluster = (*Cluster)(nil)
	_ tasks.Cluster = (*agentCluster)(nil)
)

// ErrFellBehind ends a follower whose events were trimmed before it read
// them.
var ErrFellBehind = errors.New("stream dropped: it fell too far behind the task's events; resubscribe")

// ErrClosed ends followers when the replica shuts down.
var ErrClosed = errors.New("the replica is shutting down; resubscribe (any replica can serve the task)")

// DefaultReplicaID is the replica id used when none is configured: the
// host name and the process id, unique among live replicas.
func DefaultReplicaID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "replica"
	}
	return h + "-" + strconv.Itoa(os.Getpid())
}

// New takes this replica's lease and starts listening for notifications.
func New(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Store == nil {
		return nil, errors.New("cluster: Options.Store is required")
	}
	if opts.Store.Replica() == "" {
		return nil, errors.New("cluster: the store has no replica id (store.PostgresOptions.Replica)")
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.ForwardTimeout <= 0 {
		opts.ForwardTimeout = DefaultForwardTimeout
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	c := &Cluster{
		st: opts.Store, self: opts.Store.Replica(), lease: opts.Lease, fwdWait: opts.ForwardTimeout, log: opts.Logger,
		followers: map[string]map[*follower]struct{}{}, pending: map[string]chan reply{},
		mgrs: map[string]tasks.Local{},
	}
	c.inbox = c.inboxOf(c.self)
	c.stopCtx, c.stop = context.WithCancel(context.Background())
	if err := c.renew(ctx); err != nil {
		return nil, fmt.Errorf("cluster: take the lease of replica %s: %w", c.self, err)
	}
	conn, err := c.listen(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: listen for notifications: %w", err)
	}
	c.listener = conn
	return c, nil
}

// Replica is this replica's id.
func (c *Cluster) Replica() string { return c.self }

// inboxOf is the NOTIFY channel of a replica.
func (c *Cluster) inboxOf(replica string) string {
	h := sha256.Sum256([]byte(replica))
	return c.st.Channel("r_" + hex.EncodeToString(h[:8]))
}

// listen opens the dedicated LISTEN connection.
func (c *Cluster) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, c.st.Pool().Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	for _, ch := range []string{c.st.EventsChannel(), c.inbox} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			conn.Close(context.Background())
			return nil, err
		}
	}
	return conn, nil
}

// renew takes or extends this replica's lease.
func (c *Cluster) renew(ctx context.Context) error {
	_, err := c.st.Pool().Exec(ctx, `INSERT INTO replicas (id, lease_until) VALUES ($1, now() + $2 * interval '1 millisecond')
		ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`, c.self, c.lease.Milliseconds())
	return err
}

// Run implements tasks.Cluster for the one agent of a host without agents
// (agent ""): see ForAgent.
func (c *Cluster) Run(mgr tasks.Local) { c.run("", mgr) }

// run registers mgr as agent's task manager — the one that answers the
// requests forwarded for the agent's tasks and fails its orphaned tasks —
// and starts the background work (renewing the lease, failing the tasks of
// replicas whose lease expired, receiving notifications) if it does not
// run yet. It returns at once; Close stops it.
func (c *Cluster) run(agent string, mgr tasks.Local) {
	c.mu.Lock()
	c.mgrs[agent] = mgr
	running := c.running
	c.running = true
	c.mu.Unlock()
	if running {
		return // the background work runs once, for every agent
	}
	c.wg.Add(2)
	go c.receive()
	go c.keepLease()
}

// manager returns the task manager registered for agent, or nil.
func (c *Cluster) manager(agent string) tasks.Local {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mgrs[agent]
}

// ForAgent returns the Cluster one agent's task manager uses when the host
// declares several agents: Persist saves the task as agent's, Recover
// returns only agent's tasks, and Run registers the manager for agent.
// Follow and Forward are the Cluster's own (task ids are unique across
// agents). agent "" is the Cluster itself.
func (c *Cluster) ForAgent(agent string) tasks.Cluster {
	if agent == "" {
		return c
	}
	return &agentCluster{Cluster: c, agent: agent}
}

// agentCluster is one agent's view of the Cluster (ForAgent).
type agentCluster struct {
	*Cluster
	agent string
}

// Persist implements tasks.Cluster: rec is saved as the agent's.
func (v *agentCluster) Persist(ctx context.Context, rec *store.TaskRecord, deliveries []store.Delivery, events [][]byte) error {
	if rec != nil && rec.Agent != v.agent {
		c := *rec
		c.Agent = v.agent
		rec = &c
	}
	return v.Cluster.Persist(ctx, rec, deliveries, events)
}

// Recover implements tasks.Cluster: the agent's running tasks this replica
// saved before it restarted.
func (v *agentCluster) Recover(ctx context.Context) ([]*store.TaskRecord, error) {
	return v.recover(ctx, v.agent)
}

// Run implements tasks.Cluster for the agent.
func (v *agentCluster) Run(mgr tasks.Local) { v.run(v.agent, mgr) }

// Close stops the background work, ends every follower, and gives up the
// lease (so the running tasks this replica leaves, if any, are failed by
// the others at once). Close the task manager first.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var fs []*follower
	for _, set := range c.followers {
		for f := range set {
			fs = append(fs, f)
		}
	}
	c.mu.Unlock()
	c.stop()
	c.wg.Wait()
	for _, f := range fs {
		f.end(ErrClosed)
	}
	var errs []error
	if c.listener != nil {
		errs = append(errs, c.listener.Close(ctx))
	}
	pool := c.st.Pool()
	_, err := pool.Exec(ctx, `DELETE FROM task_watch WHERE replica = $1`, c.self)
	errs = append(errs, err)
	_, err = pool.Exec(ctx, `DELETE FROM replicas WHERE id = $1`, c.self)
	errs = append(errs, err)
	return errors.Join(errs...)
}

// Persist implements tasks.Cluster.
func (c *Cluster) Persist(ctx context.Context, rec *store.TaskRecord, deliveries []store.Delivery, events [][]byte) error {
	err := c.st.SaveTaskEvents(ctx, rec, deliveries, events)
	if errors.Is(err, store.ErrFenced) {
		return fmt.Errorf("%w: %w", tasks.ErrTakenOver, err)
	}
	return err
}

// Recover implements tasks.Cluster for agent "": the running tasks this
// replica id saved before it restarted.
func (c *Cluster) Recover(ctx context.Context) ([]*store.TaskRecord, error) {
	return c.recover(ctx, "")
}

// recover returns agent's running tasks this replica saved before it
// restarted.
func (c *Cluster) recover(ctx context.Context, agent string) ([]*store.TaskRecord, error) {
	recs, err := c.st.ReplicaTasks(ctx, c.self)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(recs, func(r *store.TaskRecord) bool { return r.Agent != agent }), nil
}

// keepLease renews the lease and sweeps for orphaned tasks every Lease/3.
func (c *Cluster) keepLease() {
	defer c.wg.Done()
	every := max(c.lease/3, 50*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	renewed := time.Now()
	lastTidy := time.Time{}
	for {
		select {
		case <-c.stopCtx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.stopCtx, every)
		if err := c.renew(ctx); err != nil {
			if c.stopCtx.Err() != nil {
				cancel()
				return
			}
			if time.Since(renewed) > c.lease {
				c.log.Error("this replica could not renew its lease in time: other replicas may fail its running tasks", "replica", c.self, "error", err)
			} else {
				c.log.Warn("renewing the replica lease failed; retrying", "replica", c.self, "error", err)
			}
		} else {
			renewed = time.Now()
		}
		cancel()
		c.sweep()
		if time.Since(lastTidy) > time.Minute {
			lastTidy = time.Now()
			c.tidy()
		}
	}
}

// sweep fails the running tasks of replicas whose lease expired, each
// through the manager of its agent (a task of an agent this replica does
// not serve is left to a replica that does).
func (c *Cluster) sweep() {
	ctx, cancel := context.WithTimeout(c.stopCtx, c.lease)
	defer cancel()
	rows, err := c.st.Pool().Query(ctx, `SELECT t.id, t.replica, t.agent FROM tasks t
		WHERE NOT t.terminal AND t.state NOT IN ('TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED')
			AND t.replica <> $1
			AND NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = t.replica AND r.lease_until > now())
		ORDER BY t.status_ts LIMIT 200`, c.self)
	if err != nil {
		if c.stopCtx.Err() == nil {
			c.log.Warn("looking for tasks of stopped replicas failed", "error", err)
		}
		return
	}
	type orphan struct{ id, replica, agent string }
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (orphan, error) {
		var o orphan
		return o, r.Scan(&o.id, &o.replica, &o.agent)
	})
	if err != nil {
		if c.stopCtx.Err() == nil {
			c.log.Warn("looking for tasks of stopped replicas failed", "error", err)
		}
		return
	}
	for _, o := range found {
		mgr := c.manager(o.agent)
		if mgr == nil {
			c.log.Debug("a task of a stopped replica belongs to an agent this replica does not serve; leaving it to one that does", "task_id", o.id, "agent", o.agent)
			continue
		}
		if err := mgr.FailOrphan(ctx, o.id); err != nil {
			if c.stopCtx.Err() != nil {
				return
			}
			c.log.Warn("failing a task of a stopped replica failed; retrying at the next sweep", "task_id", o.id, "replica", o.replica, "error", err)
			continue
		}
		c.log.Info("took over a task of a stopped replica", "task_id", o.id, "replica", o.replica)
	}
}

// tidy drops old events, the watches of dead replicas and long-expired
// replica rows.
func (c *Cluster) tidy() {
	ctx, cancel := context.WithTimeout(c.stopCtx, c.lease)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM task_events WHERE at < now() - $1 * interval '1 millisecond'`, eventsKept.Milliseconds())
	b.Queue(`DELETE FROM task_watch w WHERE NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = w.replica AND r.lease_until > now())`)
	b.Queue(`DELETE FROM replicas WHERE lease_until < now() - interval '1 hour'`)
	if err := c.st.Pool().SendBatch(ctx, b).Close(); err != nil && c.stopCtx.Err() == nil {
		c.log.Warn("tidying cluster tables failed", "error", err)
	}
}

// message is a forwarded request or its answer, as a NOTIFY payload.
type message struct {
	ID   string          `json:"id"`
	From string          `json:"from,omitempty"`
	Op   tasks.ForwardOp `json:"op,omitempty"`
	Task string          `json:"task,omitempty"`
	// Agent is the task's agent, whose manager does the request.
	Agent string `json:"agent,omitempty"`
	// An answer has Re set; A2A or Err describe a failure (A2A when it was
	// an A2A protocol error, which goes back to the client as it is).
	// NotServed says the replica does not serve the task's agent: the
	// sender does the request itself.
	Re        bool       `json:"re,omitempty"`
	A2A       *a2a.Error `json:"a2a,omitempty"`
	Err       string     `json:"err,omitempty"`
	NotServed bool       `json:"not_served,omitempty"`
}

// reply is an answer handed to a waiting Forward; done is false when the
// other replica did not do the request (NotServed).
type reply struct {
	err  error
	done bool
}

// receive reads notifications until Close, reconnecting when the
// connection breaks.
func (c *Cluster) receive() {
	defer c.wg.Done()
	backoff := 100 * time.Millisecond
	for {
		n, err := c.listener.WaitForNotification(c.stopCtx)
		if c.stopCtx.Err() != nil {
			return
		}
		if err != nil {
			c.log.Warn("lost the notification connection; reconnecting", "error", err)
			c.listener.Close(context.Background())
			for {
				select {
				case <-c.stopCtx.Done():
					return
				case <-time.After(backoff):
				}
				ctx, cancel := context.WithTimeout(c.stopCtx, 10*time.Second)
				conn, err := c.listen(ctx)
				cancel()
				if err == nil {
					c.listener = conn
					backoff = 100 * time.Millisecond
					break
				}
				backoff = min(2*backoff, 5*time.Second)
			}
			// Notifications sent meanwhile are lost: every follower looks.
			c.wakeAll()
			continue
		}
		switch n.Channel {
		case c.st.EventsChannel():
			task, seq, _ := strings.Cut(n.Payload, " ")
			s, _ := strconv.ParseInt(seq, 10, 64)
			c.wake(task, s)
		case c.inbox:
			var m message
			if err := json.Unmarshal([]byte(n.Payload), &m); err != nil {
				c.log.Warn("ignoring a malformed cluster message", "error", err)
				continue
			}
			if m.Re {
				c.answered(m)
			} else {
				c.wg.Add(1)
				go c.handle(m)
			}
		}
	}
}

// notify sends a message to a replica's inbox.
func (c *Cluster) notify(ctx context.Context, to string, m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = c.st.Pool().Exec(ctx, `SELECT pg_notify($1, $2)`, c.inboxOf(to), string(b))
	return err
}

// Forward implements tasks.Cluster.
func (c *Cluster) Forward(ctx context.Context, op tasks.ForwardOp, taskID string) (bool, error) {
	var (
		owner, agent string
		alive        bool
	)
	err := c.st.Pool().QueryRow(ctx, `SELECT t.replica, t.agent, coalesce(r.lease_until > now(), false)
		FROM tasks t LEFT JOIN replicas r ON r.id = t.replica WHERE t.id = $1`, taskID).Scan(&owner, &agent, &alive)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: find the replica of task %s: %w", taskID, err)
	}
	if owner == "" || owner == c.self || !alive {
		return false, nil
	}
	id := newID()
	ch := make(chan reply, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.notify(ctx, owner, message{ID: id, From: c.self, Op: op, Task: taskID, Agent: agent}); err != nil {
		return false, fmt.Errorf("cluster: forward %s of task %s to replica %s: %w", op, taskID, owner, err)
	}
	t := time.NewTimer(c.fwdWait)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.done, r.err
	case <-t.C:
		c.log.Warn("the replica running the task did not answer a forwarded request; doing it here", "op", op, "task_id", taskID, "replica", owner)
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// handle does a forwarded request and answers it.
func (c *Cluster) handle(m message) {
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(c.stopCtx, c.fwdWait)
	defer cancel()
	ans := message{ID: m.ID, Re: true}
	if mgr := c.manager(m.Agent); mgr == nil {
		ans.NotServed = true
	} else if err := mgr.HandleForwarded(ctx, m.Op, m.Task); err != nil {
		var aerr *a2a.Error
		if errors.As(err, &aerr) {
			ans.A2A = aerr
		} else {
			ans.Err = err.Error()
		}
	}
	if err := c.notify(ctx, m.From, ans); err != nil && c.stopCtx.Err() == nil {
		c.log.Warn("answering a forwarded request failed", "op", m.Op, "task_id", m.Task, "replica", m.From, "error", err)
	}
}

// answered hands an answer to the Forward waiting for it.
func (c *Cluster) answered(m message) {
	c.mu.Lock()
	ch := c.pending[m.ID]
	c.mu.Unlock()
	if ch == nil {
		return // it gave up waiting
	}
	var err error
	switch {
	case m.A2A != nil:
		err = m.A2A
	case m.Err != "":
		err = errors.New(m.Err)
	}
	select {
	case ch <- reply{err: err, done: !m.NotServed}:
	default:
	}
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
