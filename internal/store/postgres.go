package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// PostgresOptions tunes OpenPostgres.
type PostgresOptions struct {
	// Replica names this process among the replicas sharing the database:
	// every task it saves records it (the task's "replica"), and the
	// clustering code uses it for leases, claims and forwarding. "" for a
	// single process.
	Replica string
	// MaxConns bounds the connection pool (default: 4 × GOMAXPROCS, at
	// least 8). Each replica also holds one more connection for LISTEN.
	MaxConns int32
	// PruneBatch bounds how many tasks or conversations Prune deletes per
	// statement. Default 500.
	PruneBatch int
}

// Postgres is the Store for several replicas of the plugin sharing one
// PostgreSQL database. It keeps the same records with the same behaviour as
// SQLite (the storetest suite runs against both) and adds what replicas
// coordinate through: the replica that wrote each task, fencing of finished
// tasks, task events for streams followed on another replica, and outbox
// claims (ClaimDeliveries) so that each notification is sent by one replica.
//
// Every write is one round trip: its statements go in one pipelined batch
// that PostgreSQL runs as one implicit transaction, so a save and its
// outbox rows and events commit together or not at all. The tables live in
// the first schema of the connection's search_path (set search_path in the
// DSN to give each deployment its own).
type Postgres struct {
	pool       *pgxpool.Pool
	replica    string
	pruneBatch int
	// channel is the NOTIFY channel of task events; it names the schema,
	// so deployments sharing a database never wake each other.
	channel string
	schema  string

	// Task count folding (postgres_counts.go): saves counts this
	// handle's saves, folding is set while a fold it started runs, folds
	// tracks that goroutine and foldCtx (cancelled by Close) bounds it;
	// foldsClosed (under foldMu) stops new folds once Close waits for
	// them (a WaitGroup must not be added to while it is waited on).
	saves       atomic.Int64
	folding     atomic.Bool
	folds       sync.WaitGroup
	foldMu      sync.Mutex
	foldsClosed bool
	foldCtx     context.Context
	foldCancel  context.CancelFunc
}

var _ Store = (*Postgres)(nil)

// ErrFenced is returned (wrapped) by a save that would change a finished
// task last written by another replica: a replica whose lease expired and
// whose task another replica failed meanwhile, or the reverse.
var ErrFenced = errors.New("the task was finished by another replica")

// OpenPostgres connects to the database at dsn (a postgres:// URL or
// key=value string), brings the schema up to date and returns the store. It
// fails when the server cannot be reached or refuses the credentials.
func OpenPostgres(ctx context.Context, dsn string, opts PostgresOptions) (*Postgres, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("store: OpenPostgres needs a DSN such as postgres://user:password@host:5432/db")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN with its password.
		return nil, errors.New("store: the PostgreSQL DSN is malformed: use postgres://user:password@host:5432/db?sslmode=... or key=value pairs")
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(dsn, "pool_max_conns"):
		cfg.MaxConns = max(8, 4*int32(runtime.GOMAXPROCS(0)))
	}
	if opts.PruneBatch <= 0 {
		opts.PruneBatch = 500
	}
	where := cfg.ConnConfig.Host + ":" + strconv.Itoa(int(cfg.ConnConfig.Port)) + "/" + cfg.ConnConfig.Database
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect to PostgreSQL at %s: %w", where, err)
	}
	s := &Postgres{pool: pool, replica: opts.Replica, pruneBatch: opts.PruneBatch}
	s.foldCtx, s.foldCancel = context.WithCancel(context.Background())
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect to PostgreSQL at %s: %w", where, err)
	}
	if err := pool.QueryRow(pctx, `SELECT coalesce(current_schema(), '')`).Scan(&s.schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: PostgreSQL at %s: %w", where, err)
	}
	if s.schema == "" {
		pool.Close()
		return nil, fmt.Errorf("store: PostgreSQL at %s: no schema to create the tables in: set search_path in the DSN to an existing schema the user may write", where)
	}
	if err := pgMigrate(pctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: PostgreSQL at %s, schema %s: %w", where, s.schema, err)
	}
	s.channel = s.Channel("events")
	return s, nil
}

