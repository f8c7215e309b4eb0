package push

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/store/storetest"
)

// openReplica opens the shared PostgreSQL outbox as one replica.
func openReplica(t *testing.T, dsn, replica string) *store.Postgres {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), dsn, store.PostgresOptions{Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// runReplica runs a dispatcher for replica on st until the test ends (or
// stop is called).
func runReplica(t *testing.T, st *store.Postgres, claimLease time.Duration) (stop func()) {
	t.Helper()
	d, err := New(Options{Store: st, Guard: loopback(), Replica: st.Replica(), ClaimLease: claimLease,
		Timeout: claimLease / 3, PollInterval: 50 * time.Millisecond, BaseBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(context.Background()) }()
	var once sync.Once
	stop = func() { once.Do(func() { _ = d.Close(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// TestReplicasDeliverEachNotificationOnceInOrder runs three dispatchers on
// one outbox: every notification is acknowledged once, and each webhook
// gets its own in order.
func TestReplicasDeliverEachNotificationOnceInOrder(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	var (
		mu   sync.Mutex
		seen = map[string][]string{} // path → seqs acknowledged
		ids  = map[string]int{}      // delivery id → acknowledgements
	)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
		b := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(b)
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], seqOf(t, b))
		ids[r.Header.Get(HeaderDeliveryID)]++
		mu.Unlock()
		return reply(w, http.StatusNoContent)
	})
	stores := []*store.Postgres{openReplica(t, dsn, "r1"), openReplica(t, dsn, "r2"), openReplica(t, dsn, "r3")}
	f := newFixture(t, stores[0], nil)
	const tasks, perConfig = 6, 15
	for i := range tasks {
		task := fmt.Sprintf("t%d", i)
		for _, c := range []string{"a", "b"} {
			f.config(task, c, rc.URL+"/"+task+"/"+c)
		}
	}
	for _, st := range stores {
		runReplica(t, st, 3*time.Second)
	}
	for n := range perConfig {
		for i := range tasks {
			task := fmt.Sprintf("t%d", i)
			f.enqueue(task, "a", fmt.Sprint(n))
			f.enqueue(task, "b", fmt.Sprint(n))
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for !f.outboxEmpty() {
		if time.Now().After(deadline) {
			t.Fatal("the outbox was not drained")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != tasks*2*perConfig {
		t.Errorf("%d delivery ids acknowledged, want %d", len(ids), tasks*2*perConfig)
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("delivery %s acknowledged %d times", id, n)
		}
	}
	var want []string
	for n := range perConfig {
		want = append(want, fmt.Sprint(n))
	}
	for path, got := range seen {
		if !slices.Equal(got, want) {
			t.Errorf("%s received %v, want %v", path, got, want)
		}
	}
}

// TestDeadReplicasClaimIsTakenOver: a replica claims a notification and
// dies before sending it; another replica sends it once the claim lapses.
func TestDeadReplicasClaimIsTakenOver(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	rc := newReceiver(t, nil)
	dead, live := openReplica(t, dsn, "dead"), openReplica(t, dsn, "live")
	f := newFixture(t, dead, nil)
	f.config("t1", "a", rc.URL+"/a")
	f.enqueue("t1", "a", "1", "2")
	const lease = time.Second
	// The claim lapses lease after the time it is made at, however long
	// the query takes.
	claimed := time.Now()
	held, err := dead.ClaimDeliveries(context.Background(), "dead", claimed, lease, 10)
	if err != nil || len(held) != 1 {
		t.Fatalf("claim: %v, %v", held, err)
	}
	runReplica(t, live, 3*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for len(rc.accepted()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("received %d notifications, want 2", len(rc.accepted()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := rc.accepted()
	if seqOf(t, got[0].body) != "1" || seqOf(t, got[1].body) != "2" {
		t.Errorf("received %s then %s, want 1 then 2", seqOf(t, got[0].body), seqOf(t, got[1].body))
	}
	if waited := time.Since(claimed); waited < lease-10*time.Millisecond { // the claim is kept in milliseconds
		t.Errorf("the held notification went out after %v, before the claim lapsed", waited)
	}
}

// claimRace is a replica's outbox whose first claim waits for the test
// and then commits, while the dispatcher stops, as a claim whose answer
// crosses the stop does: the store took the rows, and the caller's
// context is canceled by the time it returns.
type claimRace struct {
	*store.Postgres
	claiming, proceed chan struct{}
	once              sync.Once
}

func (c *claimRace) ClaimDeliveries(ctx context.Context, replica string, now time.Time, lease time.Duration, limit int) ([]store.Delivery, error) {
	first := false
	c.once.Do(func() { first = true })
	if first {
		close(c.claiming)
		<-c.proceed
	}
	due, err := c.Postgres.ClaimDeliveries(context.WithoutCancel(ctx), replica, now, lease, limit)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return due, err
}

// TestAStopDuringAClaimGivesTheNotificationsBack: a replica that stops
// while it claims lets the claim finish and gives back what it took, so
// another replica sends it at once instead of after the claim lease.
func TestAStopDuringAClaimGivesTheNotificationsBack(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	rc := newReceiver(t, nil)
	stopping, other := openReplica(t, dsn, "stopping"), openReplica(t, dsn, "other")
	f := newFixture(t, stopping, nil)
	f.config("t1", "a", rc.URL+"/a")
	f.config("t2", "b", rc.URL+"/b")
	f.enqueue("t1", "a", "1")
	f.enqueue("t2", "b", "1")
	st := &claimRace{Postgres: stopping, claiming: make(chan struct{}), proceed: make(chan struct{})}
	d, err := New(Options{Store: st, Guard: loopback(), Replica: "stopping", ClaimLease: time.Hour, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	<-st.claiming
	cancel()
	close(st.proceed)
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_ = d.Close()
	if got := rc.accepted(); len(got) != 0 {
		t.Errorf("the stopped dispatcher sent %d notifications", len(got))
	}
	// Without the give-back, both would stay claimed for an hour.
	due, err := other.ClaimDeliveries(context.Background(), "other", time.Now(), time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 {
		t.Errorf("another replica could claim %d notifications, want 2", len(due))
	}
	for _, del := range due {
		if del.Attempts != 0 || del.LastError != "" {
			t.Errorf("a notification given back reads attempts %d, last error %q; want it as it was", del.Attempts, del.LastError)
		}
	}
}

// TestAStopMidPOSTGivesTheNotificationBack: a replica that stops while a
// webhook is still answering its POST gives the notification back as it
// was, so another replica can send it at once, not an hour later when the
// claim lapses.
func TestAStopMidPOSTGivesTheNotificationBack(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	posted := make(chan struct{}, 1)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
		posted <- struct{}{}
		<-r.Context().Done() // answers only once the sender gave up
		return http.StatusServiceUnavailable
	})
	stopping, other := openReplica(t, dsn, "stopping"), openReplica(t, dsn, "other")
	f := newFixture(t, stopping, nil)
	f.config("t1", "a", rc.URL+"/a")
	f.enqueue("t1", "a", "1")
	d, err := New(Options{Store: stopping, Guard: loopback(), Replica: "stopping", ClaimLease: time.Hour, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	select {
	case <-posted:
	case <-time.After(30 * time.Second):
		t.Fatal("the dispatcher posted nothing")
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	_ = d.Close()
	due, err := other.ClaimDeliveries(context.Background(), "other", time.Now(), time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 {
		t.Fatalf("another replica could claim %d notifications, want the 1 cut off mid-POST", len(due))
	}
	if due[0].Attempts != 0 || due[0].LastError != "" {
		t.Errorf("the notification given back reads attempts %d, last error %q; want it as it was", due[0].Attempts, due[0].LastError)
	}
}
