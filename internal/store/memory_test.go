package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

func memRecord(id string, state a2a.TaskState, ms int64) *TaskRecord {
	return &TaskRecord{
		Task:      a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: state}},
		Owner:     "o",
		CreatedAt: time.UnixMilli(ms),
		UpdatedAt: time.UnixMilli(ms),
	}
}

func TestMemoryEvictsOldestTerminalTaskFirst(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(4)
	save := func(id string, st a2a.TaskState, ms int64, ds ...Delivery) {
		t.Helper()
		if err := m.SaveTask(ctx, memRecord(id, st, ms), ds); err != nil {
			t.Fatal(err)
		}
	}
	has := func(id string) bool {
		_, err := m.GetTask(ctx, id, "")
		return err == nil
	}
	save("working-oldest", a2a.TaskStateWorking, 1)
	save("done-2", a2a.TaskStateCompleted, 2)
	save("input-3", a2a.TaskStateInputRequired, 3)
	save("failed-4", a2a.TaskStateFailed, 4)
	if err := m.PutPushConfig(ctx, &PushConfig{Config: a2a.TaskPushNotificationConfig{TaskID: "done-2", ID: "p", URL: "https://h.example"}}); err != nil {
		t.Fatal(err)
	}
	save("done-2", a2a.TaskStateCompleted, 2, Delivery{ConfigID: "p", Body: []byte("x")})

	save("new-5", a2a.TaskStateSubmitted, 5) // evicts done-2, not the older working task
	if has("done-2") || !has("working-oldest") || !has("new-5") {
		t.Fatalf("after the first eviction: done-2 %v, working-oldest %v, new-5 %v", has("done-2"), has("working-oldest"), has("new-5"))
	}
	if _, err := m.GetPushConfig(ctx, "done-2", "p"); !errors.Is(err, ErrNotFound) {
		t.Errorf("evicted task's push config: %v", err)
	}
	if ds, _ := m.DueDeliveries(ctx, time.Now().Add(time.Hour), 0); len(ds) != 0 {
		t.Errorf("evicted task's deliveries still due: %+v", ds)
	}
	// Replacing an existing task never evicts.
	save("new-5", a2a.TaskStateWorking, 6)
	if !has("failed-4") {
		t.Error("an update evicted a task")
	}
	save("new-6", a2a.TaskStateWorking, 7) // evicts failed-4, the last terminal one
	if has("failed-4") {
		t.Error("failed-4 not evicted")
	}
	// Everything active: the store grows past its limit rather than drop
	// running work.
	save("new-7", a2a.TaskStateWorking, 8)
	save("new-8", a2a.TaskStateWorking, 9)
	if len(m.tasks) != 6 {
		t.Fatalf("%d tasks, want 6 (all active, limit 4)", len(m.tasks))
	}
	// As tasks finish, the next insert shrinks the store back to its limit.
	for _, id := range []string{"working-oldest", "input-3", "new-5"} {
		save(id, a2a.TaskStateCompleted, 10)
	}
	save("new-9", a2a.TaskStateWorking, 11)
	if len(m.tasks) != 4 || !has("new-9") {
		t.Errorf("%d tasks after shrinking, want 4 including new-9", len(m.tasks))
	}
}

