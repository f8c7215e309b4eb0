package docs_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDemoScenarioRulesEachFireOnce runs make run's agent with the demo
// scenario through the real binaries (agenthost, the A2A plugin) and sends
// one message per rule of testharness/testdata/demo.yaml: every rule fires
// exactly once, on the sender's own words (the plugin frames them for a
// model, which must not stop the rules from matching), and the delegating
// rule reaches the peer with a2a_call's agent argument.
func TestDemoScenarioRulesEachFireOnce(t *testing.T) {
	t.Parallel()
	b := build(t)
	peer := b.startHost(t, "echo")
	demo := b.startHost(t, "scenario:testharness/testdata/demo.yaml", "RUN_PEER="+peer.url, "A2A_PEER_TOKENS=alice:tok-alice")

	// greeting: text prefix "hello".
	r := task(t, demo.send(t, "hello there", nil, nil, ""))
	if state(r) != "TASK_STATE_COMPLETED" || !strings.HasPrefix(statusText(r), "hi local:127.0.0.1, this is message 1 of ") {
		t.Fatalf("greeting: %s %q", state(r), statusText(r))
	}
	// report: text contains "report", from the local tier.
	r = task(t, demo.send(t, "the report, please", nil, nil, ""))
	if state(r) != "TASK_STATE_COMPLETED" || statusText(r) != "report ready" || !strings.Contains(allText(r), "report.md") {
		t.Fatalf("report: %s %q", state(r), statusText(r))
	}
	// question, then answer: the continuation of the same task.
	r = task(t, demo.send(t, "book a table", nil, nil, ""))
	if state(r) != "TASK_STATE_INPUT_REQUIRED" || statusText(r) != "Which day?" {
		t.Fatalf("question: %s %q", state(r), statusText(r))
	}
	r = task(t, demo.send(t, "friday", map[string]any{"taskId": r["id"], "contextId": r["contextId"]}, nil, ""))
	if state(r) != "TASK_STATE_COMPLETED" || statusText(r) != "booked for friday" {
		t.Fatalf("answer: %s %q", state(r), statusText(r))
	}
	// vip: metadata customer.tier gold from peer:alice — a direct reply.
	m := demo.send(t, "anything", map[string]any{"metadata": map[string]any{"customer": map[string]any{"tier": "gold"}}}, nil, "tok-alice")
	if msg, ok := m["message"].(map[string]any); !ok || partsText(msg) != "right away" {
		t.Fatalf("vip: %v", m)
	}
	// slow: progress, then a wait that a cancel ends.
	r = task(t, demo.send(t, "slow", nil, map[string]any{"returnImmediately": true}, ""))
	id := r["id"]
	deadline := time.Now().Add(time.Minute)
	for statusText(r) != "started" {
		if time.Now().After(deadline) {
			t.Fatalf("slow: no progress: %v", r)
		}
		time.Sleep(20 * time.Millisecond)
		r = task(t, demo.rpc(t, "GetTask", map[string]any{"id": id}, ""))
	}
	if r = task(t, demo.rpc(t, "CancelTask", map[string]any{"id": id}, "")); state(r) != "TASK_STATE_CANCELED" {
		t.Fatalf("slow: cancel gave %s", state(r))
	}
	// login: an authentication request.
	if r = task(t, demo.send(t, "login", nil, nil, "")); state(r) != "TASK_STATE_AUTH_REQUIRED" {
		t.Fatalf("login: %s", state(r))
	}
	// broken: the turn fails with the scenario's error.
	if r = task(t, demo.send(t, "break it", nil, nil, "")); state(r) != "TASK_STATE_FAILED" || !strings.Contains(statusText(r), "the tool exploded on break it") {
		t.Fatalf("broken: %s %q", state(r), statusText(r))
	}
	// refuse: a message id starting with spam-.
	if r = task(t, demo.send(t, "buy now", map[string]any{"messageId": "spam-1"}, nil, "")); state(r) != "TASK_STATE_REJECTED" {
		t.Fatalf("refuse: %s", state(r))
	}
	// delegate: a2a_call {agent: peer} to the echo agent.
	r = task(t, demo.send(t, "ask peer: how are you?", nil, nil, ""))
	if state(r) != "TASK_STATE_COMPLETED" || !strings.HasPrefix(statusText(r), "peer says: ") ||
		!strings.Contains(statusText(r), "hello from local:127.0.0.1: ask peer: how are you?") {
		t.Fatalf("delegate: %s %q", state(r), statusText(r))
	}
	// default: echo with a prefix.
	if r = task(t, demo.send(t, "something else", nil, nil, "")); statusText(r) != "echo: something else" {
		t.Fatalf("default: %q", statusText(r))
	}

	log := demo.stderr.String()
	for _, rule := range []string{"greeting", "report", "question", "answer", "vip", "slow", "login", "broken", "refuse", "delegate"} {
		if n := strings.Count(log, fmt.Sprintf("rule %q", rule)); n != 1 {
			t.Errorf("rule %q fired %d times, want once", rule, n)
		}
	}
	if t.Failed() {
		t.Log(log)
	}
}

// TestCommandAgentReceivesExactlyTheSendersWords: a command agent behind
// the real plugin reads the sender's words on stdin — not the frame the
// plugin puts around an untrusted sender's text — and finds the sender,
// its trust tier and the framed text in AGENT_* variables.
func TestCommandAgentReceivesExactlyTheSendersWords(t *testing.T) {
	t.Parallel()
	b := build(t)
	wc := b.startHost(t, "command:wc -w")
	if r := task(t, wc.send(t, "one two three", nil, nil, "")); statusText(r) != "3" {
		t.Fatalf("wc -w of \"one two three\" answered %q", statusText(r))
	}

	words := "Line one, with 'quotes' and $HOME\nline two: \"ünïcode\" ✓"
	cat := b.startHost(t, `command:cat; printf '\n--\n%s|%s|%s\n' "$AGENT_SENDER" "$AGENT_TRUST_TIER" "$AGENT_CONTINUATION"; printf '%s' "$AGENT_FRAMED_TEXT"`)
	r := task(t, cat.send(t, words, nil, nil, ""))
	got := statusText(r)
	stdin, rest, ok := strings.Cut(got, "\n--\n")
	if !ok || stdin != words {
		b, _ := json.Marshal(got)
		t.Fatalf("the command read %s, want exactly the sender's words", b)
	}
	env, framed, _ := strings.Cut(rest, "\n")
	if env != "local:127.0.0.1|local|false" {
		t.Fatalf("AGENT_SENDER|AGENT_TRUST_TIER|AGENT_CONTINUATION = %q", env)
	}
	if !strings.HasPrefix(framed, "[A2A UNTRUSTED INPUT BEGIN from local:127.0.0.1]") || !strings.Contains(framed, "line two") {
		t.Fatalf("AGENT_FRAMED_TEXT = %q", framed)
	}
}
