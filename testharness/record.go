package testharness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// CallKind names a recorded call.
type CallKind string

// Kinds of recorded calls. The first five are plugin→host calls into the
// agent (the host callback service); the rest are host→plugin calls.
const (
	KindHandleMessage      CallKind = "HandleMessage"
	KindCancelTurn         CallKind = "CancelTurn"
	KindListTools          CallKind = "ListTools"
	KindComplete           CallKind = "Complete"
	KindRecordDelegation   CallKind = "RecordDelegation"
	KindSend               CallKind = "Send"
	KindProcessingComplete CallKind = "ProcessingComplete"
	KindCallTool           CallKind = "CallTool"
)

// Call is one recorded call and its result.
type Call struct {
	// Seq numbers calls from 1 in the order they were recorded (when they
	// returned).
	Seq int
	// Time is when the call started; Duration how long it took.
	Time     time.Time
	Duration time.Duration
	// Kind says which call this is.
	Kind CallKind
	// ChatID and TaskID are copied from the request when it has them.
	ChatID, TaskID string
	// TurnID is the agent's turn this call belongs to: set on HandleMessage
	// (the id it returned) and on the Send and ProcessingComplete calls the
	// turn made. A task that continues (input required, then an answer)
	// has one turn per message.
	TurnID string
	// Request and Response are the protobuf messages (Response is nil when
	// Err is set, and for ListTools calls it is a HostServiceListToolsResponse).
	Request, Response proto.Message
	// Progress holds the progress events of a CallTool.
	Progress []*pb.ToolProgress
	// Err is the error the call returned.
	Err error
}

// Inbound reports whether the plugin called the host (the agent).
func (c Call) Inbound() bool {
	switch c.Kind {
	case KindHandleMessage, KindCancelTurn, KindListTools, KindComplete, KindRecordDelegation:
		return true
	}
	return false
}

// HandleMessage returns the request of a HandleMessage call, else nil.
func (c Call) HandleMessage() *pb.HandleMessageRequest {
	r, _ := c.Request.(*pb.HandleMessageRequest)
	return r
}

// Send returns the request of a Send call, else nil.
func (c Call) Send() *pb.SendRequest {
	r, _ := c.Request.(*pb.SendRequest)
	return r
}

// ProcessingComplete returns the request of a ProcessingComplete call,
// else nil.
func (c Call) ProcessingComplete() *pb.ProcessingCompleteRequest {
	r, _ := c.Request.(*pb.ProcessingCompleteRequest)
	return r
}

// TurnEnd reports whether the call ended its turn, and how: a
// ProcessingComplete (its request), or a successful Send with ends_turn
// (protocol 1.1), which stands for ProcessingComplete OUTCOME_SUCCESS and
// is returned as such.
func (c Call) TurnEnd() (*pb.ProcessingCompleteRequest, bool) {
	if pc := c.ProcessingComplete(); pc != nil {
		return pc, true
	}
	if s := c.Send(); s != nil && s.GetEndsTurn() && c.Err == nil {
		return &pb.ProcessingCompleteRequest{Platform: s.GetPlatform(), ChatId: s.GetChatId(), TaskId: s.GetTaskId(),
			Outcome: pb.Outcome_OUTCOME_SUCCESS}, true
	}
	return nil, false
}

// CancelTurn returns the request of a CancelTurn call, else nil.
func (c Call) CancelTurn() *pb.CancelTurnRequest {
	r, _ := c.Request.(*pb.CancelTurnRequest)
	return r
}

// ToolCall returns the request of a CallTool call, else nil.
func (c Call) ToolCall() *pb.CallToolRequest {
	r, _ := c.Request.(*pb.CallToolRequest)
	return r
}

// ToolResult returns the result of a CallTool call, else nil.
func (c Call) ToolResult() *pb.ToolResult {
	r, _ := c.Response.(*pb.ToolResult)
	return r
}