// Pool is the connection pool, for the clustering code that shares the
// database.
func (s *Postgres) Pool() *pgxpool.Pool { return s.pool }

// Replica is the replica id given in PostgresOptions.
func (s *Postgres) Replica() string { return s.replica }

// Schema is the schema holding the tables.
func (s *Postgres) Schema() string { return s.schema }

// Channel returns the NOTIFY channel called name for this deployment: it is
// derived from the schema, so deployments in one database stay apart, and
// it is a valid identifier of at most 63 bytes.
func (s *Postgres) Channel(name string) string {
	h := sha256.Sum256([]byte(s.schema))
	return "a2a_" + hex.EncodeToString(h[:6]) + "_" + name
}

// EventsChannel is the channel on which a save that published task events
// notifies "<task id> <last seq>".
func (s *Postgres) EventsChannel() string { return s.channel }

// Close closes the pool (waiting for connections in use), stopping a
// fold of the task counts in progress first.
func (s *Postgres) Close() error {
	s.foldMu.Lock()
	s.foldsClosed = true
	s.foldMu.Unlock()
	if s.foldCancel != nil {
		s.foldCancel()
	}
	s.folds.Wait()
	s.pool.Close()
	return nil
}

// pgErr wraps err with what failed, turning the fence into ErrFenced.
func pgErr(err error, format string, args ...any) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "A2F01" {
		return fmt.Errorf(format+": %w: %s", append(args, ErrFenced, pe.Message)...)
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// SaveTask implements Store.
func (s *Postgres) SaveTask(ctx context.Context, rec *TaskRecord, deliveries []Delivery) error {
	return s.SaveTaskEvents(ctx, rec, deliveries, nil)
}

// Statements of SaveTaskEvents.
const (
	pgUpsertTask = `INSERT INTO tasks (id, context_id, owner, state, terminal, status_ts, created_at, task, replica, seq, agent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (id) DO UPDATE SET context_id = excluded.context_id, owner = excluded.owner, agent = excluded.agent,
			state = excluded.state, terminal = excluded.terminal, status_ts = excluded.status_ts,
			created_at = excluded.created_at, task = excluded.task, replica = excluded.replica,
			seq = tasks.seq + excluded.seq`
	// The events of a save are written only while a replica follows the
	// task (task_watch), numbered so that the last is the task's new seq,
	// and the followers are woken with "<task id> <seq>". This runs as a
	// statement after the upsert: its snapshot sees a watch committed
	// before it started, and a follower that committed its watch later
	// reads the task after this save (the upsert's row lock makes it
	// wait), so no event falls between a follower's snapshot and its
	// events.
	pgInsertEvents = `WITH ins AS (
			INSERT INTO task_events (task_id, seq, body)
			SELECT $1, t.seq - cardinality($2::bytea[]) + e.i, e.body
			FROM tasks t CROSS JOIN unnest($2::bytea[]) WITH ORDINALITY AS e(body, i)
			WHERE t.id = $1 AND EXISTS (SELECT 1 FROM task_watch w WHERE w.task_id = $1)
			RETURNING seq)
		SELECT pg_notify($3, $1 || ' ' || max(seq)) FROM ins HAVING count(*) > 0`
	pgInsertOutbox = `INSERT INTO outbox (task_id, config_id, body, attempts, next_try, last_error, created_at,
			context_id, traceparent, tracestate)
		SELECT $1, u.config_id, u.body, u.attempts, u.next_try, u.last_error, u.created_at, u.context_id, u.tp, u.ts
		FROM unnest($2::text[], $3::bytea[], $4::int[], $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[])
			WITH ORDINALITY AS u(config_id, body, attempts, next_try, last_error, created_at, context_id, tp, ts, ord)
		ORDER BY u.ord`
)

// SaveTaskEvents is SaveTask that also publishes events (each one encoded
// v1.0 StreamResponse JSON) to replicas following the task: in the same
// transaction it advances the task's seq by len(events) and, while anyone
// follows the task, writes the events and notifies EventsChannel. A save
// that would change a task finished by another replica fails with
// ErrFenced and changes nothing.
func (s *Postgres) SaveTaskEvents(ctx context.Context, rec *TaskRecord, deliveries []Delivery, events [][]byte) error {
	if err := checkRecord(rec, deliveries); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	blob, err := a2a.Marshal(&rec.Task)
	if err != nil {
		return fmt.Errorf("store: encode task %s: %w", rec.Task.ID, err)
	}
	id := rec.Task.ID
	b := &pgx.Batch{}
	b.Queue(pgUpsertTask, id, rec.Task.ContextID, rec.Owner, stateName(rec.Task.Status.State),
		rec.Task.Status.State.Terminal(), rec.StatusMillis(), toMillis(rec.CreatedAt), blob, s.replica, int64(len(events)), rec.Agent)
	if len(events) > 0 {
		b.Queue(pgInsertEvents, id, events, s.channel)
	}
	if len(deliveries) > 0 {
		now := time.Now().UnixMilli()
		n := len(deliveries)
		var (
			cfgs, errs, cids, tps, tss = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			bodies                     = make([][]byte, n)
			attempts                   = make([]int32, n)
			nexts, created             = make([]int64, n), make([]int64, n)
		)
		for i := range deliveries {
			d := &deliveries[i]
			cfgs[i], bodies[i], attempts[i], errs[i] = d.ConfigID, d.Body, int32(d.Attempts), d.LastError
			cids[i], tps[i], tss[i] = d.ContextID, d.Trace.Traceparent, d.Trace.Tracestate
			created[i], nexts[i] = now, now
			if !d.CreatedAt.IsZero() {
				created[i] = d.CreatedAt.UnixMilli()
			}
			if !d.NextTry.IsZero() {
				nexts[i] = d.NextTry.UnixMilli()
			}
		}
		b.Queue(pgInsertOutbox, id, cfgs, bodies, attempts, nexts, errs, created, cids, tps, tss)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("store: save task %s: %w", id, ctx.Err())
		}
		return pgErr(err, "store: save task %s", id)
	}
	s.countedSave()
	return nil
}

