package hostsdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	hclog "github.com/hashicorp/go-hclog"
)

// stderrLines is how many lines of a plugin's stderr are kept for crash
// reports.
const stderrLines = 50

// lineRing keeps the last lines written to it. hclog JSON lines are kept as
// "level: message key=value …" so that a crash report reads like prose.
type lineRing struct {
	mu      sync.Mutex
	lines   []ringLine
	next    int
	full    bool
	seq     uint64 // lines ever added
	partial []byte
}

type ringLine struct {
	seq  uint64
	text string
	// notable: not an hclog line below warn — worth a crash report.
	notable bool
}

func newLineRing(n int) *lineRing { return &lineRing{lines: make([]ringLine, n)} }

// mark returns a position; lines added later have seq >= mark.
func (r *lineRing) mark() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Write splits p into lines; an unterminated tail waits for the next Write.
func (r *lineRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	data := append(r.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		r.addLocked(string(data[:i]))
		data = data[i+1:]
	}
	r.partial = slices.Clone(data)
	return len(p), nil
}

func (r *lineRing) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(line)
}

func (r *lineRing) addLocked(line string) {
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	text, level := readableLogLine(line)
	notable := level == "" || level == "warn" || level == "error"
	r.lines[r.next] = ringLine{seq: r.seq, text: text, notable: notable}
	r.seq++
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
}

// tail returns the last n lines, oldest first (all of them when n <= 0).
func (r *lineRing) tail(n int) []string {
	return r.select_(n, 0, false)
}

// notableSince returns the last n notable lines added at or after mark:
// what a crash report should quote.
func (r *lineRing) notableSince(mark uint64, n int) []string {
	return r.select_(n, mark, true)
}

func (r *lineRing) select_(n int, mark uint64, notableOnly bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ordered := r.lines[:r.next]
	if r.full {
		ordered = append(slices.Clone(r.lines[r.next:]), ordered...)
	}
	var out []string
	for _, l := range ordered {
		if l.seq >= mark && (!notableOnly || l.notable) {
			out = append(out, l.text)
		}
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// readableLogLine renders an hclog JSON line as "level: message k=v …" and
// returns it with its level; any other line comes back unchanged with level
// "".
func readableLogLine(line string) (text, level string) {
	if !strings.HasPrefix(line, "{") {
		return line, ""
	}
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return line, ""
	}
	msg, ok := m["@message"].(string)
	if !ok {
		return line, ""
	}
	var b strings.Builder
	if lvl, ok := m["@level"].(string); ok {
		level = lvl
		b.WriteString(lvl + ": ")
	}
	b.WriteString(msg)
	keys := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasPrefix(k, "@") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, m[k])
	}
	return b.String(), level
}

// lineWriter calls fn for every complete line written to it.
type lineWriter struct {
	mu      sync.Mutex
	partial []byte
	fn      func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := append(w.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(data[:i]), "\r"); line != "" {
			w.fn(line)
		}
		data = data[i+1:]
	}
	w.partial = slices.Clone(data)
	return len(p), nil
}

// goPluginLogger is the logger go-plugin gets for one plugin process. Its
// own lines ("starting plugin", "plugin process exited") go to the host's
// logger as they are. The lines the plugin logs on stderr come to the
// child go-plugin names after the executable; they are logged under the
// plugin's own logger name (hclog's @module, e.g. "a2a.server") instead of
// "<host>.<executable>.<executable>", and without the "timestamp" go-plugin
// adds: the host's logger stamps its lines already.
type goPluginLogger struct {
	hclog.Logger
	fallback string // the name for lines without @module
}

// Named returns the logger of the plugin's stderr lines.
func (l goPluginLogger) Named(string) hclog.Logger {
	return pluginLineLogger(l)
}

// pluginLineLogger logs one parsed stderr line of a plugin.
type pluginLineLogger struct {
	hclog.Logger
	fallback string
}

func (l pluginLineLogger) Log(level hclog.Level, msg string, args ...any) {
	name := l.fallback
	kept := make([]any, 0, len(args))
	for i := 0; i+1 < len(args); i += 2 {
		k, _ := args[i].(string)
		switch {
		case k == "@module":
			if s, ok := args[i+1].(string); ok && s != "" {
				name = s
			}
		case k == "timestamp" || strings.HasPrefix(k, "@"):
		default:
			kept = append(kept, args[i], args[i+1])
		}
	}
	if len(args)%2 == 1 {
		kept = append(kept, args[len(args)-1])
	}
	l.Logger.ResetNamed(name).Log(level, msg, kept...)
}

func (l pluginLineLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l pluginLineLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l pluginLineLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l pluginLineLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l pluginLineLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }
