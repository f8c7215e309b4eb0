package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDelegationColumns are the columns scanDelegation reads.
const pgDelegationColumns = `id, parent_task_id, chain_id, peer, remote_task_id, remote_context_id, state, cause,
	attempts, next_try, last_error, remote_state, created_at, updated_at`

// AddDelegation implements Store.
func (s *Postgres) AddDelegation(ctx context.Context, d *Delegation) error {
	if err := checkDelegation(d); err != nil {
		return err
	}
	c := *d
	delegationTimes(&c, time.Now())
	_, err := s.pool.Exec(ctx, `INSERT INTO delegations (parent_task_id, chain_id, peer, remote_task_id, remote_context_id,
			state, cause, attempts, next_try, last_error, remote_state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (parent_task_id, peer, remote_task_id) DO NOTHING`,
		c.ParentTaskID, c.ChainID, c.Peer, c.RemoteTaskID, c.RemoteContextID, c.State, c.Cause, c.Attempts,
		c.NextTry.UnixMilli(), c.LastError, c.RemoteState, c.CreatedAt.UnixMilli(), c.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: record delegation of task %s to %s task %s: %w", c.ParentTaskID, c.Peer, c.RemoteTaskID, err)
	}
	return nil
}

// EndDelegations implements Store.
func (s *Postgres) EndDelegations(ctx context.Context, parentTaskID string, cancel bool, cause string, now time.Time) (int, error) {
	state := DelegationKept
	if cancel {
		state = DelegationCancel
	}
	tag, err := s.pool.Exec(ctx, `UPDATE delegations SET state = $2, cause = $3, next_try = $4, updated_at = $4
		WHERE parent_task_id = $1 AND state = 'open'`, parentTaskID, state, cause, now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: end the delegations of task %s: %w", parentTaskID, err)
	}
	return int(tag.RowsAffected()), nil
}

// ClaimCancels implements Store for replicas sharing the store: rows
// another replica is claiming at the same moment are skipped (FOR UPDATE
// SKIP LOCKED), so each cancel has one holder at a time.
func (s *Postgres) ClaimCancels(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delegation, error) {
	if limit <= 0 {
		limit = 100
	}
	nowMs := now.UnixMilli()
	rows, err := s.pool.Query(ctx, `UPDATE delegations d SET next_try = $2
		FROM (SELECT id FROM delegations WHERE state = 'cancel' AND next_try <= $1
			ORDER BY next_try, id LIMIT $3 FOR UPDATE SKIP LOCKED) due
		WHERE d.id = due.id
		RETURNING d.id, d.parent_task_id, d.chain_id, d.peer, d.remote_task_id, d.remote_context_id, d.state, d.cause,
			d.attempts, d.next_try, d.last_error, d.remote_state, d.created_at, d.updated_at`,
		nowMs, nowMs+lease.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: claim cancels: %w", err)
	}
	return scanDelegations(rows, "claim cancels")
}

// scanDelegations reads and closes rs.
func scanDelegations(rs pgx.Rows, what string) ([]Delegation, error) {
	defer rs.Close()
	ds, err := collect(rs, what, scanDelegation(what))
	sortDelegations(ds)
	return ds, err
}

// UpdateDelegation implements Store.
func (s *Postgres) UpdateDelegation(ctx context.Context, d *Delegation) error {
	tag, err := s.pool.Exec(ctx, `UPDATE delegations SET state = $2, attempts = $3, next_try = $4, last_error = $5,
			remote_state = $6, updated_at = $7 WHERE id = $1`,
		d.ID, d.State, d.Attempts, d.NextTry.UnixMilli(), d.LastError, d.RemoteState, d.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: update delegation %d: %w", d.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: delegation %d: %w", d.ID, ErrNotFound)
	}
	return nil
}

// Delegations implements Store.
func (s *Postgres) Delegations(ctx context.Context, parentTaskID string) ([]Delegation, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+pgDelegationColumns+` FROM delegations WHERE parent_task_id = $1 ORDER BY id`, parentTaskID)
	if err != nil {
		return nil, fmt.Errorf("store: delegations of task %s: %w", parentTaskID, err)
	}
	return scanDelegations(rows, "delegations of task "+parentTaskID)
}

// OpenDelegationParents implements Store.
func (s *Postgres) OpenDelegationParents(ctx context.Context) ([]string, error) {
	rs, err := s.pool.Query(ctx, `SELECT DISTINCT parent_task_id FROM delegations WHERE state = 'open' ORDER BY parent_task_id`)
	if err != nil {
		return nil, fmt.Errorf("store: open delegations: %w", err)
	}
	defer rs.Close()
	return collect(rs, "open delegations", func(r rows) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	})
}
