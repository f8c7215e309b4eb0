package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// delegation makes an open delegation of parent to peer's task remote.
func delegation(parent, peer, remote string) *store.Delegation {
	return &store.Delegation{ParentTaskID: parent, ChainID: "chain-" + parent, Peer: peer, RemoteTaskID: remote,
		RemoteContextID: "ctx-" + remote, State: store.DelegationOpen, CreatedAt: at(0)}
}

// mustAdd records delegations.
func mustAdd(t *testing.T, s store.Store, ds ...*store.Delegation) {
	t.Helper()
	for _, d := range ds {
		if err := s.AddDelegation(context.Background(), d); err != nil {
			t.Fatalf("AddDelegation %s→%s: %v", d.ParentTaskID, d.RemoteTaskID, err)
		}
	}
}

// delegationsOf returns a parent's delegations.
func delegationsOf(t *testing.T, s store.Store, parent string) []store.Delegation {
	t.Helper()
	ds, err := s.Delegations(context.Background(), parent)
	if err != nil {
		t.Fatalf("Delegations(%s): %v", parent, err)
	}
	return ds
}

// remotes lists the remote task ids of ds with their states.
func remotes(ds []store.Delegation) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.RemoteTaskID + ":" + d.State
	}
	return out
}

// testDelegationsRecordAndEnd: delegations are kept per parent in the order
// recorded, with every field; recording one twice changes nothing; ending a
// parent cancels (or keeps) only its open delegations, and only once.
func testDelegationsRecordAndEnd(t *testing.T, s store.Store) {
	ctx := context.Background()
	b, c := delegation("p1", "bob", "tb"), delegation("p1", "carol", "tc")
	other := delegation("p2", "bob", "tb2")
	mustAdd(t, s, b, c, other)
	again := *b
	again.ChainID, again.State = "chain-other", store.DelegationFailed
	mustAdd(t, s, &again)

	ds := delegationsOf(t, s, "p1")
	if got := remotes(ds); !slices.Equal(got, []string{"tb:open", "tc:open"}) {
		t.Fatalf("delegations of p1 = %v, want tb and tc, open, in order", got)
	}
	d := ds[0]
	if d.ID == 0 || d.ChainID != "chain-p1" || d.Peer != "bob" || d.RemoteContextID != "ctx-tb" || !d.CreatedAt.Equal(at(0)) || !d.UpdatedAt.Equal(at(0)) {
		t.Errorf("stored delegation = %+v", d)
	}
	if ds[1].ID <= ds[0].ID {
		t.Errorf("ids %d, %d do not follow the order of recording", ds[0].ID, ds[1].ID)
	}
	if got := delegationsOf(t, s, "nobody"); len(got) != 0 {
		t.Errorf("delegations of an unknown task = %v", got)
	}
	parents, err := s.OpenDelegationParents(ctx)
	if err != nil || !slices.Equal(parents, []string{"p1", "p2"}) {
		t.Fatalf("OpenDelegationParents = %v, %v; want p1, p2", parents, err)
	}

	n, err := s.EndDelegations(ctx, "p1", true, a2a.TaskStateCanceled.String(), at(5))
	if err != nil || n != 2 {
		t.Fatalf("EndDelegations(p1, cancel) = %d, %v; want 2", n, err)
	}
	ds = delegationsOf(t, s, "p1")
	if got := remotes(ds); !slices.Equal(got, []string{"tb:cancel", "tc:cancel"}) {
		t.Fatalf("after the end: %v, want both to cancel", got)
	}
	if ds[0].Cause != a2a.TaskStateCanceled.String() || !ds[0].NextTry.Equal(at(5)) || !ds[0].UpdatedAt.Equal(at(5)) {
		t.Errorf("a delegation to cancel = %+v; want cause CANCELED, due and updated at the end", ds[0])
	}
	if n, err := s.EndDelegations(ctx, "p1", false, "", at(6)); err != nil || n != 0 {
		t.Errorf("ending p1 again = %d, %v; want nothing changed", n, err)
	}
	if got := remotes(delegationsOf(t, s, "p2")); !slices.Equal(got, []string{"tb2:open"}) {
		t.Errorf("p2's delegation changed with p1's end: %v", got)
	}
	if n, err := s.EndDelegations(ctx, "p2", false, a2a.TaskStateCompleted.String(), at(7)); err != nil || n != 1 {
		t.Fatalf("EndDelegations(p2, keep) = %d, %v; want 1", n, err)
	}
	if got := remotes(delegationsOf(t, s, "p2")); !slices.Equal(got, []string{"tb2:kept"}) {
		t.Errorf("p2 after a keeping end: %v", got)
	}
	if parents, err := s.OpenDelegationParents(ctx); err != nil || len(parents) != 0 {
		t.Errorf("OpenDelegationParents after both ended = %v, %v", parents, err)
	}
	// A delegation recorded after its parent ended may come in any state.
	late := delegation("p1", "dave", "td")
	late.State, late.NextTry = store.DelegationCancel, at(8)
	mustAdd(t, s, late)
	if got := remotes(delegationsOf(t, s, "p1")); !slices.Equal(got, []string{"tb:cancel", "tc:cancel", "td:cancel"}) {
		t.Errorf("after a late one: %v", got)
	}
	for _, bad := range []*store.Delegation{nil, {Peer: "x", RemoteTaskID: "y", State: "open"}, {ParentTaskID: "p", RemoteTaskID: "y", State: "open"},
		{ParentTaskID: "p", Peer: "x", State: "open"}, {ParentTaskID: "p", Peer: "x", RemoteTaskID: "y"}} {
		if err := s.AddDelegation(ctx, bad); err == nil {
			t.Errorf("AddDelegation(%+v) was accepted", bad)
		}
	}
}