// GetTask implements Store.
func (s *Postgres) GetTask(ctx context.Context, id, owner string) (*TaskRecord, error) {
	var (
		recOwner, agent string
		created, ts     int64
		blob            []byte
	)
	err := s.pool.QueryRow(ctx, `SELECT owner, agent, created_at, status_ts, task FROM tasks WHERE id = $1`, id).Scan(&recOwner, &agent, &created, &ts, &blob)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && owner != "" && owner != recOwner) {
		return nil, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get task %s: %w", id, err)
	}
	return decodeTask(id, recOwner, agent, created, ts, blob)
}

// TaskAt returns a task with its seq (the number of events it has
// published) and the replica that last wrote it, waiting for a save in
// progress to commit first: events numbered above seq are exactly those
// saved after the returned record.
func (s *Postgres) TaskAt(ctx context.Context, id string) (rec *TaskRecord, seq int64, replica string, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, 0, "", fmt.Errorf("store: get task %s: %w", id, err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	var (
		owner, agent string
		created, ts  int64
		blob         []byte
	)
	err = tx.QueryRow(ctx, `SELECT owner, agent, created_at, status_ts, task, seq, replica FROM tasks WHERE id = $1 FOR SHARE`, id).
		Scan(&owner, &agent, &created, &ts, &blob, &seq, &replica)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, "", fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("store: get task %s: %w", id, err)
	}
	rec, err = decodeTask(id, owner, agent, created, ts, blob)
	return rec, seq, replica, err
}

// pgWhere builds the WHERE clause of a ListTasks variant, numbering its
// parameters from 1 (PostgreSQL wants a type for every parameter, so only
// those used are passed).
type pgWhere struct {
	conds []string
	args  []any
}

func (w *pgWhere) add(cond string, arg any) {
	w.args = append(w.args, arg)
	w.conds = append(w.conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(w.args))))
}

func (w *pgWhere) sql() string {
	if len(w.conds) == 0 {
		return "TRUE"
	}
	return strings.Join(w.conds, " AND ")
}

