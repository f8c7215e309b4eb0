package testharness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// fakePlatform records what the agent sends it.
type fakePlatform struct {
	mu        sync.Mutex
	sends     []*pb.SendRequest
	completes []*pb.ProcessingCompleteRequest
	failSend  error
}

var _ plugin.Platform = (*fakePlatform)(nil)

func (f *fakePlatform) Connect(context.Context, *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	return &pb.ConnectResponse{}, nil
}

func (f *fakePlatform) Disconnect(context.Context, *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	return &pb.DisconnectResponse{}, nil
}

func (f *fakePlatform) Send(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failSend != nil {
		return nil, f.failSend
	}
	f.sends = append(f.sends, req)
	return &pb.SendResponse{MessageId: fmt.Sprintf("m%d", len(f.sends))}, nil
}

func (f *fakePlatform) ProcessingComplete(_ context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completes = append(f.completes, req)
	return &pb.ProcessingCompleteResponse{}, nil
}

func (f *fakePlatform) sent(taskID string) []*pb.SendRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*pb.SendRequest
	for _, s := range f.sends {
		if s.GetTaskId() == taskID {
			out = append(out, s)
		}
	}
	return out
}

func newTestAgent(t *testing.T, b Behavior, opts AgentOptions) (*Agent, *fakePlatform) {
	t.Helper()
	opts.Logger = t
	a, err := NewAgent(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePlatform{}
	a.Attach(p)
	t.Cleanup(a.Close)
	return a, p
}

func scenario(t *testing.T, rules []Rule, def ...Action) *Scenario {
	t.Helper()
	s := &Scenario{Name: t.Name(), Rules: rules}
	if len(def) > 0 {
		s.Default = &Rule{Actions: def}
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func msg(chat, task, text string) *pb.HandleMessageRequest {
	return &pb.HandleMessageRequest{
		Platform: "test", ChatId: chat, TaskId: task, Text: text,
		MessageId: "msg-" + task, Sender: &pb.Sender{Id: "peer:alice"},
		TrustTier: pb.TrustTier_TRUST_TIER_TRUSTED,
	}
}

func handle(t *testing.T, a *Agent, req *pb.HandleMessageRequest) string {
	t.Helper()
	resp, err := a.HandleMessage(context.Background(), req)
	if err != nil {
		t.Fatalf("HandleMessage: %v", err)
	}
	return resp.GetTurnId()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func waitDone(t *testing.T, a *Agent, taskID string) *pb.ProcessingCompleteRequest {
	t.Helper()
	pc, err := a.Recorder().WaitForCompletion(testCtx(t), taskID)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

type sent struct {
	kind pb.SendKind
	text string
}

func kindsAndTexts(sends []*pb.SendRequest) []sent {
	out := make([]sent, len(sends))
	for i, s := range sends {
		out[i] = sent{s.GetKind(), s.GetText()}
	}
	return out
}

func TestEachActionSendsWhatItSays(t *testing.T) {
	const (
		final = pb.SendKind_SEND_KIND_FINAL
		prog  = pb.SendKind_SEND_KIND_PROGRESS
	)
	tests := []struct {
		name    string
		actions []Action
		sends   []sent
		outcome pb.Outcome
		errText string
	}{
		{"reply", []Action{Reply("hi")}, []sent{{final, "hi"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"progress then reply", []Action{Progress("p1"), Progress("p2"), Reply("r")},
			[]sent{{prog, "p1"}, {prog, "p2"}, {final, "r"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"ask", []Action{Ask("which day?")}, []sent{{pb.SendKind_SEND_KIND_INPUT_REQUIRED, "which day?"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"auth", []Action{Auth("log in")}, []sent{{pb.SendKind_SEND_KIND_AUTH_REQUIRED, "log in"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"direct", []Action{Direct("ok")}, []sent{{pb.SendKind_SEND_KIND_DIRECT_REPLY, "ok"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"echo", []Action{Echo("")}, []sent{{final, "ping"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"echo with prefix", []Action{Echo("you said: ")}, []sent{{final, "you said: ping"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"fail stops the script", []Action{Progress("a"), Fail("boom {{text}}"), Reply("never")},
			[]sent{{prog, "a"}}, pb.Outcome_OUTCOME_FAILURE, "boom ping"},
		{"reject", []Action{Reject("no thanks")}, nil, pb.Outcome_OUTCOME_REJECTED, "no thanks"},
		{"short wait then reply", []Action{Wait(10 * time.Millisecond), Reply("late")}, []sent{{final, "late"}}, pb.Outcome_OUTCOME_SUCCESS, ""},
		{"nothing to do still completes", nil, nil, pb.Outcome_OUTCOME_SUCCESS, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, p := newTestAgent(t, scenario(t, nil, append([]Action{}, tt.actions...)...), AgentOptions{})
			if tt.actions == nil {
				a.behavior = &Scenario{Default: &Rule{}}
			}
			handle(t, a, msg("c1", "t1", "ping"))
			pc := waitDone(t, a, "t1")
			if pc.GetOutcome() != tt.outcome || pc.GetError() != tt.errText {
				t.Fatalf("ProcessingComplete = %s %q, want %s %q", pc.GetOutcome(), pc.GetError(), tt.outcome, tt.errText)
			}
			got := kindsAndTexts(p.sent("t1"))
			if fmt.Sprint(got) != fmt.Sprint(tt.sends) {
				t.Fatalf("sends = %v, want %v", got, tt.sends)
			}
			for _, s := range p.sent("t1") {
				if s.GetPlatform() != "test" || s.GetChatId() != "c1" {
					t.Fatalf("send not addressed to the message's platform/chat: %v", s)
				}
			}
			if n := len(a.Recorder().Completions("t1")); n != 1 {
				t.Fatalf("%d ProcessingComplete calls, want exactly 1", n)
			}
		})
	}
}

func TestDropEndsTurnWithoutProcessingComplete(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil, Reply("x"), Drop(), Reply("never")), AgentOptions{})
	handle(t, a, msg("c", "t1", "hi"))
	if err := a.WaitIdle(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if len(a.Recorder().Completions("")) != 0 || len(p.sent("t1")) != 1 {
		t.Fatalf("completions=%v sends=%v", a.Recorder().Completions(""), p.sent("t1"))
	}
}

func TestTemplatesSubstituteMessageFields(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil,
		Reply("text={{text}} task={{task_id}} chat={{chat_id}} sender={{sender}} turn={{turn}} "+
			"msg={{message_id}} platform={{platform}} lang={{ metadata.lang }} missing={{metadata.nope}}")), AgentOptions{})
	m1 := msg("chatA", "t1", "first")
	m1.Metadata, _ = structpb.NewStruct(map[string]any{"lang": "en"})
	handle(t, a, m1)
	handle(t, a, msg("chatB", "t2", "other chat"))
	handle(t, a, msg("chatA", "t3", "second"))
	for _, id := range []string{"t1", "t2", "t3"} {
		waitDone(t, a, id)
	}
	want := map[string]string{
		"t1": "text=first task=t1 chat=chatA sender=peer:alice turn=1 msg=msg-t1 platform=test lang=en missing={{metadata.nope}}",
		"t2": "text=other chat task=t2 chat=chatB sender=peer:alice turn=1 msg=msg-t2 platform=test lang={{ metadata.lang }} missing={{metadata.nope}}",
		"t3": "text=second task=t3 chat=chatA sender=peer:alice turn=2 msg=msg-t3 platform=test lang={{ metadata.lang }} missing={{metadata.nope}}",
	}
	for id, w := range want {
		if got := p.sent(id)[0].GetText(); got != w {
			t.Errorf("%s: got  %q\nwant %q", id, got, w)
		}
	}
}

func TestPartsTextTemplateIsTheSendersOwnWords(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil, Reply("<{{parts_text}}>")), AgentOptions{})
	m := msg("c", "t1", "[untrusted]\nhi")
	m.Parts = []*pb.Part{{Content: &pb.Part_Text{Text: "hi"}}, {Content: &pb.Part_Raw{Raw: []byte{1}}}, {Content: &pb.Part_Text{Text: "there"}}}
	handle(t, a, m)
	waitDone(t, a, "t1")
	if got := p.sent("t1")[0].GetText(); got != "<hi\nthere>" {
		t.Fatalf("got %q", got)
	}
}

func TestTemplatesAreNotExpandedInsideSubstitutedText(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil, Reply("[{{text}}]")), AgentOptions{})
	handle(t, a, msg("c", "t1", "{{task_id}}"))
	waitDone(t, a, "t1")
	if got := p.sent("t1")[0].GetText(); got != "[{{task_id}}]" {
		t.Fatalf("got %q", got)
	}
}

func TestArtifactChunksCarryAppendAndLastChunk(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil,
		ArtifactAction(ArtifactSpec{ID: "rep-{{task_id}}", Name: "report", Chunks: 3,
			Parts: []PartSpec{{Kind: PartText, Text: "abcdefgh", MediaType: "text/markdown"}}}),
		ArtifactAction(ArtifactSpec{Name: "whole", Parts: []PartSpec{TextPart("w")}}),
		Reply("done")), AgentOptions{})
	handle(t, a, msg("c", "t1", "x"))
	waitDone(t, a, "t1")
	sends := p.sent("t1")
	if len(sends) != 5 {
		t.Fatalf("got %d sends, want 5: %v", len(sends), sends)
	}
	type chunk struct {
		id, text     string
		append, last bool
	}
	want := []chunk{
		{"rep-t1", "abc", false, false},
		{"rep-t1", "def", true, false},
		{"rep-t1", "gh", true, true},
		{"artifact-2", "w", false, true},
	}
	for i, w := range want {
		s := sends[i]
		ar := s.GetArtifact()
		got := chunk{ar.GetArtifactId(), ar.GetParts()[0].GetText(), ar.GetAppend(), ar.GetLastChunk()}
		if s.GetKind() != pb.SendKind_SEND_KIND_ARTIFACT || got != w {
			t.Errorf("send %d = %s %+v, want ARTIFACT %+v", i, s.GetKind(), got, w)
		}
	}
	if mt := sends[0].GetArtifact().GetParts()[0].GetMediaType(); mt != "text/markdown" {
		t.Errorf("chunk media type = %q", mt)
	}
	if sends[0].GetArtifact().GetName() != "report" {
		t.Errorf("artifact name = %q", sends[0].GetArtifact().GetName())
	}
	if sends[4].GetKind() != pb.SendKind_SEND_KIND_FINAL {
		t.Errorf("last send = %s", sends[4].GetKind())
	}
}

func TestArtifactPartsOfEveryKind(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil, ArtifactAction(ArtifactSpec{ID: "x", Parts: []PartSpec{
		TextPart("hello {{sender}}"),
		FilePart([]byte{0, 1, 2}, "application/octet-stream", "bin.dat"),
		URLPart("https://example.com/{{task_id}}.png", "image/png", "pic.png"),
		DataPart(map[string]any{"n": 1, "list": []string{"a"}}),
	}})), AgentOptions{})
	handle(t, a, msg("c", "t1", "x"))
	waitDone(t, a, "t1")
	parts := p.sent("t1")[0].GetArtifact().GetParts()
	if parts[0].GetText() != "hello peer:alice" {
		t.Errorf("text part = %v", parts[0])
	}
	if string(parts[1].GetRaw()) != "\x00\x01\x02" || parts[1].GetFilename() != "bin.dat" || parts[1].GetMediaType() != "application/octet-stream" {
		t.Errorf("raw part = %v", parts[1])
	}
	if parts[2].GetUrl() != "https://example.com/t1.png" || parts[2].GetMediaType() != "image/png" {
		t.Errorf("url part = %v", parts[2])
	}
	d := parts[3].GetData().GetStructValue().AsMap()
	if d["n"] != 1.0 || fmt.Sprint(d["list"]) != "[a]" {
		t.Errorf("data part = %v", d)
	}
}

func TestReplyCarriesPartsAndMetadata(t *testing.T) {
	r := Reply("see file", FilePart([]byte("x"), "text/plain", "x.txt"))
	r.Metadata = map[string]any{"chat": "{{chat_id}}"}
	a, p := newTestAgent(t, scenario(t, nil, r), AgentOptions{})
	handle(t, a, msg("c9", "t1", "x"))
	waitDone(t, a, "t1")
	s := p.sent("t1")[0]
	if len(s.GetParts()) != 1 || s.GetParts()[0].GetFilename() != "x.txt" {
		t.Errorf("parts = %v", s.GetParts())
	}
	if s.GetMetadata().AsMap()["chat"] != "c9" {
		t.Errorf("metadata = %v", s.GetMetadata())
	}
}

func TestTurnsOfOneChatRunInArrivalOrder(t *testing.T) {
	var running, maxRunning atomic.Int32
	var mu sync.Mutex
	var order []string
	b := BehaviorFunc(func(ctx context.Context, turn *Turn) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		order = append(order, turn.Request.GetTaskId())
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		return turn.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, turn.Request.GetText())
	})
	a, _ := newTestAgent(t, b, AgentOptions{})
	var want []string
	for i := range 8 {
		id := fmt.Sprintf("t%d", i)
		want = append(want, id)
		handle(t, a, msg("same-chat", id, id))
	}
	if err := a.WaitIdle(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if maxRunning.Load() != 1 {
		t.Fatalf("%d turns of one chat ran at once", maxRunning.Load())
	}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("order = %v, want %v", order, want)
	}
	// Each turn's ProcessingComplete comes before the next turn's output.
	var seq []string
	for _, c := range a.Recorder().Calls() {
		if !c.Inbound() {
			seq = append(seq, string(c.Kind)+":"+c.TaskID)
		}
	}
	for i := range 8 {
		if seq[2*i] != "Send:"+want[i] || seq[2*i+1] != "ProcessingComplete:"+want[i] {
			t.Fatalf("calls interleave: %v", seq)
		}
	}
}

func TestChatsRunInParallel(t *testing.T) {
	const chats = 4
	var arrived sync.WaitGroup
	arrived.Add(chats)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	b := BehaviorFunc(func(ctx context.Context, turn *Turn) error {
		arrived.Done()
		select { // every chat's turn must be running at the same time
		case <-all:
		case <-time.After(5 * time.Second):
			return errors.New("other chats did not run in parallel")
		}
		return turn.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "ok")
	})
	a, _ := newTestAgent(t, b, AgentOptions{})
	for i := range chats {
		handle(t, a, msg(fmt.Sprintf("chat%d", i), fmt.Sprintf("t%d", i), "go"))
	}
	for i := range chats {
		if pc := waitDone(t, a, fmt.Sprintf("t%d", i)); pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
			t.Fatalf("t%d: %s %s", i, pc.GetOutcome(), pc.GetError())
		}
	}
}

// TestAgentsWithTheSameChatRunInParallel: two host agents may see the
// same chat id (the peer chooses the context id); one agent's turn does
// not wait behind the other's running turn.
func TestAgentsWithTheSameChatRunInParallel(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	b := BehaviorFunc(func(ctx context.Context, turn *Turn) error {
		arrived.Done()
		select { // both agents' turns must be running at the same time
		case <-both:
		case <-time.After(5 * time.Second):
			return errors.New("the other agent's turn waited behind this one")
		}
		return turn.SendText(ctx, pb.SendKind_SEND_KIND_FINAL, "ok")
	})
	a, _ := newTestAgent(t, b, AgentOptions{})
	for _, agent := range []string{"sales", "support"} {
		m := msg("same-context", "t-"+agent, "go")
		m.AgentId = agent
		handle(t, a, m)
	}
	for _, agent := range []string{"sales", "support"} {
		if pc := waitDone(t, a, "t-"+agent); pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
			t.Fatalf("%s: %s %s", agent, pc.GetOutcome(), pc.GetError())
		}
	}
}

func TestHandleMessageReturnsBeforeTheTurnEnds(t *testing.T) {
	a, _ := newTestAgent(t, scenario(t, nil, Hang()), AgentOptions{})
	done := make(chan string)
	go func() {
		resp, _ := a.HandleMessage(context.Background(), msg("c", "t1", "x"))
		done <- resp.GetTurnId()
	}()
	select {
	case id := <-done:
		if id == "" {
			t.Fatal("no turn id")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("HandleMessage blocked on the turn")
	}
}

func TestCancelTurnStopsAWait(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil, Progress("started"), Wait(time.Minute), Reply("done")), AgentOptions{})
	handle(t, a, msg("c", "t1", "slow"))
	rec := a.Recorder()
	if _, err := rec.WaitFor(testCtx(t), func(c Call) bool { return c.Kind == KindSend }); err != nil {
		t.Fatal(err)
	}
	resp, err := a.CancelTurn(context.Background(), &pb.CancelTurnRequest{ChatId: "c", TaskId: "other"})
	if err != nil || resp.GetCancelled() {
		t.Fatalf("cancelling another task: %v %v", resp, err)
	}
	start := time.Now()
	resp, err = a.CancelTurn(context.Background(), &pb.CancelTurnRequest{Platform: "test", ChatId: "c", TaskId: "t1", Reason: "user"})
	if err != nil || !resp.GetCancelled() {
		t.Fatalf("CancelTurn = %v, %v; want cancelled", resp, err)
	}
	pc := waitDone(t, a, "t1")
	if pc.GetOutcome() != pb.Outcome_OUTCOME_CANCELLED {
		t.Fatalf("outcome = %s", pc.GetOutcome())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s to stop", d)
	}
	if got := kindsAndTexts(p.sent("t1")); len(got) != 1 {
		t.Fatalf("the turn went on after cancel: %v", got)
	}
	resp, _ = a.CancelTurn(context.Background(), &pb.CancelTurnRequest{ChatId: "c"})
	if resp.GetCancelled() {
		t.Fatal("cancelling an idle chat reported cancelled")
	}
	if n := len(rec.CallsOf(KindCancelTurn)); n != 3 {
		t.Fatalf("recorded %d CancelTurn calls, want 3", n)
	}
}

func TestCancelTurnDropsAQueuedTurn(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil, Wait(time.Second), Echo("")), AgentOptions{})
	handle(t, a, msg("c", "t1", "first"))
	handle(t, a, msg("c", "t2", "second"))
	handle(t, a, msg("c", "t3", "third"))
	resp, _ := a.CancelTurn(context.Background(), &pb.CancelTurnRequest{ChatId: "c", TaskId: "t2"})
	if !resp.GetCancelled() {
		t.Fatal("queued turn not cancelled")
	}
	for id, want := range map[string]pb.Outcome{"t1": pb.Outcome_OUTCOME_SUCCESS, "t2": pb.Outcome_OUTCOME_CANCELLED, "t3": pb.Outcome_OUTCOME_SUCCESS} {
		if got := waitDone(t, a, id).GetOutcome(); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	if len(p.sent("t2")) != 0 {
		t.Fatal("cancelled queued turn still played")
	}
}

