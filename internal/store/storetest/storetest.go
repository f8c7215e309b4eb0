// Package storetest is the conformance suite every store.Store must pass:
// the behaviour the rest of the plugin relies on, written once, one suite
// per role of the store (suites.go: RunTasks, RunOutbox, ...), and run
// against Memory, SQLite and PostgreSQL.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// t0 is the base time of the suite's records (millisecond precision, as
// stores keep times).
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// task makes a record with some history, an artifact and metadata.
func task(id, owner, contextID string, state a2a.TaskState, ms int) *store.TaskRecord {
	text := "hello from " + id
	return &store.TaskRecord{
		Task: a2a.Task{
			ID:        id,
			ContextID: contextID,
			Status: a2a.TaskStatus{
				State:     state,
				Timestamp: a2a.NewTimestamp(at(ms)),
				Message:   &a2a.Message{MessageID: "s-" + id, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("status of " + id)}},
			},
			History: []a2a.Message{
				{MessageID: "m-" + id, ContextID: contextID, TaskID: id, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
			},
			Artifacts: []a2a.Artifact{{
				ArtifactID: "a-" + id,
				Name:       "result",
				Parts:      []a2a.Part{a2a.DataPart(map[string]any{"n": 1.0, "id": id}), a2a.FilePart([]byte{1, 2, 3}, "application/octet-stream", "x.bin")},
			}},
			Metadata: map[string]any{"k": "v", "nested": map[string]any{"list": []any{"a", 2.0, true}}},
		},
		Owner:     owner,
		CreatedAt: at(ms - 1000),
		UpdatedAt: at(ms),
	}
}

// wire is the JSON form of a task, the form the suite compares.
func wire(t *testing.T, task *a2a.Task) []byte {
	t.Helper()
	b, err := a2a.Marshal(task)
	if err != nil {
		t.Fatalf("marshal task %s: %v", task.ID, err)
	}
	return b
}

// sameRecord fails unless got is want as stored.
func sameRecord(t *testing.T, got, want *store.TaskRecord) {
	t.Helper()
	if got == nil {
		t.Fatalf("task %s: got nil record", want.Task.ID)
	}
	if g, w := wire(t, &got.Task), wire(t, &want.Task); !bytes.Equal(g, w) {
		t.Errorf("task %s:\n got  %s\n want %s", want.Task.ID, g, w)
	}
	if got.Owner != want.Owner {
		t.Errorf("task %s: owner %q, want %q", want.Task.ID, got.Owner, want.Owner)
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("task %s: CreatedAt %v, want %v", want.Task.ID, got.CreatedAt, want.CreatedAt)
	}
	if !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("task %s: UpdatedAt %v, want %v", want.Task.ID, got.UpdatedAt, want.UpdatedAt)
	}
}

func mustSave(t *testing.T, s store.Store, rec *store.TaskRecord, ds ...store.Delivery) {
	t.Helper()
	if err := s.SaveTask(context.Background(), rec, ds); err != nil {
		t.Fatalf("SaveTask %s: %v", rec.Task.ID, err)
	}
}

func mustGet(t *testing.T, s store.Store, id, owner string) *store.TaskRecord {
	t.Helper()
	rec, err := s.GetTask(context.Background(), id, owner)
	if err != nil {
		t.Fatalf("GetTask %s (owner %q): %v", id, owner, err)
	}
	return rec
}

func wantNotFound(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: got error %v, want ErrNotFound", what, err)
	}
}

func ids(recs []*store.TaskRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Task.ID
	}
	return out
}

// listAll pages through q and returns every id, checking TotalSize on
// every page.
func listAll(t *testing.T, s store.Store, q store.TaskQuery) []string {
	t.Helper()
	var out []string
	total := -1
	for page := 0; ; page++ {
		res, err := s.ListTasks(context.Background(), q)
		if err != nil {
			t.Fatalf("ListTasks %+v: %v", q, err)
		}
		if total >= 0 && res.TotalSize != total {
			t.Fatalf("ListTasks %+v: TotalSize changed from %d to %d between pages", q, total, res.TotalSize)
		}
		total = res.TotalSize
		if n := q.PageSize; n > 0 && len(res.Tasks) > n {
			t.Fatalf("ListTasks: page of %d tasks, page size %d", len(res.Tasks), n)
		}
		out = append(out, ids(res.Tasks)...)
		if res.NextPageToken == "" {
			break
		}
		if len(res.Tasks) == 0 {
			t.Fatalf("ListTasks %+v: empty page with a next page token", q)
		}
		if page > 10000 {
			t.Fatal("ListTasks: pages never end")
		}
		q.PageToken = res.NextPageToken
	}
	if total != len(out) {
		t.Errorf("ListTasks %+v: TotalSize %d, but the pages held %d tasks", q, total, len(out))
	}
	return out
}

func testSaveGetReplace(t *testing.T, s store.Store) {
	rec := task("t1", "peer:alice", "c1", a2a.TaskStateWorking, 10)
	mustSave(t, s, rec)
	sameRecord(t, mustGet(t, s, "t1", ""), rec)
	sameRecord(t, mustGet(t, s, "t1", "peer:alice"), rec)

	upd := task("t1", "peer:alice", "c1", a2a.TaskStateCompleted, 20)
	upd.CreatedAt = rec.CreatedAt
	upd.Task.History = append(upd.Task.History, a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("done")}})
	mustSave(t, s, upd)
	sameRecord(t, mustGet(t, s, "t1", ""), upd)
	page, err := s.ListTasks(context.Background(), store.TaskQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalSize != 1 || len(page.Tasks) != 1 {
		t.Fatalf("after replace: %d tasks (total %d), want 1", len(page.Tasks), page.TotalSize)
	}
	sameRecord(t, page.Tasks[0], upd)
	// The old state no longer matches.
	page, err = s.ListTasks(context.Background(), store.TaskQuery{State: a2a.TaskStateWorking})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalSize != 0 {
		t.Errorf("after replace: %d tasks still listed as working", page.TotalSize)
	}
}

func testCopies(t *testing.T, s store.Store) {
	rec := task("t1", "o", "c", a2a.TaskStateWorking, 10)
	want := task("t1", "o", "c", a2a.TaskStateWorking, 10)
	mustSave(t, s, rec)
	// Mutating what was saved must not reach the store.
	*rec.Task.History[0].Parts[0].Text = "changed"
	rec.Task.Metadata["k"] = "changed"
	rec.Task.Metadata["nested"].(map[string]any)["list"].([]any)[0] = "changed"
	rec.Task.Artifacts[0].Parts[1].Raw[0] = 99
	rec.Task.Status.Message.Parts[0] = a2a.TextPart("changed")
	got := mustGet(t, s, "t1", "")
	sameRecord(t, got, want)
	// Nor may mutating what was read.
	*got.Task.History[0].Parts[0].Text = "changed"
	got.Task.Metadata["nested"].(map[string]any)["list"].([]any)[0] = "changed"
	got.Task.Artifacts[0].Parts[0].Data[0] = ' '
	got.Task.Artifacts = nil
	sameRecord(t, mustGet(t, s, "t1", ""), want)
	page, err := s.ListTasks(context.Background(), store.TaskQuery{})
	if err != nil {
		t.Fatal(err)
	}
	*page.Tasks[0].Task.History[0].Parts[0].Text = "changed"
	sameRecord(t, mustGet(t, s, "t1", ""), want)
}

