package security

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTurnGuardClampsMax(t *testing.T) {
	tests := map[int]int{-1: DefaultMaxTurns, 0: DefaultMaxTurns, 1: 1, 7: 7, 20: 20, 21: HardMaxTurns, 1000: HardMaxTurns}
	for in, want := range tests {
		if got := NewTurnGuard(in).Max(); got != want {
			t.Errorf("NewTurnGuard(%d).Max() = %d, want %d", in, got, want)
		}
	}
}

func TestTurnGuardRefusesAfterMaxAndResets(t *testing.T) {
	g := NewTurnGuard(3)
	for want := 1; want <= 3; want++ {
		if turn, ok := g.Admit("ctx"); !ok || turn != want {
			t.Fatalf("turn %d: Admit = %d, %v", want, turn, ok)
		}
	}
	if turn, ok := g.Admit("ctx"); ok || turn != 4 {
		t.Fatalf("4th Admit = %d, %v; want 4, false", turn, ok)
	}
	if turn, ok := g.Admit("other"); !ok || turn != 1 {
		t.Fatalf("other context = %d, %v", turn, ok)
	}
	g.Reset("ctx")
	if turn, ok := g.Admit("ctx"); !ok || turn != 1 {
		t.Fatalf("after Reset = %d, %v", turn, ok)
	}
}

func TestTurnGuardForgetsIdleContexts(t *testing.T) {
	clk := newFakeClock()
	g := NewTurnGuardWithClock(1, time.Minute, clk.Now)
	g.Admit("ctx")
	clk.Advance(59 * time.Second)
	if _, ok := g.Admit("ctx"); ok {
		t.Fatal("admitted before idle expiry")
	}
	clk.Advance(59 * time.Second) // the refused turn kept it alive
	if _, ok := g.Admit("ctx"); ok {
		t.Fatal("refused knocking did not keep the context alive")
	}
	clk.Advance(61 * time.Second)
	if turn, ok := g.Admit("ctx"); !ok || turn != 1 {
		t.Fatalf("after idle = %d, %v", turn, ok)
	}
	for i := range 2000 {
		g.Admit(fmt.Sprint("c", i))
	}
	clk.Advance(2 * time.Minute)
	for range 2100 {
		g.Admit("live")
	}
	if n := g.Len(); n != 1 {
		t.Fatalf("tracking %d contexts after idle sweep, want 1", n)
	}
}

func TestTurnGuardBoundsTrackedContexts(t *testing.T) {
	clk := newFakeClock()
	g := NewTurnGuardWithClock(2, time.Hour, clk.Now)
	g.limit = 64
	for i := range 1000 {
		clk.Advance(time.Millisecond)
		g.Admit(fmt.Sprint("c", i))
		if g.Len() > 64 {
			t.Fatalf("tracking %d contexts, cap 64", g.Len())
		}
	}
}

func TestTurnGuardEmptyContextIsNotTracked(t *testing.T) {
	g := NewTurnGuard(1)
	for range 3 {
		if turn, ok := g.Admit(""); !ok || turn != 1 {
			t.Fatalf("Admit(\"\") = %d, %v", turn, ok)
		}
	}
	if g.Len() != 0 {
		t.Fatal("empty context tracked")
	}
}