func TestHangEndsOnlyWhenCancelled(t *testing.T) {
	a, _ := newTestAgent(t, scenario(t, nil, Hang()), AgentOptions{})
	handle(t, a, msg("c", "t1", "x"))
	time.Sleep(50 * time.Millisecond)
	if a.Busy() != 1 || len(a.Recorder().Completions("t1")) != 0 {
		t.Fatal("hang ended by itself")
	}
	// A chat-wide cancel reaches the running turn only: retry until the
	// worker has picked t1 up (on a loaded machine it may not have yet).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, _ := a.CancelTurn(context.Background(), &pb.CancelTurnRequest{ChatId: "c"}); resp.GetCancelled() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not cancelled")
		}
	}
	if got := waitDone(t, a, "t1").GetOutcome(); got != pb.Outcome_OUTCOME_CANCELLED {
		t.Fatalf("outcome = %s", got)
	}
}

func TestCloseCancelsRunningTurnsAndRefusesNewOnes(t *testing.T) {
	a, _ := newTestAgent(t, scenario(t, nil, Hang()), AgentOptions{})
	handle(t, a, msg("c", "t1", "x"))
	a.Close()
	if got := waitDone(t, a, "t1").GetOutcome(); got != pb.Outcome_OUTCOME_CANCELLED {
		t.Fatalf("outcome = %s", got)
	}
	_, err := a.HandleMessage(context.Background(), msg("c", "t2", "x"))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("HandleMessage after Close: %v", err)
	}
}