func testGetUnknown(t *testing.T, s store.Store) {
	_, err := s.GetTask(context.Background(), "nope", "")
	wantNotFound(t, err, "GetTask of an unknown id")
}

func testSaveRejects(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.SaveTask(ctx, nil, nil); err == nil {
		t.Error("SaveTask(nil) succeeded")
	}
	if err := s.SaveTask(ctx, task("", "o", "c", a2a.TaskStateWorking, 1), nil); err == nil {
		t.Error("SaveTask without a task id succeeded")
	}
}

func testOwnerScoping(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustSave(t, s, task("a1", "peer:alice", "c1", a2a.TaskStateWorking, 10))
	mustSave(t, s, task("a2", "peer:alice", "c2", a2a.TaskStateCompleted, 20))
	mustSave(t, s, task("b1", "peer:bob", "c1", a2a.TaskStateWorking, 30))

	_, err := s.GetTask(ctx, "a1", "peer:bob")
	wantNotFound(t, err, "GetTask of alice's task as bob")
	mustGet(t, s, "a1", "peer:alice")
	mustGet(t, s, "a1", "")

	for _, tc := range []struct {
		q    store.TaskQuery
		want []string
	}{
		{store.TaskQuery{Owner: "peer:alice"}, []string{"a2", "a1"}},
		{store.TaskQuery{Owner: "peer:bob"}, []string{"b1"}},
		{store.TaskQuery{Owner: "peer:carol"}, nil},
		{store.TaskQuery{}, []string{"b1", "a2", "a1"}},
		{store.TaskQuery{Owner: "peer:bob", ContextID: "c1"}, []string{"b1"}},
		{store.TaskQuery{Owner: "peer:bob", ContextID: "c2"}, nil},
		{store.TaskQuery{Owner: "peer:bob", State: a2a.TaskStateCompleted}, nil},
	} {
		if got := listAll(t, s, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("ListTasks %+v = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// testAgentScoping: the agent is kept with each task (ForAgent sets it),
// a ListTasks with Agent sees only that agent's tasks (filters, pages and
// totalSize included), and through an agent's view another agent's task,
// its push configs and its recovery are invisible — ErrNotFound exactly
// like an unknown id — while the unscoped store sees every agent's; the
// tasks of no agent can be adopted by one (AdoptTasks).
func testAgentScoping(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b, none := store.ForAgent(s, "alpha"), store.ForAgent(s, "beta"), store.ForAgent(s, "")
	if none.Agent() != "" || a.Agent() != "alpha" || b.Store != s {
		t.Fatal("a view must know its agent and the whole store behind it")
	}
	mustSave(t, s, task("d1", "peer:alice", "c1", a2a.TaskStateWorking, 5)) // a host without agents
	for i := 0; i < 5; i++ {
		mustSave(t, a, task(fmt.Sprintf("a%d", i), "peer:alice", "c1", a2a.TaskStateWorking, 10+i))
	}
	mustSave(t, a, task("a9", "peer:bob", "c1", a2a.TaskStateCompleted, 30))
	mustSave(t, b, task("b1", "peer:alice", "c1", a2a.TaskStateWorking, 40))
	mustSave(t, b, task("b2", "peer:alice", "c2", a2a.TaskStateCompleted, 50))

	if got := mustGet(t, s, "a1", "").Agent; got != "alpha" {
		t.Errorf("stored agent of a1 = %q, want alpha", got)
	}
	if got := mustGet(t, s, "d1", "").Agent; got != "" {
		t.Errorf("stored agent of d1 = %q, want \"\"", got)
	}
	mustGet(t, a, "a1", "peer:alice")
	_, err := b.GetTask(ctx, "a1", "")
	wantNotFound(t, err, "GetTask of alpha's task through beta")
	_, err = a.GetTask(ctx, "d1", "")
	wantNotFound(t, err, "GetTask of the default agent's task through alpha")
	if err := b.SaveTask(ctx, task("a1", "peer:alice", "c1", a2a.TaskStateCompleted, 60), nil); err == nil {
		t.Error("beta overwrote alpha's task a1")
	}
	if got := mustGet(t, s, "a1", "").Agent; got != "alpha" {
		t.Errorf("a1 moved to agent %q", got)
	}

	for _, tc := range []struct {
		st   *store.AgentView
		q    store.TaskQuery
		want []string
	}{
		{a, store.TaskQuery{}, []string{"a9", "a4", "a3", "a2", "a1", "a0"}},
		{a, store.TaskQuery{Owner: "peer:alice"}, []string{"a4", "a3", "a2", "a1", "a0"}},
		{a, store.TaskQuery{ContextID: "c1", State: a2a.TaskStateCompleted}, []string{"a9"}},
		{a, store.TaskQuery{Owner: "peer:alice", StatusAfter: at(12)}, []string{"a4", "a3", "a2"}},
		{a, store.TaskQuery{PageSize: 2}, []string{"a9", "a4", "a3", "a2", "a1", "a0"}},
		{b, store.TaskQuery{ContextID: "c1"}, []string{"b1"}},
		{b, store.TaskQuery{Owner: "peer:bob"}, nil},
		{none, store.TaskQuery{Agent: "beta"}, []string{"b2", "b1"}},
		{none, store.TaskQuery{Owner: "peer:alice", ContextID: "c1"}, []string{"b1", "a4", "a3", "a2", "a1", "a0", "d1"}},
	} {
		if got := listAll(t, tc.st, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("ListTasks (agent %q) %+v = %v, want %v", tc.st.Agent(), tc.q, got, tc.want)
		}
	}
	page, err := a.ListTasks(ctx, store.TaskQuery{PageSize: 2})
	if err != nil || page.TotalSize != 6 || len(page.Tasks) != 2 || page.NextPageToken == "" {
		t.Errorf("alpha's first page: total %d, %d tasks, token %q, err %v; want 6, 2, a token", page.TotalSize, len(page.Tasks), page.NextPageToken, err)
	}
	for _, rec := range page.Tasks {
		if rec.Agent != "alpha" {
			t.Errorf("alpha listed %s of agent %q", rec.Task.ID, rec.Agent)
		}
	}

	active, err := b.ActiveTasks(ctx)
	if err != nil || len(active) != 1 || active[0].Task.ID != "b1" {
		t.Errorf("beta's active tasks = %v (%v), want b1", ids(active), err)
	}
	// The view of agent "" (a host without agents) is the whole store:
	// every agent's task is there.
	if got := mustGet(t, none, "b1", "").Agent; got != "beta" {
		t.Errorf("b1 through the view of agent \"\": agent %q, want beta", got)
	}
	if active, err := none.ActiveTasks(ctx); err != nil || len(active) != 7 {
		t.Errorf("active tasks through the view of agent \"\" = %v (%v), want all 7", ids(active), err)
	}

	if err := a.PutPushConfig(ctx, pushConfig("a1", "p1", "https://hook.example/a", 1)); err != nil {
		t.Fatalf("alpha's push config: %v", err)
	}
	wantNotFound(t, b.PutPushConfig(ctx, pushConfig("a1", "p2", "https://hook.example/b", 2)), "beta setting a push config on alpha's task")
	_, err = b.GetPushConfig(ctx, "a1", "p1")
	wantNotFound(t, err, "GetPushConfig of alpha's task through beta")
	_, err = b.ListPushConfigs(ctx, "a1")
	wantNotFound(t, err, "ListPushConfigs of alpha's task through beta")
	wantNotFound(t, b.DeletePushConfig(ctx, "a1", "p1"), "DeletePushConfig of alpha's task through beta")
	if pcs, err := a.ListPushConfigs(ctx, "a1"); err != nil || len(pcs) != 1 {
		t.Errorf("alpha's push configs after beta's attempts: %d (%v), want 1", len(pcs), err)
	}

	// Outbound conversations are one agent's: the same context id of two
	// agents is two conversations, and another agent's is not there.
	for _, e := range []struct {
		st   store.Conversations
		cid  string
		text string
	}{{a, "shared", "alpha's"}, {store.ConversationsOf(s, "beta"), "shared", "beta's"}, {b, "beta-only", "beta's own"}, {none, "old", "no agent's"}} {
		if _, err := e.st.AppendConversation(ctx, &store.ConversationEntry{ContextID: e.cid, Peer: "p", Direction: store.DirectionSent, Text: e.text}); err != nil {
			t.Fatal(err)
		}
	}
	convIDs := func(st store.Conversations) []string {
		sums, err := st.Conversations(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range sums {
			out = append(out, c.ContextID)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		agent string
		st    store.Conversations
		want  []string
	}{
		{"alpha", a, []string{"shared"}},
		{"beta", b, []string{"beta-only", "shared"}},
		{"beta", store.ConversationsOf(a, "beta"), []string{"beta-only", "shared"}},
		{"", s, []string{"old"}},
		{"", store.ConversationsOf(s, ""), []string{"old"}},
	} {
		if got := convIDs(tc.st); !slices.Equal(got, tc.want) {
			t.Errorf("conversations of agent %q = %v, want %v", tc.agent, got, tc.want)
		}
	}
	if es, err := a.Conversation(ctx, "shared", 0); err != nil || len(es) != 1 || es[0].Text != "alpha's" || es[0].Agent != "alpha" {
		t.Errorf("alpha's conversation \"shared\" = %+v (%v), want alpha's one entry", es, err)
	}
	if es, err := a.Conversation(ctx, "beta-only", 0); err != nil || len(es) != 0 {
		t.Errorf("beta's conversation through alpha = %+v (%v), want none", es, err)
	}

	// The host comes to declare agents, alpha at the root: the task of no
	// agent (d1) is alpha's, listed, recovered and saved as alpha's; so is
	// the conversation of no agent.
	if n, err := a.AdoptTasks(ctx, "alpha"); err != nil || n != 1 {
		t.Fatalf("AdoptTasks(alpha) = %d, %v; want 1 (d1)", n, err)
	}
	if n, err := s.AdoptTasks(ctx, "alpha"); err != nil || n != 0 {
		t.Errorf("AdoptTasks(alpha) again = %d, %v; want 0", n, err)
	}
	if got := mustGet(t, a, "d1", "peer:alice").Agent; got != "alpha" {
		t.Errorf("agent of d1 after AdoptTasks = %q, want alpha", got)
	}
	if got := listAll(t, a, store.TaskQuery{ContextID: "c1", Owner: "peer:alice"}); !slices.Equal(got, []string{"a4", "a3", "a2", "a1", "a0", "d1"}) {
		t.Errorf("alpha's tasks after AdoptTasks = %v, want d1 among them", got)
	}
	if active, err := a.ActiveTasks(ctx); err != nil || !slices.Contains(ids(active), "d1") {
		t.Errorf("alpha's active tasks after AdoptTasks = %v (%v), want d1 among them", ids(active), err)
	}
	if got := convIDs(a); !slices.Equal(got, []string{"old", "shared"}) {
		t.Errorf("alpha's conversations after AdoptTasks = %v, want old and shared", got)
	}
	if es, err := a.Conversation(ctx, "old", 0); err != nil || len(es) != 1 || es[0].Agent != "alpha" {
		t.Errorf("the adopted conversation through alpha = %+v (%v)", es, err)
	}
	if got := convIDs(s); len(got) != 0 {
		t.Errorf("conversations of no agent after AdoptTasks = %v, want none", got)
	}
	mustSave(t, a, task("d1", "peer:alice", "c1", a2a.TaskStateCompleted, 70))
	_, err = b.GetTask(ctx, "d1", "")
	wantNotFound(t, err, "GetTask of an adopted task through beta")
}

// dataset saves n tasks with a spread of owners, contexts, states and
// timestamps (with deliberate ties) and returns them.
func dataset(t *testing.T, s store.Store, n int, seed uint64) []*store.TaskRecord {
	r := rand.New(rand.NewPCG(seed, 1))
	owners := []string{"peer:alice", "peer:bob", "ip:203.0.113.7"}
	contexts := []string{"ctx-a", "ctx-b", "ctx-c", "ctx-d"}
	states := []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateInputRequired, a2a.TaskStateSubmitted}
	recs := make([]*store.TaskRecord, n)
	for i := range recs {
		rec := task(fmt.Sprintf("task-%03d", r.IntN(1000)*1000+i), owners[r.IntN(len(owners))], contexts[r.IntN(len(contexts))],
			states[r.IntN(len(states))], r.IntN(n/3+1)*7)
		recs[i] = rec
		mustSave(t, s, rec)
	}
	return recs
}

// expect is the reference ListTasks: filter, then newest status first with
// ties by id.
func expect(recs []*store.TaskRecord, q store.TaskQuery) []string {
	var sel []*store.TaskRecord
	for _, r := range recs {
		if (q.Owner == "" || r.Owner == q.Owner) &&
			(q.ContextID == "" || r.Task.ContextID == q.ContextID) &&
			(q.State == "" || r.Task.Status.State == q.State) &&
			(q.StatusAfter.IsZero() || !r.UpdatedAt.Before(q.StatusAfter)) {
			sel = append(sel, r)
		}
	}
	sort.Slice(sel, func(i, j int) bool {
		a, b := sel[i], sel[j]
		if !a.UpdatedAt.Equal(b.UpdatedAt) {
			return a.UpdatedAt.After(b.UpdatedAt)
		}
		return a.Task.ID < b.Task.ID
	})
	return ids(sel)
}

func testListFilters(t *testing.T, s store.Store) {
	recs := dataset(t, s, 150, 42)
	after := at(150 / 3 * 7 / 2)
	var qs []store.TaskQuery
	for _, owner := range []string{"", "peer:alice", "peer:bob", "nobody"} {
		for _, c := range []string{"", "ctx-b", "ctx-none"} {
			for _, st := range []a2a.TaskState{"", a2a.TaskStateCompleted, a2a.TaskStateInputRequired} {
				for _, sa := range []time.Time{{}, after} {
					qs = append(qs, store.TaskQuery{Owner: owner, ContextID: c, State: st, StatusAfter: sa})
				}
			}
		}
	}
	for _, q := range qs {
		want := expect(recs, q)
		for _, size := range []int{1, 7, 100} {
			q.PageSize = size
			if got := listAll(t, s, q); !slices.Equal(got, want) {
				t.Errorf("ListTasks %+v:\n got  %v\n want %v", q, got, want)
			}
		}
	}
	// TASK_STATE_UNSPECIFIED means "any state", as on the wire.
	if got, want := listAll(t, s, store.TaskQuery{State: a2a.TaskStateUnspecified, PageSize: 100}), expect(recs, store.TaskQuery{}); !slices.Equal(got, want) {
		t.Errorf("ListTasks with state UNSPECIFIED returned %d tasks, want all %d", len(got), len(want))
	}
}

// testTotalSizeFollowsChanges moves tasks between owners and states and
// prunes some, then checks every count (listAll compares TotalSize with
// the tasks actually listed).
func testTotalSizeFollowsChanges(t *testing.T, s store.Store) {
	recs := dataset(t, s, 120, 7)
	r := rand.New(rand.NewPCG(7, 7))
	for i, rec := range recs {
		switch i % 4 {
		case 0:
			rec.Task.Status.State = a2a.TaskStateCanceled
		case 1:
			rec.Owner = "peer:mallory"
		case 2:
			rec.Task.Status.State = a2a.TaskStateWorking
			rec.Owner = "peer:alice"
		}
		rec.UpdatedAt = at(r.IntN(200) * 3)
		mustSave(t, s, rec)
	}
	if _, _, err := s.Prune(context.Background(), at(300)); err != nil {
		t.Fatal(err)
	}
	var kept []*store.TaskRecord
	for _, rec := range recs {
		if !rec.Task.Status.State.Terminal() || !rec.UpdatedAt.Before(at(300)) {
			kept = append(kept, rec)
		}
	}
	for _, owner := range []string{"", "peer:alice", "peer:bob", "peer:mallory"} {
		for _, st := range []a2a.TaskState{"", a2a.TaskStateCanceled, a2a.TaskStateWorking, a2a.TaskStateCompleted} {
			q := store.TaskQuery{Owner: owner, State: st, PageSize: 100}
			if got, want := listAll(t, s, q), expect(kept, q); !slices.Equal(got, want) {
				t.Errorf("ListTasks %+v:\n got  %v\n want %v", q, got, want)
			}
		}
	}
}

func testListOrder(t *testing.T, s store.Store) {
	for _, id := range []string{"c", "a", "d", "b"} {
		mustSave(t, s, task(id, "o", "ctx", a2a.TaskStateWorking, 100))
	}
	mustSave(t, s, task("z-old", "o", "ctx", a2a.TaskStateWorking, 50))
	mustSave(t, s, task("y-new", "o", "ctx", a2a.TaskStateWorking, 200))
	want := []string{"y-new", "a", "b", "c", "d", "z-old"}
	for _, size := range []int{1, 2, 3, 50} {
		if got := listAll(t, s, store.TaskQuery{PageSize: size}); !slices.Equal(got, want) {
			t.Errorf("page size %d: %v, want %v", size, got, want)
		}
	}
	// UpdatedAt orders, not CreatedAt: an update moves a task to the front.
	old := task("z-old", "o", "ctx", a2a.TaskStateCompleted, 300)
	mustSave(t, s, old)
	want = []string{"z-old", "y-new", "a", "b", "c", "d"}
	if got := listAll(t, s, store.TaskQuery{PageSize: 4}); !slices.Equal(got, want) {
		t.Errorf("after update: %v, want %v", got, want)
	}
}

func testStatusAfter(t *testing.T, s store.Store) {
	mustSave(t, s, task("before", "o", "c", a2a.TaskStateWorking, 999))
	mustSave(t, s, task("exact", "o", "c", a2a.TaskStateWorking, 1000))
	mustSave(t, s, task("after", "o", "c", a2a.TaskStateWorking, 1001))
	got := listAll(t, s, store.TaskQuery{StatusAfter: at(1000)})
	if want := []string{"after", "exact"}; !slices.Equal(got, want) {
		t.Errorf("StatusAfter t: %v, want %v", got, want)
	}
}

func testPagesUnderInserts(t *testing.T, s store.Store) {
	ctx := context.Background()
	var orig []string
	for i := range 40 {
		rec := task(fmt.Sprintf("o-%02d", i), "o", "c", a2a.TaskStateWorking, 1000+i*10)
		mustSave(t, s, rec)
		orig = append(orig, rec.Task.ID)
	}
	seen := map[string]int{}
	q := store.TaskQuery{PageSize: 6}
	var inserted int
	for {
		page, err := s.ListTasks(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Tasks {
			seen[r.Task.ID]++
		}
		// Between pages: newer tasks (must not appear) and older ones
		// (may appear on later pages, but nothing may shift).
		for range 3 {
			inserted++
			mustSave(t, s, task(fmt.Sprintf("new-%02d", inserted), "o", "c", a2a.TaskStateWorking, 5000+inserted))
			mustSave(t, s, task(fmt.Sprintf("old-%02d", inserted), "o", "c", a2a.TaskStateWorking, 500-inserted))
		}
		if page.NextPageToken == "" {
			break
		}
		q.PageToken = page.NextPageToken
	}
	for _, id := range orig {
		if seen[id] != 1 {
			t.Errorf("task %s seen %d times across pages, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("task %s seen %d times", id, n)
		}
		if id[:4] == "new-" {
			t.Errorf("task %s, newer than the cursor, appeared on a later page", id)
		}
	}
}

func testPageSizeBounds(t *testing.T, s store.Store) {
	for i := range 130 {
		mustSave(t, s, task(fmt.Sprintf("t%03d", i), "o", "c", a2a.TaskStateCompleted, i))
	}
	for _, tc := range []struct{ size, want int }{
		{0, store.DefaultPageSize}, {-5, store.DefaultPageSize}, {1, 1}, {100, 100}, {101, store.MaxPageSize}, {1000, store.MaxPageSize},
	} {
		page, err := s.ListTasks(context.Background(), store.TaskQuery{PageSize: tc.size})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != tc.want || page.TotalSize != 130 || page.NextPageToken == "" {
			t.Errorf("page size %d: %d tasks, total %d, next %q; want %d tasks, total 130 and a next page",
				tc.size, len(page.Tasks), page.TotalSize, page.NextPageToken, tc.want)
		}
	}
	// Exactly one full page: no next page.
	page, err := s.ListTasks(context.Background(), store.TaskQuery{PageSize: 30, PageToken: ""})
	if err != nil {
		t.Fatal(err)
	}
	q := store.TaskQuery{PageSize: 100, PageToken: page.NextPageToken}
	page, err = s.ListTasks(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 100 || page.NextPageToken != "" {
		t.Errorf("last full page: %d tasks, next %q; want 100 and no next page", len(page.Tasks), page.NextPageToken)
	}
}

func testInvalidPageToken(t *testing.T, s store.Store) {
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateWorking, 1))
	for _, tok := range []string{"!!!not base64!!!", "AA", "eyJhIjoxfQ", "AgAA", "////"} {
		_, err := s.ListTasks(context.Background(), store.TaskQuery{PageToken: tok})
		if !errors.Is(err, store.ErrInvalidPageToken) {
			t.Errorf("page token %q: error %v, want ErrInvalidPageToken", tok, err)
		}
	}
}

func testListEmpty(t *testing.T, s store.Store) {
	page, err := s.ListTasks(context.Background(), store.TaskQuery{Owner: "x", ContextID: "y", State: a2a.TaskStateWorking})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 0 || page.TotalSize != 0 || page.NextPageToken != "" {
		t.Errorf("empty store: %+v", page)
	}
}

func testActiveTasks(t *testing.T, s store.Store) {
	states := []a2a.TaskState{
		a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed,
		a2a.TaskStateCanceled, a2a.TaskStateInputRequired, a2a.TaskStateRejected, a2a.TaskStateAuthRequired,
	}
	var want []string
	for i, st := range states {
		id := fmt.Sprintf("t%d-%s", i, st)
		mustSave(t, s, task(id, "o", "c", st, 100-i))
		if !st.Terminal() {
			want = append([]string{id}, want...) // oldest status first
		}
	}
	// A task that finishes leaves the active set.
	mustSave(t, s, task("t1-"+string(a2a.TaskStateWorking), "o", "c", a2a.TaskStateCompleted, 200))
	want = slices.DeleteFunc(want, func(id string) bool { return id == "t1-"+string(a2a.TaskStateWorking) })
	got, err := s.ActiveTasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), want) {
		t.Errorf("ActiveTasks = %v, want %v", ids(got), want)
	}
}

func pushConfig(taskID, id, url string, ms int) *store.PushConfig {
	return &store.PushConfig{
		Config: a2a.TaskPushNotificationConfig{
			TaskID: taskID, ID: id, URL: url, Token: "tok-" + id,
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
		},
		Owner:     "peer:alice",
		CreatedAt: at(ms),
	}
}

func samePushConfig(t *testing.T, got, want *store.PushConfig) {
	t.Helper()
	g, _ := a2a.Marshal(&got.Config)
	w, _ := a2a.Marshal(&want.Config)
	if !bytes.Equal(g, w) || got.Owner != want.Owner || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("push config:\n got  %s %q %v\n want %s %q %v", g, got.Owner, got.CreatedAt, w, want.Owner, want.CreatedAt)
	}
}

func configIDs(pcs []*store.PushConfig) []string {
	var out []string
	for _, pc := range pcs {
		out = append(out, pc.Config.ID)
	}
	return out
}

func testPushConfigCRUD(t *testing.T, s store.Store) {
	ctx := context.Background()
	wantNotFound(t, s.PutPushConfig(ctx, pushConfig("missing", "p1", "https://x.example/h", 1)), "PutPushConfig for an unknown task")
	mustSave(t, s, task("t1", "peer:alice", "c", a2a.TaskStateWorking, 1))
	mustSave(t, s, task("t2", "peer:alice", "c", a2a.TaskStateWorking, 1))

	p2 := pushConfig("t1", "p2", "https://x.example/2", 10)
	p1 := pushConfig("t1", "p1", "https://x.example/1", 20)
	p3 := pushConfig("t1", "p3", "https://x.example/3", 20) // same time as p1: insertion order
	for _, pc := range []*store.PushConfig{p2, p1, p3, pushConfig("t2", "p1", "https://other.example", 5)} {
		if err := s.PutPushConfig(ctx, pc); err != nil {
			t.Fatalf("PutPushConfig: %v", err)
		}
	}
	got, err := s.GetPushConfig(ctx, "t1", "p1")
	if err != nil {
		t.Fatal(err)
	}
	samePushConfig(t, got, p1)
	got.Config.URL = "mutated"
	list, err := s.ListPushConfigs(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p2", "p1", "p3"}; !slices.Equal(configIDs(list), want) {
		t.Fatalf("ListPushConfigs = %v, want %v", configIDs(list), want)
	}
	samePushConfig(t, list[1], p1)

	// Replacing keeps the place (and creation time).
	p2b := pushConfig("t1", "p2", "https://x.example/2b", 99)
	if err := s.PutPushConfig(ctx, p2b); err != nil {
		t.Fatal(err)
	}
	list, err = s.ListPushConfigs(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p2", "p1", "p3"}; !slices.Equal(configIDs(list), want) {
		t.Fatalf("after replace: ListPushConfigs = %v, want %v", configIDs(list), want)
	}
	if list[0].Config.URL != "https://x.example/2b" || !list[0].CreatedAt.Equal(p2.CreatedAt) {
		t.Errorf("replaced config: url %q created %v; want the new url and the first creation time", list[0].Config.URL, list[0].CreatedAt)
	}

	for range 2 { // deleting is idempotent
		if err := s.DeletePushConfig(ctx, "t1", "p1"); err != nil {
			t.Fatalf("DeletePushConfig: %v", err)
		}
	}
	if err := s.DeletePushConfig(ctx, "nope", "nope"); err != nil {
		t.Fatalf("DeletePushConfig of an unknown task: %v", err)
	}
	_, err = s.GetPushConfig(ctx, "t1", "p1")
	wantNotFound(t, err, "GetPushConfig after delete")
	if _, err := s.GetPushConfig(ctx, "t2", "p1"); err != nil {
		t.Errorf("config p1 of another task went too: %v", err)
	}
	list, err = s.ListPushConfigs(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p2", "p3"}; !slices.Equal(configIDs(list), want) {
		t.Errorf("after delete: %v, want %v", configIDs(list), want)
	}
	list, err = s.ListPushConfigs(ctx, "unknown")
	if err != nil || len(list) != 0 {
		t.Errorf("ListPushConfigs of an unknown task = %v, %v; want empty", list, err)
	}
}

func delivery(config, body string) store.Delivery {
	return store.Delivery{ConfigID: config, Body: []byte(body)}
}

func bodies(ds []store.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, string(d.Body))
	}
	return out
}

// outboxFixture makes task t1 with configs A and B.
func outboxFixture(t *testing.T, s store.Store) {
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateWorking, 1))
	for _, id := range []string{"A", "B"} {
		if err := s.PutPushConfig(context.Background(), pushConfig("t1", id, "https://h.example/"+id, 1)); err != nil {
			t.Fatal(err)
		}
	}
}

