package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Delegations: the remote tasks the agent's turns started on behalf of
// inbound tasks (see Delegation). The three stores keep them alike; this
// file has what they share and the Memory store's part.

// delegationSettled reports whether a delegation in state st needs nothing
// more: only those are pruned.
func delegationSettled(st string) bool {
	return st != DelegationOpen && st != DelegationCancel
}

// checkDelegation refuses a delegation that names no parent, peer or
// remote task.
func checkDelegation(d *Delegation) error {
	switch {
	case d == nil:
		return errors.New("store: AddDelegation with a nil delegation")
	case d.ParentTaskID == "" || d.Peer == "" || d.RemoteTaskID == "":
		return fmt.Errorf("store: delegation needs a parent task, a peer and a remote task (got %q, %q, %q)", d.ParentTaskID, d.Peer, d.RemoteTaskID)
	case d.State == "":
		return fmt.Errorf("store: delegation of task %s to %s has no state", d.ParentTaskID, d.RemoteTaskID)
	}
	return nil
}

// delegationTimes fills a new delegation's times (now when unset) at
// millisecond precision.
func delegationTimes(d *Delegation, now time.Time) {
	if d.CreatedAt.IsZero() {
		d.CreatedAt = now
	}
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	d.CreatedAt, d.UpdatedAt = fromMillis(d.CreatedAt.UnixMilli()), fromMillis(d.UpdatedAt.UnixMilli())
	d.NextTry = fromMillis(d.NextTry.UnixMilli())
}

// delegationKey identifies a delegation: one remote task per parent.
type delegationKey struct{ parent, peer, remote string }

// memDelegations is the Memory store's delegations. Guarded by Memory.mu.
type memDelegations struct {
	byID     map[int64]*Delegation
	byKey    map[delegationKey]int64
	byParent map[string][]int64 // in id order
	next     int64
}

// AddDelegation implements Store.
func (m *Memory) AddDelegation(ctx context.Context, d *Delegation) error {
	if err := checkDelegation(d); err != nil {
		return err
	}
	c := *d
	delegationTimes(&c, time.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	ds := &m.delegations
	if ds.byID == nil {
		ds.byID, ds.byKey, ds.byParent = map[int64]*Delegation{}, map[delegationKey]int64{}, map[string][]int64{}
	}
	key := delegationKey{c.ParentTaskID, c.Peer, c.RemoteTaskID}
	if _, ok := ds.byKey[key]; ok {
		return nil
	}
	ds.next++
	c.ID = ds.next
	ds.byID[c.ID] = &c
	ds.byKey[key] = c.ID
	ds.byParent[c.ParentTaskID] = append(ds.byParent[c.ParentTaskID], c.ID)
	return nil
}

// EndDelegations implements Store.
func (m *Memory) EndDelegations(ctx context.Context, parentTaskID string, cancel bool, cause string, now time.Time) (int, error) {
	now = fromMillis(now.UnixMilli())
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, id := range m.delegations.byParent[parentTaskID] {
		d := m.delegations.byID[id]
		if d.State != DelegationOpen {
			continue
		}
		d.State, d.UpdatedAt = DelegationKept, now
		if cancel {
			d.State, d.Cause, d.NextTry = DelegationCancel, cause, now
		}
		n++
	}
	return n, nil
}

// ClaimCancels implements Store.
func (m *Memory) ClaimCancels(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delegation, error) {
	if limit <= 0 {
		limit = 100
	}
	cut := now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	var due []*Delegation
	for _, d := range m.delegations.byID {
		if d.State == DelegationCancel && d.NextTry.UnixMilli() <= cut {
			due = append(due, d)
		}
	}
	slices.SortFunc(due, func(a, b *Delegation) int { return cmp.Compare(a.ID, b.ID) })
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]Delegation, len(due))
	for i, d := range due {
		d.NextTry = fromMillis(cut + lease.Milliseconds())
		out[i] = *d
	}
	return out, nil
}

// UpdateDelegation implements Store.
func (m *Memory) UpdateDelegation(ctx context.Context, d *Delegation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.delegations.byID[d.ID]
	if cur == nil {
		return fmt.Errorf("store: delegation %d: %w", d.ID, ErrNotFound)
	}
	cur.State, cur.Attempts, cur.LastError, cur.RemoteState = d.State, d.Attempts, d.LastError, d.RemoteState
	cur.NextTry, cur.UpdatedAt = fromMillis(d.NextTry.UnixMilli()), fromMillis(d.UpdatedAt.UnixMilli())
	return nil
}

// Delegations implements Store.
func (m *Memory) Delegations(ctx context.Context, parentTaskID string) ([]Delegation, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.delegations.byParent[parentTaskID]
	out := make([]Delegation, 0, len(ids))
	for _, id := range ids {
		out = append(out, *m.delegations.byID[id])
	}
	return out, nil
}

// OpenDelegationParents implements Store.
func (m *Memory) OpenDelegationParents(ctx context.Context) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for parent, ids := range m.delegations.byParent {
		for _, id := range ids {
			if m.delegations.byID[id].State == DelegationOpen {
				out = append(out, parent)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// dropDelegationsLocked deletes the settled delegations of parent, or of
// every parent (parent "") last updated before cut (Unix milliseconds;
// math.MaxInt64 for all). m.mu must be held.
func (m *Memory) dropDelegationsLocked(parent string, cut int64) {
	ds := &m.delegations
	drop := func(p string) {
		ids := ds.byParent[p]
		kept := ids[:0]
		for _, id := range ids {
			d := ds.byID[id]
			if delegationSettled(d.State) && d.UpdatedAt.UnixMilli() < cut {
				delete(ds.byID, id)
				delete(ds.byKey, delegationKey{d.ParentTaskID, d.Peer, d.RemoteTaskID})
				continue
			}
			kept = append(kept, id)
		}
		if len(kept) == 0 {
			delete(ds.byParent, p)
		} else {
			ds.byParent[p] = kept
		}
	}
	if parent != "" {
		drop(parent)
		return
	}
	for p := range ds.byParent {
		drop(p)
	}
}

// sortDelegations orders delegations as they were recorded.
func sortDelegations(ds []Delegation) {
	slices.SortFunc(ds, func(a, b Delegation) int { return cmp.Compare(a.ID, b.ID) })
}