func TestNoMatchingRuleFailsTheTurn(t *testing.T) {
	a, _ := newTestAgent(t, scenario(t, []Rule{{Match: []Condition{Match("text", OpEquals, "a")}, Actions: []Action{Reply("a")}}}), AgentOptions{})
	handle(t, a, msg("c", "t1", "b"))
	pc := waitDone(t, a, "t1")
	if pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE || !strings.Contains(pc.GetError(), `no rule matches message "b"`) {
		t.Fatalf("got %s %q", pc.GetOutcome(), pc.GetError())
	}
}

func TestScenarioRulesPickTheActions(t *testing.T) {
	s, err := LoadScenario("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, p := newTestAgent(t, s, AgentOptions{})
	m := msg("c", "t1", "hello bot")
	handle(t, a, m)
	spam := msg("c2", "t2", "buy now")
	spam.MessageId = "spam-1"
	handle(t, a, spam)
	handle(t, a, msg("c3", "t3", "unmatched"))
	cont := msg("c4", "t4", "friday")
	cont.Continuation = true
	handle(t, a, cont)
	waitDone(t, a, "t1")
	if got := kindsAndTexts(p.sent("t1")); fmt.Sprint(got) != fmt.Sprint([]sent{
		{pb.SendKind_SEND_KIND_PROGRESS, "thinking about hello bot"},
		{pb.SendKind_SEND_KIND_FINAL, "hi peer:alice, this is message 1 of c"},
	}) {
		t.Fatalf("greeting: %v", got)
	}
	if pc := waitDone(t, a, "t2"); pc.GetOutcome() != pb.Outcome_OUTCOME_REJECTED || pc.GetError() != "not doing that" {
		t.Fatalf("refuse: %v", pc)
	}
	waitDone(t, a, "t3")
	if got := p.sent("t3")[0].GetText(); got != "echo: unmatched" {
		t.Fatalf("default: %q", got)
	}
	waitDone(t, a, "t4")
	if got := p.sent("t4")[0].GetText(); got != "booked for friday" {
		t.Fatalf("continuation: %q", got)
	}
}

func TestListToolsReturnsTheRegistry(t *testing.T) {
	s, err := LoadScenario("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newTestAgent(t, s, AgentOptions{})
	tools, err := a.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].GetName() != "web_search" || tools[0].GetToolset() != "web" ||
		!strings.Contains(tools[0].GetParametersJsonSchema(), `"query"`) || tools[0].GetTags()[1] != "read-only" {
		t.Fatalf("tools = %v", tools)
	}
	if tools[1].GetParametersJsonSchema() != `{"type":"object","properties":{}}` {
		t.Fatalf("default schema = %s", tools[1].GetParametersJsonSchema())
	}
	if len(a.Recorder().CallsOf(KindListTools)) != 1 {
		t.Fatal("ListTools not recorded")
	}

	override := []*pb.ToolDefinition{{Name: "only"}}
	b, _ := newTestAgent(t, s, AgentOptions{Tools: override})
	if tools, _ := b.ListTools(context.Background()); len(tools) != 1 || tools[0].GetName() != "only" {
		t.Fatalf("override = %v", tools)
	}
}

func TestCompleteAnswersFromRulesElseUnimplemented(t *testing.T) {
	s, err := LoadScenario("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newTestAgent(t, s, AgentOptions{})
	for prompt, want := range map[string]string{"please route this": "peer-b", "anything": "I got: anything"} {
		resp, err := a.Complete(context.Background(), &pb.CompleteRequest{Prompt: prompt})
		if err != nil || resp.GetText() != want {
			t.Errorf("Complete(%q) = %v, %v; want %q", prompt, resp, err, want)
		}
	}
	if got := a.OptionalRPCs(); fmt.Sprint(got) != "[RecordDelegation Complete]" {
		t.Errorf("OptionalRPCs = %v", got)
	}

	e, _ := newTestAgent(t, EchoScenario(), AgentOptions{})
	_, err = e.Complete(context.Background(), &pb.CompleteRequest{Prompt: "x"})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("echo scenario Complete: %v", err)
	}
	if got := e.OptionalRPCs(); fmt.Sprint(got) != "[RecordDelegation]" {
		t.Errorf("OptionalRPCs = %v", got)
	}
	if c := e.Recorder().CallsOf(KindComplete); len(c) != 1 || c[0].Err == nil {
		t.Fatalf("failed Complete not recorded: %v", c)
	}

	cmd, _ := newTestAgent(t, NewCommandBehavior("cat"), AgentOptions{})
	if _, err := cmd.Complete(context.Background(), &pb.CompleteRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("command agent Complete: %v", err)
	}
}

func TestRecordDelegationIsRecorded(t *testing.T) {
	a, _ := newTestAgent(t, EchoScenario(), AgentOptions{})
	if _, err := a.RecordDelegation(context.Background(), &pb.RecordDelegationRequest{ChatId: "c", Peer: "b", State: "TASK_STATE_COMPLETED"}); err != nil {
		t.Fatal(err)
	}
	calls := a.Recorder().CallsOf(KindRecordDelegation)
	if len(calls) != 1 || calls[0].ChatID != "c" || calls[0].Request.(*pb.RecordDelegationRequest).GetPeer() != "b" {
		t.Fatalf("calls = %v", calls)
	}
}

func TestCallToolRepliesWithTheResult(t *testing.T) {
	var got []*pb.CallToolRequest
	var mu sync.Mutex
	caller := func(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		if err := progress(&pb.ToolProgress{Message: "calling", Fraction: 0.5}); err != nil {
			return nil, err
		}
		if req.GetName() == "broken" {
			return &pb.ToolResult{Content: "peer unreachable", IsError: true}, nil
		}
		if req.GetName() == "missing" {
			return nil, status.Error(codes.NotFound, "no such tool")
		}
		return &pb.ToolResult{Content: "result for " + req.GetArgumentsJson()}, nil
	}
	rules := []Rule{
		{Match: []Condition{Match("text", OpEquals, "ok")}, Actions: []Action{
			CallTool(ToolCallSpec{Name: "a2a_call", Args: map[string]any{"peer": "b", "message": "{{text}}", "n": 1}, Reply: "b says: {{result}}", ForwardProgress: true}),
		}},
		{Match: []Condition{Match("text", OpEquals, "broken")}, Actions: []Action{CallTool(ToolCallSpec{Name: "broken"})}},
		{Match: []Condition{Match("text", OpEquals, "ignore")}, Actions: []Action{
			CallTool(ToolCallSpec{Name: "broken", NoReply: true, IgnoreError: true}),
			Reply("went on after: {{result}}"),
		}},
		{Match: []Condition{Match("text", OpEquals, "missing")}, Actions: []Action{CallTool(ToolCallSpec{Name: "missing"})}},
	}
	a, p := newTestAgent(t, scenario(t, rules), AgentOptions{CallTool: caller})
	for i, text := range []string{"ok", "broken", "ignore", "missing"} {
		handle(t, a, msg(fmt.Sprintf("c%d", i), text, text))
	}
	if pc := waitDone(t, a, "ok"); pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("ok: %v", pc)
	}
	if s := kindsAndTexts(p.sent("ok")); fmt.Sprint(s) != fmt.Sprint([]sent{
		{pb.SendKind_SEND_KIND_PROGRESS, "calling"},
		{pb.SendKind_SEND_KIND_FINAL, `b says: result for {"message":"ok","n":1,"peer":"b"}`},
	}) {
		t.Fatalf("ok sends: %v", s)
	}
	if pc := waitDone(t, a, "broken"); pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE || pc.GetError() != "tool broken failed: peer unreachable" {
		t.Fatalf("broken: %v", pc)
	}
	waitDone(t, a, "ignore")
	if s := p.sent("ignore"); len(s) != 1 || s[0].GetText() != "went on after: peer unreachable" {
		t.Fatalf("ignore: %v", s)
	}
	if pc := waitDone(t, a, "missing"); pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE || !strings.Contains(pc.GetError(), "no such tool") {
		t.Fatalf("missing: %v", pc)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range got {
		if r.GetCallId() == "" || r.GetPlatform() != "test" || r.GetChatId() == "" {
			t.Fatalf("tool call not addressed: %v", r)
		}
	}
}

func TestCallToolWithoutCallerFailsClearly(t *testing.T) {
	a, _ := newTestAgent(t, scenario(t, nil, CallTool(ToolCallSpec{Name: "x"})), AgentOptions{})
	handle(t, a, msg("c", "t1", "x"))
	if pc := waitDone(t, a, "t1"); !strings.Contains(pc.GetError(), "no tool caller") {
		t.Fatalf("got %v", pc)
	}
}

func TestBehaviorPanicFailsTheTurn(t *testing.T) {
	a, _ := newTestAgent(t, BehaviorFunc(func(context.Context, *Turn) error { panic("oops") }), AgentOptions{})
	handle(t, a, msg("c", "t1", "x"))
	pc := waitDone(t, a, "t1")
	if pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE || !strings.Contains(pc.GetError(), "behavior panicked: oops") {
		t.Fatalf("got %v", pc)
	}
	handle(t, a, msg("c", "t2", "x")) // the chat's worker survived
	waitDone(t, a, "t2")
}

func TestSendFailureFailsTheTurn(t *testing.T) {
	a, p := newTestAgent(t, scenario(t, nil, Reply("x")), AgentOptions{})
	p.failSend = errors.New("platform is down")
	handle(t, a, msg("c", "t1", "x"))
	pc := waitDone(t, a, "t1")
	if pc.GetOutcome() != pb.Outcome_OUTCOME_FAILURE || !strings.Contains(pc.GetError(), "platform is down") {
		t.Fatalf("got %v", pc)
	}
	if c := a.Recorder().CallsOf(KindSend); len(c) != 1 || c[0].Err == nil {
		t.Fatalf("failed send not recorded: %v", c)
	}
}

func TestOutputGoesToThePlatformNamedByTheMessage(t *testing.T) {
	a, fallback := newTestAgent(t, EchoScenario(), AgentOptions{})
	named := &fakePlatform{}
	a.AttachAs("other", named)
	m := msg("c", "t1", "x")
	m.Platform = "other"
	handle(t, a, m)
	handle(t, a, msg("c2", "t2", "y"))
	waitDone(t, a, "t1")
	waitDone(t, a, "t2")
	if len(named.sent("t1")) != 1 || len(fallback.sent("t1")) != 0 || len(fallback.sent("t2")) != 1 {
		t.Fatal("output went to the wrong platform")
	}
}

func TestHandleMessageWithoutChatIDIsInvalid(t *testing.T) {
	a, _ := newTestAgent(t, EchoScenario(), AgentOptions{})
	_, err := a.HandleMessage(context.Background(), &pb.HandleMessageRequest{Text: "x"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("err = %v", err)
	}
}

// minorPlatform is a fakePlatform in front of a plugin that knows protocol
// minor 1 (ends_turn).
type minorPlatform struct{ *fakePlatform }

func (minorPlatform) ProtocolMinor() uint32 { return 1 }

func TestLastOutputEndsTheTurnWhenThePluginKnowsEndsTurn(t *testing.T) {
	s := &Scenario{
		Rules: []Rule{
			{Match: []Condition{Match("text", OpEquals, "ask")}, Actions: []Action{Progress("thinking"), Ask("which day?")}},
			{Match: []Condition{Match("text", OpEquals, "fail")}, Actions: []Action{Reply("partial"), Fail("broke")}},
		},
		Default: &Rule{Actions: []Action{Echo("re:")}},
	}
	for _, tc := range []struct {
		text, kinds string
		minor1      bool
		outcome     pb.Outcome
	}{
		{"hello", "[SEND_KIND_FINAL/true]", true, pb.Outcome_OUTCOME_SUCCESS},
		{"ask", "[SEND_KIND_PROGRESS/false SEND_KIND_INPUT_REQUIRED/true]", true, pb.Outcome_OUTCOME_SUCCESS},
		{"fail", "[SEND_KIND_FINAL/false]", true, pb.Outcome_OUTCOME_FAILURE},
		{"hello", "[SEND_KIND_FINAL/false]", false, pb.Outcome_OUTCOME_SUCCESS},
	} {
		a, err := NewAgent(s, AgentOptions{Logger: t})
		if err != nil {
			t.Fatal(err)
		}
		f := &fakePlatform{}
		if tc.minor1 {
			a.Attach(minorPlatform{f})
		} else {
			a.Attach(f)
		}
		handle(t, a, msg("c", "t1", tc.text))
		pc := waitDone(t, a, "t1")
		if err := a.WaitIdle(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		a.Close()
		var kinds []string
		for _, s := range f.sent("t1") {
			kinds = append(kinds, fmt.Sprintf("%s/%t", s.GetKind(), s.GetEndsTurn()))
		}
		// ProcessingComplete follows unless the last Send ended the turn.
		wantComplete := 1
		if tc.minor1 && tc.outcome == pb.Outcome_OUTCOME_SUCCESS {
			wantComplete = 0
		}
		if fmt.Sprint(kinds) != tc.kinds || len(f.completes) != wantComplete || pc.GetOutcome() != tc.outcome {
			t.Errorf("%q (minor 1: %t): sends %v, %d ProcessingComplete, turn ended %s; want %s, %d, %s",
				tc.text, tc.minor1, kinds, len(f.completes), pc.GetOutcome(), tc.kinds, wantComplete, tc.outcome)
		}
		if n := len(a.Recorder().Completions("t1")); n != 1 {
			t.Errorf("%q: Completions = %d, want 1", tc.text, n)
		}
	}
}
