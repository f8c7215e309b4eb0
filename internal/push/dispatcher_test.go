package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

func TestDeliversSignedNotificationWithAllHeaders(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		clock := newFakeClock()
		f := newFixture(t, st, clock.Now)
		rc := newReceiver(t, nil)
		f.config("task-1", "cfg-1", rc.URL+"/hook", func(c *a2a.TaskPushNotificationConfig) {
			c.Token = "client-token-1"
			c.Authentication = &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "webhook-cred"}
		})
		obs := &counter{}
		d := start(t, Options{Store: st, Now: clock.Now, Observer: obs})
		// Enqueued after Run started, so only Notify can bring it (the
		// poll interval is 30 s).
		bodies := f.enqueue("task-1", "cfg-1", "first")
		d.Notify()
		eventually(t, "the notification", func() bool { return len(rc.requests()) == 1 && f.outboxEmpty() }, nil)

		r := rc.requests()[0]
		if r.path != "/hook" {
			t.Errorf("path = %q", r.path)
		}
		if !bytes.Equal(r.body, bodies[0]) {
			t.Errorf("body = %s, want the stored body verbatim %s", r.body, bodies[0])
		}
		want := map[string]string{
			"Content-Type":          "application/a2a+json",
			"User-Agent":            "a2a-plugin",
			"Authorization":         "Bearer webhook-cred",
			HeaderNotificationToken: "client-token-1",
			HeaderTaskID:            "task-1",
			HeaderTimestamp:         fmt.Sprint(clock.Now().Unix()),
		}
		for k, v := range want {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		if id := r.header.Get(HeaderDeliveryID); id == "" {
			t.Errorf("no %s", HeaderDeliveryID)
		}
		if err := Verify(testSecret, r.header, r.body, clock.Now(), 0); err != nil {
			t.Errorf("Verify: %v", err)
		}
		if n := obs.delivered.Load(); n != 1 {
			t.Errorf("observer saw %d deliveries, want 1", n)
		}
	})
}

func TestWithoutSecretSendsUnsignedAndWarnsOnce(t *testing.T) {
	st := openMemory(t)
	f := newFixture(t, st, nil)
	rc := newReceiver(t, nil)
	f.config("t", "c", rc.URL)
	f.enqueue("t", "c", "a", "b")
	var logs logBuffer
	d, err := New(Options{Store: st, Guard: loopback(), Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- d.Run(context.Background()) }()
	eventually(t, "both notifications", func() bool { return len(rc.requests()) == 2 }, nil)
	_ = d.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, r := range rc.requests() {
		if r.header.Get(HeaderSignature) != "" || r.header.Get(HeaderTimestamp) != "" {
			t.Errorf("unsigned dispatcher sent signature headers: %v", r.header)
		}
		if r.header.Get("Authorization") != "" || r.header.Get(HeaderNotificationToken) != "" {
			t.Errorf("config without credentials or token got them: %v", r.header)
		}
	}
	if n := strings.Count(logs.String(), "no push secret"); n != 1 {
		t.Errorf("warned %d times about the missing secret, want once:\n%s", n, logs.String())
	}
}

func TestStrictOrderPerConfigWithConcurrentConfigs(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		f := newFixture(t, st, nil)
		const perConfig = 40
		var (
			mu        sync.Mutex
			busy      = map[string]bool{}
			parallel  int
			maxPar    int
			overlaps  []string
			delivered = map[string][]string{}
		)
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) int {
			cfg := r.URL.Path
			mu.Lock()
			if busy[cfg] {
				overlaps = append(overlaps, cfg)
			}
			busy[cfg] = true
			parallel++
			maxPar = max(maxPar, parallel)
			mu.Unlock()
			time.Sleep(200 * time.Microsecond) // let other webhooks overlap
			mu.Lock()
			busy[cfg] = false
			parallel--
			mu.Unlock()
			return reply(w, http.StatusOK)
		})
		type cfg struct{ task, id string }
		var cfgs []cfg
		for i := range 6 {
			c := cfg{fmt.Sprintf("task-%d", i%3), fmt.Sprintf("cfg-%d", i)}
			cfgs = append(cfgs, c)
			f.config(c.task, c.id, rc.URL+"/"+c.id)
		}
		d := start(t, Options{Store: st, Concurrency: 4})
		// Interleave the configs' notifications in several batches while
		// the dispatcher runs.
		for batch := range 4 {
			for _, c := range cfgs {
				f.enqueue(c.task, c.id, numbered(c.id+"-", perConfig)[batch*10:(batch+1)*10]...)
				d.Notify()
			}
		}
		eventually(t, "every notification", func() bool { return len(rc.accepted()) >= len(cfgs)*perConfig && f.outboxEmpty() }, nil)
		for _, r := range rc.accepted() {
			delivered[strings.TrimPrefix(r.path, "/")] = append(delivered[strings.TrimPrefix(r.path, "/")], seqOf(t, r.body))
		}
		for _, c := range cfgs {
			if got, want := delivered[c.id], numbered(c.id+"-", perConfig); !sameStrings(got, want) {
				t.Errorf("%s received %v, want %v", c.id, got, want)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(overlaps) > 0 {
			t.Errorf("configs got overlapping POSTs: %v", overlaps)
		}
		if maxPar > 4 {
			t.Errorf("%d POSTs in flight, Concurrency is 4", maxPar)
		}
		if maxPar < 2 {
			t.Logf("note: no two webhooks were served in parallel this run")
		}
	})
}

