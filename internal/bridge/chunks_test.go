package bridge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// A model's output with credentials of several kinds, the way a host
// streams it. (E-mail addresses, whose local part a cut before the "@"
// lets through, are covered by security's StreamRedactor tests.)
const streamedOutput = "Sure. Use the key sk-proj-Ab3dE_fG7hIj-Kl9mNo2pQr5sTu8vWx1yZa4bCd6eFg0hIj with\n" +
	"Authorization: Bearer abc123def456 -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98Z0x\nq2lK7f0aB3c=\n-----END RSA PRIVATE KEY-----\n" +
	"and password=hunter2-horse until ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R expires."

// secretParts are pieces of streamedOutput's secrets that must not reach
// a peer, whole or split.
var secretParts = []string{"Ab3dE_fG7hIj", "abc123def456", "MIIEowIBAAKCAQEA7bq98Z0x", "q2lK7f0aB3c=", "hunter2", "1a2B3c4D5e6F7g8H9i0J"}

// artifactText joins the text parts of the artifact with id in events.
func artifactText(evs []a2a.StreamResponse, id string) string {
	var b strings.Builder
	for _, ev := range evs {
		if u := ev.ArtifactUpdate; u != nil && u.Artifact.ArtifactID == id {
			for _, p := range u.Artifact.Parts {
				if p.Text != nil {
					b.WriteString(*p.Text)
				}
			}
		}
	}
	return b.String()
}

func taskArtifactText(task *a2a.Task, id string) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		if a.ArtifactID == id {
			for _, p := range a.Parts {
				if p.Text != nil {
					b.WriteString(*p.Text)
				}
			}
		}
	}
	return b.String()
}

// TestSecretsSplitAcrossArtifactChunksAreRedacted: the host streams its
// output in chunks of a few bytes, as model output comes; secrets fall
// across chunk boundaries. Neither the stream a peer reads nor the
// artifact GetTask returns carries any of them, and both hold the whole
// output, redacted, in order — also when the stream ends without
// last_chunk, at the turn's end.
func TestSecretsSplitAcrossArtifactChunksAreRedacted(t *testing.T) {
	want, _ := security.Redact(streamedOutput)
	for _, size := range []int{1, 3, 7, 64} {
		for _, lastChunk := range []bool{true, false} {
			br, mgr, host := setup(t)
			// The peer streams (SendStreamingMessage).
			sub, err := mgr.Stream(context.Background(), tasks.SendParams{Caller: peer, Scope: peer.ID,
				Request: &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("stream it"))}})
			if err != nil {
				t.Fatal(err)
			}
			req := next(t, host)
			var evs []a2a.StreamResponse
			done := make(chan struct{})
			go func() {
				defer close(done)
				for ev := range sub.Events() {
					evs = append(evs, ev.Response)
				}
			}()
			for i := 0; i < len(streamedOutput); i += size {
				end := min(i+size, len(streamedOutput))
				art := &pb.Artifact{ArtifactId: "out", Name: "answer", Append: i > 0,
					LastChunk: lastChunk && end == len(streamedOutput),
					Parts:     []*pb.Part{{Content: &pb.Part_Text{Text: streamedOutput[i:end]}}}}
				if _, err := br.Send(context.Background(), mgr, &pb.SendRequest{TaskId: req.GetTaskId(), ChatId: req.GetChatId(), Kind: pb.SendKind_SEND_KIND_ARTIFACT, Artifact: art}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := br.Send(context.Background(), mgr, &pb.SendRequest{TaskId: req.GetTaskId(), ChatId: req.GetChatId(), Kind: pb.SendKind_SEND_KIND_FINAL, Text: "done"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the stream did not end")
			}
			task, err := mgr.Get(context.Background(), peer.ID, &a2a.GetTaskRequest{ID: req.GetTaskId()})
			if err != nil {
				t.Fatal(err)
			}
			streamed, stored := artifactText(evs, "out"), taskArtifactText(task, "out")
			for what, got := range map[string]string{"the stream": streamed, "the task's artifact": stored} {
				for _, p := range secretParts {
					if strings.Contains(got, p) {
						t.Errorf("chunks of %d bytes, last_chunk %v: %s carries %q: %q", size, lastChunk, what, p, got)
					}
				}
				if got != want {
					t.Errorf("chunks of %d bytes, last_chunk %v: %s holds\n %q\nwant\n %q", size, lastChunk, what, got, want)
				}
			}
			if first := firstArtifactEvent(evs, "out"); first == nil || first.Append || first.Artifact.Name != "answer" {
				t.Errorf("chunks of %d bytes: the first artifact event is %+v, want append=false with the artifact's name", size, first)
			}
		}
	}
}

func firstArtifactEvent(evs []a2a.StreamResponse, id string) *a2a.TaskArtifactUpdateEvent {
	for _, ev := range evs {
		if u := ev.ArtifactUpdate; u != nil && u.Artifact.ArtifactID == id {
			return u
		}
	}
	return nil
}

// TestWholeArtifactIsNotHeld: an artifact sent in one piece (last_chunk)
// reaches the task at once and whole, redacted.
func TestWholeArtifactIsNotHeld(t *testing.T) {
	br, mgr, host := setup(t)
	ch := send(mgr, a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hi")))
	req := next(t, host)
	art := &pb.Artifact{ArtifactId: "whole", LastChunk: true, Parts: []*pb.Part{{Content: &pb.Part_Text{Text: "report: all good, key sk-proj-Ab3dE_fG7hIj-Kl9mNo2pQr5sTu8vWx1yZa4bCd6eFg0hIj"}}}}
	if _, err := br.Send(context.Background(), mgr, &pb.SendRequest{TaskId: req.GetTaskId(), Kind: pb.SendKind_SEND_KIND_ARTIFACT, Artifact: art}); err != nil {
		t.Fatal(err)
	}
	_, _ = br.Send(context.Background(), mgr, &pb.SendRequest{TaskId: req.GetTaskId(), Kind: pb.SendKind_SEND_KIND_FINAL, Text: "done"})
	r := <-ch
	if got := taskArtifactText(r.Task, "whole"); got != "report: all good, key [REDACTED:openai_key]" {
		t.Errorf("the whole artifact reached the task as %q", got)
	}
	for _, a := range r.Task.Artifacts {
		if a.ArtifactID == "whole" && len(a.Parts) != 1 {
			t.Errorf("the whole artifact came in %d parts, want 1", len(a.Parts))
		}
	}
}
