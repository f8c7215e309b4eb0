package testharness

import "sync"

// Logger is the small logging interface the harness writes to. testing.TB
// satisfies it, and so does LoggerFunc.
type Logger interface {
	Logf(format string, args ...any)
}

// LoggerFunc adapts a printf-style function (log.Printf, for example) to
// Logger.
type LoggerFunc func(format string, args ...any)

// Logf calls f.
func (f LoggerFunc) Logf(format string, args ...any) { f(format, args...) }

// nopLogger discards everything.
type nopLogger struct{}

func (nopLogger) Logf(string, ...any) {}

func orNop(l Logger) Logger {
	if l == nil {
		return nopLogger{}
	}
	return l
}

// gatedLogger forwards to a Logger until closed. testing.TB panics when a
// goroutine logs after its test finished; the harness closes the gate at the
// end of cleanup so late plugin output is dropped instead.
type gatedLogger struct {
	mu     sync.Mutex
	l      Logger
	closed bool
}

func (g *gatedLogger) Logf(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	g.l.Logf(format, args...)
}

func (g *gatedLogger) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
