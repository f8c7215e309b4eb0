package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The write pipeline of the SQLite store: the writer goroutine journals
// saves and answers them (journalBatch); the applier goroutine, which
// owns the SQLite write connection, applies the journaled saves and runs
// every other write, in the order the writer took them (runApplier).

// applyItem is one entry of the applier's queue: a journaled save (rec),
// or another write (req) whose caller waits for the applier's answer.
type applyItem struct {
	rec *jrec
	req *writeReq
}

// applyQueue is what the writer has handed the applier and the applier
// has not finished, in order. bytes bounds it (backpressure).
type applyQueue struct {
	mu       sync.Mutex
	cond     sync.Cond
	items    []applyItem
	bytes    int
	ops      int       // items that are not journaled saves (their callers wait)
	waiters  int       // reads waiting at a barrier
	since    time.Time // when the items now waiting started to wait
	closed   bool      // the writer has stopped: drain and stop
	quitting bool      // Close was called: the writer must not wait for room
}

func newApplyQueue() *applyQueue {
	q := &applyQueue{}
	q.cond.L = &q.mu
	return q
}

// waitRoom blocks while more than limit bytes of saves are pending.
func (q *applyQueue) waitRoom(limit int) {
	q.mu.Lock()
	for q.bytes > limit && !q.quitting {
		q.cond.Wait()
	}
	q.mu.Unlock()
}

// push appends items (bytes of saves among them).
func (q *applyQueue) push(items []applyItem, bytes int) {
	q.mu.Lock()
	if len(q.items) == 0 {
		q.since = time.Now()
	}
	for _, it := range items {
		if it.req != nil {
			q.ops++
		}
	}
	q.items = append(q.items, items...)
	q.bytes += bytes
	q.mu.Unlock()
	q.cond.Broadcast()
}

// next copies up to max items from the front into dst, waiting for one;
// it returns none once the queue is closed and empty. Journaled saves
// alone wait up to linger for more to come (nobody waits for them, and
// the saves of a stream come about a millisecond apart: applied together
// they cost one row write), unless something waits for the applier: a
// write that is not a journaled save, a read at a barrier, Close, or
// half the room for pending saves used.
func (q *applyQueue) next(dst []applyItem, max int, linger time.Duration, room int) []applyItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if len(q.items) == 0 {
			if q.closed {
				return dst
			}
			q.cond.Wait()
			continue
		}
		wait := linger - time.Since(q.since)
		if wait <= 0 || q.ops > 0 || q.waiters > 0 || q.quitting || q.closed || len(q.items) >= max || q.bytes > room/2 {
			return append(dst, q.items[:min(max, len(q.items))]...)
		}
		if timer == nil {
			timer = time.AfterFunc(wait, q.cond.Broadcast)
		} else {
			timer.Reset(wait)
		}
		q.cond.Wait()
	}
}

// hurry counts a read waiting at a barrier (d = 1), or no longer (-1).
func (q *applyQueue) hurry(d int) {
	q.mu.Lock()
	q.waiters += d
	q.mu.Unlock()
	if d > 0 {
		q.cond.Broadcast()
	}
}

