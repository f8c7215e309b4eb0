package security

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// Delegation bounds that do not depend on metadata. The delegation chain
// ([Chain], [CheckDepth]) stops a loop only while every agent on it
// forwards the chain's metadata; an agent that drops it starts every hop
// afresh, and a ring through it runs until something else stops it. A
// [DelegationGuard] counts what this agent itself does while it answers
// an inbound task: outbound calls per inbound task, and outbound calls per
// minute on behalf of one caller (the inbound identity, which a peer
// cannot change from message to message — unlike a context id, which it
// may make up anew for every message).
const (
	// DefaultMaxCallsPerTask is the outbound calls one inbound task may
	// make.
	DefaultMaxCallsPerTask = 10
	// DefaultMaxCallsPerMinute is the outbound calls per minute made
	// while answering the tasks of one caller.
	DefaultMaxCallsPerMinute = 30
)

// ErrTooManyDelegations is returned (wrapped) by [DelegationGuard.Admit].
var ErrTooManyDelegations = errors.New("too many delegations")

// DelegationGuard bounds the outbound calls made while answering inbound
// tasks. Safe for concurrent use; memory is bounded (tasks are keyed by a
// seeded hash, at most [MaxTrackedContexts] of them, idle ones forgotten
// after [DefaultTurnIdle]; callers as in [RateLimiter]).
type DelegationGuard struct {
	perTask int
	perMin  *RateLimiter
	minute  int
	now     func() time.Time

	mu    sync.Mutex
	seed  maphash.Seed
	tasks map[uint64]turnCount
	calls int
}

// NewDelegationGuard allows perTask outbound calls per inbound task and
// perMinute per caller in any sliding minute; 0 (or less) turns either
// bound off. now is the clock (time.Now when nil).
func NewDelegationGuard(perTask, perMinute int, now func() time.Time) *DelegationGuard {
	if now == nil {
		now = time.Now
	}
	g := &DelegationGuard{perTask: perTask, minute: perMinute, now: now, seed: maphash.MakeSeed(), tasks: map[uint64]turnCount{}}
	if perMinute > 0 {
		g.perMin = NewRateLimiter(perMinute, now)
	}
	return g
}

// Admit counts n outbound calls made while answering taskID for caller,
// or refuses them all with an error (wrapping [ErrTooManyDelegations])
// that says which bound and setting stopped them. A nil guard admits
// everything.
func (g *DelegationGuard) Admit(taskID, caller string, n int) error {
	if g == nil || n <= 0 {
		return nil
	}
	if g.perTask > 0 && taskID != "" {
		if used, ok := g.admitTask(taskID, n); !ok {
			return fmt.Errorf("%w: this task (answering %s) already made %d outbound call(s), and %d more would pass the limit of %d per inbound task "+
				"(max_calls_per_task, A2A_MAX_CALLS_PER_TASK); answer from what you have instead of delegating further", ErrTooManyDelegations, caller, used, n, g.perTask)
		}
	}
	if g.perMin != nil && caller != "" {
		for range n {
			if ok, wait := g.perMin.Allow(caller); !ok {
				return fmt.Errorf("%w: the %d outbound calls a minute allowed while answering %s are used up (max_calls_per_minute, A2A_MAX_CALLS_PER_MINUTE); "+
					"the agents are probably delegating to each other in a loop through an agent that drops the delegation chain: answer from what you have "+
					"instead of delegating further (a call is free again in %s)", ErrTooManyDelegations, g.minute, caller, max(wait.Round(time.Second), time.Second))
			}
		}
	}
	return nil
}

// admitTask adds n to taskID's count unless that passes the limit; it
// returns the count before.
func (g *DelegationGuard) admitTask(taskID string, n int) (int, bool) {
	now := g.now().UnixNano()
	key := maphash.String(g.seed, taskID)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls++; g.calls >= max(1024, len(g.tasks)) {
		g.calls = 0
		for k, c := range g.tasks {
			if time.Duration(now-c.last) > DefaultTurnIdle {
				delete(g.tasks, k)
			}
		}
	}
	c, found := g.tasks[key]
	if !found && len(g.tasks) >= MaxTrackedContexts {
		evictOldestCounts(g.tasks, len(g.tasks)/8+1)
	}
	c.last = now
	if int(c.n)+n > g.perTask {
		g.tasks[key] = c
		return int(c.n), false
	}
	used := int(c.n)
	c.n += int32(n)
	g.tasks[key] = c
	return used, true
}