func due(t *testing.T, s store.Store, now time.Time, limit int) []store.Delivery {
	t.Helper()
	ds, err := s.DueDeliveries(context.Background(), now, limit)
	if err != nil {
		t.Fatalf("DueDeliveries: %v", err)
	}
	return ds
}

func testOutboxOrder(t *testing.T, s store.Store) {
	ctx := context.Background()
	outboxFixture(t, s)
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateWorking, 2), delivery("A", "a1"), delivery("B", "b1"), delivery("A", "a2"))
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateCompleted, 3), delivery("B", "b2"), delivery("A", "a3"))
	now := time.Now()

	ds := due(t, s, now.Add(time.Second), 0)
	if got, want := bodies(ds), []string{"a1", "b1"}; !slices.Equal(got, want) {
		t.Fatalf("due = %v, want %v (only the oldest per config)", got, want)
	}
	if ds[0].TaskID != "t1" || ds[0].ConfigID != "A" || ds[0].ID >= ds[1].ID || ds[0].Attempts != 0 || ds[0].CreatedAt.IsZero() {
		t.Errorf("delivery fields: %+v", ds[0])
	}
	if got := due(t, s, now.Add(time.Second), 1); !slices.Equal(bodies(got), []string{"a1"}) {
		t.Errorf("due with limit 1 = %v, want [a1]", bodies(got))
	}
	if got := due(t, s, now.Add(-time.Minute), 0); len(got) != 0 {
		t.Errorf("due a minute ago = %v, want none", bodies(got))
	}
	ds[0].Body[0] = 'X' // callers may scribble on what they got
	var order []string
	for range 10 {
		ds := due(t, s, now.Add(time.Second), 0)
		if len(ds) == 0 {
			break
		}
		d := ds[0]
		order = append(order, string(d.Body))
		if err := s.CompleteDelivery(ctx, d.ID, false, ""); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"a1", "b1", "a2", "b2", "a3"}; !slices.Equal(order, want) {
		t.Errorf("delivery order %v, want %v", order, want)
	}
	if err := s.CompleteDelivery(ctx, 987654, false, ""); err != nil {
		t.Errorf("CompleteDelivery of an unknown delivery: %v", err)
	}
}