// ListTasks implements Store. The count and the page are one statement, so
// they see the same snapshot and TotalSize agrees with the pages. The
// count comes from the task counters when they can serve the filter
// (pgCountSQL).
func (s *Postgres) ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error) {
	p, err := planQuery(q)
	if err != nil {
		return TaskPage{}, err
	}
	var w pgWhere
	if p.owner != "" {
		w.add("owner = ?", p.owner)
	}
	if p.agent != "" {
		w.add("agent = ?", p.agent)
	}
	if p.contextID != "" {
		w.add("context_id = ?", p.contextID)
	}
	if p.state != "" {
		w.add("state = ?", p.state)
	}
	if p.after != math.MinInt64 {
		w.add("status_ts >= ?", p.after)
	}
	where := w.sql()
	cts, cid := int64(math.MaxInt64), ""
	if p.hasCursor {
		cts, cid = p.cursor.ts, p.cursor.id
	}
	n := len(w.args)
	args := append(w.args, cts, cid, p.size+1)
	query := `SELECT c.n, c.d, p.id, p.owner, p.agent, p.created_at, p.status_ts, p.task
		FROM (` + pgCountSQL(p, where) + `) c
		LEFT JOIN LATERAL (SELECT id, owner, agent, created_at, status_ts, task FROM tasks WHERE ` + where +
		fmt.Sprintf(` AND status_ts <= $%d AND (status_ts < $%d OR id > $%d) ORDER BY status_ts DESC, id LIMIT $%d`, n+1, n+1, n+2, n+3) +
		`) p ON TRUE`
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
	}
	defer rows.Close()
	var (
		page   TaskPage
		last   taskKey
		deltas int64
	)
	for rows.Next() {
		var (
			total            int64
			id, owner, agent *string
			created, ts      *int64
			blob             []byte
		)
		if err := rows.Scan(&total, &deltas, &id, &owner, &agent, &created, &ts, &blob); err != nil {
			return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
		}
		page.TotalSize = int(total)
		if id == nil {
			continue
		}
		if len(page.Tasks) == p.size {
			page.NextPageToken = encodePageToken(last)
			break
		}
		rec, err := decodeTask(*id, *owner, *agent, *created, *ts, blob)
		if err != nil {
			return TaskPage{}, err
		}
		page.Tasks = append(page.Tasks, rec)
		last = taskKey{ts: *ts, id: *id}
	}
	if err := rows.Err(); err != nil {
		return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
	}
	if deltas > pgFoldAtRead {
		s.startFold()
	}
	return page, nil
}

// scanTasks reads rows of (id, owner, agent, created_at, status_ts, task).
func scanTasks(rs pgx.Rows, what string) ([]*TaskRecord, error) {
	defer rs.Close()
	return collect(rs, what, scanTask(what))
}

// AdoptTasks implements Store.
func (s *Postgres) AdoptTasks(ctx context.Context, agent string) (int, error) {
	if agent == "" {
		return 0, nil
	}
	var n int64
	err := s.pool.QueryRow(ctx, `WITH t AS (UPDATE tasks SET agent = $1 WHERE agent = '' RETURNING 1),
			c AS (UPDATE conversations SET agent = $1 WHERE agent = '' AND NOT EXISTS
				(SELECT 1 FROM conversations o WHERE o.agent = $1 AND o.context_id = conversations.context_id)
				RETURNING context_id),
			e AS (UPDATE conversation_entries SET agent = $1 WHERE agent = '' AND context_id IN (SELECT context_id FROM c) RETURNING 1)
		SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM e)`, agent).Scan(&n, new(int64))
	if err != nil {
		return 0, fmt.Errorf("store: give the tasks and conversations of no agent to agent %q: %w", agent, err)
	}
	if n > 0 {
		s.startFold()
	}
	return int(n), nil
}

// ActiveTasks implements Store: every non-terminal task, oldest status
// first, whichever replica wrote it.
func (s *Postgres) ActiveTasks(ctx context.Context) ([]*TaskRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner, agent, created_at, status_ts, task FROM tasks WHERE NOT terminal ORDER BY status_ts, id`)
	if err != nil {
		return nil, fmt.Errorf("store: active tasks: %w", err)
	}
	return scanTasks(rows, "active tasks")
}

// ReplicaTasks returns the running tasks (not terminal, not waiting for
// their client) that replica wrote last, oldest status first.
func (s *Postgres) ReplicaTasks(ctx context.Context, replica string) ([]*TaskRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner, agent, created_at, status_ts, task FROM tasks
		WHERE NOT terminal AND replica = $1 AND state NOT IN ('TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED')
		ORDER BY status_ts, id`, replica)
	if err != nil {
		return nil, fmt.Errorf("store: running tasks of replica %s: %w", replica, err)
	}
	return scanTasks(rows, "running tasks of replica "+replica)
}

