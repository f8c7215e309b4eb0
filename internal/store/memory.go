package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// DefaultMemoryTasks is the task limit of a Memory store made with
// NewMemory(0).
const DefaultMemoryTasks = 10000

// memoryEntriesPerTask sizes the conversation bound of a Memory store:
// maxTasks × this many entries in all.
const memoryEntriesPerTask = 10

// memoryFailedRecords bounds the records of given-up deliveries a Memory
// store keeps.
const memoryFailedRecords = 1000

// Memory is a Store held in process memory: nothing survives a restart.
// It is bounded: at most maxTasks tasks, evicting the terminal task with
// the oldest status first (with its push configs and pending deliveries)
// when a new task would exceed the limit. Running and interrupted tasks are
// never evicted: when every stored task is active the store grows past the
// limit rather than lose work that a client is waiting on, and shrinks back
// as tasks finish and newer ones arrive. Terminal tasks stay queryable
// until evicted or pruned. Conversations are bounded to 10×maxTasks
// entries in all, dropping the oldest entries first.
//
// Memory behaves like SQLite in everything else — owner scoping, ordering
// and page tokens, push outbox order — and copies records on the way in
// and out, so callers may mutate what they pass and receive. Times are
// kept at millisecond precision, as SQLite keeps them.
type Memory struct {
	mu         sync.RWMutex
	maxTasks   int
	maxEntries int

	tasks    map[string]*memTask
	all      keyList
	indexes  map[indexKey]*keyList
	terminal keyList
	active   map[string]struct{}

	configs map[string][]*memPush // by task id, in creation order
	pushSeq int64

	outbox       map[int64]*Delivery
	queues       map[configRef][]int64 // pending delivery ids per config, oldest first
	nextDelivery int64
	failed       []failedDelivery

	delegations memDelegations

	convs     map[convKey]*memConv
	entryLog  []entryRef // every live entry, oldest first, from logHead on
	logHead   int
	nEntries  int
	nextEntry int64
}

var _ Store = (*Memory)(nil)

// memTask is a stored task and the fields its index keys come from.
type memTask struct {
	rec   *TaskRecord
	key   taskKey
	state string
}

// indexKey names one secondary index of the Memory store.
type indexKey struct {
	kind byte // 'o' owner, 'c' context, 's' state, 'C' owner+context, 'S' owner+state, '*' all
	a, b string
	// agent qualifies the index to one agent's tasks; the indexes of
	// every agent together have agent "" (and no '*': that is m.all).
	agent string
}

// memPush is a stored push config: its encoded form (decoded on the way
// out, which is the deep copy) and its ordering.
type memPush struct {
	id      string
	owner   string
	created time.Time
	seq     int64
	blob    []byte
}

// configRef identifies one push config.
type configRef struct{ taskID, configID string }

// failedDelivery records a delivery given up on.
type failedDelivery struct {
	Delivery
	Reason   string
	FailedAt time.Time
}

// memConv is one conversation.
type memConv struct {
	entries               []ConversationEntry // oldest first
	peer                  string
	lastTaskID, lastState string
	firstAt               time.Time
}

// convKey names a conversation: a context of one agent's outbound calls.
type convKey struct{ agent, contextID string }

// entryRef locates an entry for eviction.
type entryRef struct {
	id   int64
	conv convKey
}

// NewMemory returns an empty Memory store holding at most maxTasks tasks
// (DefaultMemoryTasks when maxTasks <= 0; see Memory for how the limit is
// kept).
func NewMemory(maxTasks int) *Memory {
	if maxTasks <= 0 {
		maxTasks = DefaultMemoryTasks
	}
	return &Memory{
		maxTasks:   maxTasks,
		maxEntries: maxTasks * memoryEntriesPerTask,
		tasks:      make(map[string]*memTask),
		indexes:    make(map[indexKey]*keyList),
		active:     make(map[string]struct{}),
		configs:    make(map[string][]*memPush),
		outbox:     make(map[int64]*Delivery),
		queues:     make(map[configRef][]int64),
		convs:      make(map[convKey]*memConv),
	}
}