func TestTurnGuardConcurrentAdmitsExactlyMax(t *testing.T) {
	g := NewTurnGuard(20)
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 10 {
				if _, ok := g.Admit("ctx"); ok {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if admitted != 20 {
		t.Fatalf("admitted %d, want 20", admitted)
	}
}

func TestChainFromMetadata(t *testing.T) {
	var decoded map[string]any
	if err := json.Unmarshal([]byte(`{"a2a-plugin/chain-id":"chain-x","a2a-plugin/chain-depth":2}`), &decoded); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		md   map[string]any
		want Chain
	}{
		{"nil metadata", nil, Chain{}},
		{"no keys", map[string]any{"other": 1}, Chain{}},
		{"decoded JSON number", decoded, Chain{"chain-x", 2}},
		{"string depth", map[string]any{MetaChainID: "c", MetaChainDepth: " 4 "}, Chain{"c", 4}},
		{"int depth", map[string]any{MetaChainDepth: 3}, Chain{"", 3}},
		{"json.Number depth", map[string]any{MetaChainDepth: json.Number("5")}, Chain{"", 5}},
		{"null values", map[string]any{MetaChainID: nil, MetaChainDepth: nil}, Chain{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChainFromMetadata(tt.md)
			if err != nil || got != tt.want {
				t.Fatalf("ChainFromMetadata = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestChainFromMetadataErrors(t *testing.T) {
	tests := []struct {
		name string
		md   map[string]any
		want string
	}{
		{"negative", map[string]any{MetaChainDepth: -1.0}, "negative"},
		{"fraction", map[string]any{MetaChainDepth: 1.5}, "not a whole number"},
		{"huge", map[string]any{MetaChainDepth: 1e12}, "too large"},
		{"word", map[string]any{MetaChainDepth: "two"}, "not a decimal number"},
		{"bool", map[string]any{MetaChainDepth: true}, "a bool"},
		{"id not string", map[string]any{MetaChainID: 7.0}, "must be a string"},
		{"id bad chars", map[string]any{MetaChainID: "a b\n"}, "contains"},
		{"id too long", map[string]any{MetaChainID: strings.Repeat("a", 129)}, "longer than 128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ChainFromMetadata(tt.md)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestChainNextAndApply(t *testing.T) {
	first := Chain{}.Next()
	if first.ID == "" || first.Depth != 1 || !strings.HasPrefix(first.ID, "chain-") {
		t.Fatalf("Next of empty chain = %+v", first)
	}
	if other := (Chain{}).Next(); other.ID == first.ID {
		t.Fatal("two new chains got the same id")
	}
	if err := checkChainID(first.ID); err != nil {
		t.Fatalf("generated id is not valid: %v", err)
	}
	in := map[string]any{"k": "v"}
	md := first.Apply(in)
	if len(in) != 1 {
		t.Fatal("Apply modified its input")
	}
	back, err := ChainFromMetadata(md)
	if err != nil || back != first || md["k"] != "v" {
		t.Fatalf("round trip = %+v, %v (%v)", back, err, md)
	}
	// Through JSON, as it travels.
	b, _ := json.Marshal(first.Apply(nil))
	var decoded map[string]any
	_ = json.Unmarshal(b, &decoded)
	if back, err := ChainFromMetadata(decoded); err != nil || back != first {
		t.Fatalf("JSON round trip = %+v, %v", back, err)
	}
}

// TestChainLoopABCARefusedAtMax walks A→B→C→A: each agent reads the chain
// of its inbound message, checks it, and sends Next on.
func TestChainLoopABCARefusedAtMax(t *testing.T) {
	const maxDepth = 2
	agents := []string{"A", "B", "C", "A"}
	md := map[string]any(nil) // the user's message to A carries no chain
	var id string
	for hop, agent := range agents {
		in, err := ChainFromMetadata(md)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckDepth(in, maxDepth)
		if hop < 3 && err != nil {
			t.Fatalf("agent %s (hop %d) refused: %v", agent, hop, err)
		}
		if hop == 3 {
			if !errors.Is(err, ErrChainTooDeep) {
				t.Fatalf("A accepted the looped message: depth %d", in.Depth)
			}
			if !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "depth 3") {
				t.Fatalf("error does not name chain and depth: %v", err)
			}
			return
		}
		out := in.Next()
		if id == "" {
			id = out.ID
		} else if out.ID != id {
			t.Fatalf("chain id changed from %s to %s", id, out.ID)
		}
		md = out.Apply(map[string]any{"from": agent})
	}
}

func TestCheckDepthDefault(t *testing.T) {
	if err := CheckDepth(Chain{"c", DefaultMaxChainDepth}, 0); err != nil {
		t.Fatalf("depth at default limit refused: %v", err)
	}
	if err := CheckDepth(Chain{"c", DefaultMaxChainDepth + 1}, 0); !errors.Is(err, ErrChainTooDeep) {
		t.Fatalf("depth past default limit: %v", err)
	}
}

func TestReleaseGivesBackARefusedTurn(t *testing.T) {
	g := NewTurnGuard(2)
	g.Admit("c")
	g.Admit("c")
	g.Release("c")
	if _, ok := g.Admit("c"); !ok {
		t.Fatal("a released turn was not given back")
	}
	if _, ok := g.Admit("c"); ok {
		t.Fatal("the cap no longer holds")
	}
	g.Release("unknown") // no effect, no panic
}

// BenchmarkTurnGuardAdmitNewContexts admits a new context per operation
// into a full guard, as a plugin answering one task per context does: the
// cost of evicting the least recently active contexts is spread over the
// admissions it makes room for.
func BenchmarkTurnGuardAdmitNewContexts(b *testing.B) {
	g := NewTurnGuard(5)
	ids := make([]string, MaxTrackedContexts*4)
	for i := range ids {
		ids[i] = fmt.Sprintf("context-%08d", i)
	}
	for _, id := range ids[:MaxTrackedContexts] {
		g.Admit(id)
	}
	b.ResetTimer()
	for i := range b.N {
		g.Admit(ids[i%len(ids)])
	}
}

// TestEvictOldestCountsDeletesTheKLeastRecent checks the selection against
// its definition: exactly k counts go, and none that stays was less
// recently active than one that went (ties included, as many clocks give).
func TestEvictOldestCountsDeletesTheKLeastRecent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 100, 2049, 16384} {
		for _, spread := range []int64{1, 3, 50, 1 << 40} {
			for _, k := range []int{1, n/8 + 1, n / 2, n - 1, n, n + 5} {
				if k <= 0 {
					continue
				}
				counts := map[uint64]turnCount{}
				for i := range n {
					counts[uint64(i)] = turnCount{last: rng.Int64N(spread)}
				}
				before := maps.Clone(counts)
				evictOldestCounts(counts, k)
				if want := max(0, n-k); len(counts) != want {
					t.Fatalf("n=%d k=%d spread=%d: %d counts left, want %d", n, k, spread, len(counts), want)
				}
				newestGone, oldestLeft := int64(math.MinInt64), int64(math.MaxInt64)
				for key, c := range before {
					if _, ok := counts[key]; ok {
						oldestLeft = min(oldestLeft, c.last)
					} else {
						newestGone = max(newestGone, c.last)
					}
				}
				if len(counts) > 0 && newestGone > oldestLeft {
					t.Fatalf("n=%d k=%d spread=%d: evicted one active at %d, kept one at %d", n, k, spread, newestGone, oldestLeft)
				}
			}
		}
	}
}

// TestKthSmallestMatchesSorting compares the selection with a sort,
// duplicates and sorted or reversed inputs included.
func TestKthSmallestMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := [][]int64{{7}, {2, 1}, {5, 5, 5, 5}}
	for _, n := range []int{10, 257, 5000} {
		asc, desc, dup, rnd := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		for i := range n {
			asc[i], desc[i], dup[i], rnd[i] = int64(i), int64(n-i), rng.Int64N(4), rng.Int64()
		}
		inputs = append(inputs, asc, desc, dup, rnd)
	}
	for _, in := range inputs {
		sorted := slices.Sorted(slices.Values(in))
		for _, k := range []int{0, len(in) / 3, len(in) / 2, len(in) - 1} {
			v := slices.Clone(in)
			if got := kthSmallest(v, k); got != sorted[k] {
				t.Fatalf("len %d, k=%d: got %d, want %d", len(in), k, got, sorted[k])
			}
		}
	}
}

// TestMakeRoomIsSweepThenEvict: a full guard's one pass forgets what a
// sweep and then an eviction of the len/8+1 least recently active of the
// rest forget (distinct times, so that no tie leaves a choice), and only
// sweeps when that leaves room.
func TestMakeRoomIsSweepThenEvict(t *testing.T) {
	const idle = time.Minute
	now := time.Unix(10_000, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, idleShare := range []int{0, 1, 3, 8} { // in eighths of the entries
		g := NewTurnGuardWithClock(5, idle, func() time.Time { return now })
		g.limit = 1000
		perm := rng.Perm(g.limit)
		for i, p := range perm {
			last := now.Add(-time.Duration(p+1) * time.Millisecond)
			if i < g.limit*idleShare/8 {
				last = now.Add(-idle - time.Duration(p+1)*time.Millisecond)
			}
			g.turns[uint64(i)] = turnCount{n: 1, last: last.UnixNano()}
		}
		want := maps.Clone(g.turns)
		ref := &TurnGuard{idle: idle, turns: want}
		ref.sweep(now.UnixNano())
		if len(want) >= g.limit {
			evictOldestCounts(want, len(want)/8+1)
		}
		g.makeRoom(now.UnixNano())
		if !maps.Equal(g.turns, want) {
			t.Fatalf("idle share %d/8: makeRoom kept %d counts, a sweep and an eviction %d (or other ones)", idleShare, len(g.turns), len(want))
		}
		if idleShare == 0 && len(g.turns) != g.limit-(g.limit/8+1) {
			t.Fatalf("a full guard with nothing idle kept %d counts, want %d", len(g.turns), g.limit-(g.limit/8+1))
		}
	}
}