// pop drops the n front items, done with, and their bytes.
func (q *applyQueue) pop(n, bytes int) {
	q.mu.Lock()
	for _, it := range q.items[:n] {
		if it.req != nil {
			q.ops--
		}
	}
	clear(q.items[:n])
	// What came during the apply waits from now: the passes of the
	// applier are at least linger apart while only saves come.
	q.since = time.Now()
	q.items = q.items[n:]
	if len(q.items) == 0 {
		q.items = q.items[:0:0]
	}
	q.bytes -= bytes
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *applyQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *applyQueue) quit() {
	q.mu.Lock()
	q.quitting = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// journalBatch is the writer goroutine's part of a batch: it appends the
// saves of batch to the journal with one write, makes them visible to
// GetTask (the pending overlay), hands the batch in order to the applier
// and answers the saves. Other writes are answered by the applier.
func (s *SQLite) journalBatch(batch []*writeReq) {
	s.q.waitRoom(s.pendingMax)
	items, acks := s.items[:0], s.acks[:0]
	buf := s.jbuf[:0]
	seq, bytes := s.seq, 0
	saves := 0
	// A request must not be read once answered: its caller may already
	// reuse it for its next write.
	for _, r := range batch {
		if r.save == nil {
			items = append(items, applyItem{req: r})
			continue
		}
		if err := r.ctx.Err(); err != nil {
			r.done <- err // not journaled
			continue
		}
		acks = append(acks, r)
		seq++
		r.save.seq = seq
		buf = appendRecord(buf, r.save)
		items = append(items, applyItem{rec: r.save})
		bytes += r.save.size()
		saves++
	}
	var jerr error
	if saves > 0 {
		if jerr = s.j.append(buf, seq); jerr != nil {
			jerr = fmt.Errorf("store: journal the task on %s: %w", s.path, jerr)
			// Nothing of this batch is journaled: the saves fail and
			// the other writes go on alone.
			kept := items[:0]
			for _, it := range items {
				if it.rec == nil {
					kept = append(kept, it)
				}
			}
			items, bytes = kept, 0
		} else {
			s.seq = seq
			s.ovMu.Lock()
			for _, it := range items {
				if it.rec != nil {
					s.overlay[it.rec.id] = it.rec
				}
			}
			s.ovMu.Unlock()
		}
	}
	if len(items) > 0 {
		s.q.push(items, bytes)
	}
	if saves > 0 && jerr == nil {
		s.journaled.Store(seq)
	}
	for _, r := range acks {
		r.done <- jerr
	}
	if cap(buf) > 1<<20 {
		buf = nil // a batch of huge tasks: do not keep its buffer
	}
	clear(items)
	clear(acks)
	s.items, s.acks, s.jbuf = items[:0], acks[:0], buf[:0]
}

// pendingTask is the latest journaled save of id not yet applied, or nil.
func (s *SQLite) pendingTask(id string) *jrec {
	s.ovMu.Lock()
	r := s.overlay[id]
	s.ovMu.Unlock()
	return r
}

// barrier waits until every save journaled before the call is applied to
// SQLite, so that a read of the tasks table sees all of them.
func (s *SQLite) barrier(ctx context.Context) error {
	target := s.journaled.Load()
	hurried := false
	defer func() {
		if hurried {
			s.q.hurry(-1)
		}
	}()
	for {
		s.appliedMu.Lock()
		done, ch := s.appliedSeq >= target, s.appliedCh
		s.appliedMu.Unlock()
		if done {
			return nil
		}
		if !hurried {
			hurried = true
			s.q.hurry(1)
			continue // re-check: the applier may have advanced meanwhile
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.quit:
			return errClosed
		}
	}
}

// runApplier is the applier goroutine: it takes everything pending (up
// to applyMax items), applies it in one transaction and answers the
// writes among it, until the writer has stopped and the queue is empty.
func (s *SQLite) runApplier() {
	defer close(s.applierDone)
	var take []applyItem
	for {
		take = s.q.next(take[:0], s.applyMax, s.linger, s.pendingMax)
		if len(take) == 0 {
			return
		}
		bytes := 0
		for _, it := range take {
			if it.rec != nil {
				bytes += it.rec.size()
			}
		}
		s.applyItems(take)
		s.q.pop(len(take), bytes)
		clear(take)
	}
}

// applyItems applies items, in order, in one transaction: the saves of
// one task between two other writes coalesce into one (the latest; every
// save writes the whole row). If the transaction fails, each write is
// retried in one of its own; a save that still fails (disk full, an I/O
// error) is retried with backoff until it applies, holding back every
// write after it, so nothing acknowledged is lost or reordered.
func (s *SQLite) applyItems(items []applyItem) {
	reqs := s.reqBuf[:0]
	for i := 0; i < len(items); {
		if r := items[i].req; r != nil {
			i++
			if err := r.ctx.Err(); err != nil {
				r.done <- err
				continue
			}
			reqs = append(reqs, r)
			continue
		}
		j := i
		for j < len(items) && items[j].rec != nil {
			j++
		}
		// The run items[i:j] of saves: each task's latest save, at the
		// place of that save, so that the sequence numbers of the
		// writes stay increasing.
		if j-i > 1 {
			clear(s.latest)
			for _, it := range items[i:j] {
				s.latest[it.rec.id] = it.rec.seq
			}
		}
		for _, it := range items[i:j] {
			if j-i == 1 || s.latest[it.rec.id] == it.rec.seq {
				reqs = append(reqs, &writeReq{save: it.rec, seq: it.rec.seq})
			}
		}
		i = j
	}
	defer func() {
		clear(reqs)
		s.reqBuf = reqs[:0]
	}()
	if s.applyErr != nil {
		s.giveUp(reqs)
		return
	}
	if len(reqs) == 0 {
		return
	}
	if s.tryBatch(reqs) && !saveFailed(reqs) {
		s.applied(reqs)
		return
	}
	for k, r := range reqs {
		one := reqs[k : k+1]
		for attempt, closeTries := 1, 0; ; attempt++ {
			s.tryBatch(one)
			if r.save == nil || r.err == nil {
				break
			}
			if s.closing() {
				closeTries++
			}
			if closeTries >= closeAttempts {
				s.applyErr = fmt.Errorf("store: apply the task journal on %s: %w (the journal keeps it for the next start)", s.path, r.err)
				s.logf("%v", s.applyErr)
				s.giveUp(reqs[k:])
				return
			}
			wait := min(applyBackoff<<min(attempt-1, 10), applyBackoffMax)
			s.logf("store: apply journaled save of task %s to %s failed (attempt %d, retrying in %v): %v", r.save.id, s.path, attempt, wait, r.err)
			select {
			case <-time.After(wait):
			case <-s.quit:
			}
		}
		s.applied(one)
	}
}

// Retries of a failing apply: backoff from applyBackoff doubling up to
// applyBackoffMax; once Close is waiting, closeAttempts in all.
const (
	applyBackoff    = 10 * time.Millisecond
	applyBackoffMax = time.Second
	closeAttempts   = 3
)

// saveFailed reports whether a journaled save of reqs failed (then the
// transaction did not commit).
func saveFailed(reqs []*writeReq) bool {
	for _, r := range reqs {
		if r.save != nil && r.err != nil {
			return true
		}
	}
	return false
}

// closing reports whether Close has been called.
func (s *SQLite) closing() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

// applied ends reqs, committed: their saves leave the overlay (readers
// find them in SQLite now), the applied sequence number advances (waking
// barriers, freeing journal segments) and the other writes are answered.
func (s *SQLite) applied(reqs []*writeReq) {
	var seq int64
	s.ovMu.Lock()
	for _, r := range reqs {
		if r.save != nil {
			if s.overlay[r.save.id] == r.save {
				delete(s.overlay, r.save.id)
			}
			seq = max(seq, r.seq)
		}
	}
	s.ovMu.Unlock()
	if seq > 0 {
		s.j.release(seq)
		s.appliedMu.Lock()
		s.appliedSeq = seq
		close(s.appliedCh)
		s.appliedCh = make(chan struct{})
		s.appliedMu.Unlock()
	}
	for _, r := range reqs {
		if r.save != nil {
			continue
		}
		if ce, ok := r.err.(cleanError); ok {
			r.err = ce.error
		}
		r.done <- r.err
	}
}

// giveUp answers the writes of reqs with the apply error (Close, after a
// save could not be applied: its journal stays for the next start).
func (s *SQLite) giveUp(reqs []*writeReq) {
	for _, r := range reqs {
		if r.save == nil {
			r.done <- s.applyErr
		}
	}
}

// replayJournal applies the journal dir of a store that is gone (a
// crash, or a Close that could not apply everything) and deletes it.
// Records up to the applied sequence number the database keeps for it
// are skipped. A torn or damaged record can only be
// the tail of the last segment: records are appended in order, and a
// segment is synced to disk before the next is started (journal.rotate),
// so everything before the last segment is whole whatever happened; in
// the last one, only the write in progress at the crash can be cut short,
// and a write that did not complete was never acknowledged. Such a tail
// is ignored (and logged); damage anywhere else is refused.
func (s *SQLite) replayJournal(dir, instance string) error {
	var applied int64
	err := s.w.conn.QueryRowContext(context.Background(), `SELECT applied FROM journal_state WHERE instance = ?1`, instance).Scan(&applied)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: read the journal state of %s: %w", s.path, err)
	}
	paths, _, err := listSegments(dir)
	if err != nil {
		return fmt.Errorf("store: read the task journal %s: %w", dir, err)
	}
	s.stateKey = instance
	seq := applied
	var pending []*jrec
	latest := map[string]int64{}
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		// Each task's latest save, at its place (as applyItems does).
		clear(latest)
		for _, r := range pending {
			latest[r.id] = r.seq
		}
		var reqs []*writeReq
		for _, r := range pending {
			if latest[r.id] == r.seq {
				reqs = append(reqs, &writeReq{save: r, seq: r.seq})
			}
		}
		pending = pending[:0]
		if s.tryBatch(reqs) && !saveFailed(reqs) {
			return nil
		}
		for _, r := range reqs {
			if s.tryBatch([]*writeReq{r}); r.err != nil {
				return fmt.Errorf("store: replay the task journal %s: %w (if this save can never be applied, move the directory %s out of the journal directory to start without it, losing the saves it holds)", dir, r.err, dir)
			}
		}
		return nil
	}
	replayed := 0
	for i, p := range paths {
		recs, tail, err := readSegment(p)
		if err != nil {
			return fmt.Errorf("store: read the task journal %s: %w", p, err)
		}
		if tail > 0 {
			if i != len(paths)-1 {
				return fmt.Errorf("store: the task journal segment %s is damaged %d bytes before its end, and it is not the last one: move the directory %s out of the journal directory to start without it (losing the saves it holds)", p, tail, dir)
			}
			s.logf("store: the task journal %s ends in %d bytes of a record whose write never completed (never acknowledged): ignored", p, tail)
		}
		for _, r := range recs {
			if r.seq <= seq {
				continue
			}
			seq = r.seq
			replayed++
			pending = append(pending, r)
			if len(pending) >= s.applyMax {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if replayed > 0 {
		s.logf("store: replayed %d saves from the task journal %s", replayed, dir)
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: remove the replayed task journal %s: %w", p, err)
		}
	}
	if _, err := s.w.conn.ExecContext(context.Background(), `DELETE FROM journal_state WHERE instance = ?1`, instance); err != nil {
		return fmt.Errorf("store: forget the replayed task journal %s: %w", dir, err)
	}
	removeJournal(dir)
	return nil
}

// replayJournals replays, oldest first, the journals in the journal
// directory that no open store holds (left by a crash, or by a Close that
// could not apply everything), before this store serves.
func (s *SQLite) replayJournals() error {
	root := journalDir(s.path)
	ents, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("store: read the task journals %s: %w", root, err)
	}
	for _, e := range ents { // os.ReadDir sorts by name: time-ordered ids
		if !e.IsDir() || e.Name() == s.j.instance {
			continue
		}
		dir := filepath.Join(root, e.Name())
		unlock, err := lockJournal(dir)
		if err != nil {
			continue // another store's, in use
		}
		err = s.replayJournal(dir, e.Name())
		unlock()
		if err != nil {
			return err
		}
	}
	return nil
}
