package authreq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// callTimeout bounds every tool call and every wait on a recorder; it is a
// guard against hangs, never an assertion on timing.
const callTimeout = 60 * time.Second

// The two tokens the mail peer accepts: the caller starts with the first
// and is given the second once the peer asked for credentials.
const (
	tokOld = "alice-old-token-3b5d7f9a1c2e4f6a"
	tokNew = "alice-new-token-8e6c4a2f0d9b7c5e"
)

// chainKey is the metadata key of the delegation chain id.
const chainKey = "a2a-plugin/chain-id"

// startMail starts the mail peer.
func startMail(t *testing.T) *testharness.Host {
	t.Helper()
	s, err := testharness.LoadScenario(filepath.Join("testdata", "mail.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return testharness.Start(t, testharness.Options{
		Agent:        s,
		PluginConfig: map[string]any{"port": 0, "store": "memory", "rate_limit": 0, "agent_name": "Mail"},
		Env:          map[string]string{"A2A_PEER_TOKENS": "alice-old:" + tokOld + ",alice-new:" + tokNew},
	})
}

// startCaller starts the host whose model calls mail, configured as peer.
func startCaller(t *testing.T, peer map[string]any) *testharness.Host {
	t.Helper()
	return testharness.Start(t, testharness.Options{
		PluginConfig: map[string]any{"port": 0, "store": "memory", "rate_limit": 0, "agent_name": "Alice",
			"a2a_agents": []map[string]any{peer}},
	})
}

// call calls a tool of h's plugin from a conversation of the host (chat
// C-7 on platform "slack"), as the host's model does.
func call(t *testing.T, h *testharness.Host, tool string, args map[string]any) (*pb.ToolResult, []string) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var progress []string
	res, err := h.CallToolProgress(ctx, &pb.CallToolRequest{Name: tool, ArgumentsJson: string(b), Platform: "slack", ChatId: "C-7"},
		func(p *pb.ToolProgress) error { progress = append(progress, p.GetMessage()); return nil })
	if err != nil {
		t.Fatalf("%s %s: %v", tool, b, err)
	}
	t.Logf("%s %s\n  progress: %q\n  is_error=%t:\n%s", tool, b, progress, res.GetIsError(), res.GetContent())
	return res, progress
}

// turnsOf waits for n HandleMessage calls of task taskID on h, in order.
func turnsOf(t *testing.T, h *testharness.Host, taskID string, n int) []*pb.HandleMessageRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	calls, err := h.Recorder().WaitForN(ctx, n, func(c testharness.Call) bool {
		return c.Kind == testharness.KindHandleMessage && c.TaskID == taskID
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*pb.HandleMessageRequest, len(calls))
	for i, c := range calls {
		out[i] = c.HandleMessage()
	}
	return out
}

// chainOf is the delegation chain id in a message's metadata.
func chainOf(hm *pb.HandleMessageRequest) string {
	return hm.GetMetadata().GetFields()[chainKey].GetStringValue()
}

// delegation waits for the RecordDelegation of task taskID on h.
func delegation(t *testing.T, h *testharness.Host, taskID string) *pb.RecordDelegationRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		return c.Kind == testharness.KindRecordDelegation && c.Request.(*pb.RecordDelegationRequest).GetRemoteTaskId() == taskID
	})
	if err != nil {
		t.Fatalf("the caller's host was never told about the delegation of task %s: %v", taskID, err)
	}
	return c.Request.(*pb.RecordDelegationRequest)
}

// tokenScript writes a token_command script: its first run prints tokOld;
// later runs wait (at most 30s) for the file trigger, then print tokNew.
// Only shell builtins and absolute paths: the plugin's environment has no
// PATH to speak of.
func tokenScript(t *testing.T, dir, trigger string) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command:", err)
	}
	runs := filepath.Join(dir, "runs")
	script := fmt.Sprintf(`if [ ! -f %[1]q ]; then : > %[1]q; printf '%%s\n' %[2]q; exit 0; fi
i=0
while [ ! -f %[3]q ] && [ $i -lt 600 ]; do %[4]q 0.05; i=$((i+1)); done
printf '%%s\n' %[5]q
`, runs, tokOld, trigger, sleep, tokNew)
	path := filepath.Join(dir, "token.sh")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// rotation is a proxy in front of mail that knows the caller by both of