// TestReceiverDownThenBackGetsEverythingOnceInOrder: while the webhook is
// unreachable nothing is skipped or lost; when it comes back every
// notification arrives once, in order.
func TestReceiverDownThenBackGetsEverythingOnceInOrder(t *testing.T) {
	fast := func(st store.Store) Options {
		return Options{Store: st, BaseBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxAttempts: 10000}
	}
	t.Run("closed listener", func(t *testing.T) {
		eachStore(t, func(t *testing.T, st store.Store) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			_ = ln.Close() // connection refused from now on
			rs := &recStore{Store: st}
			f := newFixture(t, st, nil)
			f.config("t", "c", "http://"+addr+"/hook")
			want := numbered("n", 20)
			f.enqueue("t", "c", want[:10]...)
			d := start(t, fast(rs))
			eventually(t, "failed attempts", func() bool { return len(rs.retryCalls()) >= 5 }, nil)
			f.enqueue("t", "c", want[10:]...)
			d.Notify()
			if n := len(rs.completions()); n != 0 {
				t.Fatalf("%d deliveries completed while the receiver was down", n)
			}
			for _, r := range rs.retryCalls() {
				if !strings.Contains(r.lastErr, "refused") {
					t.Errorf("retry reason %q does not say the connection was refused", r.lastErr)
				}
			}

			ln, err = net.Listen("tcp", addr)
			if err != nil {
				t.Skipf("cannot listen on %s again: %v", addr, err)
			}
			rc := &receiver{Server: httptest.NewUnstartedServer(nil)}
			rc.Config.Handler = http.HandlerFunc(rc.serve)
			rc.Listener = ln
			rc.Start()
			t.Cleanup(rc.Close)
			eventually(t, "every notification", func() bool { return len(rc.accepted()) >= len(want) && f.outboxEmpty() }, nil)
			if got := seqs(t, rc.accepted()); !sameStrings(got, want) {
				t.Fatalf("received %v, want %v", got, want)
			}
		})
	})
	t.Run("503", func(t *testing.T) {
		eachStore(t, func(t *testing.T, st store.Store) {
			var down atomic.Bool
			down.Store(true)
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
				if down.Load() {
					return reply(w, http.StatusServiceUnavailable)
				}
				return reply(w, http.StatusAccepted)
			})
			rs := &recStore{Store: st}
			f := newFixture(t, st, nil)
			f.config("t", "c", rc.URL)
			want := numbered("n", 20)
			f.enqueue("t", "c", want...)
			obs := &counter{}
			o := fast(rs)
			o.Observer = obs
			start(t, o)
			eventually(t, "failed attempts", func() bool { return len(rc.requests()) >= 5 }, nil)
			down.Store(false)
			eventually(t, "every notification", func() bool { return len(rc.accepted()) >= len(want) && f.outboxEmpty() }, nil)
			if got := seqs(t, rc.accepted()); !sameStrings(got, want) {
				t.Fatalf("received %v, want %v", got, want)
			}
			// Only the head of the queue was retried while the webhook was
			// down: the others waited their turn.
			for _, r := range rc.requests() {
				if r.status == http.StatusServiceUnavailable && seqOf(t, r.body) != "n000" {
					t.Errorf("%s was sent before n000 was delivered", seqOf(t, r.body))
				}
			}
			ids := map[string]bool{}
			for _, r := range rc.requests() {
				if seqOf(t, r.body) == "n000" {
					ids[r.header.Get(HeaderDeliveryID)] = true
				}
			}
			if len(ids) != 1 {
				t.Errorf("retries of one notification carried delivery ids %v, want one", ids)
			}
			if obs.retried.Load() < 4 || obs.gaveUp.Load() != 0 || obs.delivered.Load() != 20 {
				t.Errorf("observer: retried %d, gave up %d, delivered %d", obs.retried.Load(), obs.gaveUp.Load(), obs.delivered.Load())
			}
		})
	})
}

