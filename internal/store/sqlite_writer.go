package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// errClosed is returned by every call made after Close.
var errClosed = errors.New("store: closed")

// writeReq is one write waiting for the writer goroutine. op runs inside
// the batch transaction; done receives its outcome exactly once. A
// journaled save has save set instead of op: the writer goroutine
// journals it and answers, and the applier applies it later in a
// writeReq of its own (with seq, its journal sequence number, set).
type writeReq struct {
	ctx  context.Context
	op   func(*writer) error
	save *jrec
	seq  int64
	err  error
	done chan error
}

var writeReqPool = sync.Pool{New: func() any { return &writeReq{done: make(chan error, 1)} }}

// cleanError marks an error returned by a write op that changed nothing
// (for example "task not found" found by a lookup before any write): the
// rest of its batch can still commit.
type cleanError struct{ error }

func (e cleanError) Unwrap() error { return e.error }

// clean wraps err as a cleanError.
func clean(err error) error { return cleanError{err} }

// writer owns the single write connection and its prepared statements. Only
// the writer goroutine uses it.
type writer struct {
	conn *sql.Conn

	begin, commit, rollback *sql.Stmt

	insertTask, taskCounted, updateTask                *sql.Stmt
	addCount, dropCount, addStateCount                 *sql.Stmt
	insertOutbox, taskExists                           *sql.Stmt
	upsertPushConfig, deletePushConfig, deleteOutboxOf *sql.Stmt
	retryDelivery, failDelivery, deleteDelivery        *sql.Stmt
	insertEntry, upsertConversation                    *sql.Stmt
	pruneTasks, pruneFailed, staleConversations        *sql.Stmt
	deleteEntriesOf, deleteConversation                *sql.Stmt
	insertDelegation, endDelegations, dueCancels       *sql.Stmt
	claimCancel, updateDelegation, pruneDelegations    *sql.Stmt
	adoptTasks, adoptConversations, adoptEntries       *sql.Stmt
	setApplied                                         *sql.Stmt

	// counts are the changes to the task counts (task_counts,
	// task_state_counts) made by the saves of the current transaction,
	// written just before it commits (flushCounts).
	counts map[countKey]int64

	// rowWrites counts the task rows saveTaskRow has written (tests
	// check with it that the applier coalesces saves of one task).
	rowWrites atomic.Int64
	// failSaves makes that many applies of journaled saves fail (tests
	// of the applier's retries).
	failSaves atomic.Int32
}

// countKey is one row of task_counts.
type countKey struct{ owner, state string }

