package security

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/testclock"
)

func newFakeClock() *testclock.Clock {
	return testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func TestRateLimiterSlidingWindowAndRetryAfter(t *testing.T) {
	clk := newFakeClock()
	rl := NewRateLimiter(3, clk.Now)
	type step struct {
		advance   time.Duration
		wantOK    bool
		wantRetry time.Duration
	}
	steps := []step{
		{0, true, 0},                                 // t=0
		{10 * time.Second, true, 0},                  // t=10
		{10 * time.Second, true, 0},                  // t=20
		{5 * time.Second, false, 35 * time.Second},   // t=25: oldest (t=0) leaves at 60
		{34 * time.Second, false, time.Second},       // t=59
		{time.Second, true, 0},                       // t=60: t=0 left exactly now
		{0, false, 10 * time.Second},                 // t=60: next to leave is t=10
		{10*time.Second + time.Millisecond, true, 0}, // t=70.001
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		ok, retry := rl.Allow("peer:a")
		if ok != s.wantOK || retry != s.wantRetry {
			t.Fatalf("step %d: Allow = %v, %v; want %v, %v", i, ok, retry, s.wantOK, s.wantRetry)
		}
	}
}

func TestRateLimiterRefusedRequestsDoNotCount(t *testing.T) {
	clk := newFakeClock()
	rl := NewRateLimiter(1, clk.Now)
	rl.Allow("x")
	for range 100 {
		clk.Advance(500 * time.Millisecond)
		rl.Allow("x") // refused, must not extend the window
	}
	clk.Advance(10 * time.Second) // t = 60s
	if ok, _ := rl.Allow("x"); !ok {
		t.Fatal("refused requests kept the window full")
	}
}

func TestRateLimiterIdentitiesAreIndependent(t *testing.T) {
	clk := newFakeClock()
	rl := NewRateLimiter(1, clk.Now)
	if ok, _ := rl.Allow("a"); !ok {
		t.Fatal("a refused")
	}
	if ok, _ := rl.Allow("b"); !ok {
		t.Fatal("b refused after a used its quota")
	}
	if ok, _ := rl.Allow("a"); ok {
		t.Fatal("a allowed twice")
	}
}

func TestRateLimiterZeroIsUnlimited(t *testing.T) {
	rl := NewRateLimiter(0, nil)
	for range 10000 {
		if ok, _ := rl.Allow("a"); !ok {
			t.Fatal("unlimited limiter refused")
		}
	}
	var nilRL *RateLimiter
	if ok, _ := nilRL.Allow("a"); !ok {
		t.Fatal("nil limiter refused")
	}
}

func TestRateLimiterEvictsIdleIdentities(t *testing.T) {
	clk := newFakeClock()
	rl := NewRateLimiter(5, clk.Now)
	for i := range 5000 {
		rl.Allow(fmt.Sprintf("anon:%d", i))
	}
	clk.Advance(RateWindow + time.Second)
	// A sweep runs after as many calls as there are tracked identities.
	for range 5001 {
		rl.Allow("anon:active")
	}
	if n := rl.Len(); n != 1 {
		t.Fatalf("tracked %d identities after they went idle, want 1", n)
	}
}

func TestRateLimiterBoundsTrackedIdentities(t *testing.T) {
	clk := newFakeClock()
	rl := NewRateLimiter(5, clk.Now)
	rl.max = 100
	for i := range 1000 {
		clk.Advance(time.Millisecond)
		rl.Allow(fmt.Sprintf("anon:%d", i))
		if n := rl.Len(); n > 100 {
			t.Fatalf("tracked %d identities, cap 100", n)
		}
	}
	// The most recent identity survives eviction with its log intact.
	for range 4 {
		rl.Allow("anon:999")
	}
	if ok, _ := rl.Allow("anon:999"); ok {
		t.Fatal("recent identity lost its log")
	}
}

func TestRateLimiterConcurrentAllowNeverExceedsLimit(t *testing.T) {
	clk := newFakeClock()
	rl := NewRateLimiter(50, clk.Now)
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 100 {
				if ok, _ := rl.Allow("shared"); ok {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 50 {
		t.Fatalf("allowed %d, want exactly 50", got)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	tests := map[time.Duration]int{0: 1, time.Nanosecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, 35 * time.Second: 35}
	for d, want := range tests {
		if got := RetryAfterSeconds(d); got != want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestStreamLimiter(t *testing.T) {
	l := NewStreamLimiter(2)
	r1, ok1 := l.Acquire("a")
	_, ok2 := l.Acquire("a")
	_, ok3 := l.Acquire("a")
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("acquire results %v %v %v, want true true false", ok1, ok2, ok3)
	}
	if _, ok := l.Acquire("b"); !ok {
		t.Fatal("b refused because of a")
	}
	r1()
	r1() // releasing twice frees one slot only
	if got := l.Active("a"); got != 1 {
		t.Fatalf("active = %d after one release, want 1", got)
	}
	if _, ok := l.Acquire("a"); !ok {
		t.Fatal("slot not freed by release")
	}
	if _, ok := l.Acquire("a"); ok {
		t.Fatal("double release freed two slots")
	}
}

func TestStreamLimiterForgetsIdentitiesWithoutStreams(t *testing.T) {
	l := NewStreamLimiter(1)
	for i := range 100 {
		release, _ := l.Acquire(fmt.Sprint(i))
		release()
	}
	if n := len(l.active); n != 0 {
		t.Fatalf("%d identities kept after all streams closed", n)
	}
	unlimited := NewStreamLimiter(0)
	for range 100 {
		if _, ok := unlimited.Acquire("a"); !ok {
			t.Fatal("unlimited stream limiter refused")
		}
	}
}

func TestStreamLimiterConcurrent(t *testing.T) {
	l := NewStreamLimiter(3)
	var peak, cur atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 200 {
				release, ok := l.Acquire("a")
				if !ok {
					continue
				}
				n := cur.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				cur.Add(-1)
				release()
			}
		})
	}
	wg.Wait()
	if peak.Load() > 3 || l.Active("a") != 0 {
		t.Fatalf("peak %d, active after %d", peak.Load(), l.Active("a"))
	}
}

func BenchmarkRateLimiterAllow(b *testing.B) {
	// A realistic limit; once an identity is at it, calls take the refusal path.
	rl := NewRateLimiter(600, nil)
	b.Run("one-identity", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rl.Allow("peer:a")
		}
	})
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprintf("anon:10.0.%d.%d", i/256, i%256)
	}
	b.Run("1024-identities-parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				rl.Allow(ids[i%len(ids)])
				i++
			}
		})
	})
}