func TestRetryAfterIsHonoured(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		clock := newFakeClock()
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
			if n == 0 {
				return reply(w, http.StatusTooManyRequests, "Retry-After", "120")
			}
			return reply(w, http.StatusOK)
		})
		rs := &recStore{Store: st}
		f := newFixture(t, st, clock.Now)
		f.config("t", "c", rc.URL)
		f.enqueue("t", "c", "a")
		d := start(t, Options{Store: rs, Now: clock.Now})
		eventually(t, "the first attempt", func() bool { return len(rs.retryCalls()) == 1 }, nil)
		r := rs.retryCalls()[0]
		if want := clock.Now().Add(120 * time.Second); !r.next.Equal(want) || r.attempts != 1 {
			t.Fatalf("retry scheduled at %v (attempts %d), want %v (attempts 1)", r.next, r.attempts, want)
		}
		if !strings.Contains(r.lastErr, "429") {
			t.Errorf("retry reason %q does not name the status", r.lastErr)
		}
		ctx := context.Background()
		if ds, _ := st.DueDeliveries(ctx, clock.Now().Add(119*time.Second), 0); len(ds) != 0 {
			t.Errorf("delivery due before Retry-After: %+v", ds)
		}
		clock.Advance(120 * time.Second)
		d.Notify()
		eventually(t, "the retry", func() bool { return len(rc.accepted()) == 1 && f.outboxEmpty() }, nil)
		if got := len(rc.requests()); got != 2 {
			t.Errorf("receiver got %d requests, want 2", got)
		}
	})
}

func TestRetriesTransientAnswers(t *testing.T) {
	for _, status := range []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			clock := newFakeClock()
			st := openMemory(t)
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
				if n < 3 {
					return reply(w, status)
				}
				return reply(w, http.StatusOK)
			})
			rs := &recStore{Store: st}
			f := newFixture(t, st, clock.Now)
			f.config("t", "c", rc.URL)
			f.enqueue("t", "c", "a")
			d := start(t, Options{Store: rs, Now: clock.Now, BaseBackoff: time.Second, MaxBackoff: time.Minute})
			eventually(t, "delivery", func() bool { return len(rc.accepted()) == 1 }, func() {
				clock.Advance(time.Second)
				d.Notify()
			})
			calls := rs.retryCalls()
			if len(calls) != 3 {
				t.Fatalf("%d retries, want 3", len(calls))
			}
			for i, c := range calls {
				if c.attempts != i+1 {
					t.Errorf("retry %d recorded attempts %d", i, c.attempts)
				}
			}
		})
	}
}

func TestGivesUpAtOnceOnOther4xx(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone} {
			t.Run(fmt.Sprint(status), func(t *testing.T) {
				rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
					if b, _ := io.ReadAll(r.Body); seqOf(t, b) == "a" {
						w.WriteHeader(status)
						_, _ = w.Write([]byte("invalid token\n"))
						return status
					}
					return reply(w, http.StatusOK)
				})
				rs := &recStore{Store: st}
				task := fmt.Sprintf("t%d", status)
				f := newFixture(t, st, nil)
				f.config(task, "c", rc.URL)
				f.enqueue(task, "c", "a", "b")
				obs := &counter{}
				start(t, Options{Store: rs, Observer: obs})
				eventually(t, "the next notification", func() bool { return len(rc.accepted()) == 1 && f.outboxEmpty() }, nil)
				gave := rs.gaveUp()
				if len(gave) != 1 || !strings.Contains(gave[0].reason, fmt.Sprint(status)) || !strings.Contains(gave[0].reason, "invalid token") {
					t.Fatalf("give-ups %+v, want one naming %d and quoting the answer", gave, status)
				}
				if n := len(rs.retryCalls()); n != 0 {
					t.Errorf("%d retries of a %d", n, status)
				}
				if got := seqs(t, rc.requests()); !sameStrings(got, []string{"a", "b"}) {
					t.Errorf("requests %v, want a once then b", got)
				}
				if obs.gaveUp.Load() != 1 {
					t.Errorf("observer saw %d give-ups", obs.gaveUp.Load())
				}
			})
		}
	})
}