func testOutboxRetry(t *testing.T, s store.Store) {
	ctx := context.Background()
	outboxFixture(t, s)
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateWorking, 2), delivery("A", "a1"), delivery("B", "b1"), delivery("B", "b2"))
	// A delivery without NextTry is due from when it was saved.
	now := time.Now()
	ds := due(t, s, now, 0)
	if got := bodies(ds); !slices.Equal(got, []string{"a1", "b1"}) {
		t.Fatalf("due = %v", got)
	}
	b1 := ds[1]
	next := now.Add(time.Minute)
	if err := s.RetryDelivery(ctx, b1.ID, 1, next, "503 from webhook"); err != nil {
		t.Fatal(err)
	}
	// B is blocked behind its failed b1: b2 must not overtake it.
	if got := bodies(due(t, s, now.Add(time.Second), 0)); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("due while b1 waits = %v, want [a1]", got)
	}
	ds = due(t, s, next, 0)
	if got := bodies(ds); !slices.Equal(got, []string{"a1", "b1"}) {
		t.Fatalf("due after the retry time = %v, want [a1 b1]", got)
	}
	if d := ds[1]; d.Attempts != 1 || d.LastError != "503 from webhook" || !d.NextTry.Equal(next.Truncate(time.Millisecond)) {
		t.Errorf("retried delivery: attempts %d, last error %q, next %v", d.Attempts, d.LastError, d.NextTry)
	}
	if err := s.CompleteDelivery(ctx, b1.ID, true, "gave up after 1 attempt"); err != nil {
		t.Fatal(err)
	}
	if got := bodies(due(t, s, now.Add(time.Second), 0)); !slices.Equal(got, []string{"a1", "b2"}) {
		t.Errorf("due after giving up b1 = %v, want [a1 b2]", got)
	}
	wantNotFound(t, s.RetryDelivery(ctx, b1.ID, 2, next, "x"), "RetryDelivery of a completed delivery")
}

