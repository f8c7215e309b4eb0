package inbound_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// Tokens of the session test's callers.
const (
	tokShared = "shared-token-e2e-0123456789"
	tokAlice  = "alice-token-e2e-0123456789"
)

// TestInboundMessageReachesTheLiveSessionIntact sends one message with
// every kind of part, metadata and references, from callers of each trust
// tier, and checks what HandleMessage gave the host: the conversation is
// the contextId, the turn is unattended, the sender and tier come from the
// credentials, the text is framed as untrusted and the original parts are
// all there.
func TestInboundMessageReachesTheLiveSessionIntact(t *testing.T) {
	t.Parallel()
	// Loopback callers are not local here, so the tokens decide the tier:
	// the shared token is trusted, a peer token without trusted_peers is
	// public. The local tier is the default host's.
	tokens := startHost(t, map[string]any{"loopback_is_local": false, "bearer_token": tokShared,
		"peer_tokens": map[string]string{"alice": tokAlice}}, nil)
	local := startHost(t, nil, nil)
	cases := []struct {
		name       string
		h          *host
		token      string
		contextID  string
		sender     string
		senderName string
		tier       pb.TrustTier
	}{
		{"peer token, public", tokens, tokAlice, "", "peer:alice", "alice", pb.TrustTier_TRUST_TIER_PUBLIC},
		// A peer names a context the agent returned to it (here: its
		// earlier task's); only the Local operator may choose a new one.
		{"shared token, trusted", tokens, tokShared, "earlier", "ip:127.0.0.1", "127.0.0.1", pb.TrustTier_TRUST_TIER_TRUSTED},
		{"loopback, local", local, "", newID("ctx-local"), "local:127.0.0.1", "127.0.0.1", pb.TrustTier_TRUST_TIER_LOCAL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := within(t)
			c := newClient(tc.h.url).withToken(tc.token)
			ref := c.sendTask(t, ctx, msg("an earlier task"))
			words := "whoami " + tc.name
			mid := newID("msg")
			m := map[string]any{
				"role": "ROLE_USER", "messageId": mid,
				"parts": []any{
					map[string]any{"text": words},
					map[string]any{"raw": base64.StdEncoding.EncodeToString([]byte("file bytes")), "mediaType": "text/plain", "filename": "notes.txt"},
					map[string]any{"url": "https://example.com/report.pdf", "mediaType": "application/pdf", "filename": "report.pdf"},
					map[string]any{"data": map[string]any{"rows": []any{1, 2}}, "mediaType": "application/json", "filename": "rows.json"},
				},
				"metadata":         map[string]any{"customer": map[string]any{"tier": "gold"}, "n": 3},
				"referenceTaskIds": []string{ref.ID},
			}
			cid := tc.contextID
			if cid == "earlier" {
				cid = ref.ContextID
			}
			if cid != "" {
				m["contextId"] = cid
			}
			got := c.sendTask(t, ctx, map[string]any{"message": m})
			if cid != "" && got.ContextID != cid {
				t.Errorf("contextId = %q, want the client's %q", got.ContextID, cid)
			}
			hmCall := tc.h.handleMessage(t, ctx, got.ID)
			hm := hmCall.HandleMessage()
			checks := []struct {
				what string
				ok   bool
			}{
				{"platform a2a", hm.GetPlatform() == "a2a"},
				{"chat_id is the contextId", hm.GetChatId() == got.ContextID && hm.GetChatId() != ""},
				{"task_id", hm.GetTaskId() == got.ID},
				{"unattended", hm.GetUnattended()},
				{"not a continuation", !hm.GetContinuation()},
				{"sender id " + tc.sender, hm.GetSender().GetId() == tc.sender},
				{"sender name " + tc.senderName, hm.GetSender().GetDisplayName() == tc.senderName},
				{"trust tier " + tc.tier.String(), hm.GetTrustTier() == tc.tier},
				{"message id", hm.GetMessageId() == mid},
				{"metadata", hm.GetMetadata().GetFields()["customer"].GetStructValue().GetFields()["tier"].GetStringValue() == "gold" &&
					hm.GetMetadata().GetFields()["n"].GetNumberValue() == 3},
				{"reference task ids", len(hm.GetReferenceTaskIds()) == 1 && hm.GetReferenceTaskIds()[0] == ref.ID},
				{"text framed as untrusted", strings.Contains(hm.GetText(), words) && strings.Contains(hm.GetText(), "UNTRUSTED") &&
					strings.Contains(hm.GetText(), tc.sender)},
			}
			for _, ck := range checks {
				if !ck.ok {
					t.Errorf("HandleMessage: %s does not hold: %v", ck.what, hm)
				}
			}
			parts := hm.GetParts()
			if len(parts) != 4 {
				t.Fatalf("HandleMessage parts = %v, want 4", parts)
			}
			if parts[0].GetText() != words {
				t.Errorf("text part = %v", parts[0])
			}
			if p := parts[1]; string(p.GetRaw()) != "file bytes" || p.GetMediaType() != "text/plain" || p.GetFilename() != "notes.txt" {
				t.Errorf("file bytes part = %v", p)
			}
			if p := parts[2]; p.GetUrl() != "https://example.com/report.pdf" || p.GetMediaType() != "application/pdf" || p.GetFilename() != "report.pdf" {
				t.Errorf("file URL part = %v", p)
			}
			if p := parts[3]; len(p.GetData().GetStructValue().GetFields()["rows"].GetListValue().GetValues()) != 2 ||
				p.GetMediaType() != "application/json" || p.GetFilename() != "rows.json" {
				t.Errorf("data part = %v", p)
			}
			// The agent's answer names the conversation, task and sender it saw.
			turn := 1
			if cid == ref.ContextID {
				turn = 2 // the second in the earlier task's conversation
			}
			want := fmt.Sprintf("%s in %s for %s message %s turn %d", tc.sender, got.ContextID, got.ID, mid, turn)
			if got.Status.State != stCompleted || got.answer() != want {
				t.Errorf("answer = %s %q, want %q", got.Status.State, got.answer(), want)
			}
		})
	}
}

