package store

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// Task counts on PostgreSQL (schema step 5): saves append delta rows to
// task_count_deltas through a trigger, and foldTaskCounts moves them into
// task_counts and task_agent_counts. ListTasks' totalSize for a query
// without a context or status-time filter is the sum of the matching
// counter rows and the deltas not yet folded, read in the statement that
// reads the page, so it is exact for that page's snapshot.

const (
	// pgFoldEvery is how many saves a store handle makes between the
	// folds it starts: each replica folds the deltas of every replica,
	// so the table holds about replicas × pgFoldEvery rows at most
	// between folds (fewer: any replica's fold takes them all).
	pgFoldEvery = 512
	// pgFoldAtRead starts a fold when a ListTasks read more delta rows
	// than this (a burst of deletes by Prune or a bulk adoption).
	pgFoldAtRead = 1024
)

// pgFoldCounts moves every committed delta into the counters in one
// statement: the rows it deletes are exactly those it adds, in the same
// transaction. It returns the counter keys that reached zero.
const pgFoldCounts = `WITH d AS (DELETE FROM task_count_deltas RETURNING owner, agent, state, n),
	g AS (SELECT owner, agent, state, sum(n)::bigint AS n FROM d GROUP BY owner, agent, state HAVING sum(n) <> 0),
	a AS (INSERT INTO task_counts AS c (owner, agent, state, n) SELECT owner, agent, state, n FROM g
		ON CONFLICT (owner, agent, state) DO UPDATE SET n = c.n + excluded.n
		RETURNING c.owner, c.agent, c.state, c.n),
	b AS (INSERT INTO task_agent_counts AS c (agent, state, n)
		SELECT agent, state, sum(n)::bigint FROM g GROUP BY agent, state HAVING sum(n) <> 0
		ON CONFLICT (agent, state) DO UPDATE SET n = c.n + excluded.n
		RETURNING c.agent, c.state, c.n)
	SELECT (SELECT count(*) FROM d),
		ARRAY(SELECT owner FROM a WHERE n = 0), ARRAY(SELECT agent FROM a WHERE n = 0), ARRAY(SELECT state FROM a WHERE n = 0),
		ARRAY(SELECT agent FROM b WHERE n = 0), ARRAY(SELECT state FROM b WHERE n = 0)`

// foldTaskCounts folds the task count deltas of every replica into the
// counters and drops counters that reached zero. One replica folds at a
// time (an advisory lock; a replica that finds it taken skips its fold,
// the other one takes its deltas too). It reports how many delta rows it
// folded.
func (s *Postgres) foldTaskCounts(ctx context.Context) (int64, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: fold task counts: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit, a no-op
	var got bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '/a2a-plugin/fold-task-counts'))`).Scan(&got); err != nil {
		return 0, fmt.Errorf("store: fold task counts: %w", err)
	}
	if !got {
		return 0, nil
	}
	var (
		n                         int64
		zo, za, zs, zaAgent, zaSt []string
	)
	if err := tx.QueryRow(ctx, pgFoldCounts).Scan(&n, &zo, &za, &zs, &zaAgent, &zaSt); err != nil {
		return 0, fmt.Errorf("store: fold task counts: %w", err)
	}
	if len(zo) > 0 || len(zaAgent) > 0 {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM task_counts c USING unnest($1::text[], $2::text[], $3::text[]) AS z(owner, agent, state)
			WHERE c.owner = z.owner AND c.agent = z.agent AND c.state = z.state AND c.n = 0`, zo, za, zs)
		b.Queue(`DELETE FROM task_agent_counts c USING unnest($1::text[], $2::text[]) AS z(agent, state)
			WHERE c.agent = z.agent AND c.state = z.state AND c.n = 0`, zaAgent, zaSt)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return 0, fmt.Errorf("store: fold task counts: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("store: fold task counts: %w", err)
	}
	return n, nil
}

// startFold folds the task counts in the background unless a fold of this
// handle is already running or the handle is closing. Close waits for it.
func (s *Postgres) startFold() {
	if !s.folding.CompareAndSwap(false, true) {
		return
	}
	s.foldMu.Lock()
	if s.foldsClosed {
		s.foldMu.Unlock()
		s.folding.Store(false)
		return
	}
	s.folds.Add(1)
	s.foldMu.Unlock()
	go func() {
		defer s.folds.Done()
		defer s.folding.Store(false)
		ctx, cancel := context.WithTimeout(s.foldCtx, time.Minute)
		defer cancel()
		// A failed fold loses nothing: the deltas stay and the next
		// fold takes them.
		if n, err := s.foldTaskCounts(ctx); err == nil && n > 0 {
			s.vacuumDeltas(ctx)
		}
	}()
}

// vacuumDeltas frees the space of folded deltas at once. Every save adds a
// delta row and every fold deletes them, so between autovacuum's visits
// (a minute apart by default) the table would grow by a dead row per save,
// and ListTasks without an owner, which reads the table whole, would read
// them all: at 100,000 saves that was about a millisecond per call. A
// vacuum of the few pages folded is cheap. Best effort: an error (a
// server older than 12 without SKIP_LOCKED, a user not owning the table)
// leaves it to autovacuum.
func (s *Postgres) vacuumDeltas(ctx context.Context) {
	_, _ = s.pool.Exec(ctx, `VACUUM (SKIP_LOCKED) task_count_deltas`)
}

// countedSave notes a save, starting a fold every pgFoldEvery saves.
func (s *Postgres) countedSave() {
	if s.saves.Add(1)%pgFoldEvery == 0 {
		s.startFold()
	}
}

// pgCountSQL is the subquery of ListTasks that yields totalSize (n) and
// how many delta rows it read (d), for the conditions where on the
// columns owner, agent, context_id, state and status_ts. Without a
// context or status-time filter it reads the counters: task_counts for an
// owner, task_agent_counts otherwise; with one, it counts the tasks
// through their indexes.
func pgCountSQL(p listPlan, where string) string {
	if p.contextID != "" || p.after != math.MinInt64 {
		return `SELECT count(*) AS n, 0::bigint AS d FROM tasks WHERE ` + where
	}
	counters := "task_agent_counts"
	if p.owner != "" {
		counters = "task_counts"
	}
	return `SELECT coalesce(sum(x.n), 0)::bigint AS n, count(*) FILTER (WHERE x.delta) AS d FROM (
		SELECT n, false AS delta FROM ` + counters + ` WHERE ` + where + `
		UNION ALL SELECT n, true FROM task_count_deltas WHERE ` + where + `) x`
}
