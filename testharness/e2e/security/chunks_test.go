package security_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// modelOutput is what a host that streams model output sends in chunks of
// a few bytes: secrets of several kinds, a PEM key after an Authorization
// header on the same line.
const modelOutput = "Here you go. The key is " + secretKey + " and the token " + secretGitHub + ".\n" +
	"Authorization: Bearer abc123def456 -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98Z0x\nq2lK7f0aB3c=\n-----END RSA PRIVATE KEY-----\n" +
	"password=" + secretPassword + " — that is all."

// TestStreamedArtifactChunksAreRedacted: the host streams its answer as
// artifact chunks of about four bytes, so every secret falls across chunk
// boundaries. The real binary's SSE stream and the artifact GetTask
// returns both hold the whole answer redacted (exactly as the whole text
// would be), in order, and none of the secrets.
func TestStreamedArtifactChunksAreRedacted(t *testing.T) {
	t.Parallel()
	chunks := len(modelOutput) / 4
	h := startHost(t, hostOpts{agent: scenario(nil,
		testharness.ArtifactAction(testharness.ArtifactSpec{ID: "answer-stream", Name: "answer",
			Parts: []testharness.PartSpec{testharness.TextPart(modelOutput)}, Chunks: chunks}),
		testharness.Reply("done"))})
	c := newClient(h.Endpoint("a2a"), "")
	ctx := ctxFor(t, 40*time.Second)
	want, _ := security.Redact(modelOutput)
	secrets := append([]string{"MIIEowIBAAKCAQEA7bq98Z0x", "q2lK7f0aB3c=", "abc123def456"}, allSecrets...)

	_, events, err := c.stream(ctx, "SendStreamingMessage", sendParams(message("stream your answer")))
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	var taskID string
	for ev := range events {
		var r struct {
			Result struct {
				Task           *task `json:"task"`
				ArtifactUpdate *struct {
					TaskID   string `json:"taskId"`
					Artifact struct {
						ArtifactID string `json:"artifactId"`
						Parts      []struct {
							Text string `json:"text"`
						} `json:"parts"`
					} `json:"artifact"`
				} `json:"artifactUpdate"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(ev), &r); err != nil {
			t.Fatalf("event %s: %v", ev, err)
		}
		if u := r.Result.ArtifactUpdate; u != nil && u.Artifact.ArtifactID == "answer-stream" {
			taskID = u.TaskID
			for _, p := range u.Artifact.Parts {
				streamed.WriteString(p.Text)
			}
		}
	}
	if l := containsAny(streamed.String(), secrets...); len(l) > 0 {
		t.Errorf("the stream carries %q: %q", l, streamed.String())
	}
	if streamed.String() != want {
		t.Errorf("the stream's artifact is\n %q\nwant\n %q", streamed.String(), want)
	}
	if taskID == "" {
		t.Fatal("no artifact update in the stream")
	}
	// The host really sent it in pieces that cut the secrets.
	if n := len(h.Recorder().Sends(taskID)); n < chunks {
		t.Fatalf("the host sent %d pieces, want at least %d", n, chunks)
	}

	_, r := c.getTask(t, ctx, taskID)
	var got struct {
		Artifacts []struct {
			ArtifactID string `json:"artifactId"`
			Parts      []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"artifacts"`
	}
	if err := json.Unmarshal(r.Result, &got); err != nil {
		t.Fatal(err)
	}
	var stored strings.Builder
	for _, a := range got.Artifacts {
		if a.ArtifactID == "answer-stream" {
			for _, p := range a.Parts {
				stored.WriteString(p.Text)
			}
		}
	}
	if l := containsAny(stored.String(), secrets...); len(l) > 0 {
		t.Errorf("GetTask's artifact carries %q: %q", l, stored.String())
	}
	if stored.String() != want {
		t.Errorf("GetTask's artifact is\n %q\nwant\n %q", stored.String(), want)
	}
}