// its tokens, as a peer's operator rotating its token does: a token names
// its holder, so another peer's token could not continue the task. It
// counts the requests that came with the new token.
func rotation(t *testing.T, mail *testharness.Host) (string, *atomic.Int32) {
	t.Helper()
	target, err := url.Parse(mail.Endpoint(testharness.A2APluginName))
	if err != nil {
		t.Fatal(err)
	}
	var rotated atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+tokNew {
			rotated.Add(1)
			r.Header.Set("Authorization", "Bearer "+tokOld)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &rotated
}

// TestAuthRequiredIsAnsweredWithARefreshedTokenOnTheSameTask: mail asks
// for credentials; the caller's token_command gives a new token once the
// test says so (after mail's asking turn ended); the plugin resumes the
// same task with it — same context, same chain id — and the model gets
// mail's final answer. Mail knows the caller by both tokens (a rotation,
// see rotation). The caller's host is told about the delegation.
func TestAuthRequiredIsAnsweredWithARefreshedTokenOnTheSameTask(t *testing.T) {
	t.Parallel()
	mail := startMail(t)
	mailURL, rotated := rotation(t, mail)
	dir := t.TempDir()
	trigger := filepath.Join(dir, "rotated")
	caller := startCaller(t, map[string]any{"name": "mail", "url": mailURL,
		"token_command": "/bin/sh " + tokenScript(t, dir, trigger)})

	// Rotate the token once mail asked for credentials and ended that turn.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		asked, err := mail.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
			return c.Kind == testharness.KindSend && c.Send().GetKind() == pb.SendKind_SEND_KIND_AUTH_REQUIRED
		})
		if err == nil {
			_, err = mail.Recorder().WaitForCompletion(ctx, asked.TaskID)
		}
		if err != nil {
			t.Errorf("mail never asked for credentials: %v", err)
		}
		_ = os.WriteFile(trigger, nil, 0o600)
	}()

	r, progress := call(t, caller, "a2a_call", map[string]any{"agent": "mail", "message": "fetch my mail", "timeout_s": 50})
	e2etest.MustOK(t, r, "mail completed the task", "3 new mails, read for peer:alice-old after: credentials refreshed",
		`mail asked for credentials ("sign in to the mail service")`, "read again from token_command")
	if rotated.Load() == 0 {
		t.Error("the task was not resumed with the refreshed token")
	}
	s := e2etest.SummaryOf(t, r)
	if s.State != "COMPLETED" || s.TaskID == "" {
		t.Fatalf("summary %+v", s)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "AUTH_REQUIRED: sign in to the mail service") {
		t.Errorf("progress did not show the request for credentials: %q", progress)
	}

	turns := turnsOf(t, mail, s.TaskID, 2)
	first, cont := turns[0], turns[1]
	if first.GetContinuation() || first.GetSender().GetId() != "peer:alice-old" {
		t.Fatalf("first turn %v", first)
	}
	if !cont.GetContinuation() || cont.GetSender().GetId() != "peer:alice-old" || cont.GetChatId() != first.GetChatId() ||
		!strings.Contains(cont.GetText(), "credentials refreshed") {
		t.Fatalf("the resumed turn reached mail as %v", cont)
	}
	if chain := chainOf(first); chain == "" || chainOf(cont) != chain {
		t.Fatalf("chain ids %q then %q; want the same", chain, chainOf(cont))
	}

	d := delegation(t, caller, s.TaskID)
	if d.GetPlatform() != "slack" || d.GetChatId() != "C-7" || d.GetPeer() != "mail" || d.GetRemoteContextId() != s.ContextID ||
		d.GetChainId() != chainOf(first) || d.GetState() != "TASK_STATE_COMPLETED" || d.GetRequestSummary() != "fetch my mail" ||
		!strings.Contains(d.GetResultSummary(), "3 new mails") {
		t.Fatalf("RecordDelegation %v", d)
	}
	if n := len(caller.Recorder().CallsOf(testharness.KindRecordDelegation)); n != 1 {
		t.Fatalf("the host was told %d times", n)
	}
}

