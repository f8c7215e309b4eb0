package security

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"
)

// Audit record directions.
const (
	AuditInbound  = "inbound"
	AuditOutbound = "outbound"
)

// AuditRecord is one line of the audit log: one A2A exchange, inbound (a
// peer called us) or outbound (we called a peer or delivered a webhook).
// It never holds message content; Error and Peer are redacted when logged.
type AuditRecord struct {
	// Time is when the exchange started; the zero time means "now".
	Time time.Time `json:"time"`
	// Direction is AuditInbound or AuditOutbound.
	Direction string `json:"direction"`
	// Identity is the caller's identity ID (inbound); usually empty
	// outbound.
	Identity string `json:"identity,omitempty"`
	// Tier is the caller's trust tier ("public", "trusted", "local").
	Tier string `json:"tier,omitempty"`
	// Method is the JSON-RPC method, or "webhook", "card" and the like.
	Method string `json:"method,omitempty"`
	// TaskID is the A2A task the exchange concerned, if any.
	TaskID string `json:"taskId,omitempty"`
	// ContextID is the A2A context the exchange concerned, if any.
	ContextID string `json:"contextId,omitempty"`
	// Peer is the remote agent's name or URL (outbound).
	Peer string `json:"peer,omitempty"`
	// Agent is the host agent that served an inbound exchange, when the
	// plugin serves several ("" otherwise).
	Agent string `json:"agent,omitempty"`
	// Outcome is a short word: "ok", "error", "refused", "rate-limited"…
	Outcome string `json:"outcome"`
	// Code is the JSON-RPC error code or HTTP status, 0 for none.
	Code int `json:"code,omitempty"`
	// RequestBytes is the size of the request body.
	RequestBytes int64 `json:"requestBytes"`
	// ResponseBytes is the size of the response body (all events of a stream).
	ResponseBytes int64 `json:"responseBytes"`
	// DurationMS is how long the exchange took, in milliseconds.
	DurationMS float64 `json:"durationMs"`
	// Error is the error text, if any; it is passed through Redact.
	Error string `json:"error,omitempty"`
}

// Limits on logged field lengths, so a peer cannot bloat the log with a
// huge method name or error text.
const (
	auditMaxField = 256
	auditMaxError = 2048
)

// ErrAuditClosed is returned by Log after Close.
var ErrAuditClosed = errors.New("security: audit log is closed")

// AuditLog appends AuditRecords as JSON Lines to a file created with mode
// 0600. When a record would take the file past maxBytes it is rotated:
// path.keep-1 becomes path.keep (the oldest is dropped), …, path becomes
// path.1, and a fresh path is started. Every record is written with a
// single write(2) on an O_APPEND descriptor, under a mutex, before Log
// returns: records survive a crash of the plugin (they are in the kernel's
// page cache) but not a power loss unless Sync is called. A write takes a
// few microseconds, so callers are never held up for long. A nil *AuditLog
// logs nothing, which is how auditing is turned off. Safe for concurrent use.
type AuditLog struct {
	path     string
	maxBytes int64
	keep     int
	now      func() time.Time

	mu     sync.Mutex
	f      *os.File
	size   int64
	buf    bytes.Buffer
	enc    *json.Encoder
	line   []byte // appendAuditRecord's buffer, reused
	closed bool
}

// NewAuditLog opens (creating it and its directory if needed) the audit
// log at path. maxBytes <= 0 disables rotation; keep is how many rotated
// files to keep (0: rotation just starts the file afresh).
func NewAuditLog(path string, maxBytes int64, keep int) (*AuditLog, error) {
	if path == "" {
		return nil, errors.New("security: audit log path is empty")
	}
	l := &AuditLog{path: path, maxBytes: max(maxBytes, 0), keep: max(keep, 0), now: time.Now}
	l.enc = json.NewEncoder(&l.buf)
	l.enc.SetEscapeHTML(false)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("security: audit log directory: %w", err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// Path returns the file the log writes to.
func (l *AuditLog) Path() string { return l.path }

func (l *AuditLog) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("security: open audit log: %w", err)
	}
	// An existing file may have been created with looser permissions.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("security: audit log permissions: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("security: audit log: %w", err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Log appends one record. Error and Peer are redacted, long fields are
// cut, and a zero Time is set to now; the time is written in UTC.
func (l *AuditLog) Log(rec AuditRecord) error {
	if l == nil {
		return nil
	}
	if rec.Time.IsZero() {
		rec.Time = l.now()
	}
	rec.Time = rec.Time.UTC()
	// Redact before cutting: a secret cut in half may no longer look like one.
	rec.Error, _ = Redact(rec.Error)
	rec.Error = truncate(rec.Error, auditMaxError)
	rec.Peer, _ = Redact(rec.Peer)
	rec.Peer = truncate(rec.Peer, auditMaxField)
	rec.Direction = truncate(rec.Direction, auditMaxField)
	rec.Identity = truncate(rec.Identity, auditMaxField)
	rec.Tier = truncate(rec.Tier, auditMaxField)
	rec.Method = truncate(rec.Method, auditMaxField)
	rec.TaskID = truncate(rec.TaskID, auditMaxField)
	rec.ContextID = truncate(rec.ContextID, auditMaxField)
	rec.Outcome = truncate(rec.Outcome, auditMaxField)

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrAuditClosed
	}
	line, ok := appendAuditRecord(l.line[:0], &rec)
	if ok {
		l.line = line
	} else {
		var err error
		if line, err = l.encodeSlow(rec); err != nil {
			return err
		}
	}
	if l.maxBytes > 0 && l.size > 0 && l.size+int64(len(line)) > l.maxBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("security: write audit log: %w", err)
	}
	return nil
}

// encodeSlow encodes rec with encoding/json (see appendAuditRecord); rec
// is a copy so that only this path moves a record to the heap. Called
// with l.mu held.
func (l *AuditLog) encodeSlow(rec AuditRecord) ([]byte, error) {
	l.buf.Reset()
	if err := l.enc.Encode(&rec); err != nil {
		return nil, fmt.Errorf("security: encode audit record: %w", err)
	}
	return l.buf.Bytes(), nil
}

// rotate shifts the old files up by one and starts a new file. Called with
// l.mu held.
func (l *AuditLog) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("security: rotate audit log: %w", err)
	}
	if l.keep == 0 {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("security: rotate audit log: %w", err)
		}
	} else {
		for i := l.keep - 1; i >= 1; i-- {
			from, to := fmt.Sprintf("%s.%d", l.path, i), fmt.Sprintf("%s.%d", l.path, i+1)
			if err := os.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("security: rotate audit log: %w", err)
			}
		}
		if err := os.Rename(l.path, l.path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("security: rotate audit log: %w", err)
		}
	}
	return l.open()
}

// Sync flushes the file to stable storage.
func (l *AuditLog) Sync() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrAuditClosed
	}
	return l.f.Sync()
}

// Close syncs and closes the file. Closing twice is harmless.
func (l *AuditLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	serr := l.f.Sync()
	if err := l.f.Close(); err != nil {
		return err
	}
	return serr
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
