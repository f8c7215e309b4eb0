package security

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Turn-guard limits.
const (
	// DefaultMaxTurns is the per-context inbound turn cap when none is set.
	DefaultMaxTurns = 5
	// HardMaxTurns is the highest cap a TurnGuard accepts; larger settings
	// are lowered to it, so no configuration lets a loop run long.
	HardMaxTurns = 20
	// DefaultTurnIdle is how long a context may stay quiet before its count
	// is forgotten.
	DefaultTurnIdle = 30 * time.Minute
	// MaxTrackedContexts bounds the contexts a TurnGuard keeps; past it the
	// least recently active eighth is forgotten.
	MaxTrackedContexts = 1 << 14
)

// TurnGuard counts inbound turns per A2A context and refuses turns past a
// cap, so two agents answering each other cannot loop for ever. A context
// idle for longer than the idle time starts again from zero, and the host
// (or the user) can reset a context explicitly. Safe for concurrent use.
type TurnGuard struct {
	max   int
	idle  time.Duration
	now   func() time.Time
	limit int // tracked contexts; MaxTrackedContexts outside tests

	// seed keys turns' hash of the context ids.
	seed maphash.Seed

	mu sync.Mutex
	// turns is keyed by a seeded 64-bit hash of the context id, not the
	// id: an entry is 16 bytes plus the map's own, where a peer-chosen
	// id of any length would be kept as well. Two ids that collide share
	// one count, which can only refuse sooner, never later.
	turns map[uint64]turnCount
	// calls counts Admit calls since the last sweep of idle counts.
	calls int
}

// turnCount is one context's count of inbound turns.
type turnCount struct {
	n    int32
	last int64 // unix nanoseconds of the latest turn
}

// NewTurnGuard builds a guard allowing maxTurns inbound turns per context: 0 or
// less means [DefaultMaxTurns], more than [HardMaxTurns] is lowered to it.
// Counts are forgotten after [DefaultTurnIdle] of silence.
func NewTurnGuard(maxTurns int) *TurnGuard {
	return NewTurnGuardWithClock(maxTurns, DefaultTurnIdle, time.Now)
}

// NewTurnGuardWithClock is [NewTurnGuard] with an explicit idle time (0 or
// less means [DefaultTurnIdle]) and clock.
func NewTurnGuardWithClock(maxTurns int, idle time.Duration, now func() time.Time) *TurnGuard {
	switch {
	case maxTurns <= 0:
		maxTurns = DefaultMaxTurns
	case maxTurns > HardMaxTurns:
		maxTurns = HardMaxTurns
	}
	if idle <= 0 {
		idle = DefaultTurnIdle
	}
	if now == nil {
		now = time.Now
	}
	return &TurnGuard{max: maxTurns, idle: idle, now: now, limit: MaxTrackedContexts,
		seed: maphash.MakeSeed(), turns: map[uint64]turnCount{}}
}

// Max returns the effective cap after defaults and clamping.
func (g *TurnGuard) Max() int { return g.max }

// Admit counts one inbound turn for contextID and returns its number. ok is
// false once the context has used its turns; refused turns are not counted
// but do keep the context from going idle, so a peer that keeps knocking
// stays refused. Pass the context id the server resolved for the message;
// an empty id is admitted as turn 1 without being tracked.
func (g *TurnGuard) Admit(contextID string) (turn int, ok bool) {
	if contextID == "" {
		return 1, true
	}
	now := g.now().UnixNano()
	key := maphash.String(g.seed, contextID)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	if g.calls >= max(1024, len(g.turns)) {
		g.sweep(now)
	}
	c, found := g.turns[key]
	if !found || g.idled(c, now) {
		if !found && len(g.turns) >= g.limit {
			g.makeRoom(now)
		}
		c = turnCount{}
	}
	c.last = now
	if int(c.n) >= g.max {
		g.turns[key] = c
		return int(c.n) + 1, false
	}
	c.n++
	g.turns[key] = c
	return int(c.n), true
}

// idled reports whether c has been quiet for longer than the idle time.
func (g *TurnGuard) idled(c turnCount, now int64) bool {
	return time.Duration(now-c.last) > g.idle
}

// Release gives back a turn Admit counted for a message that was refused
// afterwards for another reason (another client's context, a task that is
// still working, …): such a message never reached the agent, so it must
// not use up the conversation's turns.
func (g *TurnGuard) Release(contextID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := maphash.String(g.seed, contextID)
	if c, ok := g.turns[key]; ok && c.n > 0 {
		c.n--
		g.turns[key] = c
	}
}

