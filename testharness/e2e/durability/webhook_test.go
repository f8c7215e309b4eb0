package durability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// reportEvents is what the agent's "report" rule produces, as a webhook
// sees it (describe's rendering).
func reportEvents(taskID, text string) []string {
	return []string{
		"statusUpdate:WORKING",
		"statusUpdate:WORKING:working on " + text,
		"artifactUpdate:report:part1;",
		"artifactUpdate:report+append:part2;",
		"artifactUpdate:report+append!last:part3;",
		"artifactUpdate:" + taskID + "-answer-1!last:done: " + text,
		"statusUpdate:COMPLETED",
	}
}

// slowEvents is what the "slow" (and "unhurried") rule produces.
func slowEvents(taskID, text string) []string {
	return []string{
		"statusUpdate:WORKING",
		"statusUpdate:WORKING:step 1",
		"statusUpdate:WORKING:step 2",
		"artifactUpdate:data:abc",
		"artifactUpdate:data+append!last:def",
		"statusUpdate:WORKING:step 3",
		"artifactUpdate:" + taskID + "-answer-1!last:slow done: " + text,
		"statusUpdate:COMPLETED",
	}
}

// answerEvents is what a continuation of an "ask" task produces.
func answerEvents(taskID, text string) []string {
	return []string{
		"statusUpdate:WORKING",
		"artifactUpdate:" + taskID + "-answer-1!last:booked for " + text,
		"statusUpdate:COMPLETED",
	}
}

// pushConfig is an inline or created push config with Bearer credentials
// and a token.
func pushConfig(id, url, cred, token string) map[string]any {
	c := map[string]any{"url": url}
	if id != "" {
		c["id"] = id
	}
	if cred != "" {
		c["authentication"] = map[string]any{"scheme": "Bearer", "credentials": cred}
	}
	if token != "" {
		c["token"] = token
	}
	return c
}

// TestWebhookNotificationsMatchTheTaskEventByEvent checks every
// notification (the receiver checks Content-Type, Authorization, the
// token, the HMAC signature with A2A_PUSH_SECRET and the v1.0 schema of
// each body) and that a webhook gets exactly what a stream of the same
// task gets, in the same order, each delivery once.
func TestWebhookNotificationsMatchTheTaskEventByEvent(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, pushSecret)
	h := launch(t, launchOpts{env: map[string]string{"A2A_PUSH_SECRET": pushSecret}})
	c := clientOf(h, "")

	// An inline config on a streamed task: the webhook gets the stream's
	// events after the first (the task snapshot), byte for byte in value.
	url := rcv.url(hook{name: "stream", auth: "Bearer cred-stream", token: "tok-stream"})
	events := c.stream(t, msg{text: "report via stream", push: pushConfig("cfg-stream", url, "cred-stream", "tok-stream")})
	if len(events) < 2 {
		t.Fatalf("stream: %d events", len(events))
	}
	var first a2a.StreamResponse
	if err := json.Unmarshal(events[0], &first); err != nil || first.Task == nil {
		t.Fatalf("first stream event is not the task: %s", events[0])
	}
	taskID := first.Task.ID
	got := rcv.waitDelivered(t, "stream", len(events)-1, 15*time.Second)
	if len(got) != len(events)-1 {
		t.Fatalf("webhook got %d notifications, the stream %d events after the task", len(got), len(events)-1)
	}
	for i, d := range got {
		if !jsonEqual(d.body, events[i+1]) {
			t.Errorf("notification %d differs from stream event %d:\n%s\n%s", i, i+1, d.body, events[i+1])
		}
	}
	checkSequence(t, "stream", got, taskID, reportEvents(taskID, "report via stream"))

	// A config created (v1.0 method, Basic credentials, no token) on a
	// task waiting for input gets exactly the continuation's events.
	url = rcv.url(hook{name: "created", auth: "Basic dXNlcjpwdw=="})
	tk := c.send(t, msg{text: "ask for a day"})
	if tk.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: state %s", tk.Status.State)
	}
	c.ok(t, "CreateTaskPushNotificationConfig", map[string]any{
		"taskId": tk.ID, "id": "cfg-created", "url": url,
		"authentication": map[string]any{"scheme": "Basic", "credentials": "dXNlcjpwdw=="},
	}, "Task Push Notification Config")
	done := c.send(t, msg{text: "friday", taskID: tk.ID})
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("continuation: state %s", done.Status.State)
	}
	got = rcv.waitDelivered(t, "created", 3, 15*time.Second)
	checkSequence(t, "created", got, tk.ID, answerEvents(tk.ID, "friday"))

	// Give stray late deliveries a moment, then: nothing retried, nothing
	// twice, nothing else.
	time.Sleep(300 * time.Millisecond)
	for _, name := range []string{"stream", "created"} {
		if n, m := len(rcv.requestsTo(name)), len(rcv.delivered(name)); n != m {
			t.Errorf("hook %s: %d requests for %d notifications on a healthy webhook", name, n, m)
		}
	}
	if d := rcv.duplicates(); len(d) > 0 {
		t.Errorf("delivered more than once: %v", d)
	}
}