// TestHostOutputBecomesTaskEvents plays each kind of agent output and
// checks both what a blocking SendMessage returns and what a stream of the
// same message carries, event by event: progress is a WORKING update with
// the message, artifacts arrive as (chunked) artifact updates, questions
// are INPUT_REQUIRED (also from a final reply starting with
// [INPUT_REQUIRED]), the final reply completes the task as its answer
// artifact (the COMPLETED status carries no copy), a direct reply is a
// Message (on a stream, whose task went out first, it completes the task),
// and failed or rejected turns end the task FAILED or REJECTED with the
// host's reason.
func TestHostOutputBecomesTaskEvents(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	c := newClient(h.url)
	cases := []struct {
		text       string
		sends      []string // the host's Send kinds, in order
		state      string   // "" for a direct reply (a Message)
		statusText string   // status.message, "" for none (or the direct reply)
		answer     string   // the "answer" artifact
		stream     []string
	}{
		{"hello there", []string{"FINAL"}, stCompleted, "", "echo: hello there",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "artifact:answer/last", "status:" + stCompleted}},
		{"progress report", []string{"PROGRESS", "ARTIFACT", "ARTIFACT", "FINAL"}, stCompleted, "", "done: progress report",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "status:" + stWorking, "artifact:report", "artifact:report+append/last",
				"artifact:answer/last", "status:" + stCompleted}},
		{"artifacts please", []string{"ARTIFACT", "ARTIFACT", "ARTIFACT", "ARTIFACT", "FINAL"}, stCompleted, "", "artifacts ready",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "artifact:chunked", "artifact:chunked+append", "artifact:chunked+append/last",
				"artifact:files/last", "artifact:answer/last", "status:" + stCompleted}},
		{"ask me", []string{"INPUT_REQUIRED"}, stInputRequired, "Which colour?", "",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "status:" + stInputRequired}},
		{"finalask me", []string{"FINAL"}, stInputRequired, "Which size?", "",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "status:" + stInputRequired}},
		{"direct answer", []string{"DIRECT_REPLY"}, "", "direct: direct answer", "",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "artifact:answer/last", "status:" + stCompleted}},
		{"fail hard", []string{"PROGRESS"}, stFailed, "boom: fail hard", "",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "status:" + stWorking, "status:" + stFailed}},
		{"reject this", nil, stRejected, "not my job", "",
			[]string{"task:" + stSubmitted, "status:" + stWorking, "status:" + stRejected}},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			ctx := within(t)
			res := c.send(t, ctx, msg(tc.text+" (blocking)"))
			hm := h.handleMessageWith(t, ctx, tc.text+" (blocking)")
			h.completion(t, ctx, hm.TurnID)
			if got := h.sendKinds(hm.TurnID); !equal(got, tc.sends) {
				t.Errorf("host Sends = %v, want %v", got, tc.sends)
			}
			for _, s := range h.Recorder().Filter(func(c testharness.Call) bool { return c.Kind == testharness.KindSend && c.TurnID == hm.TurnID }) {
				if s.Err != nil || s.Send().GetTaskId() != hm.TaskID {
					t.Errorf("Send %v for task %s: %v", s.Send().GetKind(), s.Send().GetTaskId(), s.Err)
				}
			}
			statusText := strings.ReplaceAll(tc.statusText, tc.text, tc.text+" (blocking)")
			if tc.state == "" {
				if res.Message == nil || res.Message.Role != "ROLE_AGENT" || res.Message.text() != statusText ||
					res.Message.ContextID != hm.ChatID || res.Message.TaskID != "" {
					t.Fatalf("direct reply = %+v, want a Message %q", res.Message, statusText)
				}
				// The provisional task of a direct reply is never stored.
				c.call(t, ctx, "GetTask", map[string]any{"id": hm.TaskID}).wantError(t, -32001, "TASK_NOT_FOUND")
			} else {
				tk := res.Task
				if tk == nil || tk.Status.State != tc.state || (statusText == "") != (tk.Status.Message == nil) ||
					statusText != "" && (tk.Status.Message.text() != statusText || tk.Status.Message.Role != "ROLE_AGENT") {
					t.Fatalf("blocking result = %+v, want %s with %q", res, tc.state, statusText)
				}
				if got, want := tk.answer(), strings.ReplaceAll(tc.answer, tc.text, tc.text+" (blocking)"); got != want {
					t.Errorf("answer artifact = %q, want %q", got, want)
				}
				if tk.ID != hm.TaskID || tk.ContextID != hm.ChatID {
					t.Errorf("task %s/%s, host saw %s/%s", tk.ID, tk.ContextID, hm.TaskID, hm.ChatID)
				}
			}

			s, r := c.openStream(t, ctx, "SendStreamingMessage", msg(tc.text))
			if r != nil {
				t.Fatalf("stream refused: %s", r.Body)
			}
			evs := s.all()
			if got := labels(evs); !equal(got, tc.stream) {
				t.Fatalf("stream = %v\nwant     %v", got, tc.stream)
			}
			checkStreamConsistency(t, evs)
			last := evs[len(evs)-1]
			switch {
			case tc.state == "":
				if got := streamAnswer(evs); got != tc.statusText {
					t.Errorf("streamed direct reply = %q", got)
				}
			case tc.statusText == "":
				if last.StatusUpdate.Status.Message != nil {
					t.Errorf("the final status repeats the answer: %q", last.StatusUpdate.Status.Message.text())
				}
				if got := streamAnswer(evs); got != tc.answer {
					t.Errorf("streamed answer = %q, want %q", got, tc.answer)
				}
			case last.StatusUpdate.Status.Message.text() != tc.statusText:
				t.Errorf("final status message = %q, want %q", last.StatusUpdate.Status.Message.text(), tc.statusText)
			}
			for _, e := range evs {
				// A progress update carries the agent's message.
				if e.StatusUpdate != nil && e.StatusUpdate.Status.State == stWorking && e.StatusUpdate.Status.Message != nil {
					if txt := e.StatusUpdate.Status.Message.text(); txt != "working on it" && txt != "trying" {
						t.Errorf("progress message = %q", txt)
					}
				}
			}
		})
	}

	t.Run("chunks and files survive in the task", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		tk := c.sendTask(t, ctx, msg("artifacts for the record"))
		got := c.getTask(t, ctx, tk.ID)
		var chunked, files *artifact
		for i := range got.Artifacts {
			switch got.Artifacts[i].ArtifactID {
			case "chunked":
				chunked = &got.Artifacts[i]
			case "files":
				files = &got.Artifacts[i]
			}
		}
		if chunked == nil || partsString(chunked.Parts) != "abcdef" || chunked.Name != "chunked.txt" {
			t.Errorf("appended chunks = %+v", chunked)
		}
		if files == nil || len(files.Parts) != 3 {
			t.Fatalf("files artifact = %+v", files)
		}
		if p := files.Parts[0]; string(p.Data) != `{"score":0.9,"tags":["a","b"]}` || p.MediaType != "application/json" {
			t.Errorf("data part = %+v", p)
		}
		if p := files.Parts[1]; string(p.Raw) != "hello" || p.Filename != "hello.txt" || p.MediaType != "text/plain" {
			t.Errorf("bytes part = %+v", p)
		}
		if p := files.Parts[2]; p.URL != "https://example.com/"+tk.ID+".png" || p.MediaType != "image/png" || p.Filename != "pic.png" {
			t.Errorf("url part = %+v", p)
		}
	})

	t.Run("auth required", func(t *testing.T) {
		t.Parallel()
		ctx := within(t)
		tk := c.sendTask(t, ctx, msg("login first"))
		if tk.Status.State != stAuthRequired || tk.Status.Message.text() != "please sign in" {
			t.Errorf("auth = %s %q", tk.Status.State, tk.Status.Message.text())
		}
	})
}

