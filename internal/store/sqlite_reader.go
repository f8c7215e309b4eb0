package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The ListTasks filter combinations: which of owner, context and state
// are set. Each has its own prepared statements.
const (
	filterOwner = 1 << iota
	filterContext
	filterState
	// filterCompleted marks a state filter of COMPLETED (with
	// filterState): the state indexes leave completed tasks out
	// (migration 7), so these lists walk another index.
	filterCompleted
	listVariants = 1 << iota
)

// usedVariant reports whether v is a filter combination listVariant
// makes (filterCompleted comes only with filterState).
func usedVariant(v int) bool {
	return v&filterCompleted == 0 || v&filterState != 0
}

// listVariant is the filter combination of p.
func listVariant(p listPlan) int {
	v := 0
	if p.owner != "" {
		v |= filterOwner
	}
	if p.contextID != "" {
		v |= filterContext
	}
	if p.state != "" {
		v |= filterState
		if p.state == string(a2a.TaskStateCompleted) {
			v |= filterCompleted
		}
	}
	return v
}

// listWhere is the WHERE clause of one filter combination. Parameters:
// ?1 owner, ?2 context, ?3 state, ?4 the StatusAfter bound (left out
// when after is false). Equality filters come first so that SQLite picks
// the index with those columns in front; with a context the state is
// written "+state" (no index use), which keeps the planner on the context
// index (few rows) rather than the state index (possibly very many). The
// state indexes hold no COMPLETED task: a filter of COMPLETED is "+state"
// too, read from the rows met walking the owner or status-time index
// (most are completed), and any other state repeats the index's own
// condition so that the planner may use it.
func listWhere(v int, after bool) string {
	var c []string
	if v&filterOwner != 0 {
		c = append(c, "owner = ?1")
	}
	if v&filterContext != 0 {
		c = append(c, "context_id = ?2")
	}
	if v&filterState != 0 {
		if v&(filterContext|filterCompleted) != 0 {
			c = append(c, "+state = ?3")
		} else {
			c = append(c, "state = ?3 AND state <> 'TASK_STATE_COMPLETED'")
		}
	}
	if after {
		c = append(c, "status_ts >= ?4")
	}
	if len(c) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c, " AND ")
}

// listSQL selects one page: the cursor (?5 status_ts, ?6 id) is the last
// row of the previous page (MaxInt64 and "" on the first page); rows come
// in index order, newest status first, ties by id, and the scan stops
// after ?7 rows.
func listSQL(v int) string {
	return `SELECT id, owner, agent, created_at, status_ts, task FROM ` + listFrom(v) + listWhere(v, true) +
		` AND status_ts <= ?5 AND (status_ts < ?5 OR id > ?6) ORDER BY status_ts DESC, id LIMIT ?7`
}

// listFrom is the table a list reads, with the index it must use where
// the planner would pick another: with an owner and a state other than
// COMPLETED it otherwise walks all owners' tasks in that state (both
// indexes are partial, and it weighs them alike).
func listFrom(v int) string {
	if v == filterOwner|filterState {
		return "tasks INDEXED BY tasks_by_owner_state"
	}
	return "tasks"
}

// agentListSQL and agentCountSQL are listSQL and the count of one
// agent's tasks (?8, never ”), both with all eight parameters of listSQL
// and the agent: the StatusAfter bound is always applied (math.MinInt64
// admits everything), and the count has the cursor and limit as no-op
// terms so that it numbers its parameters up to ?8 too. Both repeat the
// condition of the agent indexes (agent <> ”, migration 8) so that the
// planner may use them.
func agentListSQL(v int) string {
	return `SELECT id, owner, agent, created_at, status_ts, task FROM tasks INDEXED BY ` + agentIndex(v) + listWhere(v, true) +
		` AND agent = ?8 AND agent <> '' AND status_ts <= ?5 AND (status_ts < ?5 OR id > ?6) ORDER BY status_ts DESC, id LIMIT ?7`
}