func testOutboxDeleteConfig(t *testing.T, s store.Store) {
	ctx := context.Background()
	outboxFixture(t, s)
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateWorking, 2), delivery("A", "a1"), delivery("B", "b1"), delivery("A", "a2"))
	if err := s.DeletePushConfig(ctx, "t1", "A"); err != nil {
		t.Fatal(err)
	}
	if got := bodies(due(t, s, time.Now().Add(time.Second), 0)); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("due after deleting config A = %v, want [b1]", got)
	}
}

func testOutboxTrace(t *testing.T, s store.Store) {
	ctx := context.Background()
	outboxFixture(t, s)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	traced := store.Delivery{ConfigID: "A", ContextID: "c", Body: []byte("a1"), Trace: tracing.Context{Traceparent: tp, Tracestate: "vendor=1,other=x"}}
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateWorking, 2), traced, delivery("B", "b1"))
	ds := due(t, s, time.Now().Add(time.Second), 0)
	if len(ds) != 2 {
		t.Fatalf("due = %v", bodies(ds))
	}
	if d := ds[0]; d.ContextID != "c" || d.Trace.Traceparent != tp || d.Trace.Tracestate != "vendor=1,other=x" {
		t.Errorf("traced delivery read back as context %q, traceparent %q, tracestate %q", d.ContextID, d.Trace.Traceparent, d.Trace.Tracestate)
	}
	if d := ds[1]; d.ContextID != "" || d.Trace.Traceparent != "" || d.Trace.Tracestate != "" {
		t.Errorf("untraced delivery read back as %+v", d)
	}
	// A retry keeps the trace: every attempt continues the same trace.
	if err := s.RetryDelivery(ctx, ds[0].ID, 1, time.Now(), "503"); err != nil {
		t.Fatal(err)
	}
	if d := due(t, s, time.Now().Add(time.Second), 0)[0]; d.Attempts != 1 || d.Trace.Traceparent != tp || d.Trace.Tracestate != "vendor=1,other=x" {
		t.Errorf("retried delivery = %+v", d)
	}
}

