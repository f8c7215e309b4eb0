package replicas_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/push"
)

// ack is one notification the receiver acknowledged.
type ack struct {
	id     string // X-A2A-Delivery-Id
	taskID string
	desc   string // describe() of the body
}

// receiver is a webhook endpoint that checks each notification's signature
// and records what it acknowledged. While holding, it answers nothing until
// release; a POST whose sender went away meanwhile is not acknowledged (the
// sender never learned of it), so it counts as lost, not delivered.
type receiver struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	holding  bool
	released chan struct{}
	held     int
	aborted  int
	acks     []ack
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{t: t, released: make(chan struct{})}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(func() {
		rc.mu.Lock()
		if rc.holding {
			rc.holding = false
			close(rc.released)
		}
		rc.mu.Unlock()
		rc.srv.Close()
	})
	return rc
}

func (rc *receiver) url(path string) string { return rc.srv.URL + path }

// hold makes the receiver hold every POST until release.
func (rc *receiver) hold() {
	rc.mu.Lock()
	rc.holding = true
	rc.mu.Unlock()
}

// heldCount is how many POSTs are held now.
func (rc *receiver) heldCount() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.held
}

// release answers the held POSTs whose senders are still there, stops
// holding, and returns how many held POSTs lost their sender.
func (rc *receiver) release() int {
	rc.mu.Lock()
	if rc.holding {
		rc.holding = false
		close(rc.released)
	}
	rc.mu.Unlock()
	time.Sleep(200 * time.Millisecond) // let the held handlers finish
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.aborted
}

// acked returns the notifications acknowledged so far, in order.
func (rc *receiver) acked() []ack {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]ack(nil), rc.acks...)
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if err := push.Verify([]byte("replicas-push-secret"), r.Header, body, time.Now(), 5*time.Minute); err != nil {
		rc.t.Errorf("webhook got a notification that does not verify: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ev a2a.StreamResponse
	if err := a2a.Unmarshal(body, &ev); err != nil {
		rc.t.Errorf("webhook got a body that is not a StreamResponse: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	holding, released := rc.holding, rc.released
	if holding {
		rc.held++
	}
	rc.mu.Unlock()
	if holding {
		select {
		case <-released:
		case <-r.Context().Done():
		}
		rc.mu.Lock()
		rc.held--
		rc.mu.Unlock()
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if r.Context().Err() != nil {
		rc.aborted++ // the sender is gone: it never saw an answer
		return
	}
	rc.acks = append(rc.acks, ack{id: r.Header.Get(push.HeaderDeliveryID), taskID: r.Header.Get(push.HeaderTaskID), desc: describe(ev)})
	w.WriteHeader(http.StatusNoContent)
}

// count runs a count query on the test schema.
func count(t testing.TB, dsn, query string) int {
	t.Helper()
	ctx, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// outboxEmpty reports whether every notification was delivered.
func outboxEmpty(t testing.TB, dsn string) bool {
	return count(t, dsn, "SELECT count(*) FROM outbox") == 0
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
