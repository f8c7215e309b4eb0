package testharness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func TestWaitForFindsPastAndFutureCalls(t *testing.T) {
	r := NewRecorder()
	r.Record(Call{Kind: KindSend, Request: &pb.SendRequest{TaskId: "t1", Text: "early"}})
	c, err := r.WaitFor(testCtx(t), func(c Call) bool { return c.Send().GetText() == "early" })
	if err != nil || c.Seq != 1 || c.TaskID != "t1" {
		t.Fatalf("past call: %v %v", c, err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		r.Record(Call{Kind: KindProcessingComplete, Request: &pb.ProcessingCompleteRequest{TaskId: "t1", Outcome: pb.Outcome_OUTCOME_SUCCESS}})
	}()
	pc, err := r.WaitForCompletion(testCtx(t), "t1")
	if err != nil || pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("future call: %v %v", pc, err)
	}
}

func TestWaitForTimesOutListingWhatWasRecorded(t *testing.T) {
	r := NewRecorder()
	r.Record(Call{Kind: KindSend, Request: &pb.SendRequest{TaskId: "t9", Kind: pb.SendKind_SEND_KIND_FINAL, Text: "hi"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := r.WaitFor(ctx, func(c Call) bool { return c.Kind == KindCancelTurn })
	if err == nil || !strings.Contains(err.Error(), `#1 Send chat= task=t9 SEND_KIND_FINAL "hi"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestWaitForNWaitsForEveryMatch(t *testing.T) {
	r := NewRecorder()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Record(Call{Kind: KindSend, Request: &pb.SendRequest{TaskId: fmt.Sprint(i % 2)}})
		}()
	}
	calls, err := r.WaitForN(testCtx(t), 10, func(c Call) bool { return c.TaskID == "1" })
	if err != nil || len(calls) != 10 {
		t.Fatalf("%d calls, %v", len(calls), err)
	}
	wg.Wait()
	if n := len(r.Sends("0")); n != 10 {
		t.Fatalf("Sends(0) = %d", n)
	}
	if n := len(r.Sends("")); n != 20 {
		t.Fatalf("Sends() = %d", n)
	}
	for i, c := range r.Calls() {
		if c.Seq != i+1 {
			t.Fatalf("seq %d at %d", c.Seq, i)
		}
	}
}

func TestBoundedRecorderKeepsTheLastCalls(t *testing.T) {
	r := NewBoundedRecorder(3)
	for i := range 10 {
		r.Record(Call{Kind: KindSend, Request: &pb.SendRequest{TaskId: fmt.Sprint(i)}})
	}
	var seqs []int
	for _, c := range r.Calls() {
		seqs = append(seqs, c.Seq)
	}
	if fmt.Sprint(seqs) != "[8 9 10]" {
		t.Fatalf("kept %v", seqs)
	}
	if n := len(r.Sends("")); n != 3 {
		t.Fatalf("Sends() = %d", n)
	}
	// WaitFor sees what is kept and what comes, not what was dropped.
	if c, err := r.WaitFor(testCtx(t), func(c Call) bool { return c.TaskID == "7" }); err != nil || c.Seq != 8 {
		t.Fatalf("kept call: %v %v", c, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.WaitFor(ctx, func(c Call) bool { return c.TaskID == "0" }); err == nil {
		t.Fatal("found a dropped call")
	}
	go r.Record(Call{Kind: KindSend, Request: &pb.SendRequest{TaskId: "new"}})
	if c, err := r.WaitFor(testCtx(t), func(c Call) bool { return c.TaskID == "new" }); err != nil || c.Seq != 11 {
		t.Fatalf("new call: %v %v", c, err)
	}
	r.Reset()
	if c := r.Record(Call{Kind: KindSend}); c.Seq != 12 || len(r.Calls()) != 1 {
		t.Fatalf("after Reset: %v, %d kept", c, len(r.Calls()))
	}
}

func TestCountingRecorderKeepsNothingButTheCount(t *testing.T) {
	r := NewCountingRecorder()
	for i := range 5 {
		if c := r.Record(Call{Kind: KindSend, Request: &pb.SendRequest{TaskId: fmt.Sprint(i)}}); c.Seq != i+1 {
			t.Fatalf("call %d got seq %d", i, c.Seq)
		}
	}
	if n := len(r.Calls()); n != 0 {
		t.Fatalf("kept %d calls, want none", n)
	}
	r.Reset()
	if c := r.Record(Call{Kind: KindSend}); c.Seq != 6 || len(r.Calls()) != 0 {
		t.Fatalf("after Reset: seq %d, %d kept; want 6, none", c.Seq, len(r.Calls()))
	}
}

func TestRecorderKeepsACopyOfTheRequest(t *testing.T) {
	r := NewRecorder()
	req := &pb.SendRequest{Text: "before"}
	r.Record(Call{Kind: KindSend, Request: req})
	req.Text = "after"
	if got := r.Sends("")[0].GetText(); got != "before" {
		t.Fatalf("recorded %q", got)
	}
}

func TestRecorderRecordsBothDirectionsWithTimestamps(t *testing.T) {
	a, _ := newTestAgent(t, EchoScenario(), AgentOptions{})
	before := time.Now()
	handle(t, a, msg("c", "t1", "x"))
	waitDone(t, a, "t1")
	calls := a.Recorder().Calls()
	var kinds []string
	for _, c := range calls {
		kinds = append(kinds, fmt.Sprintf("%s/%t", c.Kind, c.Inbound()))
		if c.Time.Before(before) || c.Err != nil || c.Response == nil {
			t.Errorf("bad call %v (time %v)", c, c.Time)
		}
	}
	if fmt.Sprint(kinds) != "[HandleMessage/true Send/false ProcessingComplete/false]" {
		t.Fatalf("kinds = %v", kinds)
	}
	if calls[0].HandleMessage().GetText() != "x" || calls[0].Response.(*pb.HandleMessageResponse).GetTurnId() == "" {
		t.Fatalf("HandleMessage call = %v", calls[0])
	}
	a.Recorder().Reset()
	if len(a.Recorder().Calls()) != 0 {
		t.Fatal("Reset kept calls")
	}
}

func TestWaitForTurnTellsTurnsOfOneTaskApart(t *testing.T) {
	s := &Scenario{
		Rules:   []Rule{{Match: []Condition{Match("continuation", OpEquals, "true")}, Actions: []Action{Reply("booked for {{text}}")}}},
		Default: &Rule{Actions: []Action{Ask("which day?")}},
	}
	a, p := newTestAgent(t, s, AgentOptions{})
	first := handle(t, a, msg("c", "task-1", "book a table"))
	answer := msg("c", "task-1", "friday")
	answer.Continuation = true
	second := handle(t, a, answer)
	rec := a.Recorder()
	if _, err := rec.WaitForTurn(testCtx(t), second); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.WaitForTurn(testCtx(t), first); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first, second} {
		var kinds []string
		for _, c := range rec.Filter(func(c Call) bool { return c.TurnID == id }) {
			kinds = append(kinds, string(c.Kind))
		}
		if fmt.Sprint(kinds) != "[HandleMessage Send ProcessingComplete]" {
			t.Fatalf("calls of %s = %v", id, kinds)
		}
	}
	if got := kindsAndTexts(p.sent("task-1")); fmt.Sprint(got) != fmt.Sprint([]sent{
		{pb.SendKind_SEND_KIND_INPUT_REQUIRED, "which day?"}, {pb.SendKind_SEND_KIND_FINAL, "booked for friday"},
	}) {
		t.Fatalf("sends = %v", got)
	}
}