// statements lists what the writer prepares, by field.
func (w *writer) statements() []struct {
	dst  **sql.Stmt
	text string
} {
	return []struct {
		dst  **sql.Stmt
		text string
	}{
		{&w.begin, `BEGIN IMMEDIATE`},
		{&w.commit, `COMMIT`},
		{&w.rollback, `ROLLBACK`},
		// A save is an insert, or when the task is stored already a
		// lookup of what it was counted as and an update (saveTaskRow).
		{&w.insertTask, `INSERT INTO tasks (id, context_id, owner, state, terminal, status_ts, created_at, task, agent)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (id) DO NOTHING`},
		{&w.taskCounted, `SELECT owner, state FROM tasks WHERE id = ?1`},
		{&w.updateTask, `UPDATE tasks SET context_id = ?2, owner = ?3, state = ?4, terminal = ?5, status_ts = ?6,
				created_at = ?7, task = ?8, agent = ?9 WHERE id = ?1`},
		{&w.addCount, `INSERT INTO task_counts (owner, state, n) VALUES (?1, ?2, ?3)
			ON CONFLICT (owner, state) DO UPDATE SET n = n + excluded.n`},
		{&w.dropCount, `DELETE FROM task_counts WHERE owner = ?1 AND state = ?2 AND n = 0`},
		{&w.addStateCount, `INSERT INTO task_state_counts (state, n) VALUES (?1, ?2)
			ON CONFLICT (state) DO UPDATE SET n = n + excluded.n`},
		{&w.insertOutbox, `INSERT INTO outbox (task_id, config_id, body, attempts, next_try, last_error, created_at,
				context_id, traceparent, tracestate)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`},
		{&w.taskExists, `SELECT 1 FROM tasks WHERE id = ?1`},
		// A replaced config keeps its creation time, hence its place in
		// ListPushConfigs.
		{&w.upsertPushConfig, `INSERT INTO push_configs (task_id, id, owner, created_at, config)
			VALUES (?1, ?2, ?3, ?4, ?5)
			ON CONFLICT (task_id, id) DO UPDATE SET owner = excluded.owner, config = excluded.config`},
		{&w.deletePushConfig, `DELETE FROM push_configs WHERE task_id = ?1 AND id = ?2`},
		{&w.deleteOutboxOf, `DELETE FROM outbox WHERE task_id = ?1 AND config_id = ?2`},
		{&w.retryDelivery, `UPDATE outbox SET attempts = ?2, next_try = ?3, last_error = ?4 WHERE id = ?1`},
		{&w.adoptTasks, `UPDATE tasks SET agent = ?1 WHERE agent = ''`},
		{&w.setApplied, `INSERT INTO journal_state (instance, applied) VALUES (?1, ?2)
			ON CONFLICT (instance) DO UPDATE SET applied = max(applied, excluded.applied)`},
		{&w.adoptConversations, `UPDATE conversations SET agent = ?1 WHERE agent = '' AND NOT EXISTS
			(SELECT 1 FROM conversations c WHERE c.agent = ?1 AND c.context_id = conversations.context_id)`},
		{&w.adoptEntries, `UPDATE conversation_entries SET agent = ?1 WHERE agent = '' AND context_id IN
			(SELECT context_id FROM conversations WHERE agent = ?1)`},
		{&w.failDelivery, `INSERT OR REPLACE INTO deliveries_failed
			(id, task_id, config_id, body, attempts, last_error, reason, created_at, failed_at)
			SELECT id, task_id, config_id, body, attempts, last_error, ?2, created_at, ?3 FROM outbox WHERE id = ?1`},
		{&w.deleteDelivery, `DELETE FROM outbox WHERE id = ?1`},
		{&w.insertEntry, `INSERT INTO conversation_entries
			(context_id, peer, direction, task_id, message_id, state, text, parts, at, agent)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`},
		{&w.upsertConversation, `INSERT INTO conversations
			(context_id, peer, entries, last_task_id, last_state, first_at, last_at, last_entry, agent)
			VALUES (?1, ?2, 1, ?3, ?4, ?5, ?5, ?6, ?7)
			ON CONFLICT (agent, context_id) DO UPDATE SET peer = excluded.peer, entries = entries + 1,
				last_task_id = CASE WHEN excluded.last_task_id <> '' THEN excluded.last_task_id ELSE last_task_id END,
				last_state = CASE WHEN excluded.last_state <> '' THEN excluded.last_state ELSE last_state END,
				last_at = excluded.last_at, last_entry = excluded.last_entry`},
		// Deleting a task cascades to its push configs and pending
		// deliveries (foreign keys with ON DELETE CASCADE).
		{&w.pruneTasks, `DELETE FROM tasks WHERE id IN
			(SELECT id FROM tasks WHERE terminal = 1 AND status_ts < ?1 LIMIT ?2)`},
		{&w.pruneFailed, `DELETE FROM deliveries_failed WHERE id IN
			(SELECT id FROM deliveries_failed WHERE failed_at < ?1 LIMIT ?2)`},
		{&w.staleConversations, `SELECT agent, context_id FROM conversations WHERE last_at < ?1 LIMIT ?2`},
		{&w.deleteEntriesOf, `DELETE FROM conversation_entries WHERE agent = ?1 AND context_id = ?2`},
		{&w.deleteConversation, `DELETE FROM conversations WHERE agent = ?1 AND context_id = ?2`},
		{&w.insertDelegation, `INSERT INTO delegations (parent_task_id, chain_id, peer, remote_task_id, remote_context_id,
				state, cause, attempts, next_try, last_error, remote_state, created_at, updated_at)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
			ON CONFLICT (parent_task_id, peer, remote_task_id) DO NOTHING`},
		// ?2 is the state the open delegations take, ?3 their cause.
		{&w.endDelegations, `UPDATE delegations SET state = ?2, cause = ?3, next_try = ?4, updated_at = ?4
			WHERE parent_task_id = ?1 AND state = 'open'`},
		{&w.dueCancels, `SELECT ` + sqliteDelegationColumns + ` FROM delegations
			WHERE state = 'cancel' AND next_try <= ?1 ORDER BY next_try, id LIMIT ?2`},
		{&w.claimCancel, `UPDATE delegations SET next_try = ?2 WHERE id = ?1`},
		{&w.updateDelegation, `UPDATE delegations SET state = ?2, attempts = ?3, next_try = ?4, last_error = ?5,
				remote_state = ?6, updated_at = ?7 WHERE id = ?1`},
		{&w.pruneDelegations, `DELETE FROM delegations WHERE id IN (SELECT id FROM delegations
			WHERE state NOT IN ('open', 'cancel') AND updated_at < ?1 LIMIT ?2)`},
	}
}