// Reset forgets the count of contextID, for instance when the local user
// takes part in the conversation again (CancelTask starts it over).
func (g *TurnGuard) Reset(contextID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.turns, maphash.String(g.seed, contextID))
}

// Len reports how many contexts the guard tracks.
func (g *TurnGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.turns)
}

// sweep forgets the counts of contexts that went idle. g.mu must be held.
func (g *TurnGuard) sweep(now int64) {
	g.calls = 0
	for k, c := range g.turns {
		if g.idled(c, now) {
			delete(g.turns, k)
		}
	}
}

// makeRoom makes room in a full guard: it forgets the contexts that went
// idle (a sweep) and then, if the guard is still full, the len/8+1 least
// recently active of the others (evictOldestCounts) — collecting the
// times of the others in the sweep's pass over the map, so that a full
// guard walks its map twice per eviction instead of four times. g.mu must
// be held.
func (g *TurnGuard) makeRoom(now int64) {
	g.calls = 0
	times := make([]int64, 0, len(g.turns))
	for key, c := range g.turns {
		if g.idled(c, now) {
			delete(g.turns, key)
			continue
		}
		times = append(times, c.last)
	}
	if len(g.turns) < g.limit {
		return
	}
	evictOldestTimes(g.turns, times, len(g.turns)/8+1)
}

// evictOldestCounts deletes the k least recently active counts (of those
// last active at the same time as the k-th, any). It finds the k-th
// oldest time by selection, not by sorting every entry: a full guard
// evicts an eighth of itself once every 2,048 new contexts, and sorting
// 16,384 entries each time was about 1 µs per new context.
func evictOldestCounts(counts map[uint64]turnCount, k int) {
	if k <= 0 {
		return
	}
	if k >= len(counts) {
		clear(counts)
		return
	}
	times := make([]int64, 0, len(counts))
	for _, c := range counts {
		times = append(times, c.last)
	}
	evictOldestTimes(counts, times, k)
}

// evictOldestTimes is evictOldestCounts given times, the last activity
// of every count (any order; it is reordered). One pass over the map
// deletes them, where deleting those older than the k-th oldest time and
// then enough of those last active at it took a pass and most of another.
func evictOldestTimes(counts map[uint64]turnCount, times []int64, k int) {
	if k <= 0 {
		return
	}
	if k >= len(counts) {
		clear(counts)
		return
	}
	cut := kthSmallest(times, k-1)
	// The k oldest are those older than cut and as many last active at
	// cut as make k.
	atCut := k
	for _, t := range times {
		if t < cut {
			atCut--
		}
	}
	for key, c := range counts {
		if c.last < cut || (c.last == cut && atCut > 0) {
			if c.last == cut {
				atCut--
			}
			delete(counts, key)
		}
	}
}

