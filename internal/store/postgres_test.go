package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/store/storetest"
)

// pgDSN is a fresh schema of the test server (or a skip).
func pgDSN(t testing.TB) string { return storetest.PostgresDSN(t) }

func openTestPostgres(t testing.TB, dsn, replica string) *store.Postgres {
	t.Helper()
	s, err := store.OpenPostgres(context.Background(), dsn, store.PostgresOptions{Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPostgresConformance(t *testing.T) {
	pgDSN(t) // skip early without a server
	storetest.Run(t, func(t *testing.T) store.Store { return openTestPostgres(t, pgDSN(t), "") })
}

func TestPostgresRefusesAnUnreachableServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := store.OpenPostgres(ctx, "postgres://nobody:secret-pw@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", store.PostgresOptions{})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1/none") || strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("err = %v; want it to name the server and hide the password", err)
	}
	if _, err := store.OpenPostgres(ctx, "", store.PostgresOptions{}); err == nil {
		t.Fatal("an empty DSN was accepted")
	}
}

// pgTask is a small task record in state st.
func pgTask(id string, st a2a.TaskState) *store.TaskRecord {
	now := time.Now()
	return &store.TaskRecord{Task: a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: st, Timestamp: a2a.NewTimestamp(now)}},
		Owner: "peer:alice", CreatedAt: now, UpdatedAt: now}
}

func TestPostgresClaimsAreExclusiveAndLapse(t *testing.T) {
	dsn := pgDSN(t)
	r1, r2 := openTestPostgres(t, dsn, "r1"), openTestPostgres(t, dsn, "r2")
	defer r1.Close()
	defer r2.Close()
	ctx := context.Background()
	if err := r1.SaveTask(ctx, pgTask("t1", a2a.TaskStateWorking), nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"A", "B"} {
		if err := r1.PutPushConfig(ctx, &store.PushConfig{Config: a2a.TaskPushNotificationConfig{TaskID: "t1", ID: id, URL: "https://h.example/" + id}}); err != nil {
			t.Fatal(err)
		}
	}
	ds := []store.Delivery{{ConfigID: "A", Body: []byte("a1")}, {ConfigID: "B", Body: []byte("b1")}, {ConfigID: "A", Body: []byte("a2")}}
	if err := r1.SaveTask(ctx, pgTask("t1", a2a.TaskStateWorking), ds); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Second)
	claim := func(s *store.Postgres, replica string, at time.Time) []string {
		t.Helper()
		got, err := s.ClaimDeliveries(ctx, replica, at, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range got {
			out = append(out, string(d.Body))
		}
		return out
	}
	first, err := r1.ClaimDeliveries(ctx, "r1", now, time.Minute, 0)
	if err != nil || len(first) != 2 || string(first[0].Body) != "a1" || string(first[1].Body) != "b1" {
		t.Fatalf("r1 claimed %+v, %v; want a1 and b1", first, err)
	}
	if got := claim(r2, "r2", now); len(got) != 0 {
		t.Fatalf("r2 claimed %v while r1 holds them", got)
	}
	if got := claim(r1, "r1", now); len(got) != 0 {
		t.Fatalf("r1 claimed %v twice", got)
	}
	// Completing a1 makes a2 the head of A: r2 may take it, in order.
	if err := r1.CompleteDelivery(ctx, first[0].ID, false, ""); err != nil {
		t.Fatal(err)
	}
	if got := claim(r2, "r2", now); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("r2 claimed %v, want [a2]", got)
	}
	// r1 dies holding b1: once its claim lapses, r2 takes it over.
	if got := claim(r2, "r2", now.Add(30*time.Second)); len(got) != 0 {
		t.Fatalf("r2 claimed %v before r1's claim lapsed", got)
	}
	// (Its own claim on a2 lapsed too; its dispatcher knows a2 is in
	// flight and skips it.)
	if got := claim(r2, "r2", now.Add(61*time.Second)); !slices.Equal(got, []string{"b1", "a2"}) {
		t.Fatalf("after the lease r2 claimed %v, want [b1 a2]", got)
	}
}