func agentCountSQL(v int) string {
	return `SELECT count(*) FROM tasks INDEXED BY ` + agentIndex(v) + listWhere(v, true) +
		` AND agent = ?8 AND agent <> '' AND ?5 = ?5 AND ?6 = ?6 AND ?7 = ?7`
}

// agentIndex is the index one agent's list walks, named because the
// planner, weighing the partial indexes alike, took the agent index for
// lists of an owner or a context too. A list of the agent alone or of an
// agent and an owner (with a state of COMPLETED or none) walks the agent
// indexes; any other walks the index of the same filters without an
// agent, which has fewer entries to skip, and reads the agent from the
// row.
func agentIndex(v int) string {
	stateIndexed := v&filterState != 0 && v&filterCompleted == 0
	switch {
	case v&filterContext != 0 && v&filterOwner != 0:
		return "tasks_by_owner_ctx"
	case v&filterContext != 0:
		return "tasks_by_ctx"
	case stateIndexed && v&filterOwner != 0:
		return "tasks_by_owner_state"
	case stateIndexed:
		return "tasks_by_state"
	case v&filterOwner != 0:
		return "tasks_by_agent_owner"
	}
	return "tasks_by_agent"
}

// countSQL counts the rows of all pages (with a StatusAfter bound or
// not). Without a context or StatusAfter filter the count is read from
// the counters (task_counts, task_state_counts) the writer keeps with
// every save and a trigger with every delete.
func countSQL(v int, after bool) string {
	if !after && v&filterContext == 0 {
		switch v &^ filterCompleted {
		case 0:
			return `SELECT coalesce(sum(n), 0) FROM task_state_counts`
		case filterState:
			return `SELECT coalesce(sum(n), 0) FROM task_state_counts WHERE state = ?3`
		case filterOwner:
			return `SELECT coalesce(sum(n), 0) FROM task_counts WHERE owner = ?1`
		case filterOwner | filterState:
			return `SELECT coalesce(sum(n), 0) FROM task_counts WHERE owner = ?1 AND state = ?3`
		}
	}
	return `SELECT count(*) FROM tasks` + listWhere(v, after)
}

// countArgs trims the arguments owner, context, state, after to those a
// count statement takes: SQLite numbers parameters up to the highest one
// used, and database/sql insists on exactly that many.
func countArgs(v int, after bool, args []any) []any {
	switch {
	case after:
		return args[:4]
	case v&filterState != 0:
		return args[:3]
	case v&filterContext != 0:
		return args[:2]
	case v&filterOwner != 0:
		return args[:1]
	}
	return args[:0]
}

// reader is one read connection with its own prepared statements; the
// pool hands out whole readers so that statements are never re-prepared.
type reader struct {
	conn *sql.Conn

	begin, rollback                            *sql.Stmt
	getTask, active                            *sql.Stmt
	list                                       [listVariants]*sql.Stmt
	count, countAfter                          [listVariants]*sql.Stmt
	getPushConfig, listPushConfigs             *sql.Stmt
	dueDeliveries, conversation, conversations *sql.Stmt
	delegations, openParents, anyCancelDue     *sql.Stmt
}

