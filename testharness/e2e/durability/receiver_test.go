package durability_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/push"
)

// hook is one webhook of the receiver and what its requests must carry.
type hook struct {
	name string
	// auth is the expected Authorization header, token the expected
	// X-A2A-Notification-Token; "" means the header must be absent.
	auth, token string
}

// delivery is one notification the receiver acknowledged.
type delivery struct {
	id     string // X-A2A-Delivery-Id
	seq    int64  // the outbox id in it
	taskID string
	body   []byte
	ev     a2a.StreamResponse
	// attempts is how many requests carried this delivery id up to and
	// including the acknowledged one.
	attempts int
}

// describe renders a notification as "kind:detail" for sequence checks:
// statusUpdate:<STATE>[:<status text>], artifactUpdate:<id>[+append][!last]:<text>.
func (d delivery) describe() string { return describeEvent(d.ev) }

func describeEvent(ev a2a.StreamResponse) string {
	switch {
	case ev.StatusUpdate != nil:
		s := "statusUpdate:" + strings.TrimPrefix(string(ev.StatusUpdate.Status.State), "TASK_STATE_")
		if m := ev.StatusUpdate.Status.Message; m != nil {
			s += ":" + textOf(m.Parts)
		}
		return s
	case ev.ArtifactUpdate != nil:
		a := ev.ArtifactUpdate
		s := "artifactUpdate:" + a.Artifact.ArtifactID
		if a.Append {
			s += "+append"
		}
		if a.LastChunk {
			s += "!last"
		}
		return s + ":" + textOf(a.Artifact.Parts)
	case ev.Task != nil:
		return "task:" + string(ev.Task.Status.State)
	case ev.Message != nil:
		return "message"
	}
	return "?"
}

// request is one POST the receiver got.
type request struct {
	hook       string
	deliveryID string
	status     int
	at         time.Time
}

// receiver is a webhook endpoint that checks every request it gets: the
// method, Content-Type, Authorization and notification token of its hook,
// the X-A2A-Signature (push.Verify with the shared secret), that the body
// is a valid v1.0 StreamResponse about the task in X-A2A-Task-Id, and that
// a delivery id always carries the same body. It can answer an error
// status or go down (closed listener) and come back on the same address.
type receiver struct {
	t      testing.TB
	secret []byte

	mu       sync.Mutex
	addr     string
	ln       net.Listener
	srv      *http.Server
	status   int // what to answer; 0 means 200
	hooks    map[string]hook
	requests []request
	bodies   map[string][]byte      // first body of each delivery id
	tries    map[string]int         // requests per delivery id
	acked    map[string]int         // acknowledgements per delivery id
	accepted map[string][]*delivery // per hook, in order of first acknowledgement
	problems []string
}

// newReceiver starts a receiver on a loopback port. Its problems fail the
// test at cleanup (register it before the plugin, so it outlives it).
func newReceiver(t testing.TB, secret string) *receiver {
	t.Helper()
	r := &receiver{
		t: t, secret: []byte(secret), hooks: map[string]hook{},
		bodies: map[string][]byte{}, tries: map[string]int{}, acked: map[string]int{},
		accepted: map[string][]*delivery{},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(func() {
		r.down()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, p := range r.problems {
			t.Errorf("webhook receiver: %s", p)
		}
	})
	return r
}

func (r *receiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(r.handle), ReadHeaderTimeout: 10 * time.Second}
	r.mu.Lock()
	r.ln, r.srv = ln, srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// url registers a hook and returns its URL.
func (r *receiver) url(h hook) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks["/hooks/"+h.name] = h
	return "http://" + r.addr + "/hooks/" + h.name
}

// setStatus makes the receiver answer every request with code (0: 200).
func (r *receiver) setStatus(code int) {
	r.mu.Lock()
	r.status = code
	r.mu.Unlock()
}

// down closes the listener and every connection: the webhook is gone.
func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv, r.ln = nil, nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up listens again on the same address.
func (r *receiver) up(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("webhook receiver cannot listen on %s again: %v", r.addr, err)
	}
	r.serve(ln)
}

// setSecret sets the key signatures are checked with, for a plugin whose
// key is known only once it started (the one it generates).
func (r *receiver) setSecret(secret string) {
	r.mu.Lock()
	r.secret = []byte(secret)
	r.mu.Unlock()
}