// prepare prepares every statement of w on its connection.
func (w *writer) prepare(ctx context.Context) error {
	for _, s := range w.statements() {
		st, err := w.conn.PrepareContext(ctx, s.text)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", firstLine(s.text), err)
		}
		*s.dst = st
	}
	return nil
}

// close closes the prepared statements.
func (w *writer) close() {
	for _, s := range w.statements() {
		if *s.dst != nil {
			_ = (*s.dst).Close()
		}
	}
}

// firstLine is the first line of a statement, for error messages.
func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// saveTaskRow stores one task row; args are those of insertTask (id,
// context, owner, state, terminal, status time, creation time, task,
// agent). The task counts are kept here, not by triggers: a trigger on
// tasks makes SQLite keep a statement journal for every save (a copy of
// each page the statement touches, in case it must undo just that
// statement), which cost more than the save's own B-tree work. The
// writer rolls the whole transaction back when a statement fails, so it
// never needs a statement undone on its own.
func (w *writer) saveTaskRow(args []any) error {
	owner, state := args[2].(string), args[3].(string)
	w.rowWrites.Add(1)
	n, err := w.exec(w.insertTask, args...)
	if err != nil {
		return err
	}
	if n == 1 {
		w.count(owner, state, 1)
		return nil
	}
	var oldOwner, oldState string
	if err := w.taskCounted.QueryRow(args[0]).Scan(&oldOwner, &oldState); err != nil {
		return err
	}
	if _, err := w.updateTask.Exec(args...); err != nil {
		return err
	}
	if oldOwner != owner || oldState != state {
		w.count(oldOwner, oldState, -1)
		w.count(owner, state, 1)
	}
	return nil
}

// pruneTaskRows deletes up to batch terminal tasks whose status is older
// than cutoff (Unix ms). The count changes of saves earlier in the same
// transaction are written first: the delete trigger subtracts from the
// stored counters, which must already hold what it deletes (else a task
// saved and pruned in one group commit stays counted).
func (w *writer) pruneTaskRows(cutoff int64, batch int) (int64, error) {
	if err := w.flushCounts(); err != nil {
		return 0, err
	}
	return w.exec(w.pruneTasks, cutoff, batch)
}

// count records a change of the number of tasks of owner in state.
func (w *writer) count(owner, state string, d int64) {
	if w.counts == nil {
		w.counts = make(map[countKey]int64)
	}
	w.counts[countKey{owner, state}] += d
}

// flushCounts writes the count changes of the transaction (a few rows per
// group commit however many saves it carries) and forgets them.
func (w *writer) flushCounts() error {
	if len(w.counts) == 0 {
		return nil
	}
	defer clear(w.counts)
	byState := make(map[string]int64, 2)
	for k, d := range w.counts {
		if d == 0 {
			continue
		}
		byState[k.state] += d
		if _, err := w.addCount.Exec(k.owner, k.state, d); err != nil {
			return err
		}
		if d < 0 {
			if _, err := w.dropCount.Exec(k.owner, k.state); err != nil {
				return err
			}
		}
	}
	for state, d := range byState {
		if d == 0 {
			continue
		}
		if _, err := w.addStateCount.Exec(state, d); err != nil {
			return err
		}
	}
	return nil
}