// indexKeys lists the secondary indexes a task belongs to: those of
// every agent's tasks and, for a task of a named agent, the same six
// qualified by its agent (the sixth its agent's '*').
func indexKeys(owner, contextID, state, agent string) []indexKey {
	keys := []indexKey{
		{kind: 'o', a: owner},
		{kind: 'c', a: contextID},
		{kind: 's', a: state},
		{kind: 'C', a: owner, b: contextID},
		{kind: 'S', a: owner, b: state},
	}
	if agent == "" {
		return keys
	}
	for _, k := range keys[:5] {
		k.agent = agent
		keys = append(keys, k)
	}
	return append(keys, indexKey{kind: '*', agent: agent})
}

// index adds (or with del, removes) t under every index.
func (m *Memory) index(t *memTask, del bool) {
	if del {
		m.all.Delete(t.key)
	} else {
		m.all.Insert(t.key)
	}
	for _, ik := range indexKeys(t.rec.Owner, t.rec.Task.ContextID, t.state, t.rec.Agent) {
		l := m.indexes[ik]
		if del {
			if l != nil {
				l.Delete(t.key)
				if l.Len() == 0 {
					delete(m.indexes, ik)
				}
			}
			continue
		}
		if l == nil {
			l = &keyList{}
			m.indexes[ik] = l
		}
		l.Insert(t.key)
	}
	terminal := a2a.TaskState(t.state).Terminal()
	switch {
	case del && terminal:
		m.terminal.Delete(t.key)
	case del:
		delete(m.active, t.key.id)
	case terminal:
		m.terminal.Insert(t.key)
	default:
		m.active[t.key.id] = struct{}{}
	}
}

