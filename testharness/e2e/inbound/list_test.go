package inbound_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// list calls ListTasks and returns the decoded result and the raw result.
func (c *client) list(t testing.TB, ctx context.Context, params map[string]any) (listResult, json.RawMessage) {
	t.Helper()
	var l listResult
	r := c.call(t, ctx, "ListTasks", params)
	r.ok(t, &l)
	if l.NextPageToken == nil {
		t.Fatalf("ListTasks result without nextPageToken: %s", r.Result)
	}
	return l, r.Result
}

func ids(ts []task) []string {
	out := make([]string, len(ts))
	for i, tk := range ts {
		out[i] = tk.ID
	}
	return out
}

// TestListTasksFiltersAndPages creates tasks in several contexts and
// states on a fresh host, then checks ListTasks with every filter against
// the unfiltered list: newest first, contextId, status,
// statusTimestampAfter, pageSize with pageToken across pages,
// historyLength and includeArtifacts; and GetTask with historyLength.
func TestListTasksFiltersAndPages(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)

	ctxA, ctxB := newID("list-a"), newID("list-b")
	var created []*task
	for i, spec := range []struct{ text, cid string }{
		{"hello one", ctxA}, {"progress two", ctxA}, {"ask three", ctxB}, {"fail four", ctxB},
		{"hello five", ctxA}, {"reject six", ""}, {"hello seven", ctxB},
	} {
		p := msg(spec.text)
		if spec.cid != "" {
			p = msg(spec.text, "contextId", spec.cid)
		}
		created = append(created, c.sendTask(t, ctx, p))
		if i == 2 {
			h.turnEnded(t, ctx, created[i].ID)
		}
	}

	all, raw := c.list(t, ctx, map[string]any{})
	if all.TotalSize != len(created) || len(all.Tasks) != len(created) || *all.NextPageToken != "" || all.PageSize != 50 {
		t.Fatalf("unfiltered list: total %d, %d tasks, next %q, pageSize %d; want %d tasks on one page of 50",
			all.TotalSize, len(all.Tasks), *all.NextPageToken, all.PageSize, len(created))
	}
	// Newest first, by status timestamp.
	var stamps []time.Time
	for _, tk := range all.Tasks {
		ts, err := time.Parse(time.RFC3339Nano, tk.Status.Timestamp)
		if err != nil {
			t.Fatalf("status timestamp %q: %v", tk.Status.Timestamp, err)
		}
		stamps = append(stamps, ts)
	}
	for i := 1; i < len(stamps); i++ {
		if stamps[i].After(stamps[i-1]) {
			t.Errorf("task %d (%v) is newer than task %d (%v): not newest first", i, stamps[i], i-1, stamps[i-1])
		}
	}
	// Artifacts are absent unless asked for; the key itself is absent.
	if bytes.Contains(raw, []byte(`"artifacts"`)) {
		t.Errorf("ListTasks without includeArtifacts has artifacts: %s", raw)
	}

	// where returns the ids of the unfiltered list (in its order) that
	// keep holds for: what a filtered list must answer. (Tasks settled in
	// the same millisecond tie on the timestamp; the list's own order
	// decides between them.)
	where := func(keep func(task) bool) []string {
		out := []string{}
		for _, tk := range all.Tasks {
			if keep(tk) {
				out = append(out, tk.ID)
			}
		}
		return out
	}
	t.Run("contextId", func(t *testing.T) {
		l, _ := c.list(t, ctx, map[string]any{"contextId": ctxA})
		want := where(func(tk task) bool { return tk.ContextID == ctxA })
		if got := ids(l.Tasks); !equal(got, want) || len(want) != 3 || l.TotalSize != 3 {
			t.Errorf("context A lists %v (total %d), want %v", got, l.TotalSize, want)
		}
	})
	t.Run("status", func(t *testing.T) {
		for state, n := range map[string]int{stInputRequired: 1, stFailed: 1, stRejected: 1, stCompleted: 4, stWorking: 0} {
			want := where(func(tk task) bool { return tk.Status.State == state })
			l, _ := c.list(t, ctx, map[string]any{"status": state})
			if got := ids(l.Tasks); !equal(got, want) || len(want) != n || l.TotalSize != n {
				t.Errorf("status %s lists %v (total %d), want %v", state, got, l.TotalSize, want)
			}
		}
		l, _ := c.list(t, ctx, map[string]any{"status": stCompleted, "contextId": ctxB})
		if got := ids(l.Tasks); !equal(got, []string{created[6].ID}) {
			t.Errorf("status and context together list %v", got)
		}
	})
	t.Run("statusTimestampAfter", func(t *testing.T) {
		for _, pivot := range []int{0, 3, len(all.Tasks) - 1} {
			after := all.Tasks[pivot].Status.Timestamp
			at := stamps[pivot]
			var want []string
			for i, tk := range all.Tasks {
				if !stamps[i].Before(at) {
					want = append(want, tk.ID)
				}
			}
			l, _ := c.list(t, ctx, map[string]any{"statusTimestampAfter": after})
			if got := ids(l.Tasks); !equal(got, want) {
				t.Errorf("statusTimestampAfter %s lists %v, want %v", after, got, want)
			}
		}
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
		if l, _ := c.list(t, ctx, map[string]any{"statusTimestampAfter": future}); len(l.Tasks) != 0 || l.TotalSize != 0 {
			t.Errorf("a future statusTimestampAfter lists %v", ids(l.Tasks))
		}
	})
	t.Run("pageSize and pageToken", func(t *testing.T) {
		for _, size := range []int{1, 2, 3, 7, 100} {
			var got []string
			token := ""
			pages := 0
			for {
				p := map[string]any{"pageSize": size}
				if token != "" {
					p["pageToken"] = token
				}
				l, _ := c.list(t, ctx, p)
				pages++
				if l.PageSize != size || l.TotalSize != len(created) || len(l.Tasks) > size {
					t.Fatalf("page %d of size %d: pageSize %d totalSize %d with %d tasks", pages, size, l.PageSize, l.TotalSize, len(l.Tasks))
				}
				got = append(got, ids(l.Tasks)...)
				token = *l.NextPageToken
				if token == "" {
					break
				}
				if pages > len(created) {
					t.Fatalf("more pages than tasks")
				}
			}
			if !equal(got, ids(all.Tasks)) {
				t.Errorf("pages of %d = %v, want %v", size, got, ids(all.Tasks))
			}
			if want := (len(created) + size - 1) / size; pages != want {
				t.Errorf("pages of %d: %d pages, want %d", size, pages, want)
			}
		}
		c.call(t, ctx, "ListTasks", map[string]any{"pageToken": "not-a-token"}).wantError(t, -32602, "INVALID_PARAMS")
	})
	t.Run("historyLength and includeArtifacts", func(t *testing.T) {
		// ctxB's "ask three" has two messages (the request, the question);
		// a completed task one (its answer is the artifact).
		for _, n := range []int{0, 1, 2} {
			l, raw := c.list(t, ctx, map[string]any{"contextId": ctxB, "historyLength": n})
			for _, tk := range l.Tasks {
				if full := len(c.getTask(t, ctx, tk.ID).History); len(tk.History) != min(n, full) {
					t.Errorf("historyLength %d: task has %d of %d messages", n, len(tk.History), full)
				}
			}
			if n == 0 && bytes.Contains(raw, []byte(`"history"`)) {
				t.Errorf("historyLength 0 still sends history: %s", raw)
			}
		}
		l, _ := c.list(t, ctx, map[string]any{"contextId": ctxA, "includeArtifacts": true, "historyLength": 1})
		for _, tk := range l.Tasks {
			if tk.answer() == "" || len(tk.History) != 1 || tk.History[0].Role != "ROLE_USER" {
				t.Errorf("with artifacts and the last message: %s has answer %q and history %+v", tk.ID, tk.answer(), tk.History)
			}
		}
	})
	t.Run("GetTask historyLength", func(t *testing.T) {
		// Answer "ask three": the request, the question, the answer to it
		// (and the final answer as an artifact).
		c.sendTask(t, ctx, msg("red", "taskId", created[2].ID))
		full := c.getTask(t, ctx, created[2].ID)
		if len(full.History) != 3 {
			t.Fatalf("history = %d messages, want 3", len(full.History))
		}
		for _, n := range []int{0, 1, 2, 50} {
			got := c.getTask(t, ctx, created[2].ID, n)
			want := min(n, 3)
			if len(got.History) != want {
				t.Errorf("GetTask historyLength %d: %d messages, want %d", n, len(got.History), want)
				continue
			}
			// The most recent messages, in chronological order.
			for i := range got.History {
				if got.History[i].MessageID != full.History[len(full.History)-want+i].MessageID {
					t.Errorf("GetTask historyLength %d: message %d is not the %s most recent", n, i, strconv.Itoa(want))
				}
			}
			if len(got.Artifacts) == 0 {
				t.Errorf("GetTask dropped the artifacts")
			}
		}
	})
}