// String renders the call for logs and failure messages.
func (c Call) String() string {
	s := fmt.Sprintf("#%d %s", c.Seq, c.Kind)
	if c.ChatID != "" || c.TaskID != "" {
		s += fmt.Sprintf(" chat=%s task=%s", c.ChatID, c.TaskID)
	}
	if c.TurnID != "" {
		s += " " + c.TurnID
	}
	switch {
	case c.Send() != nil:
		sr := c.Send()
		s += fmt.Sprintf(" %s %q", sr.GetKind(), sr.GetText())
		if sr.GetEndsTurn() {
			s += " ends_turn"
		}
		if a := sr.GetArtifact(); a != nil {
			s += fmt.Sprintf(" artifact=%s append=%t last=%t", a.GetArtifactId(), a.GetAppend(), a.GetLastChunk())
		}
	case c.ProcessingComplete() != nil:
		pc := c.ProcessingComplete()
		s += " " + pc.GetOutcome().String()
		if pc.GetError() != "" {
			s += fmt.Sprintf(" %q", pc.GetError())
		}
	case c.HandleMessage() != nil:
		s += fmt.Sprintf(" %q", c.HandleMessage().GetText())
	case c.ToolCall() != nil:
		s += fmt.Sprintf(" %s %s", c.ToolCall().GetName(), c.ToolCall().GetArgumentsJson())
	}
	if c.Err != nil {
		s += " err=" + c.Err.Error()
	}
	return s
}

// Recorder records calls in both directions. It is safe for concurrent use.
//
// A Recorder from NewRecorder keeps every call, which tests want; one from
// NewBoundedRecorder keeps only the most recent calls, which a long-running
// host that looks at its calls wants (it would otherwise grow by every call
// it ever served, and its garbage collector would rescan all of them); one
// from NewCountingRecorder keeps none, for a host that never looks.
type Recorder struct {
	mu    sync.Mutex
	limit int // 0: keep every call; -1: keep none (count only)
	// calls holds the retained calls in order; calls[0] has Seq
	// dropped+1. A bounded recorder lets it grow to twice its limit
	// before it drops the oldest half at once, so recording stays O(1)
	// amortized.
	calls   []Call
	dropped int
	changed chan struct{} // closed and replaced on every Record
}

// NewRecorder returns an empty Recorder that keeps every call.
func NewRecorder() *Recorder {
	return &Recorder{changed: make(chan struct{})}
}

// NewBoundedRecorder returns an empty Recorder that keeps only the last
// limit calls (at least one): Calls, Dump and the queries see those, Seq
// still counts every call, and a WaitFor only finds the calls still kept
// when it looks. Use it where a host runs for long and reads its recent
// calls; tests that inspect a whole exchange use NewRecorder.
func NewBoundedRecorder(limit int) *Recorder {
	return &Recorder{limit: max(limit, 1), changed: make(chan struct{})}
}

// NewCountingRecorder returns a Recorder that keeps no call, only counts
// them (Seq): for a host whose calls nobody reads (the reference host's
// run command), where copying every request and response would be CPU
// spent for nothing. Calls, Dump and the queries see nothing.
func NewCountingRecorder() *Recorder {
	return &Recorder{limit: -1, changed: make(chan struct{})}
}

