package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// sqliteDelegationColumns are the columns scanDelegation reads.
const sqliteDelegationColumns = `id, parent_task_id, chain_id, peer, remote_task_id, remote_context_id, state, cause,
	attempts, next_try, last_error, remote_state, created_at, updated_at`

// AddDelegation implements Store.
func (s *SQLite) AddDelegation(ctx context.Context, d *Delegation) error {
	if err := checkDelegation(d); err != nil {
		return err
	}
	c := *d
	delegationTimes(&c, time.Now())
	return s.write(ctx, func(w *writer) error {
		if _, err := w.insertDelegation.Exec(c.ParentTaskID, c.ChainID, c.Peer, c.RemoteTaskID, c.RemoteContextID,
			c.State, c.Cause, c.Attempts, c.NextTry.UnixMilli(), c.LastError, c.RemoteState,
			c.CreatedAt.UnixMilli(), c.UpdatedAt.UnixMilli()); err != nil {
			return fmt.Errorf("store: record delegation of task %s to %s task %s: %w", c.ParentTaskID, c.Peer, c.RemoteTaskID, err)
		}
		return nil
	})
}

// EndDelegations implements Store.
func (s *SQLite) EndDelegations(ctx context.Context, parentTaskID string, cancel bool, cause string, now time.Time) (int, error) {
	state := DelegationKept
	if cancel {
		state = DelegationCancel
	}
	var n int64
	err := s.write(ctx, func(w *writer) error {
		var err error
		if n, err = w.exec(w.endDelegations, parentTaskID, state, cause, now.UnixMilli()); err != nil {
			return fmt.Errorf("store: end the delegations of task %s: %w", parentTaskID, err)
		}
		return nil
	})
	if err != nil {
		return 0, err // n is not read: after ctx ended the op may still run
	}
	return int(n), nil
}

// ClaimCancels implements Store: one write transaction reads the due rows
// and moves them past the lease. A reader looks first, so that the
// Tracker's polls cost no write when nothing is due (the usual case).
func (s *SQLite) ClaimCancels(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delegation, error) {
	if limit <= 0 {
		limit = 100
	}
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	var one int
	err = r.anyCancelDue.QueryRowContext(ctx, now.UnixMilli()).Scan(&one)
	s.release(r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: claim cancels: %w", err)
	}
	var out []Delegation
	err = s.write(ctx, func(w *writer) error {
		out = nil
		rows, err := w.dueCancels.Query(now.UnixMilli(), limit)
		if err != nil {
			return clean(fmt.Errorf("store: claim cancels: %w", err))
		}
		ds, err := collect(rows, "claim cancels", scanDelegation("claim cancels"))
		rows.Close()
		if err != nil {
			return clean(err)
		}
		until := now.UnixMilli() + lease.Milliseconds()
		for i := range ds {
			if _, err := w.claimCancel.Exec(ds[i].ID, until); err != nil {
				return fmt.Errorf("store: claim cancel %d: %w", ds[i].ID, err)
			}
			ds[i].NextTry = fromMillis(until)
		}
		sortDelegations(ds)
		out = ds
		return nil
	})
	if err != nil {
		// out is not read: after ctx ended the op may still run.
		return nil, err
	}
	return out, nil
}

// UpdateDelegation implements Store.
func (s *SQLite) UpdateDelegation(ctx context.Context, d *Delegation) error {
	args := []any{d.ID, d.State, d.Attempts, d.NextTry.UnixMilli(), d.LastError, d.RemoteState, d.UpdatedAt.UnixMilli()}
	return s.write(ctx, func(w *writer) error {
		n, err := w.exec(w.updateDelegation, args...)
		if err != nil {
			return fmt.Errorf("store: update delegation %d: %w", d.ID, err)
		}
		if n == 0 {
			return clean(fmt.Errorf("store: delegation %d: %w", d.ID, ErrNotFound))
		}
		return nil
	})
}

// Delegations implements Store.
func (s *SQLite) Delegations(ctx context.Context, parentTaskID string) ([]Delegation, error) {
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	rows, err := r.delegations.QueryContext(ctx, parentTaskID)
	if err != nil {
		return nil, fmt.Errorf("store: delegations of task %s: %w", parentTaskID, err)
	}
	defer rows.Close()
	return collect(rows, "delegations", scanDelegation("delegations of task "+parentTaskID))
}

// OpenDelegationParents implements Store.
func (s *SQLite) OpenDelegationParents(ctx context.Context) ([]string, error) {
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	rs, err := r.openParents.QueryContext(ctx)
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

// pruneDelegations deletes settled delegations last updated before cut
// (Unix milliseconds), in batches.
func (s *SQLite) pruneDelegations(ctx context.Context, cut int64) error {
	for {
		var n int64
		err := s.write(ctx, func(w *writer) error {
			var err error
			if n, err = w.exec(w.pruneDelegations, cut, s.pruneBatch); err != nil {
				return fmt.Errorf("store: prune delegations: %w", err)
			}
			return nil
		})
		if err != nil || n < int64(s.pruneBatch) {
			return err
		}
	}
}
