package testharness

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func TestRuleMatching(t *testing.T) {
	md, err := structpb.NewStruct(map[string]any{
		"lang":     "en",
		"customer": map[string]any{"tier": "gold", "id": 42},
		"flags":    []any{"a", "b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := &pb.HandleMessageRequest{
		Platform: "a2a", ChatId: "ctx-1", TaskId: "task-1", MessageId: "msg-77",
		Text: "[framed]\nHello there, agent",
		Parts: []*pb.Part{
			{Content: &pb.Part_Text{Text: "Hello there,"}},
			{Content: &pb.Part_Url{Url: "https://example.com/x.png"}},
			{Content: &pb.Part_Text{Text: "agent"}},
		},
		Sender:       &pb.Sender{Id: "peer:alice", DisplayName: "Alice"},
		TrustTier:    pb.TrustTier_TRUST_TIER_TRUSTED,
		Continuation: true,
		Metadata:     md,
	}
	tests := []struct {
		field string
		op    MatchOp
		value string
		want  bool
	}{
		// text is the sender's own words (the text parts), not the frame.
		{"text", OpEquals, "Hello there,\nagent", true},
		{"text", OpEquals, "[framed]\nHello there, agent", false},
		{"text", OpPrefix, "Hello", true},
		{"text", OpPrefix, "[framed]", false},
		{"text", OpContains, "there", true},
		{"text", OpContains, "nowhere", false},
		{"text", OpRegexp, `(?m)^Hello\s+\w+,`, true},
		{"text", OpRegexp, `(?i)HELLO`, true},
		{"text", OpRegexp, `^agent`, false},
		{"framed_text", OpEquals, "[framed]\nHello there, agent", true},
		{"framed_text", OpPrefix, "[framed]", true},
		{"framed_text", OpPrefix, "Hello", false},
		{"parts_text", OpEquals, "Hello there,\nagent", true},
		{"parts_text", OpPrefix, "Hello", true},
		{"parts_text", OpContains, "x.png", false},
		{"message_id", OpPrefix, "msg-", true},
		{"message_id", OpEquals, "msg-78", false},
		{"sender", OpEquals, "peer:alice", true},
		{"sender", OpPrefix, "ip:", false},
		{"sender_name", OpEquals, "Alice", true},
		{"trust_tier", OpEquals, "trusted", true},
		{"trust_tier", OpEquals, "TRUST_TIER_TRUSTED", true},
		{"trust_tier", OpEquals, "public", false},
		{"trust_tier", OpRegexp, "^(trusted|local)$", true},
		{"continuation", OpEquals, "true", true},
		{"continuation", OpEquals, "false", false},
		{"unattended", OpEquals, "false", true},
		{"chat_id", OpEquals, "ctx-1", true},
		{"task_id", OpContains, "task", true},
		{"platform", OpEquals, "a2a", true},
		{"metadata.lang", OpEquals, "en", true},
		{"metadata.lang", OpEquals, "fr", false},
		{"metadata.customer.tier", OpPrefix, "go", true},
		{"metadata.customer.id", OpEquals, "42", true},
		{"metadata.flags", OpContains, `"b"`, true},
		{"metadata.missing", OpRegexp, ".*", false},
		{"metadata.customer.tier.deeper", OpRegexp, ".*", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.op)+"/"+tt.field+"/"+tt.value, func(t *testing.T) {
			r := Rule{Match: []Condition{Match(tt.field, tt.op, tt.value)}, Actions: []Action{Reply("x")}}
			if errs := r.validate("rule"); len(errs) > 0 {
				t.Fatal(errs)
			}
			if got := r.Matches(req); got != tt.want {
				t.Fatalf("Matches = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestRuleConditionsMustAllHold(t *testing.T) {
	req := &pb.HandleMessageRequest{ChatId: "c", Text: "book a table", Sender: &pb.Sender{Id: "peer:bob"}}
	r := Rule{Match: []Condition{Match("text", OpPrefix, "book"), Match("sender", OpEquals, "peer:alice")}}
	if r.Matches(req) {
		t.Fatal("matched although the sender differs")
	}
	r.Match[1].Value = "peer:bob"
	if !r.Matches(req) {
		t.Fatal("did not match although both conditions hold")
	}
	if !(&Rule{}).Matches(req) {
		t.Fatal("a rule without conditions must match everything")
	}
}

func TestFirstMatchingRuleWinsElseDefault(t *testing.T) {
	s := &Scenario{
		Rules: []Rule{
			{Name: "a", Match: []Condition{Match("text", OpContains, "x")}, Actions: []Action{Reply("a")}},
			{Name: "b", Match: []Condition{Match("text", OpContains, "xy")}, Actions: []Action{Reply("b")}},
		},
		Default: &Rule{Name: "d", Actions: []Action{Reply("d")}},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{"xyz": "a", "y": "d"} {
		if got := s.Select(&pb.HandleMessageRequest{Text: text}).Name; got != want {
			t.Errorf("Select(%q) = %q, want %q", text, got, want)
		}
	}
	s.Default = nil
	if s.Select(&pb.HandleMessageRequest{Text: "y"}) != nil {
		t.Error("Select without default should be nil")
	}
}