// testOutboxClaim checks what every store's ClaimDeliveries does for one
// dispatcher: it returns what DueDeliveries returns (the oldest due
// delivery per config, in id order), a completed delivery makes way for
// the next, and a retried one is claimable again once due. (Exclusivity
// between replicas is the shared store's own test.)
func testOutboxClaim(t *testing.T, s store.Store) {
	ctx := context.Background()
	outboxFixture(t, s)
	mustSave(t, s, task("t1", "o", "c", a2a.TaskStateWorking, 2), delivery("A", "a1"), delivery("B", "b1"), delivery("A", "a2"))
	now := time.Now().Add(time.Second)
	claim := func(at time.Time) []store.Delivery {
		t.Helper()
		ds, err := s.ClaimDeliveries(ctx, "r1", at, time.Minute, 0)
		if err != nil {
			t.Fatalf("ClaimDeliveries: %v", err)
		}
		return ds
	}
	ds := claim(now)
	if got := bodies(ds); !slices.Equal(got, []string{"a1", "b1"}) {
		t.Fatalf("claimed %v, want [a1 b1]", got)
	}
	if ds[0].TaskID != "t1" || ds[0].ConfigID != "A" || ds[0].CreatedAt.IsZero() {
		t.Errorf("claimed delivery fields: %+v", ds[0])
	}
	if err := s.CompleteDelivery(ctx, ds[0].ID, false, ""); err != nil {
		t.Fatal(err)
	}
	next := now.Add(time.Minute)
	if err := s.RetryDelivery(ctx, ds[1].ID, 1, next, "503"); err != nil {
		t.Fatal(err)
	}
	a2 := claim(now)
	if got := bodies(a2); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("after completing a1 and retrying b1 later: claimed %v, want [a2]", got)
	}
	if err := s.CompleteDelivery(ctx, a2[0].ID, false, ""); err != nil {
		t.Fatal(err)
	}
	got := claim(next)
	if !slices.Equal(bodies(got), []string{"b1"}) || got[0].Attempts != 1 || got[0].LastError != "503" {
		t.Fatalf("at the retry time: claimed %+v, want b1 after one attempt", got)
	}
}

func testSaveAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	outboxFixture(t, s)
	// A bad delivery fails the whole save: neither the task update nor
	// the good delivery is stored.
	bad := task("t1", "o", "c", a2a.TaskStateCompleted, 5)
	err := s.SaveTask(ctx, bad, []store.Delivery{delivery("A", "good"), {TaskID: "other-task", ConfigID: "B", Body: []byte("bad")}})
	if err == nil {
		t.Fatal("SaveTask with a delivery for another task succeeded")
	}
	if got := mustGet(t, s, "t1", ""); got.Task.Status.State != a2a.TaskStateWorking {
		t.Errorf("failed save changed the task to %s", got.Task.Status.State)
	}
	if got := due(t, s, time.Now().Add(time.Hour), 0); len(got) != 0 {
		t.Errorf("failed save queued %v", bodies(got))
	}
	// A good save stores both, with the task id filled in.
	mustSave(t, s, bad, delivery("A", "good"), store.Delivery{TaskID: "t1", ConfigID: "B", Body: []byte("also")})
	got := due(t, s, time.Now().Add(time.Hour), 0)
	if !slices.Equal(bodies(got), []string{"good", "also"}) || got[0].TaskID != "t1" {
		t.Errorf("due = %+v", got)
	}
	if rec := mustGet(t, s, "t1", ""); rec.Task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("task state %s after save", rec.Task.Status.State)
	}
}