// TestGivesUpAfterMaxAttempts also checks that the error line names the
// task, config and URL, and that neither logs nor the stored reasons carry
// credentials, tokens or the URL's query.
func TestGivesUpAfterMaxAttempts(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		clock := newFakeClock()
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
			return reply(w, http.StatusInternalServerError)
		})
		rs := &recStore{Store: st}
		f := newFixture(t, st, clock.Now)
		u := strings.Replace(rc.URL, "http://", "http://user:url-password@", 1) + "/hook?key=query-secret"
		f.config("task-x", "cfg-x", u, func(c *a2a.TaskPushNotificationConfig) {
			c.Token = "token-secret"
			c.Authentication = &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "cred-secret"}
		})
		f.enqueue("task-x", "cfg-x", "a", "b")
		var logs logBuffer
		d := start(t, Options{Store: rs, Now: clock.Now, MaxAttempts: 3, Logger: logs.logger()})
		eventually(t, "both given up", func() bool { return len(rs.gaveUp()) == 2 }, func() {
			clock.Advance(time.Minute)
			d.Notify()
		})
		if n := len(rc.requests()); n != 6 {
			t.Errorf("receiver got %d requests, want 3 per notification", n)
		}
		for _, g := range rs.gaveUp() {
			if !strings.Contains(g.reason, "gave up after 3 attempts") || !strings.Contains(g.reason, "500") {
				t.Errorf("reason %q", g.reason)
			}
		}
		out := logs.String()
		var line string
		for l := range strings.SplitSeq(out, "\n") {
			if strings.Contains(l, "gave up") && strings.Contains(l, `"@level":"error"`) {
				line = l
				break
			}
		}
		for _, want := range []string{`"task_id":"task-x"`, `"config_id":"cfg-x"`, `"delivery_id":`, `"attempt":3`, `"url":"http://127.0.0.1:`} {
			if !strings.Contains(line, want) {
				t.Errorf("give-up line lacks %s: %s", want, line)
			}
		}
		var stored []string
		for _, r := range rs.retryCalls() {
			stored = append(stored, r.lastErr)
		}
		for _, g := range rs.gaveUp() {
			stored = append(stored, g.reason)
		}
		for _, secret := range []string{"url-password", "query-secret", "token-secret", "cred-secret"} {
			if strings.Contains(out, secret) {
				t.Errorf("logs contain %q", secret)
			}
			if s := strings.Join(stored, "\n"); strings.Contains(s, secret) {
				t.Errorf("stored reasons contain %q: %s", secret, s)
			}
		}
		// The receiver did get the credentials: they are for it.
		if h := rc.requests()[0].header; h.Get("Authorization") != "Bearer cred-secret" {
			t.Errorf("Authorization = %q", h.Get("Authorization"))
		}
	})
}

func TestDeletedConfigDropsItsDeliveries(t *testing.T) {
	t.Run("config gone before delivery", func(t *testing.T) {
		eachStore(t, func(t *testing.T, st store.Store) {
			rc := newReceiver(t, nil)
			rs := &recStore{Store: st}
			f := newFixture(t, st, nil)
			f.config("t", "kept", rc.URL+"/kept")
			f.enqueue("t", "gone", "x", "y") // its config no longer exists
			f.enqueue("t", "kept", "a")
			start(t, Options{Store: rs})
			eventually(t, "the outbox to drain", func() bool { return f.outboxEmpty() }, nil)
			if got := seqs(t, rc.requests()); !sameStrings(got, []string{"a"}) {
				t.Errorf("requests %v, want only a", got)
			}
			if g := rs.gaveUp(); len(g) != 0 {
				t.Errorf("dropping a deleted config's deliveries recorded give-ups %+v", g)
			}
		})
	})
	t.Run("config deleted mid-stream", func(t *testing.T) {
		eachStore(t, func(t *testing.T, st store.Store) {
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
				if n == 1 {
					if err := st.DeletePushConfig(r.Context(), "t", "c"); err != nil {
						t.Errorf("delete config: %v", err)
					}
				}
				return reply(w, http.StatusOK)
			})
			f := newFixture(t, st, nil)
			f.config("t", "c", rc.URL)
			f.enqueue("t", "c", numbered("n", 10)...)
			start(t, Options{Store: st})
			eventually(t, "the outbox to drain", func() bool { return f.outboxEmpty() }, nil)
			if got := seqs(t, rc.requests()); !sameStrings(got, []string{"n000", "n001"}) {
				t.Errorf("requests %v, want n000 and n001 only", got)
			}
		})
	})
}