// TestWebhookOutageLosesNothing takes the webhook down while tasks keep
// producing updates — first it answers 503, then its port refuses
// connections — and brings it back: every notification arrives, once, in
// order, with the delivery id it had on the failed attempts.
func TestWebhookOutageLosesNothing(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, pushSecret)
	dataDir := t.TempDir()
	h := launch(t, launchOpts{env: map[string]string{"A2A_PUSH_SECRET": pushSecret}, dataDir: dataDir})
	c := clientOf(h, "")

	const n = 3
	names, tasks := make([]string, n), make([]a2a.Task, n)
	for i := range n {
		names[i] = fmt.Sprintf("outage-%d", i)
		url := rcv.url(hook{name: names[i], auth: "Bearer cred-" + names[i], token: "tok-" + names[i]})
		tasks[i] = c.send(t, msg{text: fmt.Sprintf("unhurried %d", i), returnImmediately: true,
			push: pushConfig("cfg-"+names[i], url, "cred-"+names[i], "tok-"+names[i])})
	}
	for _, name := range names {
		rcv.waitDelivered(t, name, 1, 10*time.Second)
	}
	// The tasks go on working while the webhook fails: first it answers
	// 503 (until every hook has refused a notification), then it is gone.
	rcv.setStatus(http.StatusServiceUnavailable)
	for _, name := range names {
		eventually(t, 10*time.Second, func() (bool, string) {
			for _, q := range rcv.requestsTo(name) {
				if q.status == http.StatusServiceUnavailable {
					return true, ""
				}
			}
			return false, "hook " + name + " was not tried while it answered 503"
		})
	}
	rcv.down()
	for _, tk := range tasks {
		c.waitState(t, tk.ID, a2a.TaskStateCompleted)
	}
	time.Sleep(500 * time.Millisecond)
	pending := 0
	for i, name := range names {
		pending += len(slowEvents(tasks[i].ID, "")) - len(rcv.delivered(name))
	}
	if pending == 0 {
		t.Fatal("every notification was delivered before the outage; the test proves nothing")
	}
	t.Logf("%d notifications pending when the webhook comes back", pending)
	rcv.setStatus(0)
	rcv.up(t)

	for i, name := range names {
		want := slowEvents(tasks[i].ID, fmt.Sprintf("unhurried %d", i))
		got := rcv.waitDelivered(t, name, len(want), 30*time.Second)
		checkSequence(t, name, got, tasks[i].ID, want)
		retried := 0
		for _, d := range got {
			if d.attempts > 1 {
				retried++
			}
		}
		if retried == 0 {
			t.Errorf("hook %s: no notification was acknowledged after a refused attempt with the same delivery id", name)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if d := rcv.duplicates(); len(d) > 0 {
		t.Errorf("delivered more than once: %v", d)
	}
	db := database(t, dataDir)
	eventually(t, 5*time.Second, func() (bool, string) {
		n := count(t, db, "SELECT COUNT(*) FROM outbox")
		return n == 0, fmt.Sprintf("%d deliveries left in the outbox", n)
	})
	if n := count(t, db, "SELECT COUNT(*) FROM deliveries_failed"); n != 0 {
		t.Errorf("%d deliveries were given up during a short outage", n)
	}
}

// TestPendingNotificationsSurviveKill9 kills the plugin (SIGKILL) while
// notifications wait in the outbox for a failing webhook: after the
// restart they are all delivered, in order, with the same delivery ids.
func TestPendingNotificationsSurviveKill9(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, pushSecret)
	rcv.setStatus(http.StatusServiceUnavailable)
	dataDir := t.TempDir()
	h := launch(t, launchOpts{env: map[string]string{"A2A_PUSH_SECRET": pushSecret}, dataDir: dataDir})
	c := clientOf(h, "")

	names := []string{"kill-a", "kill-b"}
	var tasks []a2a.Task
	for _, name := range names {
		url := rcv.url(hook{name: name, auth: "Bearer cred-" + name, token: "tok-" + name})
		tk := c.send(t, msg{text: "report " + name, push: pushConfig("cfg-"+name, url, "cred-"+name, "tok-"+name)})
		if tk.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%s: state %s", name, tk.Status.State)
		}
		tasks = append(tasks, tk)
	}
	db := database(t, dataDir)
	for i, name := range names {
		eventually(t, 10*time.Second, func() (bool, string) {
			return len(rcv.requestsTo(name)) > 0, "the webhook was never tried"
		})
		if n := count(t, db, "SELECT COUNT(*) FROM outbox WHERE task_id = ?", tasks[i].ID); n != 7 {
			t.Errorf("%s: %d deliveries in the outbox before the kill, want 7", name, n)
		}
	}
	triedBefore := map[string]string{}
	for _, name := range names {
		triedBefore[name] = rcv.requestsTo(name)[0].deliveryID
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Restart(ctx, "a2a"); err != nil {
		t.Fatal(err)
	}
	rcv.setStatus(0)
	c = clientOf(h, "")
	for i, name := range names {
		want := reportEvents(tasks[i].ID, "report "+name)
		got := rcv.waitDelivered(t, name, len(want), 30*time.Second)
		checkSequence(t, name, got, tasks[i].ID, want)
		if got[0].id != triedBefore[name] {
			t.Errorf("%s: the first notification was tried as %s before the restart and delivered as %s after it", name, triedBefore[name], got[0].id)
		}
		if tk := task(t, c.getTask(t, tasks[i].ID)); tk.Status.State != a2a.TaskStateCompleted {
			t.Errorf("%s: state after the restart %s", name, tk.Status.State)
		}
	}
	if d := rcv.duplicates(); len(d) > 0 {
		t.Errorf("delivered more than once: %v", d)
	}
	eventually(t, 5*time.Second, func() (bool, string) {
		n := count(t, db, "SELECT COUNT(*) FROM outbox")
		return n == 0, fmt.Sprintf("%d deliveries left in the outbox", n)
	})
}