// SaveTask implements Store.
func (m *Memory) SaveTask(ctx context.Context, rec *TaskRecord, deliveries []Delivery) error {
	if err := checkRecord(rec, deliveries); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := cloneRecord(rec)
	if err != nil {
		return fmt.Errorf("store: save task %s: %w", rec.Task.ID, err)
	}
	ts := rec.StatusMillis()
	c.CreatedAt = fromMillis(toMillis(rec.CreatedAt))
	c.UpdatedAt = fromMillis(ts)
	t := &memTask{rec: c, key: taskKey{ts: ts, id: c.Task.ID}, state: stateName(c.Task.Status.State)}
	now := time.Now()
	ds := make([]Delivery, len(deliveries))
	for i, d := range deliveries {
		d.TaskID = t.key.id
		d.Body = append([]byte(nil), d.Body...)
		if d.CreatedAt.IsZero() {
			d.CreatedAt = now
		}
		if d.NextTry.IsZero() {
			d.NextTry = now
		}
		d.CreatedAt, d.NextTry = fromMillis(d.CreatedAt.UnixMilli()), fromMillis(d.NextTry.UnixMilli())
		ds[i] = d
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.tasks[t.key.id]; old != nil {
		if old.key != t.key || old.state != t.state || old.rec.Owner != c.Owner || old.rec.Task.ContextID != c.Task.ContextID {
			m.index(old, true)
			m.index(t, false)
		}
	} else {
		// Make room first, so the task being saved is never the one
		// evicted.
		for len(m.tasks) >= m.maxTasks {
			k, ok := m.terminal.Last()
			if !ok {
				break // everything is active: keep it all
			}
			m.removeTask(k.id)
		}
		m.index(t, false)
	}
	m.tasks[t.key.id] = t
	for i := range ds {
		m.nextDelivery++
		d := &ds[i]
		d.ID = m.nextDelivery
		m.outbox[d.ID] = d
		ref := configRef{d.TaskID, d.ConfigID}
		m.queues[ref] = append(m.queues[ref], d.ID)
	}
	return nil
}

// removeTask deletes a task with its push configs, pending deliveries and
// settled delegations.
func (m *Memory) removeTask(id string) {
	t := m.tasks[id]
	if t == nil {
		return
	}
	m.index(t, true)
	delete(m.tasks, id)
	for _, pc := range m.configs[id] {
		m.dropQueue(configRef{id, pc.id})
	}
	delete(m.configs, id)
	m.dropDelegationsLocked(id, math.MaxInt64)
	// Deliveries queued for configs that no longer exist.
	for ref := range m.queues {
		if ref.taskID == id {
			m.dropQueue(ref)
		}
	}
}

// dropQueue deletes every pending delivery of a config.
func (m *Memory) dropQueue(ref configRef) {
	for _, did := range m.queues[ref] {
		delete(m.outbox, did)
	}
	delete(m.queues, ref)
}

// GetTask implements Store.
func (m *Memory) GetTask(ctx context.Context, id, owner string) (*TaskRecord, error) {
	m.mu.RLock()
	t := m.tasks[id]
	if t == nil || (owner != "" && owner != t.rec.Owner) {
		m.mu.RUnlock()
		return nil, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	rec := t.rec
	m.mu.RUnlock()
	// Stored records are never mutated (SaveTask replaces them), so the
	// copy can be made outside the lock.
	c, err := cloneRecord(rec)
	if err != nil {
		return nil, fmt.Errorf("store: copy task %s: %w", id, err)
	}
	return c, nil
}

// indexFor picks the index serving p and the state filter still to apply
// to its keys ("" when the index applies every filter).
func (m *Memory) indexFor(p listPlan) (*keyList, string) {
	ag := p.agent
	switch v := listVariant(p); {
	case v&filterContext != 0 && v&filterOwner != 0:
		return m.indexes[indexKey{kind: 'C', a: p.owner, b: p.contextID, agent: ag}], p.state
	case v&filterContext != 0:
		return m.indexes[indexKey{kind: 'c', a: p.contextID, agent: ag}], p.state
	case v&filterState != 0 && v&filterOwner != 0:
		return m.indexes[indexKey{kind: 'S', a: p.owner, b: p.state, agent: ag}], ""
	case v&filterState != 0:
		return m.indexes[indexKey{kind: 's', a: p.state, agent: ag}], ""
	case v&filterOwner != 0:
		return m.indexes[indexKey{kind: 'o', a: p.owner, agent: ag}], ""
	}
	if ag != "" {
		return m.indexes[indexKey{kind: '*', agent: ag}], ""
	}
	return &m.all, ""
}

// ListTasks implements Store.
func (m *Memory) ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error) {
	p, err := planQuery(q)
	if err != nil {
		return TaskPage{}, err
	}
	var (
		page TaskPage
		recs []*TaskRecord
	)
	m.mu.RLock()
	l, state := m.indexFor(p)
	if l == nil {
		m.mu.RUnlock()
		return page, nil
	}
	match := func(k taskKey) bool { return state == "" || m.tasks[k.id].state == state }
	switch {
	case state != "":
		l.Ascend(taskKey{}, true, func(k taskKey) bool {
			if k.ts < p.after {
				return false
			}
			if match(k) {
				page.TotalSize++
			}
			return true
		})
	case p.after == math.MinInt64:
		page.TotalSize = l.Len()
	default:
		// Keys with ts >= after all sort before (after-1, "").
		page.TotalSize = l.Rank(taskKey{ts: p.after - 1})
	}
	var last taskKey
	l.Ascend(p.cursor, !p.hasCursor, func(k taskKey) bool {
		if k.ts < p.after {
			return false
		}
		if (p.hasCursor && k == p.cursor) || !match(k) {
			return true
		}
		if len(recs) == p.size {
			page.NextPageToken = encodePageToken(last)
			return false
		}
		recs = append(recs, m.tasks[k.id].rec)
		last = k
		return true
	})
	m.mu.RUnlock()
	if len(recs) > 0 {
		page.Tasks = make([]*TaskRecord, len(recs))
		for i, r := range recs {
			if page.Tasks[i], err = cloneRecord(r); err != nil {
				return TaskPage{}, fmt.Errorf("store: copy task %s: %w", r.Task.ID, err)
			}
		}
	}
	return page, nil
}

// AdoptTasks implements Store.
func (m *Memory) AdoptTasks(ctx context.Context, agent string) (int, error) {
	if agent == "" {
		return 0, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, t := range m.tasks {
		if t.rec.Agent != "" {
			continue
		}
		m.index(t, true)
		t.rec.Agent = agent
		m.index(t, false)
		n++
	}
	moved := false
	for k, c := range m.convs {
		to := convKey{agent, k.contextID}
		if k.agent != "" || m.convs[to] != nil {
			continue
		}
		delete(m.convs, k)
		m.convs[to] = c
		for i := range c.entries {
			c.entries[i].Agent = agent
		}
		moved = true
	}
	if moved {
		for i := m.logHead; i < len(m.entryLog); i++ {
			if ref := &m.entryLog[i]; ref.conv.agent == "" && m.convs[ref.conv] == nil {
				ref.conv.agent = agent
			}
		}
	}
	return n, nil
}

// ActiveTasks implements Store: every non-terminal task, oldest status
// first.
func (m *Memory) ActiveTasks(ctx context.Context) ([]*TaskRecord, error) {
	m.mu.RLock()
	ts := make([]*memTask, 0, len(m.active))
	for id := range m.active {
		ts = append(ts, m.tasks[id])
	}
	m.mu.RUnlock()
	slices.SortFunc(ts, func(a, b *memTask) int {
		return cmp.Or(cmp.Compare(a.key.ts, b.key.ts), cmp.Compare(a.key.id, b.key.id))
	})
	out := make([]*TaskRecord, len(ts))
	for i, t := range ts {
		c, err := cloneRecord(t.rec)
		if err != nil {
			return nil, fmt.Errorf("store: copy task %s: %w", t.key.id, err)
		}
		out[i] = c
	}
	return out, nil
}

// PutPushConfig implements Store. The task must exist (else ErrNotFound).
// Replacing a config keeps its creation time and so its place in
// ListPushConfigs.
func (m *Memory) PutPushConfig(ctx context.Context, pc *PushConfig) error {
	if pc == nil || pc.Config.TaskID == "" || pc.Config.ID == "" {
		return errors.New("store: PutPushConfig needs a config with a task id and an id")
	}
	blob, err := a2a.Marshal(&pc.Config)
	if err != nil {
		return fmt.Errorf("store: encode push config %s of task %s: %w", pc.Config.ID, pc.Config.TaskID, err)
	}
	taskID := pc.Config.TaskID
	created := pc.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	np := &memPush{id: pc.Config.ID, owner: pc.Owner, created: fromMillis(created.UnixMilli()), blob: blob}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks[taskID] == nil {
		return fmt.Errorf("store: push config %s: task %s: %w", np.id, taskID, ErrNotFound)
	}
	list := m.configs[taskID]
	for i, old := range list {
		if old.id == np.id {
			np.created, np.seq = old.created, old.seq
			list[i] = np
			return nil
		}
	}
	m.pushSeq++
	np.seq = m.pushSeq
	i, _ := slices.BinarySearchFunc(list, np, func(a, b *memPush) int {
		return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.seq, b.seq))
	})
	m.configs[taskID] = slices.Insert(list, i, np)
	return nil
}