// PutPushConfig implements Store. The task must exist (else ErrNotFound).
// Replacing a config keeps its creation time and so its place.
func (s *Postgres) PutPushConfig(ctx context.Context, pc *PushConfig) error {
	if pc == nil || pc.Config.TaskID == "" || pc.Config.ID == "" {
		return errors.New("store: PutPushConfig needs a config with a task id and an id")
	}
	blob, err := a2a.Marshal(&pc.Config)
	if err != nil {
		return fmt.Errorf("store: encode push config %s of task %s: %w", pc.Config.ID, pc.Config.TaskID, err)
	}
	taskID, id := pc.Config.TaskID, pc.Config.ID
	tag, err := s.pool.Exec(ctx, `INSERT INTO push_configs (task_id, id, owner, created_at, config)
		SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM tasks WHERE id = $1)
		ON CONFLICT (task_id, id) DO UPDATE SET owner = excluded.owner, config = excluded.config`,
		taskID, id, pc.Owner, createdMillis(pc.CreatedAt), blob)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23503" { // the task went meanwhile
			return fmt.Errorf("store: push config %s: task %s: %w", id, taskID, ErrNotFound)
		}
		return fmt.Errorf("store: put push config %s of task %s: %w", id, taskID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: push config %s: task %s: %w", id, taskID, ErrNotFound)
	}
	return nil
}

// GetPushConfig implements Store.
func (s *Postgres) GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error) {
	var (
		owner   string
		created int64
		blob    []byte
	)
	err := s.pool.QueryRow(ctx, `SELECT owner, created_at, config FROM push_configs WHERE task_id = $1 AND id = $2`, taskID, id).
		Scan(&owner, &created, &blob)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: push config %s of task %s: %w", id, taskID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get push config %s of task %s: %w", id, taskID, err)
	}
	return decodePushConfig(taskID, id, owner, created, blob)
}

// ListPushConfigs implements Store.
func (s *Postgres) ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner, created_at, config FROM push_configs WHERE task_id = $1 ORDER BY created_at, ord`, taskID)
	if err != nil {
		return nil, fmt.Errorf("store: list push configs of task %s: %w", taskID, err)
	}
	defer rows.Close()
	return collect(rows, "list push configs of task "+taskID, scanPushConfig(taskID))
}

// DeletePushConfig implements Store; pending deliveries of the config go
// with it.
func (s *Postgres) DeletePushConfig(ctx context.Context, taskID, id string) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM push_configs WHERE task_id = $1 AND id = $2`, taskID, id)
	b.Queue(`DELETE FROM outbox WHERE task_id = $1 AND config_id = $2`, taskID, id)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: delete push config %s of task %s: %w", id, taskID, err)
	}
	return nil
}

// pgDeliveryColumns are the columns scanDeliveries reads.
const pgDeliveryColumns = `id, task_id, config_id, body, attempts, next_try, last_error, created_at, context_id, traceparent, tracestate`

func scanDeliveries(rs pgx.Rows, what string) ([]Delivery, error) {
	defer rs.Close()
	return collect(rs, what, scanDelivery(what))
}

// DueDeliveries implements Store. It ignores claims: ClaimDeliveries is
// what a dispatcher sharing the outbox with other replicas uses.
func (s *Postgres) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]Delivery, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.pool.Query(ctx, `SELECT `+pgDeliveryColumns+` FROM outbox o
		WHERE next_try <= $1 AND NOT EXISTS (
			SELECT 1 FROM outbox p WHERE p.task_id = o.task_id AND p.config_id = o.config_id AND p.id < o.id)
		ORDER BY id LIMIT $2`, now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due deliveries: %w", err)
	}
	return scanDeliveries(rows, "due deliveries")
}