// TestPermanentlyFailingWebhooksAreGivenUpAndRecorded: with
// A2A_PUSH_MAX_ATTEMPTS=2, a webhook that always answers 400 gets each
// notification once and one that always answers 503 gets each twice; then
// each notification is given up, recorded in the store with its reason
// and logged, the outbox is empty, and a healthy webhook of another task
// is not held up.
func TestPermanentlyFailingWebhooksAreGivenUpAndRecorded(t *testing.T) {
	t.Parallel()
	bad := newReceiver(t, pushSecret)
	bad.setStatus(http.StatusBadRequest)
	busy := newReceiver(t, pushSecret)
	busy.setStatus(http.StatusServiceUnavailable)
	good := newReceiver(t, pushSecret)
	dataDir := t.TempDir()
	logs := &logTee{}
	h := launch(t, launchOpts{
		env:     map[string]string{"A2A_PUSH_SECRET": pushSecret, "A2A_PUSH_MAX_ATTEMPTS": "2"},
		dataDir: dataDir, logs: logs,
	})
	c := clientOf(h, "")

	send := func(r *receiver, name string) a2a.Task {
		url := r.url(hook{name: name, auth: "Bearer cred-" + name, token: "tok-" + name})
		tk := c.send(t, msg{text: "report " + name, returnImmediately: true, push: pushConfig("cfg-"+name, url, "cred-"+name, "tok-"+name)})
		return tk
	}
	t400 := send(bad, "bad")
	t503 := send(busy, "busy")
	tOK := send(good, "good")

	want := reportEvents(tOK.ID, "report good")
	checkSequence(t, "good", good.waitDelivered(t, "good", len(want), 10*time.Second), tOK.ID, want)

	attemptsPerID := func(r *receiver, name string, n, each int) {
		t.Helper()
		eventually(t, 20*time.Second, func() (bool, string) {
			got := len(r.requestsTo(name))
			return got >= n*each, fmt.Sprintf("hook %s got %d requests, want %d", name, got, n*each)
		})
	}
	attemptsPerID(bad, "bad", 7, 1)
	attemptsPerID(busy, "busy", 7, 2)
	db := database(t, dataDir)
	for _, tc := range []struct {
		name   string
		r      *receiver
		tk     a2a.Task
		each   int
		reason string
	}{
		{"bad", bad, t400, 1, "webhook answered 400"},
		{"busy", busy, t503, 2, "gave up after 2 attempts; last error: webhook answered 503"},
	} {
		eventually(t, 5*time.Second, func() (bool, string) {
			n := count(t, db, "SELECT COUNT(*) FROM deliveries_failed WHERE task_id = ? AND config_id = ?", tc.tk.ID, "cfg-"+tc.name)
			return n == 7, fmt.Sprintf("%s: %d give-ups recorded, want 7", tc.name, n)
		})
		rows, err := db.Query("SELECT reason FROM deliveries_failed WHERE task_id = ? ORDER BY id", tc.tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var reason string
			if err := rows.Scan(&reason); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(reason, tc.reason) {
				t.Errorf("%s: recorded reason %q, want it to contain %q", tc.name, reason, tc.reason)
			}
		}
		rows.Close()
		if n := count(t, db, "SELECT COUNT(*) FROM outbox WHERE task_id = ?", tc.tk.ID); n != 0 {
			t.Errorf("%s: %d deliveries still in the outbox after giving up", tc.name, n)
		}
		if tk := task(t, c.getTask(t, tc.tk.ID)); tk.Status.State != a2a.TaskStateCompleted {
			t.Errorf("%s: a failing webhook changed the task: %s", tc.name, tk.Status.State)
		}
		// The log lines travel through the host's stderr reader: they may
		// trail the database by a moment.
		eventually(t, 5*time.Second, func() (bool, string) {
			n := len(logs.matching("gave up on a webhook notification", tc.tk.ID))
			return n == 7, fmt.Sprintf("%s: %d give-ups logged, want 7", tc.name, n)
		})
	}
	// No further attempts after giving up.
	time.Sleep(1500 * time.Millisecond)
	for _, tc := range []struct {
		r    *receiver
		name string
		each int
	}{{bad, "bad", 1}, {busy, "busy", 2}} {
		per := map[string]int{}
		for _, q := range tc.r.requestsTo(tc.name) {
			per[q.deliveryID]++
		}
		if len(per) != 7 {
			t.Errorf("hook %s: %d distinct notifications, want 7", tc.name, len(per))
		}
		for id, k := range per {
			if k != tc.each {
				t.Errorf("hook %s: notification %s tried %d times, want %d", tc.name, id, k, tc.each)
			}
		}
	}
}