// decode returns a fresh copy of the stored config.
func (p *memPush) decode(taskID string) (*PushConfig, error) {
	return decodePushConfig(taskID, p.id, p.owner, p.created.UnixMilli(), p.blob)
}

// GetPushConfig implements Store.
func (m *Memory) GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error) {
	m.mu.RLock()
	var found *memPush
	for _, p := range m.configs[taskID] {
		if p.id == id {
			found = p
			break
		}
	}
	m.mu.RUnlock()
	if found == nil {
		return nil, fmt.Errorf("store: push config %s of task %s: %w", id, taskID, ErrNotFound)
	}
	return found.decode(taskID)
}

// ListPushConfigs implements Store.
func (m *Memory) ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error) {
	m.mu.RLock()
	list := slices.Clone(m.configs[taskID])
	m.mu.RUnlock()
	var out []*PushConfig
	for _, p := range list {
		pc, err := p.decode(taskID)
		if err != nil {
			return nil, err
		}
		out = append(out, pc)
	}
	return out, nil
}

// DeletePushConfig implements Store. Deliveries still pending for the
// config are dropped with it.
func (m *Memory) DeletePushConfig(ctx context.Context, taskID, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.configs[taskID]
	for i, p := range list {
		if p.id == id {
			list = slices.Delete(list, i, i+1)
			if len(list) == 0 {
				delete(m.configs, taskID)
			} else {
				m.configs[taskID] = list
			}
			break
		}
	}
	m.dropQueue(configRef{taskID, id})
	return nil
}