// TestPostgresClaimsUnderContention has replicas claim and complete a busy
// outbox concurrently: every delivery is claimed exactly once and each
// config's deliveries are claimed in order.
func TestPostgresClaimsUnderContention(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	stores := []*store.Postgres{openTestPostgres(t, dsn, "r1"), openTestPostgres(t, dsn, "r2"), openTestPostgres(t, dsn, "r3")}
	for _, s := range stores {
		defer s.Close()
	}
	const tasks, configs, perConfig = 10, 4, 5
	for i := range tasks {
		id := fmt.Sprintf("t%d", i)
		if err := stores[0].SaveTask(ctx, pgTask(id, a2a.TaskStateWorking), nil); err != nil {
			t.Fatal(err)
		}
		var ds []store.Delivery
		for c := range configs {
			cid := fmt.Sprintf("c%d", c)
			if err := stores[0].PutPushConfig(ctx, &store.PushConfig{Config: a2a.TaskPushNotificationConfig{TaskID: id, ID: cid, URL: "https://h.example"}}); err != nil {
				t.Fatal(err)
			}
		}
		for n := range perConfig {
			for c := range configs {
				ds = append(ds, store.Delivery{ConfigID: fmt.Sprintf("c%d", c), Body: []byte(fmt.Sprintf("%s/c%d/%d", id, c, n))})
			}
		}
		if err := stores[0].SaveTask(ctx, pgTask(id, a2a.TaskStateWorking), ds); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu      sync.Mutex
		claimed = map[int64]int{}
		order   = map[string][]int{}
		wg      sync.WaitGroup
	)
	for w := range 6 {
		s := stores[w%len(stores)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for idle := 0; idle < 20; {
				ds, err := s.ClaimDeliveries(ctx, s.Replica(), time.Now(), time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ds) == 0 {
					idle++
					time.Sleep(5 * time.Millisecond)
					continue
				}
				idle = 0
				for _, d := range ds {
					var task, cfg string
					var n int
					fmt.Sscanf(strings.ReplaceAll(string(d.Body), "/", " "), "%s %s %d", &task, &cfg, &n)
					mu.Lock()
					claimed[d.ID]++
					order[task+"/"+cfg] = append(order[task+"/"+cfg], n)
					mu.Unlock()
					if err := s.CompleteDelivery(ctx, d.ID, false, ""); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(claimed) != tasks*configs*perConfig {
		t.Errorf("%d deliveries claimed, want %d", len(claimed), tasks*configs*perConfig)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("delivery %d claimed %d times", id, n)
		}
	}
	for k, ns := range order {
		if !slices.IsSorted(ns) || len(ns) != perConfig {
			t.Errorf("config %s: deliveries claimed in order %v", k, ns)
		}
	}
}

func TestPostgresFencesFinishedTasks(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	r1, r2 := openTestPostgres(t, dsn, "r1"), openTestPostgres(t, dsn, "r2")
	defer r1.Close()
	defer r2.Close()
	if err := r1.SaveTask(ctx, pgTask("t1", a2a.TaskStateWorking), nil); err != nil {
		t.Fatal(err)
	}
	// r2 takes the task over and fails it (r1's lease expired).
	if err := r2.SaveTask(ctx, pgTask("t1", a2a.TaskStateFailed), nil); err != nil {
		t.Fatal(err)
	}
	// r1 was only cut off: its late answer must not overwrite the failure.
	err := r1.SaveTask(ctx, pgTask("t1", a2a.TaskStateCompleted), []store.Delivery{{ConfigID: "x", Body: []byte("late")}})
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("r1's late save: %v, want ErrFenced", err)
	}
	rec, seq, replica, err := r1.TaskAt(ctx, "t1")
	if err != nil || rec.Task.Status.State != a2a.TaskStateFailed || replica != "r2" || seq != 0 {
		t.Fatalf("TaskAt = %v %d %q %v; want FAILED by r2", rec.Task.Status.State, seq, replica, err)
	}
	if ds, _ := r1.DueDeliveries(ctx, time.Now().Add(time.Hour), 0); len(ds) != 0 {
		t.Errorf("the fenced save queued %d deliveries", len(ds))
	}
	// The replica that finished it may still write it (as one store does).
	if err := r2.SaveTask(ctx, pgTask("t1", a2a.TaskStateCanceled), nil); err != nil {
		t.Fatal(err)
	}
	// Running tasks are listed per replica.
	if err := r1.SaveTask(ctx, pgTask("t2", a2a.TaskStateWorking), nil); err != nil {
		t.Fatal(err)
	}
	if err := r1.SaveTask(ctx, pgTask("t3", a2a.TaskStateInputRequired), nil); err != nil {
		t.Fatal(err)
	}
	got, err := r2.ReplicaTasks(ctx, "r1")
	if err != nil || len(got) != 1 || got[0].Task.ID != "t2" {
		t.Fatalf("ReplicaTasks(r1) = %v, %v; want [t2]", got, err)
	}
}

func TestPostgresPublishesEventsToFollowers(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	s := openTestPostgres(t, dsn, "r1")
	defer s.Close()
	if err := s.SaveTaskEvents(ctx, pgTask("t1", a2a.TaskStateWorking), nil, [][]byte{[]byte(`{"e":1}`)}); err != nil {
		t.Fatal(err)
	}
	events := func() []string {
		rows, err := s.Pool().Query(ctx, `SELECT seq || ':' || convert_from(body, 'UTF8') FROM task_events WHERE task_id = 't1' ORDER BY seq`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := events(); len(got) != 0 {
		t.Fatalf("events written with nobody following: %v", got)
	}
	listen, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Close(ctx)
	if _, err := listen.Exec(ctx, `LISTEN "`+s.EventsChannel()+`"`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO task_watch (task_id, replica) VALUES ('t1', 'r2')`); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTaskEvents(ctx, pgTask("t1", a2a.TaskStateWorking), nil, [][]byte{[]byte(`{"e":2}`), []byte(`{"e":3}`)}); err != nil {
		t.Fatal(err)
	}
	if got, want := events(), []string{`2:{"e":2}`, `3:{"e":3}`}; !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := listen.WaitForNotification(wctx)
	if err != nil || n.Payload != "t1 3" {
		t.Fatalf("notification %+v, %v; want payload \"t1 3\"", n, err)
	}
	if _, seq, _, err := s.TaskAt(ctx, "t1"); err != nil || seq != 3 {
		t.Fatalf("seq = %d, %v; want 3", seq, err)
	}
}

// pgCountModel is what ListTasks' totalSize must say: the tasks by id.
type pgCountModel map[string]struct{ owner, agent, state string }

func (m pgCountModel) count(q store.TaskQuery) int {
	n := 0
	for _, t := range m {
		if (q.Owner == "" || t.owner == q.Owner) && (q.Agent == "" || t.agent == q.Agent) && (q.State == "" || t.state == string(q.State)) {
			n++
		}
	}
	return n
}

// pgCountQueries are the filters the counters serve.
func pgCountQueries() []store.TaskQuery {
	qs := []store.TaskQuery{{}}
	for _, st := range []a2a.TaskState{"", a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed} {
		for _, owner := range []string{"", "peer:a", "peer:b", "peer:none"} {
			for _, agent := range []string{"", "x", "y"} {
				if st != "" || owner != "" || agent != "" {
					qs = append(qs, store.TaskQuery{Owner: owner, Agent: agent, State: st})
				}
			}
		}
	}
	return qs
}

// checkTotals compares every filter's totalSize with the model.
func checkTotals(t *testing.T, s store.Store, m pgCountModel, when string) {
	t.Helper()
	for _, q := range pgCountQueries() {
		page, err := s.ListTasks(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if want := m.count(q); page.TotalSize != want {
			t.Fatalf("%s: totalSize of owner=%q agent=%q state=%q is %d, want %d", when, q.Owner, q.Agent, q.State, page.TotalSize, want)
		}
	}
}

// TestPostgresTotalSizeFollowsEveryChange keeps a model of the tasks while
// inserting, changing state, owner and agent, and deleting them, folding
// the count deltas at some steps and not at others: totalSize matches the
// model for every filter after every step.
func TestPostgresTotalSizeFollowsEveryChange(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	s := openTestPostgres(t, dsn, "r1")
	defer s.Close()
	m := pgCountModel{}
	old := time.Now().Add(-48 * time.Hour)
	save := func(id, owner, agent string, st a2a.TaskState, at time.Time) {
		t.Helper()
		rec := pgTask(id, st)
		rec.Owner, rec.Agent, rec.UpdatedAt = owner, agent, at
		if err := s.SaveTask(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		m[id] = struct{ owner, agent, state string }{owner, agent, string(st)}
	}
	fold := func() {
		t.Helper()
		if _, err := store.FoldTaskCounts(s, ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkTotals(t, s, m, "empty")
	owners, agents := []string{"peer:a", "peer:b"}, []string{"", "x", "y"}
	for i := range 30 {
		save(fmt.Sprintf("t%02d", i), owners[i%2], agents[i%3], a2a.TaskStateWorking, time.Now())
	}
	checkTotals(t, s, m, "after inserts, unfolded")
	fold()
	checkTotals(t, s, m, "after inserts, folded")
	// State changes, a save that changes nothing counted, an owner change.
	for i := range 30 {
		switch i % 3 {
		case 0:
			save(fmt.Sprintf("t%02d", i), owners[i%2], agents[i%3], a2a.TaskStateCompleted, old)
		case 1:
			save(fmt.Sprintf("t%02d", i), owners[i%2], agents[i%3], a2a.TaskStateWorking, time.Now())
		}
	}
	save("t05", "peer:a", "y", a2a.TaskStateFailed, old)
	checkTotals(t, s, m, "after state changes, unfolded")
	fold()
	checkTotals(t, s, m, "after state changes, folded")
	// Adopting the tasks of no agent moves them to agent x.
	if _, err := s.AdoptTasks(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	for id, r := range m {
		if r.agent == "" {
			r.agent = "x"
			m[id] = r
		}
	}
	checkTotals(t, s, m, "after adopting")
	// Prune deletes the finished tasks (and folds); then everything goes
	// back to WORKING and away again, leaving counters at zero.
	if n, _, err := s.Prune(ctx, time.Now().Add(-time.Hour)); err != nil || n != 11 {
		t.Fatalf("pruned %d tasks, %v; want 11", n, err)
	}
	for id, r := range m {
		if r.state != string(a2a.TaskStateWorking) {
			delete(m, id)
		}
	}
	checkTotals(t, s, m, "after prune")
	for id, r := range m {
		save(id, r.owner, r.agent, a2a.TaskStateCanceled, old)
	}
	if _, _, err := s.Prune(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	clear(m)
	checkTotals(t, s, m, "after pruning everything")
	fold()
	var rows int
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM task_counts) + (SELECT count(*) FROM task_agent_counts) + (SELECT count(*) FROM task_count_deltas)`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d counter and delta rows left with no tasks (%v); want none", rows, err)
	}
	save("again", "peer:a", "x", a2a.TaskStateWorking, time.Now())
	checkTotals(t, s, m, "after a new insert")
}

// TestPostgresTotalSizeWithTwoReplicas has two store handles on one
// database (two replicas) save, finish and fold concurrently while readers
// check that each page agrees with its totalSize; at the end every
// filter's totalSize is exact.
func TestPostgresTotalSizeWithTwoReplicas(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	r1, r2 := openTestPostgres(t, dsn, "r1"), openTestPostgres(t, dsn, "r2")
	defer r1.Close()
	defer r2.Close()
	const perWriter = 60 // each writer's owner has fewer tasks than a page of 100
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		m    = pgCountModel{}
		done = make(chan struct{})
	)
	for w := range 4 {
		s := []*store.Postgres{r1, r2}[w%2]
		owner, agent := []string{"peer:a", "peer:b"}[w/2], []string{"x", "y"}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%03d", w, i)
				states := []a2a.TaskState{a2a.TaskStateWorking}
				if i%2 == 0 {
					states = append(states, a2a.TaskStateCompleted)
				}
				for _, st := range states {
					rec := pgTask(id, st)
					rec.Owner, rec.Agent = owner, agent
					if err := s.SaveTask(ctx, rec, nil); err != nil {
						t.Error(err)
						return
					}
				}
				mu.Lock()
				m[id] = struct{ owner, agent, state string }{owner, agent, string(states[len(states)-1])}
				mu.Unlock()
				if i%15 == 0 {
					if _, err := store.FoldTaskCounts(s, ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	var readers sync.WaitGroup
	var reads int
	for _, s := range []*store.Postgres{r1, r2} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, q := range []store.TaskQuery{{Owner: "peer:a", Agent: "x"}, {Owner: "peer:b", Agent: "y"},
					{Owner: "peer:a", Agent: "y", State: a2a.TaskStateCompleted}, {Agent: "x", State: a2a.TaskStateWorking}} {
					q.PageSize = 100
					page, err := s.ListTasks(ctx, q)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					reads++
					mu.Unlock()
					if len(page.Tasks) != page.TotalSize {
						t.Errorf("owner=%q agent=%q state=%q: a page of %d tasks said totalSize %d", q.Owner, q.Agent, q.State, len(page.Tasks), page.TotalSize)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	if t.Failed() {
		return
	}
	if reads == 0 {
		t.Fatal("no read ran while the replicas wrote")
	}
	checkTotals(t, r1, m, "replica 1, after the writers")
	checkTotals(t, r2, m, "replica 2, after the writers")
	if _, err := store.FoldTaskCounts(r2, ctx); err != nil {
		t.Fatal(err)
	}
	checkTotals(t, r1, m, "replica 1, folded")
	if got := m.count(store.TaskQuery{}); got != 4*perWriter {
		t.Fatalf("the model holds %d tasks, want %d", got, 4*perWriter)
	}
}

// TestPostgresCountMigrationBackfills opens a database of schema version 4
// (before the task counters) that holds tasks: the migration counts them,
// and later changes are counted on top.
func TestPostgresCountMigrationBackfills(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	s := openTestPostgres(t, dsn, "")
	m := pgCountModel{}
	for i := range 25 {
		rec := pgTask(fmt.Sprintf("t%02d", i), []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed}[i%3])
		rec.Owner, rec.Agent = []string{"peer:a", "peer:b"}[i%2], []string{"", "x", "y"}[i%3]
		if err := s.SaveTask(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		m[rec.Task.ID] = struct{ owner, agent, state string }{rec.Owner, rec.Agent, string(rec.Task.Status.State)}
	}
	// Back to version 4: the step-5 objects go, the tasks stay.
	if _, err := s.Pool().Exec(ctx, `DROP TRIGGER tasks_count ON tasks; DROP TRIGGER tasks_count_update ON tasks;
		DROP FUNCTION a2a_task_count(); DROP TABLE task_count_deltas, task_counts, task_agent_counts;
		UPDATE a2a_schema SET version = 4`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestPostgres(t, dsn, "")
	defer s.Close()
	var v int
	if err := s.Pool().QueryRow(ctx, `SELECT version FROM a2a_schema`).Scan(&v); err != nil || v != store.PostgresSchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", v, err, store.PostgresSchemaVersion)
	}
	checkTotals(t, s, m, "after the migration")
	rec := pgTask("t00", a2a.TaskStateCanceled)
	rec.Owner, rec.Agent = "peer:a", ""
	if err := s.SaveTask(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	m["t00"] = struct{ owner, agent, state string }{"peer:a", "", string(a2a.TaskStateCanceled)}
	checkTotals(t, s, m, "after a change on the migrated database")
}
