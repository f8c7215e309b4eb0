package tasks

import (
	"sync"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// Event is one stream event: a v1.0 StreamResponse and, once encoded, its
// JSON, shared by every stream and webhook that receives it.
type Event struct {
	Response a2a.StreamResponse
	// JSON is the encoded Response, or nil until first needed. Streams must
	// treat it as read-only.
	JSON []byte
}

// encode fills ev.JSON if it is empty and returns it.
func (ev *Event) encode() ([]byte, error) {
	if ev.JSON != nil {
		return ev.JSON, nil
	}
	b, err := a2a.Marshal(ev.Response)
	if err != nil {
		return nil, err
	}
	ev.JSON = b
	return b, nil
}

// Subscription is one stream's view of a task: the events to send, in order,
// ending when the task reaches a state that ends the stream (see endsAt),
// when the client is dropped for reading too slowly, or when Close is
// called.
//
// A stream may lag up to Options.SubscriberBuffer events behind its task.
// Its channel holds only the first few of them (subscriberChan): most
// streams never hold more than a task's handful of events, and a channel
// of the whole buffer cost every stream about 14 KiB (256 events) before
// it sent anything. Events that do not fit wait in overflow, and a pump
// goroutine, started only then, moves them into the channel in order.
type Subscription struct {
	m *Manager
	// lt is the live task the stream hangs on, nil when it follows the
	// task through the Cluster. Guarded by mu: a stream moves from lt to
	// the Cluster when its task waits for its client (see
	// replicas.followElsewhereLocked).
	lt *liveTask
	ch chan Event
	// historyLength shapes task snapshots sent on this stream.
	historyLength *int32
	// untilTerminal marks a SubscribeToTask stream, which follows the task
	// to a terminal state; a SendStreamingMessage stream also ends when the
	// task asks for input (see endsAt).
	untilTerminal bool
	// stop ends following the task through the Cluster (nil while the
	// stream hangs on lt). Guarded by mu.
	stop func()

	mu   sync.Mutex
	done bool
	err  error
	// limit is how many events may wait for the client (SubscriberBuffer).
	limit int
	// overflow holds the events that did not fit in ch, oldest first;
	// while pumping, the pump goroutine moves them into ch (held is the
	// one it is handing over) and every new event queues behind them.
	overflow []Event
	pumping  bool
	held     int
	// quit, made with the pump, is closed by Close: nobody reads ch any
	// more, so the pump stops.
	quit     chan struct{}
	quitDone bool
	// closed: ch is closed. It is closed once done and not pumping (the
	// pump closes it after the last overflow event, so that nothing is
	// sent on a closed channel).
	closed bool
}

// subscriberChan is the capacity of a stream's channel: room for a task's
// usual events (its snapshot, WORKING, an answer's artifact and its final
// status) and a few more.
const subscriberChan = 8

func newSubscription(m *Manager, lt *liveTask, historyLength *int32, untilTerminal bool) *Subscription {
	limit := m.opts.SubscriberBuffer
	return &Subscription{m: m, lt: lt, ch: make(chan Event, min(limit, subscriberChan)), limit: limit,
		historyLength: historyLength, untilTerminal: untilTerminal}
}

// endsAt reports whether the stream ends when its task reaches st. Every
// stream ends at a terminal state. A SendStreamingMessage stream also ends
// at INPUT_REQUIRED: the request it answers has its answer (a question),
// and the client answers with a new message, whose own stream follows the
// task on; a client that reads its stream to the end before answering
// must not wait forever. A SubscribeToTask stream follows the task until
// it is terminal, through any question (specification §3.1.6, and see
// internal/server/doc.go). Both stay open at AUTH_REQUIRED (§7.6.1).
func (s *Subscription) endsAt(st a2a.TaskState) bool {
	return st.Terminal() || (st == a2a.TaskStateInputRequired && !s.untilTerminal)
}

// Terminal reports whether the stream follows its task to a terminal state
// (SubscribeToTask), rather than ending at INPUT_REQUIRED too.
func (s *Subscription) Terminal() bool { return s.untilTerminal }

// Events returns the channel of events; it is closed when the stream ends.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Err reports why the stream ended once Events is closed: nil when the task
// settled, ErrDropped when the client was too slow, ErrClosed on shutdown.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close detaches the stream from its task (the client went away). The task
// goes on.
func (s *Subscription) Close() {
	s.mu.Lock()
	lt := s.lt
	s.mu.Unlock()
	if lt != nil {
		lt.mu.Lock()
		s.mu.Lock()
		moved := s.lt == nil // it went on to follow the task elsewhere
		s.mu.Unlock()
		if !moved {
			for i, x := range lt.subs {
				if x == s {
					lt.subs = append(lt.subs[:i], lt.subs[i+1:]...)
					break
				}
			}
			// A task kept in memory only for its streams (AUTH_REQUIRED)
			// leaves with its last one; it is in the store.
			if len(lt.subs) == 0 && lt.turn == nil && lt.rec.Task.Status.State.Interrupted() {
				s.m.mu.Lock()
				if s.m.live[lt.rec.Task.ID] == lt {
					delete(s.m.live, lt.rec.Task.ID)
				}
				s.m.mu.Unlock()
			}
		}
		lt.mu.Unlock()
	}
	s.finish(nil)
	s.mu.Lock()
	stop := s.stop
	if s.quit != nil && !s.quitDone {
		s.quitDone = true
		close(s.quit)
	}
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// deliver queues events without blocking. It reports false (and ends the
// stream with ErrDropped) when the client has fallen too far behind: more
// than limit events would be waiting for it. (For the instant between the
// pump handing an event over and taking mu again, that event counts twice:
// a stream at exactly its limit just then is dropped one event early.)
func (s *Subscription) deliver(events []Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	for _, ev := range events {
		if ev.Response.Task != nil {
			t := ev.Response.Task.WithHistoryLength(s.historyLength)
			ev = Event{Response: a2a.StreamResponse{Task: &t}}
		}
		if !s.pumping {
			select {
			case s.ch <- ev:
				continue
			default:
			}
		}
		if len(s.ch)+s.held+len(s.overflow) >= s.limit {
			s.done, s.err = true, ErrDropped
			s.closeLocked()
			return false
		}
		s.overflow = append(s.overflow, ev)
		if !s.pumping {
			s.pumping = true
			if s.quit == nil {
				s.quit = make(chan struct{})
			}
			go s.pump()
		}
	}
	return true
}

// pump moves the overflow into ch, oldest first, until it is empty or the
// stream is closed; it then closes ch if the stream ended meanwhile.
func (s *Subscription) pump() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.overflow) > 0 {
		ev := s.overflow[0]
		s.overflow[0] = Event{}
		s.overflow = s.overflow[1:]
		s.held = 1
		s.mu.Unlock()
		var quit bool
		select {
		case s.ch <- ev:
		case <-s.quit:
			quit = true
		}
		s.mu.Lock()
		s.held = 0
		if quit {
			s.overflow = nil
		}
	}
	s.overflow = nil
	s.pumping = false
	s.closeLocked()
}

// closeLocked closes ch once the stream has ended and the pump, if any, has
// stopped. s.mu must be held.
func (s *Subscription) closeLocked() {
	if s.done && !s.pumping && !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// finish ends the stream with err unless it already ended. Events already
// queued (in the channel or the overflow) are still delivered.
func (s *Subscription) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done, s.err = true, err
	s.closeLocked()
}