// checkStreamConsistency checks that every event after the first names the
// first event's task and context.
func checkStreamConsistency(t *testing.T, evs []event) {
	t.Helper()
	if len(evs) == 0 || evs[0].Task == nil {
		return
	}
	id, cid := evs[0].Task.ID, evs[0].Task.ContextID
	for i, e := range evs[1:] {
		var tid, c string
		switch {
		case e.StatusUpdate != nil:
			tid, c = e.StatusUpdate.TaskID, e.StatusUpdate.ContextID
		case e.ArtifactUpdate != nil:
			tid, c = e.ArtifactUpdate.TaskID, e.ArtifactUpdate.ContextID
		case e.Task != nil:
			tid, c = e.Task.ID, e.Task.ContextID
		default:
			continue
		}
		if tid != id || c != cid {
			t.Errorf("event %d (%s) names %s/%s, the stream is about %s/%s", i+1, e.label(), tid, c, id, cid)
		}
	}
}

// TestTurnsOfOneContextRunInOrderWithoutCrossTalk sends several messages to
// one context while its first turn is held: the host gets them one at a
// time, in the order they were sent, each turn starting only after the
// previous one settled, and every task gets its own answer.
func TestTurnsOfOneContextRunInOrderWithoutCrossTalk(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)
	cid := newID("fifo")
	key := newID("hold")
	first := c.sendTask(t, ctx, nonBlocking(msg("wait-for "+key, "contextId", cid)))
	h.handleMessage(t, ctx, first.ID) // the first turn is on the host, held
	ids := []string{first.ID}
	for i := 1; i <= 5; i++ {
		tk := c.sendTask(t, ctx, nonBlocking(msg(fmt.Sprintf("message %d", i), "contextId", cid)))
		if tk.ContextID != cid {
			t.Fatalf("context %s, want %s", tk.ContextID, cid)
		}
		ids = append(ids, tk.ID)
	}
	h.agent.release(key)
	for i, id := range ids {
		want := fmt.Sprintf("echo: message %d", i)
		if i == 0 {
			want = "released " + key
		}
		if got := c.waitState(t, ctx, id, stCompleted); got.answer() != want {
			t.Errorf("task %d answer = %q, want %q", i, got.answer(), want)
		}
	}
	rec := h.Recorder()
	hms := rec.Filter(func(c testharness.Call) bool { return c.Kind == testharness.KindHandleMessage && c.ChatID == cid })
	if len(hms) != len(ids) {
		t.Fatalf("host got %d messages in the context, want %d", len(hms), len(ids))
	}
	for i, hm := range hms {
		if hm.TaskID != ids[i] {
			t.Errorf("HandleMessage %d is task %s, want %s (send order)", i, hm.TaskID, ids[i])
		}
		final, err := rec.WaitFor(ctx, func(c testharness.Call) bool {
			return c.Kind == testharness.KindSend && c.TurnID == hm.TurnID && c.Send().GetKind() == pb.SendKind_SEND_KIND_FINAL
		})
		if err != nil {
			t.Fatal(err)
		}
		if final.Send().GetTaskId() != hm.TaskID {
			t.Errorf("turn %s answered task %s, want %s", hm.TurnID, final.Send().GetTaskId(), hm.TaskID)
		}
		// The next message reached the host only after this turn's
		// answer: one turn at a time per context.
		if i+1 < len(hms) && !hms[i+1].Time.After(final.Time) {
			t.Errorf("message %d reached the host at %v, before turn %d answered at %v", i+1, hms[i+1].Time, i, final.Time)
		}
	}
}

