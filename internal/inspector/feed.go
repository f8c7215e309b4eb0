package inspector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// feedBuffer is how many changes one open page may lag behind before it
// is told to reload its list instead ("resync").
const feedBuffer = 128

// feedKeepAlive is the interval of SSE comments that keep idle proxies
// and browsers from closing the feed.
const feedKeepAlive = 15 * time.Second

// hub fans task changes out to the open live feeds. publish never blocks:
// it runs inside the task manager, with the task locked.
type hub struct {
	mu   sync.Mutex
	subs map[*feedSub]struct{}
	// gen is closed by endStreams; streams started before watch it.
	gen chan struct{}
}

// feedSub is one open feed.
type feedSub struct {
	ch   chan tasks.Change
	lost atomic.Bool // a change was dropped: the page must reload
}

func newHub() *hub {
	return &hub{subs: map[*feedSub]struct{}{}, gen: make(chan struct{})}
}

func (h *hub) publish(c tasks.Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- c:
		default:
			s.lost.Store(true)
		}
	}
}

// subscribe adds a feed; done is closed when endStreams is called.
func (h *hub) subscribe() (s *feedSub, done <-chan struct{}, cancel func()) {
	s = &feedSub{ch: make(chan tasks.Change, feedBuffer)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	gen := h.gen
	h.mu.Unlock()
	return s, gen, func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
	}
}

// generation returns the channel closed by the next endStreams.
func (h *hub) generation() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen
}

func (h *hub) endStreams() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.gen)
	h.gen = make(chan struct{})
}

// taskEvent is the data of a "task" event of the live feed.
type taskEvent struct {
	TaskID    string    `json:"taskId"`
	ContextID string    `json:"contextId"`
	Peer      string    `json:"peer"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// serveEvents is the live feed: server-sent events, one "task" event per
// task change (its id, context, peer, state and times), "resync" when the
// page fell behind and should reload its list, and keep-alive comments.
func (in *Inspector) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	sub, done, cancel := in.feed.subscribe()
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(format string, args ...any) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write("retry: 2000\n: live task feed of the A2A inspector\n\n") {
		return
	}
	tick := time.NewTicker(feedKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-done:
			return
		case <-tick.C:
			if !write(": keep-alive\n\n") {
				return
			}
		case c := <-sub.ch:
			if sub.lost.Swap(false) {
				if !write("event: resync\ndata: {}\n\n") {
					return
				}
				continue
			}
			b, _ := json.Marshal(taskEvent{TaskID: c.TaskID, ContextID: c.ContextID, Peer: c.Owner, State: string(c.State),
				CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()})
			if !write("event: task\ndata: %s\n\n", b) {
				return
			}
		}
	}
}
