package security_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// Credential-shaped strings a host's agent might put in its output.
const (
	secretGitHub   = "ghp_R2d2C3poBb8Yoda4Leia6Han0Solo9Luke1x"
	secretAWS      = "AKIAIOSFODNN7EXAMPLQ"
	secretPassword = "Tr0ub4dor-and-3-correct-horses"
)

var allSecrets = []string{secretKey, secretGitHub, secretAWS, secretPassword}

// leaks returns the secrets found in b.
func leaks(b []byte) []string { return containsAny(string(b), allSecrets...) }

// TestRepliesToPeersAreRedacted: the host's agent answers with secrets in
// its progress, artifact and final reply; the peer never sees them — not in
// the blocking answer, the stream, GetTask, ListTasks or the push payloads
// delivered to its webhook.
func TestRepliesToPeersAreRedacted(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{
		agent: scenario([]testharness.Rule{when("secret",
			testharness.Progress("checking with token "+secretGitHub),
			testharness.ArtifactAction(testharness.ArtifactSpec{ID: "cfg", Name: "config.env",
				Parts: []testharness.PartSpec{testharness.TextPart("AWS_ACCESS_KEY_ID=" + secretAWS + "\npassword=" + secretPassword + "\n")}}),
			testharness.Reply("key "+secretKey),
		)}, testharness.Echo("echo: ")),
		config: map[string]any{"allow_loopback_urls": true},
	})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 40*time.Second)
	c := newClient(ep, "")
	hook := newWebhook(t)

	// Blocking, with a webhook.
	params := sendParams(message("tell me the secret"))
	params["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.srv.URL + "/push", "token": "hook-token"}}
	r := c.mustCall(t, ctx, "SendMessage", params)
	tk := taskOf(t, r)
	if tk.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("task %s, want completed: %s", tk.Status.State, r)
	}
	if l := leaks(r.Body); len(l) > 0 {
		t.Errorf("the blocking answer leaks %q: %s", l, r)
	}
	if !bytes.Contains(r.Body, []byte("[REDACTED")) {
		t.Errorf("the blocking answer shows no redaction mark: %s", r)
	}
	// The host really said it: the redaction happened in the plugin.
	if _, err := h.Recorder().WaitForCompletion(ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, s := range h.Recorder().Sends(tk.ID) {
		b, _ := protojson.Marshal(s)
		said = append(said, leaks(b)...)
	}
	if len(said) < len(allSecrets) {
		t.Fatalf("the scenario did not send every secret to the plugin (saw %q)", said)
	}

	// Streaming.
	_, events, err := c.stream(ctx, "SendStreamingMessage", sendParams(message("the secret, streamed")))
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for ev := range events {
		all.WriteString(ev + "\n")
	}
	if !strings.Contains(all.String(), "TASK_STATE_COMPLETED") {
		t.Errorf("the stream did not run to completion: %s", all.String())
	}
	if l := leaks(all.Bytes()); len(l) > 0 {
		t.Errorf("the stream leaks %q: %s", l, all.String())
	}

	// Reading back.
	if _, r := c.getTask(t, ctx, tk.ID); leaks(r.Body) != nil {
		t.Errorf("GetTask leaks %q: %s", leaks(r.Body), r)
	}
	if r := c.mustCall(t, ctx, "ListTasks", map[string]any{"includeArtifacts": true}); r.Err != nil || leaks(r.Body) != nil {
		t.Errorf("ListTasks leaks %q: %s", leaks(r.Body), r)
	}

	// Push payloads.
	if _, err := hook.waitFor(ctx, tk.ID, "TASK_STATE_COMPLETED"); err != nil {
		t.Fatal(err)
	}
	for _, b := range hook.all() {
		if l := leaks(b); len(l) > 0 {
			t.Errorf("a push payload leaks %q: %s", l, b)
		}
	}
}

// TestOutboundCallsAreRedacted: a2a_call from host A to host B with secrets
// in the message text and in its data: B's host never sees them, and A's
// model is told that something was redacted.
func TestOutboundCallsAreRedacted(t *testing.T) {
	t.Parallel()
	b := startHost(t, hostOpts{
		config: map[string]any{"loopback_is_local": false},
		env:    map[string]string{"A2A_PEER_TOKENS": peerTokens},
	})
	a := startHost(t, hostOpts{config: map[string]any{
		"allow_loopback_urls": true,
		"a2a_agents":          []map[string]any{{"name": "b", "url": b.Endpoint("a2a"), "token": tokAlice}},
	}})
	ctx := ctxFor(t, 40*time.Second)

	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"message text", map[string]any{"agent": "b",
			"message": fmt.Sprintf("deploy with key %s, token %s, AWS %s and password=%s", secretKey, secretGitHub, secretAWS, secretPassword)}},
		{"data argument", map[string]any{"agent": "b", "message": "deploy with the attached settings",
			"data": map[string]any{"note": "use " + secretKey, "password": secretPassword, "aws": secretAWS}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(tc.args)
			isHM := func(c testharness.Call) bool { return c.Kind == testharness.KindHandleMessage }
			seen := len(b.Recorder().Filter(isHM))
			res, _, err := a.CallTool(ctx, "a2a_call", string(args))
			if err != nil || res.GetIsError() {
				t.Fatalf("a2a_call: %v %v", res, err)
			}
			if !strings.Contains(res.GetContent(), "redacted") {
				t.Errorf("the tool result does not tell the model that secrets were redacted: %s", res.GetContent())
			}
			calls, err := b.Recorder().WaitForN(ctx, seen+1, isHM)
			if err != nil {
				t.Fatal(err)
			}
			req := calls[seen].HandleMessage()
			if req.GetSender().GetId() != "peer:alice" {
				t.Errorf("B saw sender %q, want peer:alice (A's configured token)", req.GetSender().GetId())
			}
			all, _ := protojson.Marshal(req)
			if l := leaks(all); len(l) > 0 {
				t.Errorf("B's host received %q: %s", l, all)
			}
		})
	}
}