func (r *receiver) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.problem("reading a request body: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h, ok := r.hooks[req.URL.Path]
	if !ok {
		r.problem("POST to unknown hook %s", req.URL.Path)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	id := req.Header.Get(push.HeaderDeliveryID)
	where := fmt.Sprintf("hook %s, delivery %s", h.name, id)
	if req.Method != http.MethodPost {
		r.problem("%s: method %s, want POST", where, req.Method)
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/a2a+json" {
		r.problem("%s: Content-Type %q, want application/a2a+json", where, ct)
	}
	if got := req.Header.Get("Authorization"); got != h.auth {
		r.problem("%s: Authorization %q, want %q", where, got, h.auth)
	}
	switch got, present := req.Header[http.CanonicalHeaderKey(push.HeaderNotificationToken)]; {
	case h.token == "" && present:
		r.problem("%s: %s %q, want none", where, push.HeaderNotificationToken, got)
	case h.token != "" && (len(got) != 1 || got[0] != h.token):
		r.problem("%s: %s %q, want %q", where, push.HeaderNotificationToken, got, h.token)
	}
	if err := push.Verify(r.secret, req.Header, body, time.Now(), 0); err != nil {
		r.problem("%s: signature: %v", where, err)
	}
	if err := a2atest.CheckJSON("Stream Response", body); err != nil {
		r.problem("%s: body: %v", where, err)
	}
	var ev a2a.StreamResponse
	if err := json.Unmarshal(body, &ev); err != nil {
		r.problem("%s: body is not a StreamResponse: %v", where, err)
	}
	if ev.StatusUpdate == nil && ev.ArtifactUpdate == nil {
		r.problem("%s: a webhook should get statusUpdate or artifactUpdate events, got %s", where, body)
	}
	if tid := req.Header.Get(push.HeaderTaskID); tid == "" || tid != ev.TaskID() {
		r.problem("%s: %s %q but the body is about task %q", where, push.HeaderTaskID, tid, ev.TaskID())
	}
	seqText, _, okID := strings.Cut(id, "-")
	var seq int64
	if _, err := fmt.Sscan(seqText, &seq); !okID || err != nil {
		r.problem("%s: malformed %s %q", where, push.HeaderDeliveryID, id)
	}
	if first, seen := r.bodies[id]; seen && string(first) != string(body) {
		r.problem("%s: a retry carries a different body:\n%s\nfirst:\n%s", where, body, first)
	} else if !seen {
		r.bodies[id] = body
	}
	r.tries[id]++
	status := http.StatusOK
	if r.status != 0 {
		status = r.status
	}
	r.requests = append(r.requests, request{hook: h.name, deliveryID: id, status: status, at: time.Now()})
	if status/100 == 2 {
		r.acked[id]++
		if r.acked[id] == 1 {
			r.accepted[h.name] = append(r.accepted[h.name], &delivery{
				id: id, seq: seq, taskID: ev.TaskID(), body: body, ev: ev, attempts: r.tries[id],
			})
		}
	}
	w.WriteHeader(status)
}

// delivered returns the notifications hook acknowledged, in order.
func (r *receiver) delivered(name string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]delivery, 0, len(r.accepted[name]))
	for _, d := range r.accepted[name] {
		out = append(out, *d)
	}
	return out
}

// requestsTo returns every request hook got, in arrival order.
func (r *receiver) requestsTo(name string) []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []request
	for _, q := range r.requests {
		if q.hook == name {
			out = append(out, q)
		}
	}
	return out
}

// duplicates returns the delivery ids acknowledged more than once.
func (r *receiver) duplicates() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id, n := range r.acked {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s×%d", id, n))
		}
	}
	return out
}

// waitDelivered waits until hook acknowledged n notifications and returns
// them.
func (r *receiver) waitDelivered(t testing.TB, name string, n int, timeout time.Duration) []delivery {
	t.Helper()
	var got []delivery
	eventually(t, timeout, func() (bool, string) {
		got = r.delivered(name)
		return len(got) >= n, fmt.Sprintf("hook %s got %d of %d notifications: %s", name, len(got), n, describeAll(got))
	})
	return got
}

// describeAll renders a sequence of deliveries.
func describeAll(ds []delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.describe()
	}
	return out
}

// checkSequence fails the test unless the hook's notifications are exactly
// want (as describe renders them), for one task, with strictly increasing
// outbox ids.
func checkSequence(t testing.TB, name string, got []delivery, taskID string, want []string) {
	t.Helper()
	desc := describeAll(got)
	if strings.Join(desc, "\n") != strings.Join(want, "\n") {
		t.Errorf("hook %s: notifications\n  %s\nwant\n  %s", name, strings.Join(desc, "\n  "), strings.Join(want, "\n  "))
	}
	for i, d := range got {
		if d.taskID != taskID {
			t.Errorf("hook %s: notification %d is about task %s, want %s", name, i, d.taskID, taskID)
		}
		if i > 0 && d.seq <= got[i-1].seq {
			t.Errorf("hook %s: delivery ids out of order: %s after %s", name, d.id, got[i-1].id)
		}
	}
}