// TestWebhookURLsPassTheSSRFGuard: private, link-local and unique-local
// webhook URLs are refused when a config is created (v1.0, 0.3 and
// inline) with -32602 naming the setting that allows them, and nothing is
// stored; without allow_loopback_urls loopback URLs are refused too.
func TestWebhookURLsPassTheSSRFGuard(t *testing.T) {
	t.Parallel()
	h := launch(t, launchOpts{env: map[string]string{"A2A_PUSH_SECRET": pushSecret}})
	c := clientOf(h, "")
	tk := c.send(t, msg{text: "report ssrf"})
	private := []string{
		"http://10.0.0.7/hook", "http://192.168.1.20:8080/hook", "http://172.16.5.4/hook",
		"http://169.254.169.254/latest/meta-data/", "http://[fd00::1]/hook", "http://[fe80::1]/hook",
		"http://100.64.0.1/hook",
	}
	for _, u := range private {
		e := c.fails(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "id": "ssrf", "url": u}, -32602)
		if !strings.Contains(e.Message, "A2A_ALLOW_PRIVATE_URLS") {
			t.Errorf("%s: the refusal does not name A2A_ALLOW_PRIVATE_URLS: %s", u, e.Message)
		}
		c.fails(t, "tasks/pushNotificationConfig/set", map[string]any{"taskId": tk.ID, "pushNotificationConfig": map[string]any{"id": "ssrf", "url": u}}, -32602)
	}
	_, before := c.listTasks(t, nil)
	c.fails(t, "SendMessage", msg{text: "report inline ssrf", push: pushConfig("ssrf", private[0], "", "")}.params(), -32602)
	if _, after := c.listTasks(t, nil); after != before {
		t.Errorf("a refused inline webhook still created a task: %d tasks, then %d", before, after)
	}
	res := c.ok(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": tk.ID}, "List Task Push Notification Configs Response")
	if strings.Contains(string(res), "ssrf") {
		t.Errorf("a refused config was stored: %s", res)
	}

	strict := launch(t, launchOpts{config: map[string]any{"allow_loopback_urls": false}})
	sc := clientOf(strict, "")
	tk = sc.send(t, msg{text: "report strict"})
	for _, u := range []string{"http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]:9/hook", "http://127.8.9.10/hook"} {
		e := sc.fails(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "url": u}, -32602)
		if !strings.Contains(e.Message, "A2A_ALLOW_LOOPBACK_URLS") {
			t.Errorf("%s: the refusal does not name A2A_ALLOW_LOOPBACK_URLS: %s", u, e.Message)
		}
	}
}