func testConversations(t *testing.T, s store.Store) {
	ctx := context.Background()
	type in struct {
		ctx, peer, dir, task, state, text string
		ms                                int
	}
	entries := []in{
		{"A", "alpha", store.DirectionSent, "", "", "hi alpha", 10},
		{"B", "beta", store.DirectionSent, "", "", "hi beta", 20},
		{"A", "alpha", store.DirectionReceived, "ta1", "TASK_STATE_WORKING", "working", 30},
		{"A", "alpha", store.DirectionSent, "ta1", "", "more", 40},
		{"B", "beta", store.DirectionReceived, "tb1", "TASK_STATE_COMPLETED", "done", 50},
		{"A", "alpha", store.DirectionReceived, "", "", "ok", 60},
	}
	var lastID int64
	for i, e := range entries {
		ce := &store.ConversationEntry{
			ID: 12345, ContextID: e.ctx, Peer: e.peer, Direction: e.dir, TaskID: e.task, MessageID: fmt.Sprintf("m%d", i),
			State: e.state, Text: e.text, Parts: []a2a.Part{a2a.TextPart(e.text)}, Time: at(e.ms),
		}
		id, err := s.AppendConversation(ctx, ce)
		if err != nil {
			t.Fatal(err)
		}
		if id <= lastID {
			t.Fatalf("entry id %d after %d: ids must increase", id, lastID)
		}
		lastID = id
		*ce.Parts[0].Text = "mutated"
	}
	got, err := s.Conversation(ctx, "A", 0)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Text)
		if len(e.Parts) != 1 || e.Parts[0].TextValue() != e.Text {
			t.Errorf("entry %d parts %+v, want the text %q", e.ID, e.Parts, e.Text)
		}
	}
	if want := []string{"hi alpha", "working", "more", "ok"}; !slices.Equal(texts, want) {
		t.Errorf("Conversation(A) = %v, want %v", texts, want)
	}
	if e := got[1]; e.Peer != "alpha" || e.Direction != store.DirectionReceived || e.TaskID != "ta1" || e.MessageID != "m2" ||
		e.State != "TASK_STATE_WORKING" || !e.Time.Equal(at(30)) || e.ContextID != "A" || e.ID == 12345 {
		t.Errorf("entry: %+v", e)
	}
	got, err = s.Conversation(ctx, "A", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != "more" || got[1].Text != "ok" {
		t.Errorf("Conversation(A, 2) = %+v, want the last two, oldest first", got)
	}
	if got, err := s.Conversation(ctx, "none", 0); err != nil || len(got) != 0 {
		t.Errorf("Conversation(none) = %v, %v", got, err)
	}

	sums, err := s.Conversations(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ConversationSummary{
		{ContextID: "A", Peer: "alpha", Entries: 4, LastTaskID: "ta1", LastState: "TASK_STATE_WORKING", FirstAt: at(10), LastAt: at(60)},
		{ContextID: "B", Peer: "beta", Entries: 2, LastTaskID: "tb1", LastState: "TASK_STATE_COMPLETED", FirstAt: at(20), LastAt: at(50)},
	}
	if len(sums) != len(want) {
		t.Fatalf("Conversations = %+v, want %+v", sums, want)
	}
	for i := range want {
		g, w := sums[i], want[i]
		if g.ContextID != w.ContextID || g.Peer != w.Peer || g.Entries != w.Entries || g.LastTaskID != w.LastTaskID ||
			g.LastState != w.LastState || !g.FirstAt.Equal(w.FirstAt) || !g.LastAt.Equal(w.LastAt) {
			t.Errorf("summary %d = %+v, want %+v", i, g, w)
		}
	}
	if sums, err := s.Conversations(ctx, 1); err != nil || len(sums) != 1 || sums[0].ContextID != "A" {
		t.Errorf("Conversations(1) = %+v, %v", sums, err)
	}
	// Equal last times: the later append is the more recent.
	if _, err := s.AppendConversation(ctx, &store.ConversationEntry{ContextID: "B", Peer: "beta", Text: "x", Time: at(60)}); err != nil {
		t.Fatal(err)
	}
	if sums, err := s.Conversations(ctx, 0); err != nil || len(sums) != 2 || sums[0].ContextID != "B" {
		t.Errorf("after a tie: %+v, %v", sums, err)
	}
	// A zero time is set to now.
	before := time.Now().Add(-time.Second)
	if _, err := s.AppendConversation(ctx, &store.ConversationEntry{ContextID: "C", Peer: "gamma", Text: "now"}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Conversation(ctx, "C", 0)
	if err != nil || len(got) != 1 || got[0].Time.Before(before) {
		t.Errorf("entry without a time: %+v, %v", got, err)
	}
}

func testPrune(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustSave(t, s, task("old-done", "o", "c", a2a.TaskStateCompleted, 100))
	mustSave(t, s, task("old-failed", "o", "c", a2a.TaskStateFailed, 200))
	mustSave(t, s, task("old-working", "o", "c", a2a.TaskStateWorking, 100))
	mustSave(t, s, task("old-input", "o", "c", a2a.TaskStateInputRequired, 100))
	mustSave(t, s, task("new-done", "o", "c", a2a.TaskStateCompleted, 1000))
	if err := s.PutPushConfig(ctx, pushConfig("old-done", "p", "https://h.example", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, pushConfig("new-done", "p", "https://h.example", 1)); err != nil {
		t.Fatal(err)
	}
	mustSave(t, s, task("old-done", "o", "c", a2a.TaskStateCompleted, 100), delivery("p", "old"))
	mustSave(t, s, task("new-done", "o", "c", a2a.TaskStateCompleted, 1000), delivery("p", "new"))
	for _, e := range []struct {
		ctx string
		ms  int
	}{{"stale", 100}, {"stale", 200}, {"fresh", 100}, {"fresh", 2000}} {
		if _, err := s.AppendConversation(ctx, &store.ConversationEntry{ContextID: e.ctx, Peer: "p", Text: "x", Time: at(e.ms)}); err != nil {
			t.Fatal(err)
		}
	}

	tasks, entries, err := s.Prune(ctx, at(500))
	if err != nil {
		t.Fatal(err)
	}
	if tasks != 2 || entries != 2 {
		t.Errorf("Prune removed %d tasks and %d entries, want 2 and 2", tasks, entries)
	}
	for _, id := range []string{"old-done", "old-failed"} {
		_, err := s.GetTask(ctx, id, "")
		wantNotFound(t, err, "GetTask of pruned "+id)
	}
	for _, id := range []string{"old-working", "old-input", "new-done"} {
		mustGet(t, s, id, "")
	}
	_, err = s.GetPushConfig(ctx, "old-done", "p")
	wantNotFound(t, err, "push config of a pruned task")
	if got := bodies(due(t, s, time.Now().Add(time.Hour), 0)); !slices.Equal(got, []string{"new"}) {
		t.Errorf("due after prune = %v, want [new]", got)
	}
	if got := listAll(t, s, store.TaskQuery{}); len(got) != 3 {
		t.Errorf("after prune ListTasks = %v", got)
	}
	sums, err := s.Conversations(ctx, 0)
	if err != nil || len(sums) != 1 || sums[0].ContextID != "fresh" || sums[0].Entries != 2 {
		t.Errorf("conversations after prune: %+v, %v", sums, err)
	}
	if got, _ := s.Conversation(ctx, "stale", 0); len(got) != 0 {
		t.Errorf("pruned conversation still has %d entries", len(got))
	}
	if tasks, entries, err := s.Prune(ctx, at(500)); tasks != 0 || entries != 0 || err != nil {
		t.Errorf("second Prune = %d, %d, %v", tasks, entries, err)
	}
}

func testCanceled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.SaveTask(ctx, task("t1", "o", "c", a2a.TaskStateWorking, 1), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("SaveTask with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := s.GetTask(context.Background(), "t1", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("task saved with a canceled context: %v", err)
	}
}

func testConcurrency(t *testing.T, s store.Store) {
	ctx := context.Background()
	const workers, perWorker = 16, 30
	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("peer:%d", w%4)
			for i := range perWorker {
				id := fmt.Sprintf("w%02d-%03d", w, i)
				for _, st := range []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted} {
					rec := task(id, owner, fmt.Sprintf("ctx-%d", i%5), st, i*10+w)
					if err := s.SaveTask(ctx, rec, nil); err != nil {
						errs <- err
						return
					}
				}
				if _, err := s.AppendConversation(ctx, &store.ConversationEntry{ContextID: id, Peer: owner, Text: "x"}); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range perWorker {
				id := fmt.Sprintf("w%02d-%03d", w, i)
				if _, err := s.GetTask(ctx, id, ""); err != nil && !errors.Is(err, store.ErrNotFound) {
					errs <- err
					return
				}
				if _, err := s.ListTasks(ctx, store.TaskQuery{Owner: fmt.Sprintf("peer:%d", w%4), PageSize: 10}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := listAll(t, s, store.TaskQuery{PageSize: 100}); len(got) != workers*perWorker {
		t.Fatalf("%d tasks listed, want %d", len(got), workers*perWorker)
	}
	if got := listAll(t, s, store.TaskQuery{State: a2a.TaskStateCompleted, PageSize: 100}); len(got) != workers*perWorker {
		t.Errorf("%d tasks completed, want %d", len(got), workers*perWorker)
	}
	if act, err := s.ActiveTasks(ctx); err != nil || len(act) != 0 {
		t.Errorf("ActiveTasks = %d tasks, %v; want none", len(act), err)
	}
	sums, err := s.Conversations(ctx, 0)
	if err != nil || len(sums) != workers*perWorker {
		t.Errorf("Conversations = %d, %v; want %d", len(sums), err, workers*perWorker)
	}
}