// ClaimDeliveries implements Store for replicas sharing the outbox: it
// takes the due deliveries that are the first pending one of their config
// and that no replica holds (never claimed, released by RetryDelivery, or
// whose claim lapsed), marks them held by replica until now+lease, and
// returns them in id order. Rows another replica is claiming at the same
// moment are skipped (FOR UPDATE SKIP LOCKED), so each delivery has one
// holder at a time; as only the first pending delivery of a config can be
// claimed, a webhook's notifications still go out one at a time, in order,
// whichever replicas send them.
func (s *Postgres) ClaimDeliveries(ctx context.Context, replica string, now time.Time, lease time.Duration, limit int) ([]Delivery, error) {
	if limit <= 0 {
		limit = 100
	}
	nowMs := now.UnixMilli()
	rows, err := s.pool.Query(ctx, `UPDATE outbox o SET claimed_by = $2, claimed_until = $3
		FROM (SELECT id FROM outbox c
			WHERE c.next_try <= $1 AND c.claimed_until <= $1 AND NOT EXISTS (
				SELECT 1 FROM outbox p WHERE p.task_id = c.task_id AND p.config_id = c.config_id AND p.id < c.id)
			ORDER BY c.id LIMIT $4
			FOR UPDATE SKIP LOCKED) due
		WHERE o.id = due.id
		RETURNING o.id, o.task_id, o.config_id, o.body, o.attempts, o.next_try, o.last_error, o.created_at,
			o.context_id, o.traceparent, o.tracestate`,
		nowMs, replica, nowMs+lease.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	out, err := scanDeliveries(rows, "claim deliveries")
	slices.SortFunc(out, func(a, b Delivery) int { return int(min(max(a.ID-b.ID, -1), 1)) })
	return out, err
}

// CompleteDelivery implements Store.
func (s *Postgres) CompleteDelivery(ctx context.Context, id int64, gaveUp bool, reason string) error {
	b := &pgx.Batch{}
	if gaveUp {
		b.Queue(`INSERT INTO deliveries_failed (id, task_id, config_id, body, attempts, last_error, reason, created_at, failed_at)
			SELECT id, task_id, config_id, body, attempts, last_error, $2, created_at, $3 FROM outbox WHERE id = $1
			ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, failed_at = excluded.failed_at`, id, reason, time.Now().UnixMilli())
	}
	b.Queue(`DELETE FROM outbox WHERE id = $1`, id)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: complete delivery %d: %w", id, err)
	}
	return nil
}

// RetryDelivery implements Store. It releases the delivery's claim, so
// whichever replica is free when it is due next sends it.
func (s *Postgres) RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time, lastErr string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE outbox SET attempts = $2, next_try = $3, last_error = $4, claimed_by = '', claimed_until = 0 WHERE id = $1`,
		id, attempts, next.UnixMilli(), lastErr)
	if err != nil {
		return fmt.Errorf("store: retry delivery %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: delivery %d: %w", id, ErrNotFound)
	}
	return nil
}

// AppendConversation implements Store.
func (s *Postgres) AppendConversation(ctx context.Context, e *ConversationEntry) (int64, error) {
	if e == nil {
		return 0, errors.New("store: AppendConversation with a nil entry")
	}
	parts, err := encodeEntryParts(e)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.pool.QueryRow(ctx, `WITH e AS (
			INSERT INTO conversation_entries (context_id, peer, direction, task_id, message_id, state, text, parts, at, agent)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id)
		INSERT INTO conversations AS c (context_id, peer, entries, last_task_id, last_state, first_at, last_at, last_entry, agent)
		SELECT $1, $2, 1, $4, $6, $9, $9, e.id, $10 FROM e
		ON CONFLICT (agent, context_id) DO UPDATE SET peer = excluded.peer, entries = c.entries + 1,
			last_task_id = CASE WHEN excluded.last_task_id <> '' THEN excluded.last_task_id ELSE c.last_task_id END,
			last_state = CASE WHEN excluded.last_state <> '' THEN excluded.last_state ELSE c.last_state END,
			last_at = excluded.last_at, last_entry = excluded.last_entry
		RETURNING last_entry`,
		e.ContextID, e.Peer, e.Direction, e.TaskID, e.MessageID, e.State, e.Text, parts, createdMillis(e.Time), e.Agent).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: append conversation entry of context %s: %w", e.ContextID, err)
	}
	return id, nil
}

// Conversation implements Store.
func (s *Postgres) Conversation(ctx context.Context, contextID string, limit int) ([]ConversationEntry, error) {
	return s.agentConversation(ctx, "", contextID, limit)
}

func (s *Postgres) agentConversation(ctx context.Context, agent, contextID string, limit int) ([]ConversationEntry, error) {
	var lim any // NULL: no limit
	if limit > 0 {
		lim = int64(limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT id, context_id, agent, peer, direction, task_id, message_id, state, text, parts, at
		FROM conversation_entries WHERE agent = $3 AND context_id = $1 ORDER BY id DESC LIMIT $2::bigint`, contextID, lim, agent)
	if err != nil {
		return nil, fmt.Errorf("store: conversation %s: %w", contextID, err)
	}
	defer rows.Close()
	out, err := collect(rows, "conversation "+contextID, scanConversationEntry(contextID))
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// Conversations implements Store.
func (s *Postgres) Conversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	return s.agentConversations(ctx, "", limit)
}