// TestAuthRequiredWithAStaticTokenSaysHowToResume: with a plain token the
// plugin cannot refresh anything, so the result says plainly what mail
// needs and how to resume the same task; doing so completes it, and only
// then is the host told about the delegation.
func TestAuthRequiredWithAStaticTokenSaysHowToResume(t *testing.T) {
	t.Parallel()
	mail := startMail(t)
	caller := startCaller(t, map[string]any{"name": "mail", "url": mail.Endpoint(testharness.A2APluginName), "token": tokOld})

	r, _ := call(t, caller, "a2a_call", map[string]any{"agent": "mail", "message": "fetch my mail"})
	e2etest.MustOK(t, r, "mail needs authentication before it can continue", "state AUTH_REQUIRED",
		"What mail needs:\n[A2A UNTRUSTED INPUT BEGIN from mail]", "sign in to the mail service\n[A2A UNTRUSTED INPUT END from mail]", "No token_file, token_command or oauth2 is configured for mail",
		`resume the same task: a2a_call agent="mail" task_id=`)
	s := e2etest.SummaryOf(t, r)
	if s.State != "AUTH_REQUIRED" || s.TaskID == "" {
		t.Fatalf("summary %+v", s)
	}
	if n := len(caller.Recorder().CallsOf(testharness.KindRecordDelegation)); n != 0 {
		t.Fatalf("an interrupted delegation was recorded as over (%d calls)", n)
	}

	r, _ = call(t, caller, "a2a_call", map[string]any{"agent": "mail", "message": "credentials refreshed", "task_id": s.TaskID, "context_id": s.ContextID})
	e2etest.MustOK(t, r, "mail completed the task", "3 new mails, read for peer:alice-old after: credentials refreshed")
	if got := e2etest.SummaryOf(t, r); got.TaskID != s.TaskID || got.State != "COMPLETED" {
		t.Fatalf("resumed as %+v; want task %s COMPLETED", got, s.TaskID)
	}
	if d := delegation(t, caller, s.TaskID); d.GetState() != "TASK_STATE_COMPLETED" || d.GetChatId() != "C-7" {
		t.Fatalf("RecordDelegation %v", d)
	}
}

// TestTokenFileIsReadAgainWhenThePeerRefusesIt: a peer that stops
// accepting the token (HTTP 401) makes the plugin read token_file again
// and retry once with what it holds now.
func TestTokenFileIsReadAgainWhenThePeerRefusesIt(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mail.token")
	if err := os.WriteFile(file, []byte("not-a-token-mail-knows\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mail := startMail(t)
	caller := startCaller(t, map[string]any{"name": "mail", "url": mail.Endpoint(testharness.A2APluginName), "token_file": file})

	r, _ := call(t, caller, "a2a_call", map[string]any{"agent": "mail", "message": "hello"})
	if !r.GetIsError() || !strings.Contains(r.GetContent(), "authentication refused (HTTP 401)") {
		t.Fatalf("a token mail does not know was not refused:\n%s", r.GetContent())
	}
	if err := os.WriteFile(file, []byte(tokNew+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ = call(t, caller, "a2a_call", map[string]any{"agent": "mail", "message": "hello again"})
	e2etest.MustOK(t, r, "mail heard: hello again")
	s := e2etest.SummaryOf(t, r)
	if hm := turnsOf(t, mail, s.TaskID, 1)[0]; hm.GetSender().GetId() != "peer:alice-new" {
		t.Fatalf("mail saw %v", hm.GetSender())
	}
}