// exec runs a prepared statement and returns the number of rows changed.
func (w *writer) exec(st *sql.Stmt, args ...any) (int64, error) {
	res, err := st.Exec(args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// write hands op to the writer goroutine and waits for its batch to
// commit. When it returns nil the write is committed (durable as the
// synchronous setting promises). If ctx ends first, write returns
// ctx.Err() and the outcome is unknown: the op may still commit. An op
// whose ctx has ended before its batch starts is skipped.
func (s *SQLite) write(ctx context.Context, op func(*writer) error) error {
	return s.submit(ctx, op, nil)
}

// submit hands a write to the writer goroutine: op, or a save to journal
// (which the writer answers once it is journaled, see journalBatch).
func (s *SQLite) submit(ctx context.Context, op func(*writer) error, save *jrec) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := writeReqPool.Get().(*writeReq)
	r.ctx, r.op, r.save, r.err = ctx, op, save, nil
	select {
	case s.reqs <- r:
	case <-s.quit:
		r.ctx, r.op, r.save = nil, nil, nil
		writeReqPool.Put(r)
		return errClosed
	case <-ctx.Done():
		r.ctx, r.op, r.save = nil, nil, nil
		writeReqPool.Put(r)
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		r.ctx, r.op, r.save, r.err = nil, nil, nil, nil
		writeReqPool.Put(r)
		return err
	case <-ctx.Done():
		// The writer still answers into r.done (buffered); r is simply
		// not reused.
		return ctx.Err()
	}
}

// runWriter is the writer goroutine: it takes one request, then every
// request already waiting (up to maxBatch), journals the saves among them
// with one write, answers those and hands everything, in order, to the
// applier (journalBatch). Callers that arrive meanwhile wait on the
// unbuffered channel and form the next batch, so the batch size follows
// the number of concurrent writers and one journal write serves them all.
// When it stops (Close) the applier applies what is left and stops too.
func (s *SQLite) runWriter() {
	defer close(s.writerDone)
	defer s.q.close()
	batch := make([]*writeReq, 0, s.maxBatch)
	for {
		select {
		case r := <-s.reqs:
			batch = append(batch[:0], r)
		case <-s.quit:
			return
		}
		s.fill(&batch)
		s.journalBatch(batch)
		clear(batch)
	}
}

// fill adds to batch the requests already waiting. When the queue runs
// dry it yields the processor a few times before giving up: callers woken
// by the previous commit are usually runnable but not yet queued (they
// still encode their records), and on few cores they only get to run if
// the writer steps aside. A yield with nothing else runnable costs well
// under a microsecond, so a lone writer loses nothing.
func (s *SQLite) fill(batch *[]*writeReq) {
	for yields := 0; len(*batch) < s.maxBatch; {
		select {
		case r := <-s.reqs:
			*batch = append(*batch, r)
			continue
		default:
		}
		if yields == s.yields {
			return
		}
		yields++
		runtime.Gosched()
	}
}

// tryBatch runs reqs in one transaction and sets each request's err. It
// returns false (having rolled back, with errs unset) when an op of a
// multi-op batch failed after it may have written.
func (s *SQLite) tryBatch(reqs []*writeReq) (ok bool) {
	w := s.w
	setAll := func(err error) {
		for _, r := range reqs {
			r.err = err
		}
	}
	clear(w.counts)
	if _, err := w.begin.Exec(); err != nil {
		setAll(fmt.Errorf("store: begin write transaction on %s: %w", s.path, err))
		return true
	}
	defer func() {
		if p := recover(); p != nil {
			clear(w.counts)
			_, _ = w.rollback.Exec()
			if len(reqs) > 1 {
				ok = false
				return
			}
			setAll(fmt.Errorf("store: write on %s panicked: %v", s.path, p))
			ok = true
		}
	}()
	var seq int64
	for _, r := range reqs {
		if r.save != nil {
			r.err = w.applySave(r.save)
			seq = max(seq, r.seq)
		} else {
			r.err = r.op(w)
		}
		var ce cleanError
		if r.err == nil || errors.As(r.err, &ce) {
			continue
		}
		clear(w.counts)
		_, _ = w.rollback.Exec()
		return len(reqs) <= 1
	}
	if err := w.flushCounts(); err != nil {
		_, _ = w.rollback.Exec()
		if len(reqs) > 1 {
			return false
		}
		setAll(fmt.Errorf("store: count tasks on %s: %w", s.path, err))
		return true
	}
	if seq > 0 {
		if _, err := w.setApplied.Exec(s.stateKey, seq); err != nil {
			_, _ = w.rollback.Exec()
			if len(reqs) > 1 {
				return false
			}
			setAll(fmt.Errorf("store: record the applied journal on %s: %w", s.path, err))
			return true
		}
	}
	if _, err := w.commit.Exec(); err != nil {
		_, _ = w.rollback.Exec()
		setAll(fmt.Errorf("store: commit on %s: %w", s.path, err))
		return true
	}
	if s.commits.Add(1)%checkpointKick == 0 {
		select {
		case s.ckptKick <- struct{}{}:
		default:
		}
	}
	s.committedOps.Add(int64(len(reqs)))
	return true
}

// applySave writes a journaled save (saveTaskRow).
func (w *writer) applySave(r *jrec) error {
	if w.failSaves.Load() > 0 && w.failSaves.Add(-1) >= 0 {
		return fmt.Errorf("store: save task %s: injected failure", r.id)
	}
	if err := w.saveTaskRow(r.args()); err != nil {
		return fmt.Errorf("store: save task %s: %w", r.id, err)
	}
	return nil
}