// DueDeliveries implements Store (limit <= 0 means 100). It does not lease
// what it returns.
func (m *Memory) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]Delivery, error) {
	if limit <= 0 {
		limit = 100
	}
	cut := now.UnixMilli()
	var out []Delivery
	m.mu.RLock()
	for _, q := range m.queues {
		if d := m.outbox[q[0]]; d.NextTry.UnixMilli() <= cut {
			out = append(out, *d)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Delivery) int { return cmp.Compare(a.ID, b.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		out[i].Body = append([]byte(nil), out[i].Body...)
	}
	return out, nil
}

// ClaimDeliveries implements Store for a single process: it is
// DueDeliveries (one dispatcher, which tracks what it is delivering).
func (m *Memory) ClaimDeliveries(ctx context.Context, replica string, now time.Time, lease time.Duration, limit int) ([]Delivery, error) {
	return m.DueDeliveries(ctx, now, limit)
}

// CompleteDelivery implements Store; completing a delivery that no longer
// exists is not an error.
func (m *Memory) CompleteDelivery(ctx context.Context, id int64, gaveUp bool, reason string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.outbox[id]
	if d == nil {
		return nil
	}
	if gaveUp {
		if len(m.failed) >= memoryFailedRecords {
			m.failed = slices.Delete(m.failed, 0, len(m.failed)-memoryFailedRecords+1)
		}
		m.failed = append(m.failed, failedDelivery{Delivery: *d, Reason: reason, FailedAt: fromMillis(time.Now().UnixMilli())})
	}
	delete(m.outbox, id)
	ref := configRef{d.TaskID, d.ConfigID}
	q := m.queues[ref]
	if i := slices.Index(q, id); i >= 0 {
		q = slices.Delete(q, i, i+1)
	}
	if len(q) == 0 {
		delete(m.queues, ref)
	} else {
		m.queues[ref] = q
	}
	return nil
}

// RetryDelivery implements Store; a delivery that no longer exists gives
// ErrNotFound.
func (m *Memory) RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time, lastErr string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.outbox[id]
	if d == nil {
		return fmt.Errorf("store: delivery %d: %w", id, ErrNotFound)
	}
	d.Attempts, d.NextTry, d.LastError = attempts, fromMillis(next.UnixMilli()), lastErr
	return nil
}

// AppendConversation implements Store. A zero Time is set to now; the
// entry's ID is ignored (the store assigns it).
func (m *Memory) AppendConversation(ctx context.Context, e *ConversationEntry) (int64, error) {
	if e == nil {
		return 0, errors.New("store: AppendConversation with a nil entry")
	}
	c, err := cloneEntry(e)
	if err != nil {
		return 0, fmt.Errorf("store: append conversation entry of context %s: %w", e.ContextID, err)
	}
	c.Time = fromMillis(createdMillis(e.Time))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextEntry++
	c.ID = m.nextEntry
	key := convKey{c.Agent, c.ContextID}
	conv := m.convs[key]
	if conv == nil {
		conv = &memConv{firstAt: c.Time}
		m.convs[key] = conv
	}
	conv.entries = append(conv.entries, c)
	conv.peer = c.Peer
	if c.TaskID != "" {
		conv.lastTaskID = c.TaskID
	}
	if c.State != "" {
		conv.lastState = c.State
	}
	m.entryLog = append(m.entryLog, entryRef{id: c.ID, conv: key})
	m.nEntries++
	for m.nEntries > m.maxEntries && m.logHead < len(m.entryLog) {
		m.evictEntry(m.entryLog[m.logHead])
		m.entryLog[m.logHead] = entryRef{}
		m.logHead++
	}
	if m.logHead > 1024 && m.logHead > len(m.entryLog)/2 {
		m.entryLog = append([]entryRef(nil), m.entryLog[m.logHead:]...)
		m.logHead = 0
	}
	return c.ID, nil
}

// evictEntry drops the oldest entry of a conversation if it is ref (refs
// of pruned conversations are skipped).
func (m *Memory) evictEntry(ref entryRef) {
	conv := m.convs[ref.conv]
	if conv == nil || len(conv.entries) == 0 || conv.entries[0].ID != ref.id {
		return
	}
	conv.entries[0] = ConversationEntry{}
	conv.entries = conv.entries[1:]
	m.nEntries--
	if len(conv.entries) == 0 {
		delete(m.convs, ref.conv)
		return
	}
	conv.firstAt = conv.entries[0].Time
	if cap(conv.entries) > 64 && len(conv.entries) < cap(conv.entries)/4 {
		conv.entries = slices.Clone(conv.entries)
	}
}

// Conversation implements Store.
func (m *Memory) Conversation(ctx context.Context, contextID string, limit int) ([]ConversationEntry, error) {
	return m.agentConversation(ctx, "", contextID, limit)
}

func (m *Memory) agentConversation(ctx context.Context, agent, contextID string, limit int) ([]ConversationEntry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	conv := m.convs[convKey{agent, contextID}]
	if conv == nil {
		return nil, nil
	}
	es := conv.entries
	if limit > 0 && len(es) > limit {
		es = es[len(es)-limit:]
	}
	out := make([]ConversationEntry, len(es))
	for i := range es {
		c, err := cloneEntry(&es[i])
		if err != nil {
			return nil, fmt.Errorf("store: copy conversation entry %d: %w", es[i].ID, err)
		}
		out[i] = c
	}
	return out, nil
}

// Conversations implements Store (limit <= 0 means all).
func (m *Memory) Conversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	return m.agentConversations(ctx, "", limit)
}

