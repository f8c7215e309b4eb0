package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// followerBuffer is how many events a follower holds for its stream; the
// stream itself drops a client that reads too slowly.
const followerBuffer = 64

// followerPoll is how often a follower looks for events without being
// woken, in case a notification was lost with its connection.
const followerPoll = 5 * time.Second

// follower is one stream following a task through task_events.
type follower struct {
	c    *Cluster
	task string
	snap *store.TaskRecord
	// next is the seq of the next event to read.
	next int64
	ch   chan []byte
	wake chan struct{}
	done chan struct{}

	once sync.Once
	mu   sync.Mutex
	err  error
}

var _ tasks.Remote = (*follower)(nil)

func (f *follower) Snapshot() *store.TaskRecord { return f.snap }
func (f *follower) Events() <-chan []byte       { return f.ch }

func (f *follower) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Close implements tasks.Remote.
func (f *follower) Close() { f.end(nil) }

// end stops the follower with err (the first end wins).
func (f *follower) end(err error) {
	f.once.Do(func() {
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
		close(f.done)
		f.c.unfollow(f)
	})
}

// Follow implements tasks.Cluster. It registers the watch first and reads
// the task after, so every save either is in the snapshot or publishes its
// events for this follower (see store.Postgres.SaveTaskEvents).
func (c *Cluster) Follow(ctx context.Context, taskID string) (tasks.Remote, error) {
	f := &follower{c: c, task: taskID, ch: make(chan []byte, followerBuffer), wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.watchMu.Lock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.watchMu.Unlock()
		return nil, ErrClosed
	}
	set := c.followers[taskID]
	if set == nil {
		set = map[*follower]struct{}{}
		c.followers[taskID] = set
	}
	set[f] = struct{}{}
	c.wg.Add(1) // for f.run, counted while c.closed is false
	c.mu.Unlock()
	_, err := c.st.Pool().Exec(ctx, `INSERT INTO task_watch (task_id, replica) VALUES ($1, $2) ON CONFLICT DO NOTHING`, taskID, c.self)
	c.watchMu.Unlock()
	if err != nil {
		c.wg.Done()
		f.end(err)
		return nil, fmt.Errorf("cluster: follow task %s: %w", taskID, err)
	}
	rec, seq, _, err := c.st.TaskAt(ctx, taskID)
	if err != nil {
		c.wg.Done()
		f.end(err)
		return nil, err
	}
	f.mu.Lock()
	f.snap, f.next = rec, seq+1
	f.mu.Unlock()
	go f.run()
	return f, nil
}

// unfollow forgets f and, when it was the task's last follower here,
// removes this replica's watch of the task (in the background, under
// watchMu, unless a new follower came meanwhile).
func (c *Cluster) unfollow(f *follower) {
	c.mu.Lock()
	set := c.followers[f.task]
	delete(set, f)
	last := len(set) == 0
	if last {
		delete(c.followers, f.task)
	}
	if !last || c.closed {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		c.watchMu.Lock()
		defer c.watchMu.Unlock()
		c.mu.Lock()
		again := len(c.followers[f.task]) > 0
		c.mu.Unlock()
		if again {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.st.Pool().Exec(ctx, `DELETE FROM task_watch WHERE task_id = $1 AND replica = $2`, f.task, c.self); err != nil {
			c.log.Debug("removing a task watch failed; it is tidied later", "task_id", f.task, "error", err)
		}
	}()
}

// wake tells the followers of task that events up to seq were saved.
func (c *Cluster) wake(task string, seq int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for f := range c.followers[task] {
		if seq >= f.nextSeq() {
			select {
			case f.wake <- struct{}{}:
			default:
			}
		}
	}
}

// wakeAll wakes every follower (after notifications may have been lost).
func (c *Cluster) wakeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, set := range c.followers {
		for f := range set {
			select {
			case f.wake <- struct{}{}:
			default:
			}
		}
	}
}

func (f *follower) nextSeq() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next
}

// run reads the task's events from next on whenever woken and hands them
// to Events, until the follower ends.
func (f *follower) run() {
	defer f.c.wg.Done()
	defer close(f.ch)
	poll := time.NewTicker(followerPoll)
	defer poll.Stop()
	for {
		if !f.read() {
			return
		}
		select {
		case <-f.done:
			return
		case <-f.c.stopCtx.Done():
			f.end(ErrClosed)
			return
		case <-f.wake:
		case <-poll.C:
		}
	}
}

// read hands over the events saved since the last read; false ends run.
func (f *follower) read() bool {
	for {
		ctx, cancel := context.WithTimeout(f.c.stopCtx, 10*time.Second)
		rows, err := f.c.st.Pool().Query(ctx, `SELECT seq, body FROM task_events WHERE task_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
			f.task, f.nextSeq(), followerBuffer)
		var evs []event
		if err == nil {
			evs, err = pgx.CollectRows(rows, pgx.RowToStructByPos[event])
		}
		cancel()
		if err != nil {
			select {
			case <-f.done:
				return false
			default:
			}
			if f.c.stopCtx.Err() != nil {
				f.end(ErrClosed)
				return false
			}
			f.c.log.Warn("reading a followed task's events failed; retrying", "task_id", f.task, "error", err)
			return true
		}
		for _, ev := range evs {
			if ev.Seq != f.nextSeq() {
				f.end(ErrFellBehind)
				return false
			}
			select {
			case f.ch <- ev.Body:
			case <-f.done:
				return false
			}
			f.mu.Lock()
			f.next++
			f.mu.Unlock()
		}
		if len(evs) < followerBuffer {
			return true
		}
	}
}

// event is one row of task_events.
type event struct {
	Seq  int64
	Body []byte
}