// TestRestartDeliversTheRest: a dispatcher stopped mid-delivery (the
// plugin exiting) leaves the rest in the SQLite outbox, and a new
// dispatcher on the same file delivers it, in order, with the same
// delivery ids.
func TestRestartDeliversTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	var (
		stopFirst = make(chan struct{})
		once      sync.Once
		hang      atomic.Bool
	)
	hang.Store(true)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
		if n == 5 && hang.Load() {
			once.Do(func() { close(stopFirst) })
			<-r.Context().Done() // the first dispatcher goes away mid-POST
			return 0
		}
		return reply(w, http.StatusOK)
	})
	want := numbered("n", 15)

	st1, err := store.OpenSQLite(path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, st1, nil)
	f.config("t", "c", rc.URL)
	f.enqueue("t", "c", want...)
	d1, err := New(Options{Store: st1, Guard: loopback(), Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- d1.Run(context.Background()) }()
	<-stopFirst
	if err := d1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}
	hang.Store(false)

	st2 := openSQLite(t, path)
	start(t, Options{Store: st2})
	f2 := newFixture(t, st2, nil)
	eventually(t, "the rest", func() bool { return len(rc.accepted()) == len(want) && f2.outboxEmpty() }, nil)
	if got := seqs(t, rc.accepted()); !sameStrings(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	all := rc.requests()
	if a, b := all[5].header.Get(HeaderDeliveryID), all[6].header.Get(HeaderDeliveryID); a != b || seqOf(t, all[6].body) != "n005" {
		t.Errorf("the interrupted notification came back as %s with id %q, was id %q", seqOf(t, all[6].body), b, a)
	}
}

// TestRestartPicksUpScheduledRetries: a retry scheduled by the previous
// process is sent when due, not at the next poll.
func TestRestartPicksUpScheduledRetries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	var fail atomic.Bool
	fail.Store(true)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
		if fail.Load() {
			return reply(w, http.StatusServiceUnavailable)
		}
		return reply(w, http.StatusOK)
	})
	st1, err := store.OpenSQLite(path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := &recStore{Store: st1}
	f := newFixture(t, st1, nil)
	f.config("t", "c", rc.URL)
	f.enqueue("t", "c", "a")
	d1, err := New(Options{Store: rs, Guard: loopback(), BaseBackoff: 200 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = d1.Run(context.Background()) }()
	eventually(t, "a scheduled retry", func() bool { return len(rs.retryCalls()) == 1 }, nil)
	_ = d1.Close()
	_ = st1.Close()
	fail.Store(false)

	st2 := openSQLite(t, path)
	start(t, Options{Store: st2, PollInterval: time.Hour})
	eventually(t, "the retried notification", func() bool { return len(rc.accepted()) == 1 }, nil)
}

func TestSSRFGuardRefusesAtDeliveryTime(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		rc := newReceiver(t, nil)
		rs := &recStore{Store: st}
		f := newFixture(t, st, nil)
		// Configs registered while loopback webhooks were allowed; the
		// setting has changed since.
		f.config("t", "loop", rc.URL+"/hook?sig=query-secret")
		f.config("t", "meta", "http://169.254.169.254/latest/meta-data")
		f.config("t", "ftp", "ftp://example.com/x")
		for _, c := range []string{"loop", "meta", "ftp"} {
			f.enqueue("t", c, c+"-1", c+"-2")
		}
		obs := &counter{}
		start(t, Options{Store: rs, Guard: &security.SSRFGuard{}, Observer: obs})
		eventually(t, "all refused", func() bool { return len(rs.gaveUp()) == 6 }, nil)
		if n := len(rc.requests()); n != 0 {
			t.Errorf("receiver got %d requests through a refusing guard", n)
		}
		for _, g := range rs.gaveUp() {
			if !strings.Contains(g.reason, "refused") {
				t.Errorf("reason %q does not say the URL was refused", g.reason)
			}
			if strings.Contains(g.reason, "query-secret") {
				t.Errorf("reason %q leaks the URL query", g.reason)
			}
		}
		named := false
		for _, g := range rs.gaveUp() {
			named = named || strings.Contains(g.reason, "127.0.0.1") && strings.Contains(g.reason, security.EnvAllowLoopbackURLs)
		}
		if !named {
			t.Errorf("no loopback refusal names the setting that allows it: %+v", rs.gaveUp())
		}
		if obs.gaveUp.Load() != 6 || obs.retried.Load() != 0 {
			t.Errorf("observer: gave up %d, retried %d", obs.gaveUp.Load(), obs.retried.Load())
		}
	})
}