// statements lists what a reader prepares, by field.
func (r *reader) statements() []struct {
	dst  **sql.Stmt
	text string
} {
	s := []struct {
		dst  **sql.Stmt
		text string
	}{
		{&r.begin, `BEGIN`},
		{&r.rollback, `ROLLBACK`},
		{&r.getTask, `SELECT owner, agent, created_at, status_ts, task FROM tasks WHERE id = ?1`},
		{&r.active, `SELECT id, owner, agent, created_at, status_ts, task FROM tasks WHERE terminal = 0 ORDER BY status_ts, id`},
		{&r.getPushConfig, `SELECT owner, created_at, config FROM push_configs WHERE task_id = ?1 AND id = ?2`},
		{&r.listPushConfigs, `SELECT id, owner, created_at, config FROM push_configs WHERE task_id = ?1 ORDER BY created_at, rowid`},
		// Per config only the oldest pending delivery may go, so that each
		// webhook receives its notifications in order; rows are visited in
		// id order and the scan stops at the limit.
		{&r.dueDeliveries, `SELECT id, task_id, config_id, body, attempts, next_try, last_error, created_at,
				context_id, traceparent, tracestate
			FROM outbox o WHERE next_try <= ?1 AND NOT EXISTS (
				SELECT 1 FROM outbox p WHERE p.task_id = o.task_id AND p.config_id = o.config_id AND p.id < o.id)
			ORDER BY id LIMIT ?2`},
		{&r.conversation, `SELECT id, context_id, agent, peer, direction, task_id, message_id, state, text, parts, at
			FROM conversation_entries WHERE agent = ?3 AND context_id = ?1 ORDER BY id DESC LIMIT ?2`},
		{&r.conversations, `SELECT context_id, peer, entries, last_task_id, last_state, first_at, last_at
			FROM conversations WHERE agent = ?2 ORDER BY last_at DESC, last_entry DESC LIMIT ?1`},
		{&r.delegations, `SELECT ` + sqliteDelegationColumns + ` FROM delegations WHERE parent_task_id = ?1 ORDER BY id`},
		{&r.openParents, `SELECT DISTINCT parent_task_id FROM delegations WHERE state = 'open' ORDER BY parent_task_id`},
		{&r.anyCancelDue, `SELECT 1 FROM delegations WHERE state = 'cancel' AND next_try <= ?1 LIMIT 1`},
	}
	for v := range listVariants {
		if !usedVariant(v) {
			continue
		}
		s = append(s, struct {
			dst  **sql.Stmt
			text string
		}{&r.list[v], listSQL(v)}, struct {
			dst  **sql.Stmt
			text string
		}{&r.count[v], countSQL(v, false)}, struct {
			dst  **sql.Stmt
			text string
		}{&r.countAfter[v], countSQL(v, true)})
	}
	return s
}

// newReader takes a connection from db and prepares its statements.
func newReader(ctx context.Context, db *sql.DB) (*reader, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	r := &reader{conn: conn}
	for _, s := range r.statements() {
		st, err := conn.PrepareContext(ctx, s.text)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("prepare %q: %w", firstLine(s.text), err)
		}
		*s.dst = st
	}
	return r, nil
}

// beginRead starts a read transaction on r, for reads that must see one
// snapshot. The caller defers r.endRead() before calling it: a BEGIN can
// take effect although its call failed.
//
// BEGIN takes no context. It takes no lock (the snapshot is taken by the
// first read) and so has nothing to wait for or to cancel; and with a
// context the driver reports the context's error whenever the context
// ended during the call, even when the statement completed: a BEGIN
// reported failed may have opened the transaction. Were the ROLLBACK then
// skipped, r would go back to the pool inside a transaction, and every
// later BEGIN on it would fail ("cannot start a transaction within a
// transaction").
func (r *reader) beginRead() error {
	_, err := r.begin.Exec()
	return err
}

// endRead ends the read transaction of beginRead, if one is open. ROLLBACK
// takes no context so that it runs even for a canceled read and cannot be
// interrupted; without a transaction it fails, harmlessly.
func (r *reader) endRead() {
	_, _ = r.rollback.Exec()
}

// close closes the statements and returns the connection to its pool.
func (r *reader) close() {
	for _, s := range r.statements() {
		if *s.dst != nil {
			_ = (*s.dst).Close()
		}
	}
	_ = r.conn.Close()
}

// reader takes a read connection from the pool, waiting if all are busy.
func (s *SQLite) reader(ctx context.Context) (*reader, error) {
	select {
	case <-s.quit:
		return nil, errClosed
	default:
	}
	select {
	case r := <-s.readers:
		return r, nil
	case <-s.quit:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// release returns r to the pool.
func (s *SQLite) release(r *reader) {
	s.readers <- r
}
