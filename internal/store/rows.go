package store

import (
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// rows is what the SQLite (*sql.Rows) and PostgreSQL (pgx.Rows) result
// sets share, so both stores read their rows with the functions below.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// collect reads every row of rs with scan. Errors say what was read
// ("store: <what>: …"); scan's own errors are returned as they are.
// The caller closes rs.
func collect[T any](rs rows, what string, scan func(rows) (T, error)) ([]T, error) {
	var out []T
	for rs.Next() {
		v, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, nil
}

// scanTask reads (id, owner, agent, created_at, status_ts, task).
func scanTask(what string) func(rows) (*TaskRecord, error) {
	return func(r rows) (*TaskRecord, error) {
		var (
			id, owner, agent string
			created, ts      int64
			blob             []byte
		)
		if err := r.Scan(&id, &owner, &agent, &created, &ts, &blob); err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		return decodeTask(id, owner, agent, created, ts, blob)
	}
}

// scanPushConfig reads (id, owner, created_at, config) of taskID's configs.
func scanPushConfig(taskID string) func(rows) (*PushConfig, error) {
	return func(r rows) (*PushConfig, error) {
		var (
			id, owner string
			created   int64
			blob      []byte
		)
		if err := r.Scan(&id, &owner, &created, &blob); err != nil {
			return nil, fmt.Errorf("store: list push configs of task %s: %w", taskID, err)
		}
		return decodePushConfig(taskID, id, owner, created, blob)
	}
}

// scanDelivery reads the outbox columns (id, task_id, config_id, body,
// attempts, next_try, last_error, created_at, context_id, traceparent,
// tracestate).
func scanDelivery(what string) func(rows) (Delivery, error) {
	return func(r rows) (Delivery, error) {
		var (
			d             Delivery
			next, created int64
		)
		if err := r.Scan(&d.ID, &d.TaskID, &d.ConfigID, &d.Body, &d.Attempts, &next, &d.LastError, &created,
			&d.ContextID, &d.Trace.Traceparent, &d.Trace.Tracestate); err != nil {
			return Delivery{}, fmt.Errorf("store: %s: %w", what, err)
		}
		d.NextTry, d.CreatedAt = fromMillis(next), fromMillis(created)
		return d, nil
	}
}

// scanConversationEntry reads (id, context_id, peer, direction, task_id,
// message_id, state, text, parts, at) of contextID's entries.
func scanConversationEntry(contextID string) func(rows) (ConversationEntry, error) {
	return func(r rows) (ConversationEntry, error) {
		var (
			e     ConversationEntry
			parts []byte
			at    int64
		)
		if err := r.Scan(&e.ID, &e.ContextID, &e.Agent, &e.Peer, &e.Direction, &e.TaskID, &e.MessageID, &e.State, &e.Text, &parts, &at); err != nil {
			return e, fmt.Errorf("store: conversation %s: %w", contextID, err)
		}
		if len(parts) > 0 {
			if err := a2a.Unmarshal(parts, &e.Parts); err != nil {
				return e, fmt.Errorf("store: decode conversation entry %d of context %s: %w", e.ID, contextID, err)
			}
		}
		e.Time = fromMillis(at)
		return e, nil
	}
}

// scanConversationSummary reads (context_id, peer, entries, last_task_id,
// last_state, first_at, last_at).
func scanConversationSummary(r rows) (ConversationSummary, error) {
	var (
		c           ConversationSummary
		first, last int64
	)
	if err := r.Scan(&c.ContextID, &c.Peer, &c.Entries, &c.LastTaskID, &c.LastState, &first, &last); err != nil {
		return c, fmt.Errorf("store: conversations: %w", err)
	}
	c.FirstAt, c.LastAt = fromMillis(first), fromMillis(last)
	return c, nil
}

// encodeEntryParts is the stored form of e's parts: JSON, or nil for none.
func encodeEntryParts(e *ConversationEntry) ([]byte, error) {
	if len(e.Parts) == 0 {
		return nil, nil
	}
	b, err := a2a.Marshal(e.Parts)
	if err != nil {
		return nil, fmt.Errorf("store: encode conversation entry of context %s: %w", e.ContextID, err)
	}
	return b, nil
}

// scanDelegation reads the delegation columns (sqliteDelegationColumns,
// pgDelegationColumns: the same names in the same order).
func scanDelegation(what string) func(rows) (Delegation, error) {
	return func(r rows) (Delegation, error) {
		var (
			d                      Delegation
			next, created, updated int64
		)
		if err := r.Scan(&d.ID, &d.ParentTaskID, &d.ChainID, &d.Peer, &d.RemoteTaskID, &d.RemoteContextID, &d.State, &d.Cause,
			&d.Attempts, &next, &d.LastError, &d.RemoteState, &created, &updated); err != nil {
			return Delegation{}, fmt.Errorf("store: %s: %w", what, err)
		}
		d.NextTry, d.CreatedAt, d.UpdatedAt = fromMillis(next), fromMillis(created), fromMillis(updated)
		return d, nil
	}
}
