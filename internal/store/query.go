package store

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// ErrInvalidPageToken is returned (wrapped) by ListTasks when the page
// token was not issued by this store or is damaged. The server answers it
// with JSON-RPC -32602 (invalid params).
var ErrInvalidPageToken = errors.New("invalid page token")

// Page sizes of ListTasks (A2A v1.0 ListTasks: 1–100, default 50).
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// pageTokenVersion is the first byte of every page token, so that a future
// format can tell old tokens apart.
const pageTokenVersion = 1

// taskKey is a task's position in ListTasks order: newest status first,
// ties broken by id ascending. ts is the status timestamp in Unix
// milliseconds.
type taskKey struct {
	ts int64
	id string
}

// before reports whether k sorts before o in ListTasks order.
func (k taskKey) before(o taskKey) bool {
	return k.ts > o.ts || (k.ts == o.ts && k.id < o.id)
}

// encodePageToken makes the opaque cursor that resumes a listing after k.
// The token holds only the position (status timestamp and id), so it stays
// valid however many tasks are inserted meanwhile: keyset pagination never
// shifts rows between pages.
func encodePageToken(k taskKey) string {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(k.id))
	b = append(b, pageTokenVersion)
	b = binary.AppendVarint(b, k.ts)
	b = append(b, k.id...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePageToken parses a token made by encodePageToken.
func decodePageToken(tok string) (taskKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 2 || b[0] != pageTokenVersion {
		return taskKey{}, fmt.Errorf("%w %q: pass the nextPageToken of a previous ListTasks response unchanged, or none for the first page", ErrInvalidPageToken, shorten(tok))
	}
	ts, n := binary.Varint(b[1:])
	if n <= 0 {
		return taskKey{}, fmt.Errorf("%w %q: pass the nextPageToken of a previous ListTasks response unchanged, or none for the first page", ErrInvalidPageToken, shorten(tok))
	}
	return taskKey{ts: ts, id: string(b[1+n:])}, nil
}

// shorten bounds a caller-supplied string quoted in an error message.
func shorten(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// listPlan is a TaskQuery checked and reduced to what both stores execute.
type listPlan struct {
	owner, contextID string
	// agent is the agent filter, "" for none.
	agent string
	// state is the wire name of the state filter, "" for none.
	state string
	// after is the lowest status timestamp (ms) admitted; math.MinInt64
	// when there is no StatusAfter filter.
	after int64
	// cursor is where the previous page ended; hasCursor is false on the
	// first page.
	cursor    taskKey
	hasCursor bool
	size      int
}

// planQuery validates q. PageSize outside 1–100 is clamped (0 or less
// means the default, 50): rejecting it is the server's job. The zero state
// and TASK_STATE_UNSPECIFIED both mean "any state", as proto3's default
// does on the wire. StatusAfter is compared at millisecond precision, the
// precision of stored status timestamps.
func planQuery(q TaskQuery) (listPlan, error) {
	p := listPlan{owner: q.Owner, agent: q.Agent, contextID: q.ContextID, after: math.MinInt64, size: q.PageSize}
	if q.State != "" && q.State != a2a.TaskStateUnspecified {
		p.state = string(q.State)
	}
	if !q.StatusAfter.IsZero() {
		p.after = q.StatusAfter.UnixMilli()
	}
	switch {
	case p.size <= 0:
		p.size = DefaultPageSize
	case p.size > MaxPageSize:
		p.size = MaxPageSize
	}
	if q.PageToken != "" {
		k, err := decodePageToken(q.PageToken)
		if err != nil {
			return p, err
		}
		p.cursor, p.hasCursor = k, true
	}
	return p, nil
}

// StatusMillis is the status time the store keeps for rec and orders it
// by, in milliseconds: UpdatedAt, or when that is unset the task's own
// status timestamp, or CreatedAt.
func (rec *TaskRecord) StatusMillis() int64 {
	switch {
	case !rec.UpdatedAt.IsZero():
		return rec.UpdatedAt.UnixMilli()
	case rec.Task.Status.Timestamp != nil && !rec.Task.Status.Timestamp.IsZero():
		return rec.Task.Status.Timestamp.UnixMilli()
	}
	return rec.CreatedAt.UnixMilli()
}

// stateName is the stored form of a task state: its wire name, with the
// zero value stored as TASK_STATE_UNSPECIFIED.
func stateName(s a2a.TaskState) string {
	return s.String()
}

// fromMillis turns stored milliseconds back into a UTC time; both stores
// hand out times at millisecond precision.
func fromMillis(ms int64) time.Time {
	return time.UnixMilli(ms).UTC()
}

// toMillis truncates t to the stored precision (the zero time stays zero).
func toMillis(t time.Time) int64 {
	return t.UnixMilli()
}

// checkRecord rejects records that cannot be stored.
func checkRecord(rec *TaskRecord, deliveries []Delivery) error {
	if rec == nil {
		return errors.New("store: SaveTask with a nil record")
	}
	if rec.Task.ID == "" {
		return errors.New("store: SaveTask with an empty task id")
	}
	for i := range deliveries {
		if d := &deliveries[i]; d.TaskID != "" && d.TaskID != rec.Task.ID {
			return fmt.Errorf("store: save task %s: delivery %d is for task %q: deliveries must belong to the task saved with them", rec.Task.ID, i, d.TaskID)
		}
		if deliveries[i].ConfigID == "" {
			return fmt.Errorf("store: save task %s: delivery %d has no config id", rec.Task.ID, i)
		}
	}
	return nil
}
