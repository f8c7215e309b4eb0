package tasks

import (
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// Change says that a task was saved: it became observable, or its status
// or artifacts changed. It carries what a view needs to place the task,
// not the task itself; read the task (GetTask, the store) for the rest.
type Change struct {
	TaskID    string
	ContextID string
	// Owner is the identity that created the task.
	Owner     string
	State     a2a.TaskState
	CreatedAt time.Time
	UpdatedAt time.Time
}

// watchers are the functions Watch registered, by registration number.
type watchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(Change)
}

// Watch registers fn to be told about every change of every observable
// task, after the change is durable (the order every other observer gets:
// persist first, then tell). It is meant for what sees every task: the
// local operator's views, and the cancel of delegation trees, which learns
// here that a task ended. fn runs while the task is locked: it must return
// quickly, must not block and must not call back into the Manager (hand
// the change to a buffered channel and drop it when full). The returned
// function stops the watch; after it returns fn is not called again.
func (m *Manager) Watch(fn func(Change)) (stop func()) {
	w := &m.watch
	w.mu.Lock()
	if w.fns == nil {
		w.fns = map[int]func(Change){}
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.fns, id)
		w.mu.Unlock()
	}
}

// notifyLocked tells the watchers that lt was saved. lt.mu must be held.
func (m *Manager) notifyLocked(lt *liveTask) { m.notify(&lt.rec) }

// notify tells the watchers that rec was saved; the task's lock (if it is
// live) must be held, so that they hear of its saves in order.
func (m *Manager) notify(rec *store.TaskRecord) {
	w := &m.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.fns) == 0 {
		return
	}
	c := Change{TaskID: rec.Task.ID, ContextID: rec.Task.ContextID, Owner: rec.Owner,
		State: rec.Task.Status.State, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
	for _, fn := range w.fns {
		fn(c)
	}
}
