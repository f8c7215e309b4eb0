package server

import (
	"sync"
	"time"
)

// A flood of refused exchanges (a client resetting thousands of gRPC
// calls a second, a token guesser) must not become a flood of log lines:
// each refusal still leaves its audit record, but the log keeps at most
// refusalLogLines lines per reason in each refusalLogWindow and says, on
// the first line of the next window, how many it left out.
const (
	refusalLogLines  = 20
	refusalLogWindow = 10 * time.Second
)

// logLimiter counts the log lines of each refusal reason (a fixed set:
// the reasons are this project's, never a peer's words). Safe for
// concurrent use; the zero value is ready.
type logLimiter struct {
	mu      sync.Mutex
	windows map[string]*logWindow
}

// logWindow is one reason's current window.
type logWindow struct {
	start             time.Time
	lines, suppressed int
}

// allow reports whether a line about reason may be logged at now, and,
// when it may, how many lines of that reason were left out before it.
func (l *logLimiter) allow(reason string, now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.windows == nil {
		l.windows = map[string]*logWindow{}
	}
	w := l.windows[reason]
	if w == nil {
		w = &logWindow{start: now}
		l.windows[reason] = w
	}
	if now.Sub(w.start) >= refusalLogWindow {
		suppressed = w.suppressed
		*w = logWindow{start: now}
	}
	if w.lines >= refusalLogLines {
		w.suppressed++
		return false, 0
	}
	w.lines++
	return true, suppressed
}