func (m *Memory) agentConversations(ctx context.Context, agent string, limit int) ([]ConversationSummary, error) {
	type sum struct {
		ConversationSummary
		lastID int64
	}
	m.mu.RLock()
	all := make([]sum, 0, len(m.convs))
	for k, c := range m.convs {
		if k.agent != agent {
			continue
		}
		last := &c.entries[len(c.entries)-1]
		all = append(all, sum{ConversationSummary{
			ContextID: k.contextID, Peer: c.peer, Entries: len(c.entries), LastTaskID: c.lastTaskID,
			LastState: c.lastState, FirstAt: c.firstAt, LastAt: last.Time,
		}, last.ID})
	}
	m.mu.RUnlock()
	slices.SortFunc(all, func(a, b sum) int {
		return cmp.Or(b.LastAt.Compare(a.LastAt), cmp.Compare(b.lastID, a.lastID))
	})
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out := make([]ConversationSummary, len(all))
	for i := range all {
		out[i] = all[i].ConversationSummary
	}
	return out, nil
}

// Prune implements Store.
func (m *Memory) Prune(ctx context.Context, cutoff time.Time) (tasks, entries int, err error) {
	c := cutoff.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	m.terminal.Descend(func(k taskKey) bool {
		if k.ts >= c {
			return false
		}
		ids = append(ids, k.id)
		return true
	})
	for _, id := range ids {
		m.removeTask(id)
	}
	pruned := false
	for id, conv := range m.convs {
		if conv.entries[len(conv.entries)-1].Time.UnixMilli() < c {
			entries += len(conv.entries)
			m.nEntries -= len(conv.entries)
			delete(m.convs, id)
			pruned = true
		}
	}
	if pruned {
		live := m.entryLog[:0]
		for _, ref := range m.entryLog[m.logHead:] {
			if m.convs[ref.conv] != nil {
				live = append(live, ref)
			}
		}
		clear(m.entryLog[len(live):])
		m.entryLog, m.logHead = live, 0
	}
	m.failed = slices.DeleteFunc(m.failed, func(f failedDelivery) bool { return f.FailedAt.UnixMilli() < c })
	m.dropDelegationsLocked("", c)
	return len(ids), entries, nil
}

// Close implements Store; a Memory store has nothing to release and stays
// usable.
func (m *Memory) Close() error { return nil }