// TestContextsRunInParallel proves structurally that two contexts are
// served at the same time: context A's turn waits for something only
// context B's turn does. If the plugin ran contexts one after the other,
// B's turn would never reach the host and both would time out.
func TestContextsRunInParallel(t *testing.T) {
	t.Parallel()
	h := startHost(t, nil, nil)
	ctx := within(t)
	c := newClient(h.url)
	key := newID("parallel")
	var wg sync.WaitGroup
	var a *task
	wg.Go(func() { a = c.sendTask(t, ctx, msg("wait-for "+key)) }) // blocking
	hmA := h.handleMessageWith(t, ctx, "wait-for "+key)
	b := c.sendTask(t, ctx, msg("release "+key)) // blocking, another context
	wg.Wait()
	if a == nil {
		t.Fatal("context A's send failed")
	}
	if a.Status.State != stCompleted || b.Status.State != stCompleted || a.answer() != "released "+key || a.ContextID == b.ContextID {
		t.Fatalf("A = %s %q in %s, B = %s in %s", a.Status.State, a.answer(), a.ContextID, b.Status.State, b.ContextID)
	}
	hmB := h.handleMessage(t, ctx, b.ID)
	pcA, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
		_, end := c.TurnEnd()
		return end && c.TurnID == hmA.TurnID
	})
	if err != nil {
		t.Fatal(err)
	}
	// B's turn started while A's turn was still running on the host.
	if !hmB.Time.After(hmA.Time) || !pcA.Time.After(hmB.Time) {
		t.Errorf("turns did not overlap: A started %v, B started %v, A ended %v", hmA.Time, hmB.Time, pcA.Time)
	}
}