func (s *Postgres) agentConversations(ctx context.Context, agent string, limit int) ([]ConversationSummary, error) {
	var lim any
	if limit > 0 {
		lim = int64(limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT context_id, peer, entries, last_task_id, last_state, first_at, last_at
		FROM conversations WHERE agent = $2 ORDER BY last_at DESC, last_entry DESC LIMIT $1::bigint`, lim, agent)
	if err != nil {
		return nil, fmt.Errorf("store: conversations: %w", err)
	}
	defer rows.Close()
	return collect(rows, "conversations", scanConversationSummary)
}

// Prune implements Store, deleting in statements of at most
// PostgresOptions.PruneBatch tasks or conversations.
func (s *Postgres) Prune(ctx context.Context, cutoff time.Time) (tasks, entries int, err error) {
	c, batch := cutoff.UnixMilli(), s.pruneBatch
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM tasks WHERE id IN
			(SELECT id FROM tasks WHERE terminal AND status_ts < $1 LIMIT $2)`, c, batch)
		if err != nil {
			return tasks, entries, fmt.Errorf("store: prune tasks: %w", err)
		}
		tasks += int(tag.RowsAffected())
		if tag.RowsAffected() < int64(batch) {
			break
		}
	}
	if tasks > 0 {
		if _, err := s.foldTaskCounts(ctx); err != nil {
			return tasks, entries, err
		}
		s.vacuumDeltas(ctx)
	}
	for {
		var convs, n int64
		err := s.pool.QueryRow(ctx, `WITH c AS (
				DELETE FROM conversations WHERE (agent, context_id) IN
					(SELECT agent, context_id FROM conversations WHERE last_at < $1 LIMIT $2)
				RETURNING agent, context_id),
			d AS (DELETE FROM conversation_entries WHERE (agent, context_id) IN (SELECT agent, context_id FROM c) RETURNING 1)
			SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM d)`, c, batch).Scan(&convs, &n)
		if err != nil {
			return tasks, entries, fmt.Errorf("store: prune conversations: %w", err)
		}
		entries += int(n)
		if convs < int64(batch) {
			break
		}
	}
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM deliveries_failed WHERE id IN
			(SELECT id FROM deliveries_failed WHERE failed_at < $1 LIMIT $2)`, c, batch)
		if err != nil {
			return tasks, entries, fmt.Errorf("store: prune failed deliveries: %w", err)
		}
		if tag.RowsAffected() < int64(batch) {
			break
		}
	}
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM delegations WHERE id IN
			(SELECT id FROM delegations WHERE state NOT IN ('open', 'cancel') AND updated_at < $1 LIMIT $2)`, c, batch)
		if err != nil {
			return tasks, entries, fmt.Errorf("store: prune delegations: %w", err)
		}
		if tag.RowsAffected() < int64(batch) {
			break
		}
	}
	return tasks, entries, nil
}
