package security

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// RateWindow is the sliding window of a [RateLimiter].
const RateWindow = time.Minute

// MaxTrackedIdentities bounds how many identities a [RateLimiter] keeps at
// once. Past it, idle identities are dropped first and then the least
// recently seen eighth; a dropped identity starts with an empty window.
const MaxTrackedIdentities = 1 << 16

// RateLimiter allows each identity at most perMinute requests in any
// sliding minute. It keeps an exact log: the times of the requests it
// allowed in the last minute (refused requests are not logged), so a caller
// that used its quota learns exactly when the oldest of them leaves the
// window. Memory per identity is one time per allowed request still in the
// window, never more than perMinute; identities idle for a whole window are
// dropped. Safe for concurrent use.
type RateLimiter struct {
	limit int
	now   func() time.Time
	base  time.Time
	max   int // tracked identities; MaxTrackedIdentities outside tests

	mu    sync.Mutex
	logs  map[string]*rateLog
	calls int // since the last sweep
}

// rateLog is a ring of the allowed request times of one identity, as
// offsets from the limiter's base time.
type rateLog struct {
	times []time.Duration
	head  int
	n     int
	last  time.Duration
}

// NewRateLimiter builds a limiter allowing perMinute requests per identity;
// perMinute <= 0 means unlimited. now is the clock (time.Now when nil).
func NewRateLimiter(perMinute int, now func() time.Time) *RateLimiter {
	if now == nil {
		now = time.Now
	}
	return &RateLimiter{limit: perMinute, now: now, base: now(), max: MaxTrackedIdentities, logs: map[string]*rateLog{}}
}

// Allow records a request by identity if the window has room. When it does
// not, ok is false and retryAfter is how long until the oldest logged request
// leaves the window (see [RetryAfterSeconds] for the header value).
func (rl *RateLimiter) Allow(identity string) (ok bool, retryAfter time.Duration) {
	if rl == nil || rl.limit <= 0 {
		return true, 0
	}
	now := rl.now().Sub(rl.base)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.calls++
	if rl.calls >= max(1024, len(rl.logs)) {
		rl.sweep(now)
	}
	l := rl.logs[identity]
	if l == nil {
		if len(rl.logs) >= rl.max {
			rl.sweep(now)
			if len(rl.logs) >= rl.max {
				rl.evictOldest(len(rl.logs)/8 + 1)
			}
		}
		l = &rateLog{}
		rl.logs[identity] = l
	}
	l.expire(now - RateWindow)
	l.last = now
	if l.n < rl.limit {
		l.push(now, rl.limit)
		return true, 0
	}
	retry := l.times[l.head] + RateWindow - now
	return false, min(max(retry, time.Nanosecond), RateWindow) // clamped in case the clock went back
}

// Len reports how many identities the limiter tracks.
func (rl *RateLimiter) Len() int {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return len(rl.logs)
}

// sweep drops identities whose log is empty after expiry.
func (rl *RateLimiter) sweep(now time.Duration) {
	rl.calls = 0
	for id, l := range rl.logs {
		l.expire(now - RateWindow)
		if l.n == 0 {
			delete(rl.logs, id)
		}
	}
}

func (rl *RateLimiter) evictOldest(k int) {
	ids := make([]string, 0, len(rl.logs))
	for id := range rl.logs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(rl.logs[a].last, rl.logs[b].last) })
	for _, id := range ids[:min(k, len(ids))] {
		delete(rl.logs, id)
	}
}

// expire drops request times at or before cutoff: a request made exactly
// one window ago no longer counts.
func (l *rateLog) expire(cutoff time.Duration) {
	for l.n > 0 && l.times[l.head] <= cutoff {
		l.head = (l.head + 1) % len(l.times)
		l.n--
	}
}

// push appends t, growing the ring up to limit entries.
func (l *rateLog) push(t time.Duration, limit int) {
	if l.n == len(l.times) {
		grown := make([]time.Duration, min(limit, max(4, 2*len(l.times))))
		for i := range l.n {
			grown[i] = l.times[(l.head+i)%len(l.times)]
		}
		l.times, l.head = grown, 0
	}
	l.times[(l.head+l.n)%len(l.times)] = t
	l.n++
}

// RetryAfterSeconds turns a wait into a Retry-After header value: whole
// seconds, rounded up, at least 1.
func RetryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// StreamLimiter caps how many streams (SSE subscriptions) each identity may
// hold open at once. Safe for concurrent use; memory is one entry per
// identity with an open stream.
type StreamLimiter struct {
	max    int
	mu     sync.Mutex
	active map[string]int
}

// NewStreamLimiter builds a limiter allowing maxPerIdentity concurrent
// streams per identity; maxPerIdentity <= 0 means unlimited.
func NewStreamLimiter(maxPerIdentity int) *StreamLimiter {
	return &StreamLimiter{max: maxPerIdentity, active: map[string]int{}}
}

// Acquire takes a stream slot for identity. When ok, the caller must call
// release once the stream ends; calling it again does nothing. When the
// identity already holds the maximum, ok is false and release is a no-op.
func (l *StreamLimiter) Acquire(identity string) (release func(), ok bool) {
	if l == nil || l.max <= 0 {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active[identity] >= l.max {
		return func() {}, false
	}
	l.active[identity]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.active[identity]--; l.active[identity] <= 0 {
				delete(l.active, identity)
			}
		})
	}, true
}

// Active reports how many streams identity holds (0 when unlimited).
func (l *StreamLimiter) Active(identity string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active[identity]
}