// Record adds a call. Seq is assigned; Time defaults to now; ChatID and
// TaskID are filled from the request when empty. The request and response
// are cloned so later changes by the caller do not show. It returns the call
// as stored.
func (r *Recorder) Record(c Call) Call {
	if r.limit < 0 {
		r.mu.Lock()
		r.dropped++
		c.Seq = r.dropped
		r.mu.Unlock()
		return c
	}
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	if c.Request != nil {
		c.Request = proto.Clone(c.Request)
		if m, ok := c.Request.(interface{ GetChatId() string }); ok && c.ChatID == "" {
			c.ChatID = m.GetChatId()
		}
		if m, ok := c.Request.(interface{ GetTaskId() string }); ok && c.TaskID == "" {
			c.TaskID = m.GetTaskId()
		}
	}
	if c.Response != nil {
		c.Response = proto.Clone(c.Response)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c.Seq = r.dropped + len(r.calls) + 1
	r.calls = append(r.calls, c)
	if r.limit > 0 && len(r.calls) >= 2*r.limit {
		n := copy(r.calls, r.calls[len(r.calls)-r.limit:])
		clear(r.calls[n:])
		r.dropped += len(r.calls) - n
		r.calls = r.calls[:n]
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return c
}

// kept returns the retained calls: every call, or the last limit of a
// bounded recorder. r.mu must be held.
func (r *Recorder) kept() []Call {
	if r.limit > 0 && len(r.calls) > r.limit {
		return r.calls[len(r.calls)-r.limit:]
	}
	return r.calls
}

// Calls returns a copy of every recorded call (of a bounded recorder: of
// the last ones it keeps), in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.kept()...)
}

// Filter returns the recorded calls for which keep returns true.
func (r *Recorder) Filter(keep func(Call) bool) []Call {
	var out []Call
	for _, c := range r.Calls() {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// CallsOf returns the recorded calls of one kind.
func (r *Recorder) CallsOf(kind CallKind) []Call {
	return r.Filter(func(c Call) bool { return c.Kind == kind })
}

// Sends returns the Send requests the agent made for a task, in order
// (every task when taskID is empty), including ones that failed.
func (r *Recorder) Sends(taskID string) []*pb.SendRequest {
	var out []*pb.SendRequest
	for _, c := range r.CallsOf(KindSend) {
		if taskID == "" || c.TaskID == taskID {
			out = append(out, c.Send())
		}
	}
	return out
}

// Completions returns how the turns of a task ended (every task when
// taskID is empty): the ProcessingComplete requests, and for turns ended by
// a Send with ends_turn, a ProcessingComplete SUCCESS standing for it (see
// Call.TurnEnd).
func (r *Recorder) Completions(taskID string) []*pb.ProcessingCompleteRequest {
	var out []*pb.ProcessingCompleteRequest
	for _, c := range r.Calls() {
		if pc, ok := c.TurnEnd(); ok && (taskID == "" || c.TaskID == taskID) {
			out = append(out, pc)
		}
	}
	return out
}

// WaitFor returns the first call, already recorded or still to come, for
// which match returns true. It fails when ctx ends first; the error lists
// the calls recorded so far.
func (r *Recorder) WaitFor(ctx context.Context, match func(Call) bool) (Call, error) {
	calls, err := r.WaitForN(ctx, 1, match)
	if err != nil {
		return Call{}, err
	}
	return calls[0], nil
}

// WaitForN waits until n calls match and returns the first n of them.
func (r *Recorder) WaitForN(ctx context.Context, n int, match func(Call) bool) ([]Call, error) {
	seen := 0 // calls looked at, by Seq
	var found []Call
	for {
		r.mu.Lock()
		if kept := r.dropped + len(r.calls) - len(r.kept()); seen < kept {
			seen = kept // a bounded recorder no longer has them
		}
		for ; seen < r.dropped+len(r.calls); seen++ {
			if c := r.calls[seen-r.dropped]; match(c) {
				found = append(found, c)
				if len(found) == n {
					r.mu.Unlock()
					return found, nil
				}
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return found, fmt.Errorf("waited for %d matching calls, got %d: %w\nrecorded:\n%s", n, len(found), ctx.Err(), r.Dump())
		}
	}
}

// WaitForCompletion waits for the end of a task's first turn (see
// Call.TurnEnd). For a task with several turns (a continuation), use
// WaitForTurn.
func (r *Recorder) WaitForCompletion(ctx context.Context, taskID string) (*pb.ProcessingCompleteRequest, error) {
	c, err := r.WaitFor(ctx, func(c Call) bool {
		_, end := c.TurnEnd()
		return end && c.TaskID == taskID
	})
	if err != nil {
		return nil, err
	}
	pc, _ := c.TurnEnd()
	return pc, nil
}

// WaitForTurn waits for the end of a turn (by the turn id HandleMessage
// returned; see Call.TurnID and Call.TurnEnd).
func (r *Recorder) WaitForTurn(ctx context.Context, turnID string) (*pb.ProcessingCompleteRequest, error) {
	c, err := r.WaitFor(ctx, func(c Call) bool {
		_, end := c.TurnEnd()
		return end && c.TurnID == turnID
	})
	if err != nil {
		return nil, err
	}
	pc, _ := c.TurnEnd()
	return pc, nil
}

// Reset forgets every recorded call; Seq goes on counting.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped += len(r.calls)
	r.calls = nil
}

// Dump renders every recorded call, one per line, for failure messages.
func (r *Recorder) Dump() string {
	s := ""
	for _, c := range r.Calls() {
		s += "  " + c.String() + "\n"
	}
	return s
}