// kthSmallest returns the value that would be at index k of a sorted
// copy of v (0 <= k < len(v)), reordering v: quickselect with a
// median-of-three pivot, falling back to a sort if it takes too many
// rounds, so it is never worse than sorting.
func kthSmallest(v []int64, k int) int64 {
	lo, hi := 0, len(v)-1
	for rounds := 0; lo < hi; rounds++ {
		if rounds > 64 {
			slices.Sort(v[lo : hi+1])
			return v[k]
		}
		mid := lo + (hi-lo)/2
		a, b, c := v[lo], v[mid], v[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

// Delegation-chain metadata keys. They travel in the metadata of every
// message the plugin sends to another agent (Message.metadata), namespaced
// with "a2a-plugin/" so they cannot clash with other extensions. Agents that
// do not know them pass them on or drop them; either way they do no harm.
const (
	// MetaChainID holds an opaque id shared by every hop of one delegation
	// chain (a string of at most 128 characters from [A-Za-z0-9._:-]).
	MetaChainID = "a2a-plugin/chain-id"
	// MetaChainDepth holds how many agent-to-agent hops the chain has made
	// so far: 1 on the first message an agent sends on its own behalf. A
	// JSON number; a decimal string is accepted on input.
	MetaChainDepth = "a2a-plugin/chain-depth"
	// MetaCancelCascade holds, in the metadata of a task whose end
	// canceled the remote tasks its turns delegated, how that went (see
	// internal/cascade): counts, and every remote task that could not be
	// canceled yet or at all, with the reason.
	MetaCancelCascade = "a2a-plugin/cancel-cascade"
)

// DefaultMaxChainDepth is the depth limit [CheckDepth] uses when given 0:
// A→B→C→D is allowed, a fourth hop is not.
const DefaultMaxChainDepth = 3

// maxParsedDepth bounds the depth accepted from metadata.
const maxParsedDepth = 1 << 20

// ErrChainTooDeep is returned (wrapped) by [CheckDepth].
var ErrChainTooDeep = errors.New("delegation chain too deep")

// Chain identifies a delegation chain and how deep a message is in it.
type Chain struct {
	// ID is shared by every hop of the chain; empty before the first hop.
	ID string
	// Depth is the number of agent-to-agent hops so far (0: none yet).
	Depth int
}

// ChainFromMetadata reads the chain of an inbound message. Missing keys give
// a zero Chain (a message that starts a chain). The depth may be a JSON
// number or a decimal string; a depth that is negative, fractional, too
// large or of another type, or an id that is not a short token string, is
// an error naming the key and the value.
func ChainFromMetadata(md map[string]any) (Chain, error) {
	var c Chain
	if v, ok := md[MetaChainID]; ok && v != nil {
		id, isString := v.(string)
		if !isString {
			return Chain{}, fmt.Errorf("security: metadata %q must be a string, got %T", MetaChainID, v)
		}
		if err := checkChainID(id); err != nil {
			return Chain{}, err
		}
		c.ID = id
	}
	if v, ok := md[MetaChainDepth]; ok && v != nil {
		d, err := parseDepth(v)
		if err != nil {
			return Chain{}, err
		}
		c.Depth = d
	}
	return c, nil
}

func checkChainID(id string) error {
	if len(id) > 128 {
		return fmt.Errorf("security: metadata %q is longer than 128 characters", MetaChainID)
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)
		if !ok {
			return fmt.Errorf("security: metadata %q = %q contains %q; use letters, digits and ._:-", MetaChainID, id, r)
		}
	}
	return nil
}

func parseDepth(v any) (int, error) {
	bad := func(why string) (int, error) {
		return 0, fmt.Errorf("security: metadata %q = %v is %s; want a whole number from 0 to %d", MetaChainDepth, v, why, maxParsedDepth)
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		g, err := x.Float64()
		if err != nil {
			return bad("not a number")
		}
		f = g
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return bad("not a decimal number")
		}
		f = float64(n)
	default:
		return bad(fmt.Sprintf("a %T", v))
	}
	switch {
	case math.IsNaN(f) || f != math.Trunc(f):
		return bad("not a whole number")
	case f < 0:
		return bad("negative")
	case f > maxParsedDepth:
		return bad("too large")
	}
	return int(f), nil
}

// Next returns the chain for a message this agent sends on: the same id (a
// new random one if c has none) one hop deeper.
func (c Chain) Next() Chain {
	id := c.ID
	if id == "" {
		id = NewChainID()
	}
	return Chain{ID: id, Depth: c.Depth + 1}
}

// NewChainID returns a new random chain id, for a task that starts a
// delegation tree: every hop below it carries the id.
func NewChainID() string {
	// What "chain-" + strings.ToLower(rand.Text()) gives (26 characters of
	// the base32 alphabet, lower case, about 130 random bits), built in one
	// allocation instead of three.
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var b [len("chain-") + 26]byte
	n := copy(b[:], "chain-")
	rand.Read(b[n:])
	for i := n; i < len(b); i++ {
		b[i] = alphabet[b[i]%32]
	}
	return string(b[:])
}

// Apply returns a copy of md (a new map if md is nil) with the chain's keys
// set; md itself is not modified.
func (c Chain) Apply(md map[string]any) map[string]any {
	out := make(map[string]any, len(md)+2)
	maps.Copy(out, md)
	if c.ID != "" {
		out[MetaChainID] = c.ID
	}
	out[MetaChainDepth] = c.Depth
	return out
}

// CheckDepth returns an error wrapping [ErrChainTooDeep] when c is deeper
// than maxDepth hops (maxDepth <= 0 means [DefaultMaxChainDepth]). Check inbound
// chains before running a task and the outbound chain ([Chain.Next]) before
// delegating.
func CheckDepth(c Chain, maxDepth int) error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxChainDepth
	}
	if c.Depth <= maxDepth {
		return nil
	}
	return fmt.Errorf("%w: chain %q is at depth %d, over the limit of %d hops; the agents are probably delegating to each other in a loop",
		ErrChainTooDeep, c.ID, c.Depth, maxDepth)
}
