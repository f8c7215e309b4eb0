package testharness

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func TestCommandAgentRepliesWithStdout(t *testing.T) {
	cmd := `printf '%s|%s|%s|%s|' "$AGENT_CHAT_ID" "$AGENT_TASK_ID" "$AGENT_SENDER" "$AGENT_TURN"; tr a-z A-Z; echo`
	a, p := newTestAgent(t, NewCommandBehavior(cmd), AgentOptions{})
	handle(t, a, msg("chat-1", "t1", "hello world"))
	pc := waitDone(t, a, "t1")
	if pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("outcome %s %q", pc.GetOutcome(), pc.GetError())
	}
	s := p.sent("t1")
	if len(s) != 1 || s[0].GetKind() != pb.SendKind_SEND_KIND_FINAL || s[0].GetText() != "chat-1|t1|peer:alice|1|HELLO WORLD" {
		t.Fatalf("sends = %v", s)
	}
}

func TestCommandAgentFailureCarriesStderrTail(t *testing.T) {
	b := NewCommandBehavior(`echo partial; printf 'x%.0s' $(seq 1 100) >&2; echo ' disk full' >&2; exit 3`)
	b.StderrTail = 20
	a, p := newTestAgent(t, b, AgentOptions{})
	handle(t, a, msg("c", "t1", ""))
	pc := waitDone(t, a, "t1")
	if pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE {
		t.Fatalf("outcome %s", pc.GetOutcome())
	}
	if !strings.HasPrefix(pc.GetError(), "command exited with status 3: …") || !strings.HasSuffix(pc.GetError(), "xxx disk full") {
		t.Fatalf("error = %q", pc.GetError())
	}
	if len(pc.GetError()) > 80 {
		t.Fatalf("stderr not cut to its tail: %q", pc.GetError())
	}
	if len(p.sent("t1")) != 0 {
		t.Fatal("a failed command still replied")
	}
}

func TestCommandAgentCancelKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The shell starts a grandchild and waits; cancelling must kill both.
	cmd := `sleep 60 & echo $! > ` + pidFile + `; wait`
	a, _ := newTestAgent(t, NewCommandBehavior(cmd), AgentOptions{})
	handle(t, a, msg("c", "t1", ""))
	var pid int
	deadline := time.Now().Add(15 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the command did not start")
	}
	resp, err := a.CancelTurn(context.Background(), &pb.CancelTurnRequest{ChatId: "c", TaskId: "t1"})
	if err != nil || !resp.GetCancelled() {
		t.Fatalf("CancelTurn = %v %v", resp, err)
	}
	if got := waitDone(t, a, "t1").GetOutcome(); got != pb.Outcome_OUTCOME_CANCELLED {
		t.Fatalf("outcome = %s", got)
	}
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("grandchild %d still alive after cancel", pid)
}

func TestCommandAgentTimeoutFails(t *testing.T) {
	b := NewCommandBehavior("sleep 10")
	b.Timeout = 100 * time.Millisecond
	a, _ := newTestAgent(t, b, AgentOptions{})
	handle(t, a, msg("c", "t1", ""))
	pc := waitDone(t, a, "t1")
	if pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE || !strings.Contains(pc.GetError(), "timed out after 100ms") {
		t.Fatalf("got %v", pc)
	}
}

func TestCommandAgentNeedsACommand(t *testing.T) {
	if _, err := NewAgent(NewCommandBehavior("  "), AgentOptions{}); err == nil {
		t.Fatal("empty command accepted")
	}
}

// The command reads the sender's own words, not the frame the A2A plugin
// puts around an untrusted sender's text; the frame, the sender and its
// tier are in the environment.
func TestCommandAgentReadsTheSendersWordsNotTheFrame(t *testing.T) {
	cmd := `wc -w | tr -d ' '; printf '%s|%s|%s|%s|' "$AGENT_SENDER" "$AGENT_TRUST_TIER" "$AGENT_CONTINUATION" "$AGENT_UNATTENDED"; printf '%s' "$AGENT_FRAMED_TEXT" | head -c 20`
	a, p := newTestAgent(t, NewCommandBehavior(cmd), AgentOptions{})
	req := msg("c", "t1", "[A2A UNTRUSTED INPUT BEGIN from local:127.0.0.1]\none two three\n[A2A UNTRUSTED INPUT END]")
	req.Parts = []*pb.Part{{Content: &pb.Part_Text{Text: "one two three"}}}
	req.TrustTier = pb.TrustTier_TRUST_TIER_PUBLIC
	req.Unattended = true
	handle(t, a, req)
	if pc := waitDone(t, a, "t1"); pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("outcome %s %q", pc.GetOutcome(), pc.GetError())
	}
	s := p.sent("t1")
	if want := "3\npeer:alice|public|false|true|[A2A UNTRUSTED INPUT"; len(s) != 1 || s[0].GetText() != want {
		t.Fatalf("sends = %v, want the text %q", s, want)
	}
}

func TestCommandEnvCutsAHugeFramedText(t *testing.T) {
	req := msg("c", "t1", strings.Repeat("é", MaxFramedTextEnv))
	env := CommandEnv(req, 1)
	var framed string
	cut := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AGENT_FRAMED_TEXT="); ok {
			framed = v
		}
		cut = cut || kv == "AGENT_FRAMED_TEXT_TRUNCATED=true"
	}
	if !cut || len(framed) > MaxFramedTextEnv || !strings.HasPrefix(framed, "éé") || strings.HasSuffix(framed, "\xc3") {
		t.Fatalf("framed text of %d bytes, cut=%v", len(framed), cut)
	}
}