func TestRedirects(t *testing.T) {
	other := newReceiver(t, nil)
	final := newReceiver(t, nil) // shares nothing with the first host but 127.0.0.1
	cases := []struct {
		name     string
		status   int
		target   func(base string) string
		follows  bool
		reachesB bool
	}{
		{"307 on the same host is followed", http.StatusTemporaryRedirect, func(base string) string { return base + "/moved" }, true, false},
		{"308 on the same host is followed", http.StatusPermanentRedirect, func(base string) string { return "/moved" }, true, false},
		{"307 to another host is not", http.StatusTemporaryRedirect, func(string) string { return other.URL + "/steal" }, false, false},
		{"302 (would become a GET) is not", http.StatusFound, func(base string) string { return base + "/moved" }, false, false},
		{"303 is not", http.StatusSeeOther, func(base string) string { return final.URL }, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := openMemory(t)
			var base string
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
				if r.URL.Path == "/moved" {
					return reply(w, http.StatusOK)
				}
				return reply(w, c.status, "Location", c.target(base))
			})
			base = rc.URL
			rs := &recStore{Store: st}
			f := newFixture(t, st, nil)
			f.config("t", "c", rc.URL+"/hook")
			f.enqueue("t", "c", "a")
			start(t, Options{Store: rs})
			eventually(t, "an outcome", func() bool { return f.outboxEmpty() }, nil)
			gave := rs.gaveUp()
			if c.follows {
				if len(gave) != 0 || len(rc.accepted()) != 1 || rc.accepted()[0].path != "/moved" {
					t.Fatalf("redirect not followed: give-ups %+v, requests %+v", gave, rc.requests())
				}
				if r := rc.accepted()[0]; r.header.Get(HeaderSignature) == "" || !bytes.Equal(r.body, body(t, "t", "a")) {
					t.Errorf("redirected POST lost its body or headers: %+v", r)
				}
				return
			}
			if len(gave) != 1 || !strings.Contains(gave[0].reason, fmt.Sprint(c.status)) {
				t.Fatalf("give-ups %+v, want one naming %d", gave, c.status)
			}
			if len(other.requests())+len(final.requests()) != 0 || len(rc.requests()) != 1 {
				t.Errorf("redirect was followed")
			}
		})
	}
}

func TestHeaderInjectionFromConfigIsRefused(t *testing.T) {
	st := openMemory(t)
	rc := newReceiver(t, nil)
	rs := &recStore{Store: st}
	f := newFixture(t, st, nil)
	f.config("t", "tok", rc.URL, func(c *a2a.TaskPushNotificationConfig) { c.Token = "x\r\nX-Evil: 1" })
	f.config("t", "auth", rc.URL, func(c *a2a.TaskPushNotificationConfig) {
		c.Authentication = &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "a\nb"}
	})
	f.enqueue("t", "tok", "a")
	f.enqueue("t", "auth", "b")
	start(t, Options{Store: rs})
	eventually(t, "both refused", func() bool { return len(rs.gaveUp()) == 2 }, nil)
	if n := len(rc.requests()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}
}

