package security

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDelegationGuardBoundsCallsPerTaskAndPerCallerMinute: the bounds
// need no metadata: calls per inbound task, and calls per minute on
// behalf of one caller whatever task (or context) they come from; each
// refusal names its setting; a minute later the caller's budget is back;
// 0 turns a bound off.
func TestDelegationGuardBoundsCallsPerTaskAndPerCallerMinute(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	g := NewDelegationGuard(3, 5, clock)

	for i := range 3 {
		if err := g.Admit("task-1", "peer:bob", 1); err != nil {
			t.Fatalf("call %d of task-1: %v", i+1, err)
		}
	}
	err := g.Admit("task-1", "peer:bob", 1)
	if !errors.Is(err, ErrTooManyDelegations) || !strings.Contains(err.Error(), "A2A_MAX_CALLS_PER_TASK") {
		t.Fatalf("4th call of one task: %v", err)
	}
	// A fan-out that would pass the task's limit is refused whole.
	if err := g.Admit("task-2", "peer:carol", 4); !errors.Is(err, ErrTooManyDelegations) {
		t.Fatalf("4 calls at once in a task allowing 3: %v", err)
	}
	// One call per task, each task a new one (a ring through an agent that
	// drops the chain): the caller's minute stops it.
	for i := range 2 {
		if err := g.Admit("ring-"+string(rune('a'+i)), "peer:bob", 1); err != nil {
			t.Fatalf("ring hop %d: %v", i+1, err)
		}
	}
	err = g.Admit("ring-c", "peer:bob", 1)
	if !errors.Is(err, ErrTooManyDelegations) || !strings.Contains(err.Error(), "A2A_MAX_CALLS_PER_MINUTE") || !strings.Contains(err.Error(), "peer:bob") {
		t.Fatalf("6th call for peer:bob within a minute: %v", err)
	}
	// Another caller has its own budget.
	if err := g.Admit("other", "peer:carol", 1); err != nil {
		t.Fatalf("carol: %v", err)
	}
	mu.Lock()
	now = now.Add(RateWindow)
	mu.Unlock()
	if err := g.Admit("ring-d", "peer:bob", 1); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
	off := NewDelegationGuard(0, 0, clock)
	for i := range 100 {
		if err := off.Admit("t", "c", 1); err != nil {
			t.Fatalf("with both bounds off, call %d: %v", i, err)
		}
	}
	var none *DelegationGuard
	if err := none.Admit("t", "c", 1); err != nil {
		t.Fatal(err)
	}
}