// TestConfigCreatedOnARunningTaskGetsTheRest: a config created while the
// task works gets every later update — an unbroken tail of the task's
// events, ending with COMPLETED — and one deleted while its notifications
// wait for a failing webhook gets nothing more once the webhook is back.
func TestConfigCreatedOnARunningTaskGetsTheRest(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, pushSecret)
	h := launch(t, launchOpts{env: map[string]string{"A2A_PUSH_SECRET": pushSecret}})
	c := clientOf(h, "")

	tk := c.send(t, msg{text: "slow tail", returnImmediately: true})
	eventually(t, 10*time.Second, func() (bool, string) {
		cur := task(t, c.getTask(t, tk.ID))
		return statusText(cur) == "step 1", fmt.Sprintf("task is %s %q", cur.Status.State, statusText(cur))
	})
	url := rcv.url(hook{name: "tail", auth: "Bearer cred-tail", token: "tok-tail"})
	c.ok(t, "CreateTaskPushNotificationConfig", pushConfigFor(tk.ID, "cfg-tail", url, "cred-tail", "tok-tail"), "Task Push Notification Config")
	c.waitState(t, tk.ID, a2a.TaskStateCompleted)
	all := slowEvents(tk.ID, "slow tail")
	var got []delivery
	eventually(t, 15*time.Second, func() (bool, string) {
		got = rcv.delivered("tail")
		return len(got) > 0 && got[len(got)-1].ev.StatusUpdate != nil && got[len(got)-1].ev.StatusUpdate.Status.State == a2a.TaskStateCompleted,
			fmt.Sprintf("hook tail got %v", describeAll(got))
	})
	if len(got) > len(all)-2 {
		t.Errorf("a config created after step 1 got %d notifications: %v", len(got), describeAll(got))
	}
	checkSequence(t, "tail", got, tk.ID, all[len(all)-min(len(got), len(all)):])

	// Deleted while waiting: the webhook answers 503 until the config is
	// gone, then 200; nothing more arrives.
	rcv.setStatus(http.StatusServiceUnavailable)
	url = rcv.url(hook{name: "deleted", auth: "Bearer cred-del", token: "tok-del"})
	del := c.send(t, msg{text: "report then delete", push: pushConfig("cfg-del", url, "cred-del", "tok-del")})
	eventually(t, 10*time.Second, func() (bool, string) { return len(rcv.requestsTo("deleted")) > 0, "the webhook was never tried" })
	c.ok(t, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": del.ID, "id": "cfg-del"}, "")
	tried := len(rcv.requestsTo("deleted"))
	rcv.setStatus(0)
	time.Sleep(2500 * time.Millisecond) // past the first retry's backoff (at most 1 s)
	if n := len(rcv.requestsTo("deleted")); n > tried+1 {
		t.Errorf("a deleted config's webhook got %d more requests", n-tried)
	}
	if n := len(rcv.delivered("deleted")); n > 1 {
		t.Errorf("a deleted config's webhook got %d notifications acknowledged", n)
	}
}

// TestGeneratedPushSecretSignsAcrossRestarts: with neither A2A_PUSH_SECRET
// nor a bearer token, notifications are signed with a key the plugin
// generates into its data directory (<data dir>/push-secret), and the same
// key keeps signing after a kill -9 and restart.
func TestGeneratedPushSecretSignsAcrossRestarts(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	h := launch(t, launchOpts{dataDir: dataDir})
	keyFile := filepath.Join(dataDir, testharness.A2APluginName, "push-secret")
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatalf("no generated webhook signing key: %v", err)
	}
	secret := strings.TrimSpace(string(key))
	if len(secret) < 32 {
		t.Fatalf("the generated key is %d characters long", len(secret))
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the key file is readable by others: %v %v", fi.Mode(), err)
	}
	rcv := newReceiver(t, secret)
	c := clientOf(h, "")
	url := rcv.url(hook{name: "gen", auth: "Bearer cred-gen", token: "tok-gen"})
	before := c.send(t, msg{text: "report signed", push: pushConfig("cfg-gen", url, "cred-gen", "tok-gen")})
	rcv.waitDelivered(t, "gen", 7, 15*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Restart(ctx, testharness.A2APluginName); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(keyFile); strings.TrimSpace(string(again)) != secret {
		t.Fatal("the restarted plugin replaced its webhook signing key")
	}
	c = clientOf(h, "")
	after := c.send(t, msg{text: "report signed again", push: pushConfig("cfg-gen", url, "cred-gen", "tok-gen")})
	got := rcv.waitDelivered(t, "gen", 14, 15*time.Second)
	checkSequence(t, "gen", got[:7], before.ID, reportEvents(before.ID, "report signed"))
	checkSequence(t, "gen", got[7:], after.ID, reportEvents(after.ID, "report signed again"))
}