// testDelegationsClaimAndUpdate: ClaimCancels takes due cancels only, holds
// them for the lease, and gives them again after it; UpdateDelegation
// settles them.
func testDelegationsClaimAndUpdate(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustAdd(t, s, delegation("p1", "bob", "tb"), delegation("p1", "carol", "tc"), delegation("p2", "bob", "tx"))
	if _, err := s.EndDelegations(ctx, "p1", true, "TASK_STATE_CANCELED", at(10)); err != nil {
		t.Fatal(err)
	}
	claim := func(now time.Time, limit int) []store.Delegation {
		t.Helper()
		ds, err := s.ClaimCancels(ctx, now, time.Second, limit)
		if err != nil {
			t.Fatalf("ClaimCancels: %v", err)
		}
		return ds
	}
	if got := claim(at(9), 0); len(got) != 0 {
		t.Fatalf("claimed before due: %v", remotes(got))
	}
	got := claim(at(10), 1)
	if len(got) != 1 || got[0].RemoteTaskID != "tb" || !got[0].NextTry.Equal(at(1010)) {
		t.Fatalf("first claim = %+v; want tb held until its lease ends", got)
	}
	if got := claim(at(20), 0); len(got) != 1 || got[0].RemoteTaskID != "tc" {
		t.Fatalf("second claim = %v; want tc only (tb is held)", remotes(got))
	}
	if got := claim(at(20), 0); len(got) != 0 {
		t.Fatalf("claimed again while held: %v", remotes(got))
	}
	// The lease lapses: tb is due again, as when its claimer died.
	again := claim(at(1010), 0)
	if len(again) != 1 || again[0].RemoteTaskID != "tb" {
		t.Fatalf("after tb's lease = %v; want tb", remotes(again))
	}
	d := again[0]
	d.State, d.Attempts, d.NextTry, d.LastError, d.UpdatedAt = store.DelegationCancel, 1, at(5000), "peer unreachable", at(1011)
	if err := s.UpdateDelegation(ctx, &d); err != nil {
		t.Fatal(err)
	}
	// tc's lease has lapsed by now; tb waits for its retry.
	if got := claim(at(4999), 0); len(got) != 1 || got[0].RemoteTaskID != "tc" {
		t.Fatalf("claim before tb's retry = %v; want tc alone", remotes(got))
	}
	got = claim(at(5000), 0)
	if len(got) != 1 || got[0].RemoteTaskID != "tb" || got[0].Attempts != 1 || got[0].LastError != "peer unreachable" {
		t.Fatalf("claim at the retry = %+v; want tb with its attempt and error", got)
	}
	d = got[0]
	d.State, d.RemoteState, d.LastError, d.UpdatedAt = store.DelegationCanceled, "TASK_STATE_CANCELED", "", at(5001)
	if err := s.UpdateDelegation(ctx, &d); err != nil {
		t.Fatal(err)
	}
	ds := delegationsOf(t, s, "p1")
	if ds[0].State != store.DelegationCanceled || ds[0].RemoteState != "TASK_STATE_CANCELED" || ds[0].Attempts != 1 || !ds[0].UpdatedAt.Equal(at(5001)) {
		t.Errorf("settled delegation = %+v", ds[0])
	}
	if got := claim(at(99999), 0); len(got) != 1 || got[0].RemoteTaskID != "tc" {
		t.Errorf("a settled cancel was claimed, or tc was lost: %v", remotes(got))
	}
	missing := store.Delegation{ID: 987654, State: store.DelegationFailed, UpdatedAt: at(1)}
	if err := s.UpdateDelegation(ctx, &missing); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateDelegation of a missing one = %v, want ErrNotFound", err)
	}
}

// testDelegationsPrune: Prune removes settled delegations last updated
// before the cutoff and keeps open ones and cancels still to make.
func testDelegationsPrune(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustAdd(t, s, delegation("p1", "bob", "old"), delegation("p1", "bob", "due"), delegation("p2", "bob", "open"),
		delegation("p3", "bob", "new"))
	if _, err := s.EndDelegations(ctx, "p1", true, "TASK_STATE_FAILED", at(10)); err != nil {
		t.Fatal(err)
	}
	ds := delegationsOf(t, s, "p1")
	ds[0].State, ds[0].UpdatedAt = store.DelegationFailed, at(20)
	if err := s.UpdateDelegation(ctx, &ds[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndDelegations(ctx, "p3", false, "TASK_STATE_COMPLETED", at(10_000)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Prune(ctx, at(5000)); err != nil {
		t.Fatal(err)
	}
	if got := remotes(delegationsOf(t, s, "p1")); !slices.Equal(got, []string{"due:cancel"}) {
		t.Errorf("p1 after Prune: %v, want only the cancel still due", got)
	}
	if got := remotes(delegationsOf(t, s, "p2")); !slices.Equal(got, []string{"open:open"}) {
		t.Errorf("p2 after Prune: %v, want its open delegation", got)
	}
	if got := remotes(delegationsOf(t, s, "p3")); !slices.Equal(got, []string{"new:kept"}) {
		t.Errorf("p3 after Prune: %v, want its recent one", got)
	}
}
