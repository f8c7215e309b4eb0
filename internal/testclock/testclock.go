// Package testclock is a clock for tests that moves only when told, safe
// for concurrent use: pass Clock.Now where code takes a func() time.Time.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock that reads start until advanced.
func New(start time.Time) *Clock { return &Clock{t: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