func TestMemoryBoundsConversations(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(1) // 10 entries in all
	for i := range 14 {
		c := "A"
		if i >= 3 {
			c = "B"
		}
		if _, err := m.AppendConversation(ctx, &ConversationEntry{ContextID: c, Text: fmt.Sprint(i), Time: time.UnixMilli(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	sums, _ := m.Conversations(ctx, 0)
	if len(sums) != 1 || sums[0].ContextID != "B" || sums[0].Entries != 10 || !sums[0].FirstAt.Equal(time.UnixMilli(4)) {
		t.Fatalf("summaries %+v, want only B with entries 4–13", sums)
	}
	es, _ := m.Conversation(ctx, "B", 0)
	if len(es) != 10 || es[0].Text != "4" || es[9].Text != "13" {
		t.Errorf("B holds %d entries from %q", len(es), es[0].Text)
	}
	// Pruned conversations leave nothing behind in the eviction log.
	if _, n, _ := m.Prune(ctx, time.UnixMilli(100)); n != 10 || m.nEntries != 0 || len(m.entryLog)-m.logHead != 0 {
		t.Errorf("prune removed %d entries; %d counted, %d logged", n, m.nEntries, len(m.entryLog)-m.logHead)
	}
}

// fill sets every field reachable from v to a non-zero value.
func fill(v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[a2a.Timestamp]():
		v.Set(reflect.ValueOf(a2a.Timestamp{Time: time.UnixMilli(1_700_000_000_123).UTC()}))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"x":1}`))
		return
	case reflect.TypeFor[map[string]any]():
		v.Set(reflect.ValueOf(map[string]any{"k": []any{"v", 1.5, map[string]any{"n": true}}}))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth)
			}
		}
	case reflect.Pointer:
		if depth > 3 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte{1, 2, 3})
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), depth+1)
		}
	case reflect.String:
		v.SetString("s-" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Interface:
		v.Set(reflect.ValueOf("any"))
	default:
		panic("fill: unhandled kind " + v.Kind().String() + " of " + v.Type().String())
	}
}

// TestCloneCoversEveryField fails when a field added to an a2a type is not
// copied by clone.go.
func TestCloneCoversEveryField(t *testing.T) {
	var rec TaskRecord
	fill(reflect.ValueOf(&rec).Elem(), 0)
	c, err := cloneRecord(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&rec, c) {
		a, _ := json.Marshal(&rec)
		b, _ := json.Marshal(c)
		t.Fatalf("clone differs from the original: update clone.go\n orig  %s\n clone %s", a, b)
	}
	var e ConversationEntry
	fill(reflect.ValueOf(&e).Elem(), 0)
	ce, err := cloneEntry(&e)
	if err != nil || !reflect.DeepEqual(e, ce) {
		t.Fatalf("entry clone differs: %v", err)
	}
	// Nothing is shared.
	*c.Task.History[0].Parts[0].Text = "changed"
	c.Task.History[0].Parts[0].Raw[0] = 9
	c.Task.Status.Message.Metadata["k"].([]any)[2].(map[string]any)["n"] = false
	if *rec.Task.History[0].Parts[0].Text == "changed" || rec.Task.History[0].Parts[0].Raw[0] == 9 ||
		rec.Task.Status.Message.Metadata["k"].([]any)[2].(map[string]any)["n"] == false {
		t.Error("clone shares memory with the original")
	}
}

func TestCloneTurnsMetadataIntoJSONValues(t *testing.T) {
	type point struct{ X, Y int }
	rec := &TaskRecord{Task: a2a.Task{ID: "t", Metadata: map[string]any{"n": 3, "p": point{1, 2}}}}
	c, err := cloneRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": 3.0, "p": map[string]any{"X": 1.0, "Y": 2.0}}
	if !reflect.DeepEqual(c.Task.Metadata, want) {
		t.Errorf("metadata %#v, want %#v (what a JSON round trip gives)", c.Task.Metadata, want)
	}
	rec.Task.Metadata["bad"] = make(chan int)
	if _, err := cloneRecord(rec); err == nil {
		t.Error("metadata that has no JSON form was accepted")
	}
}

func TestKeyListMatchesSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l keyList
	ref := map[taskKey]bool{}
	for i := range 20000 {
		k := taskKey{ts: int64(r.IntN(500)), id: fmt.Sprintf("%04d", r.IntN(3000))}
		if r.IntN(3) == 0 {
			l.Delete(k)
			delete(ref, k)
		} else {
			l.Insert(k)
			ref[k] = true
		}
		if i%2000 != 0 {
			continue
		}
		var want []taskKey
		for k := range ref {
			want = append(want, k)
		}
		sort.Slice(want, func(i, j int) bool { return want[i].before(want[j]) })
		var got []taskKey
		l.Ascend(taskKey{}, true, func(k taskKey) bool { got = append(got, k); return true })
		if !slices.Equal(got, want) || l.Len() != len(want) {
			t.Fatalf("step %d: list of %d keys differs from the reference of %d", i, l.Len(), len(want))
		}
		probe := taskKey{ts: int64(r.IntN(500))}
		if rank, ref := l.Rank(probe), sort.Search(len(want), func(i int) bool { return !want[i].before(probe) }); rank != ref {
			t.Fatalf("Rank(%v) = %d, want %d", probe, rank, ref)
		}
		var from []taskKey
		l.Ascend(probe, false, func(k taskKey) bool { from = append(from, k); return len(from) < 5 })
		i := sort.Search(len(want), func(i int) bool { return !want[i].before(probe) })
		if n := min(5, len(want)-i); !slices.Equal(from, want[i:i+n]) {
			t.Fatalf("Ascend from %v = %v, want %v", probe, from, want[i:i+n])
		}
		if last, ok := l.Last(); len(want) > 0 && (!ok || last != want[len(want)-1]) {
			t.Fatalf("Last = %v, want %v", last, want[len(want)-1])
		}
		for _, c := range l.chunks {
			if cap(c) > keyChunk+1 {
				t.Fatalf("a chunk of capacity %d, more than a chunk holds before it splits", cap(c))
			}
		}
	}
	var small keyList
	small.Insert(taskKey{id: "only"})
	if c := cap(small.chunks[0]); c > firstChunk {
		t.Errorf("a list of one key holds room for %d", c)
	}
}