func TestCloseStopsPromptlyAndKeepsTheDelivery(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		arrived := make(chan struct{}, 1)
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) int {
			arrived <- struct{}{}
			<-r.Context().Done()
			return 0
		})
		f := newFixture(t, st, nil)
		f.config("t", "c", rc.URL)
		f.enqueue("t", "c", "a")
		d, err := New(Options{Store: st, Guard: loopback(), Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- d.Run(context.Background()) }()
		<-arrived
		_ = d.Close() // returns only once Run has: nothing is asserted about how long
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		ds, err := st.DueDeliveries(context.Background(), time.Now(), 0)
		if err != nil || len(ds) != 1 || ds[0].Attempts != 0 {
			t.Fatalf("outbox after Close: %+v, %v; want the delivery untouched", ds, err)
		}
		if err := d.Run(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("Run after Close: %v, want ErrClosed", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestContextCancelStopsRun(t *testing.T) {
	st := openMemory(t)
	d, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestRunTwiceFails(t *testing.T) {
	st := openMemory(t)
	d := start(t, Options{Store: st})
	eventually(t, "Run to start", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.running
	}, nil)
	if err := d.Run(context.Background()); err == nil {
		t.Fatal("second Run succeeded")
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	st := openMemory(t)
	for name, o := range map[string]Options{
		"no store":            {},
		"negative attempts":   {Store: st, MaxAttempts: -1},
		"max below base":      {Store: st, BaseBackoff: time.Minute, MaxBackoff: time.Second},
		"bad guard allowlist": {Store: st, Guard: &security.SSRFGuard{AllowHosts: []string{"https://x.example/"}}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

// failingStore makes GetPushConfig fail until told otherwise.
type failingStore struct {
	store.Store
	fail atomic.Bool
}

func (s *failingStore) GetPushConfig(ctx context.Context, taskID, id string) (*store.PushConfig, error) {
	if s.fail.Load() {
		return nil, errors.New("disk on fire")
	}
	return s.Store.GetPushConfig(ctx, taskID, id)
}

func TestStoreFailureDoesNotLoseOrCountAnAttempt(t *testing.T) {
	st := openMemory(t)
	rc := newReceiver(t, nil)
	fs := &failingStore{Store: st}
	fs.fail.Store(true)
	f := newFixture(t, st, nil)
	f.config("t", "c", rc.URL)
	f.enqueue("t", "c", "a")
	var logs logBuffer
	start(t, Options{Store: fs, BaseBackoff: time.Millisecond, Logger: logs.logger()})
	eventually(t, "the failure to be logged", func() bool { return strings.Contains(logs.String(), "disk on fire") }, nil)
	fs.fail.Store(false)
	eventually(t, "the delivery", func() bool { return len(rc.accepted()) == 1 && f.outboxEmpty() }, nil)
}

// flakyStore fails the first CompleteDelivery.
type flakyStore struct {
	store.Store
	failed atomic.Bool
}

func (s *flakyStore) CompleteDelivery(ctx context.Context, id int64, gaveUp bool, reason string) error {
	if s.failed.CompareAndSwap(false, true) {
		return errors.New("database is locked")
	}
	return s.Store.CompleteDelivery(ctx, id, gaveUp, reason)
}

// TestUnrecordedSuccessIsSentAgainWithTheSameID: delivery is at least
// once; the repeated delivery id lets the receiver drop the duplicate.
func TestUnrecordedSuccessIsSentAgainWithTheSameID(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		rc := newReceiver(t, nil)
		f := newFixture(t, st, nil)
		f.config("t", "c", rc.URL)
		f.enqueue("t", "c", "a", "b")
		start(t, Options{Store: &flakyStore{Store: st}, BaseBackoff: time.Millisecond})
		eventually(t, "the outbox to drain", func() bool { return f.outboxEmpty() && len(rc.requests()) == 3 }, nil)
		rs := rc.requests()
		if got := seqs(t, rs); !sameStrings(got, []string{"a", "a", "b"}) {
			t.Fatalf("requests %v, want a twice then b", got)
		}
		if rs[0].header.Get(HeaderDeliveryID) != rs[1].header.Get(HeaderDeliveryID) || rs[1].header.Get(HeaderDeliveryID) == rs[2].header.Get(HeaderDeliveryID) {
			t.Errorf("delivery ids %q %q %q: want the repeat to share its id and the next to differ",
				rs[0].header.Get(HeaderDeliveryID), rs[1].header.Get(HeaderDeliveryID), rs[2].header.Get(HeaderDeliveryID))
		}
	})
}
