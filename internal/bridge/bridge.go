// Package bridge is the platform adapter's core: it turns inbound A2A turns
// into Host.HandleMessage calls on the host's live session, and the host's
// Send / ProcessingComplete calls back into task updates.
//
// On the way in, every text is defanged and framed as untrusted peer input
// (security.FilterInbound, security.FrameUntrusted) and the turn is marked
// unattended with the peer's identity and trust tier. On the way out,
// credential-shaped strings are redacted from everything the agent sends
// to a peer. A final answer whose text starts with "[INPUT_REQUIRED]" is
// treated as a question, for hosts that cannot set the Send kind.
//
// The host gets each turn's W3C trace context with the message (with
// OpenTelemetry export on, that of the span recording the host call), and
// the bridge remembers it per conversation with the delegation chain, so
// that tools the agent calls while answering continue both.
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// PlatformName is the platform name the bridge uses in every host call.
const PlatformName = "a2a"

// InputRequiredPrefix marks a final reply as a question.
const InputRequiredPrefix = "[INPUT_REQUIRED]"

// Observer is told the duration of each host call, for metrics.
type Observer interface {
	HostCall(method string, d time.Duration, err error)
	FilterHits(n int)
	Redactions(n int)
}

// Options configure a Bridge.
type Options struct {
	// Host is the host callback service. Required.
	Host plugin.Host
	// Tasks receives the agent's output. Required.
	Tasks  *tasks.Manager
	Logger hclog.Logger
	// Observer, when set, sees host call latencies and filter hits.
	Observer Observer
	// Tracer records a span per host call (nil: export off).
	Tracer *tracing.Tracer
}

// Bridge connects the task manager to the host. It implements
// tasks.Executor (toward the host) and the output half of plugin.Platform
// (from the host).
type Bridge struct {
	host   plugin.Host
	tasks  *tasks.Manager
	log    hclog.Logger
	obs    Observer
	tracer *tracing.Tracer

	// chats remembers the latest inbound turn of each context with a turn
	// on the host (its delegation chain, the trace the host got, the
	// peer), so tools the agent calls during that turn continue the chain
	// and the trace instead of starting new ones. A conversation is
	// forgotten when its last open turn ends (ProcessingComplete, or a
	// Send with ends_turn), so the map holds the turns in progress, not
	// every conversation ever seen.
	mu    sync.Mutex
	chats map[string]chatTurn

	// streams redacts artifacts streamed in chunks (chunks.go).
	streams artifactStreams
}

// chatTurn is what the bridge remembers of a conversation's latest turn.
type chatTurn struct {
	chain security.Chain // zero ID: the turn came without a chain
	trace tasks.TraceContext
	peer  string
	task  string
	// open counts the conversation's turns handed to the host and not
	// yet ended: an earlier turn's end can arrive after the next turn
	// started (a question answered at once), and must not forget it.
	open int
}

// maxChats bounds that memory for hosts that do not end their turns; past
// it half of it is forgotten (a forgotten conversation only means an
// outbound call starts a new chain and a new trace).
const maxChats = 10_000

// New returns a bridge.
func New(opts Options) (*Bridge, error) {
	if opts.Host == nil || opts.Tasks == nil {
		return nil, errors.New("bridge: Host and Tasks are required")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Bridge{host: opts.Host, tasks: opts.Tasks, log: opts.Logger, obs: opts.Observer, tracer: opts.Tracer, chats: map[string]chatTurn{}}, nil
}

// ChainFor returns the delegation chain of the latest inbound turn in the
// conversation chatID, if that turn arrived with one.
func (b *Bridge) ChainFor(chatID string) (security.Chain, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.chats[chatID]
	return c.chain, ok && c.chain.ID != ""
}

// TraceFor returns the W3C trace context the host got with the latest
// inbound turn in the conversation chatID, if that turn had one.
func (b *Bridge) TraceFor(chatID string) (tasks.TraceContext, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.chats[chatID]
	return c.trace, ok && c.trace.Traceparent != ""
}

// TurnFor returns the task and the caller (its identity) of the latest
// inbound turn in the conversation chatID, while that turn is open: the
// outbound calls made meanwhile are made on their behalf.
func (b *Bridge) TurnFor(chatID string) (taskID, caller string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.chats[chatID]
	return c.task, c.peer, ok
}

// peerOf returns the peer of the latest inbound turn in chatID, for logs.
func (b *Bridge) peerOf(chatID string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.chats[chatID].peer
}

// rememberTurn records the latest turn of t's conversation: its chain
// (from the message metadata), the trace the host got and the peer.
func (b *Bridge) rememberTurn(t *tasks.Turn, trace tasks.TraceContext) {
	c, err := security.ChainFromMetadata(t.Message.Metadata)
	if err != nil {
		c = security.Chain{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, known := b.chats[t.ContextID]; !known && len(b.chats) >= maxChats {
		n := 0
		for k := range b.chats {
			delete(b.chats, k)
			if n++; n >= maxChats/2 {
				break
			}
		}
	}
	b.chats[t.ContextID] = chatTurn{chain: c, trace: trace, peer: t.Sender.ID, task: t.TaskID, open: b.chats[t.ContextID].open + 1}
}

// turnEnded forgets chatID's latest turn once no turn of it is open.
func (b *Bridge) turnEnded(chatID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.chats[chatID]
	if !ok {
		return
	}
	if c.open--; c.open > 0 {
		b.chats[chatID] = c
		return
	}
	delete(b.chats, chatID)
}

// StartTurn injects the turn's message into the host's live session for the
// turn's context.
func (b *Bridge) StartTurn(ctx context.Context, t *tasks.Turn) error {
	req, hits, err := b.handleRequest(t)
	if err != nil {
		return err
	}
	if hits > 0 {
		b.log.Warn("filtered injection attempt from peer", "peer", t.Sender.ID, "task_id", t.TaskID, "context_id", t.ContextID, "hits", hits)
		if b.obs != nil {
			b.obs.FilterHits(hits)
		}
	}
	ctx, span := b.startSpan(ctx, "a2a.host HandleMessage", t)
	if tp := span.Traceparent(); tp != "" {
		// The host's work is a child of the span recording its call.
		req.Trace = &pb.TraceContext{Traceparent: tp, Tracestate: span.Tracestate()}
	}
	b.rememberTurn(t, tasks.TraceContext{Traceparent: req.GetTrace().GetTraceparent(), Tracestate: req.GetTrace().GetTracestate()})
	start := time.Now()
	_, err = b.host.HandleMessage(ctx, req)
	if b.obs != nil {
		b.obs.HostCall("HandleMessage", time.Since(start), err)
	}
	span.End(err)
	if err != nil {
		b.turnEnded(t.ContextID) // the host never had it
		return hostError("HandleMessage", err)
	}
	return nil
}

// CancelTurn asks the host to stop the turn.
func (b *Bridge) CancelTurn(ctx context.Context, t *tasks.Turn, reason string) error {
	ctx, span := b.startSpan(ctx, "a2a.host CancelTurn", t)
	start := time.Now()
	_, err := b.host.CancelTurn(ctx, &pb.CancelTurnRequest{Platform: PlatformName, ChatId: t.ContextID, TaskId: t.TaskID, Reason: reason})
	if b.obs != nil {
		b.obs.HostCall("CancelTurn", time.Since(start), err)
	}
	span.End(err)
	if err != nil {
		return hostError("CancelTurn", err)
	}
	return nil
}

// startSpan starts the span of a host call for t, a child of the turn's
// trace (a no-op with export off).
func (b *Bridge) startSpan(ctx context.Context, name string, t *tasks.Turn) (context.Context, tracing.Span) {
	if !b.tracer.Enabled() {
		return ctx, tracing.Span{}
	}
	ctx, span := b.tracer.Start(ctx, name, tracing.KindClient, t.Trace.Traceparent, t.Trace.Tracestate)
	span.SetString("a2a.task_id", t.TaskID)
	span.SetString("a2a.context_id", t.ContextID)
	span.SetString("a2a.peer", t.Sender.ID)
	return ctx, span
}

// hostError makes a host call's failure readable for the peer.
func hostError(method string, err error) error {
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("the host's %s failed (%s): %s", method, s.Code(), s.Message())
	}
	return fmt.Errorf("the host's %s failed: %w", method, err)
}

// handleRequest builds the HandleMessage request for a turn. Every string a
// peer wrote — text parts, file names, strings inside data parts and
// metadata — is defanged, not only the flattened text, since hosts may hand
// any of them to a model.
func (b *Bridge) handleRequest(t *tasks.Turn) (*pb.HandleMessageRequest, int, error) {
	hits := 0
	filter := func(s string) string {
		out, n := security.FilterInbound(s)
		hits += n
		return out
	}
	inParts := filterParts(t.Message.Parts, filter)
	parts, err := PartsToProto(inParts)
	if err != nil {
		return nil, 0, err
	}
	// FrameUntrusted filters the flattened text once more, on purpose:
	// joining parts that were clean one by one can make a pattern across
	// their boundary.
	clean := a2a.FlattenParts(inParts)
	md, err := toStruct(filterValue(t.Message.Metadata, filter).(map[string]any))
	if err != nil {
		return nil, 0, fmt.Errorf("message metadata: %w", err)
	}
	req := &pb.HandleMessageRequest{
		Platform:         PlatformName,
		ChatId:           t.ContextID,
		Sender:           &pb.Sender{Id: t.Sender.ID, DisplayName: displayName(t.Sender.ID)},
		TrustTier:        TierToProto(t.Sender.Tier),
		TaskId:           t.TaskID,
		Text:             security.FrameUntrusted(t.Sender.ID, clean),
		Parts:            parts,
		MessageId:        t.Message.MessageID,
		Metadata:         md,
		Unattended:       true,
		ReferenceTaskIds: t.Message.ReferenceTaskIDs,
		Continuation:     t.Continuation,
	}
	if t.Trace.Traceparent != "" {
		req.Trace = &pb.TraceContext{Traceparent: t.Trace.Traceparent, Tracestate: t.Trace.Tracestate}
	}
	return req, hits, nil
}

// filterParts returns parts with every peer-written string passed through
// filter (the original parts are not modified).
func filterParts(parts []a2a.Part, filter func(string) string) []a2a.Part {
	out := make([]a2a.Part, len(parts))
	for i, p := range parts {
		if p.Text != nil {
			s := filter(*p.Text)
			p.Text = &s
		}
		if p.Filename != "" {
			p.Filename = filter(p.Filename)
		}
		if p.Kind() == a2a.PartData {
			var v any
			if err := json.Unmarshal(p.Data, &v); err == nil {
				if b, err := json.Marshal(filterValue(v, filter)); err == nil {
					p.Data = b
				}
			}
		}
		if p.Metadata != nil {
			p.Metadata = filterValue(p.Metadata, filter).(map[string]any)
		}
		out[i] = p
	}
	return out
}

// redactValue redacts a decoded JSON value: every string through redact,
// and values under secret-looking keys (password, token, …) as a whole, as
// security.RedactValue does.
func redactValue(v any, redact func(string) string) any {
	return security.RedactValue(filterValue(v, redact))
}

// filterValue passes every string of a decoded JSON value through filter,
// returning a copy.
func filterValue(v any, filter func(string) string) any {
	switch x := v.(type) {
	case string:
		return filter(x)
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = filterValue(e, filter)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = filterValue(e, filter)
		}
		return out
	}
	return v
}

// displayName turns "peer:alice" into "alice".
func displayName(id string) string {
	if _, name, ok := strings.Cut(id, ":"); ok {
		return name
	}
	return id
}

// TierToProto maps a security tier to the contract's enum.
func TierToProto(t security.Tier) pb.TrustTier {
	switch t {
	case security.TierLocal:
		return pb.TrustTier_TRUST_TIER_LOCAL
	case security.TierTrusted:
		return pb.TrustTier_TRUST_TIER_TRUSTED
	default:
		return pb.TrustTier_TRUST_TIER_PUBLIC
	}
}

// Send turns one piece of host output into a task update.
func (b *Bridge) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	if req.GetTaskId() == "" {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, errors.New("send: task_id is required; every A2A reply answers the task named in HandleMessage"))
	}
	u, apply, released, err := b.update(req)
	if err != nil {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, fmt.Errorf("send: %w", err))
	}
	for _, r := range released {
		b.applyReleased(ctx, r.task, []tasks.Update{r.u})
	}
	if !apply {
		return &pb.SendResponse{}, nil // held back until the next chunk
	}
	if ends(req.GetKind()) {
		// The turn moves on: what its artifact streams hold goes first.
		b.applyReleased(ctx, req.GetTaskId(), b.releaseFor(req.GetTaskId()))
	}
	if err := b.tasks.Apply(ctx, req.GetTaskId(), u); err != nil {
		return nil, taskError(err)
	}
	var id string
	if u.Message != nil {
		id = u.Message.MessageID
	}
	return &pb.SendResponse{MessageId: id}, nil
}

// taskError marks the task manager's refusal of the host's output with the
// code the host sees: FailedPrecondition for a task without a running turn
// (unknown, finished, or waiting for its client), Internal otherwise.
func taskError(err error) error {
	if errors.Is(err, tasks.ErrTaskNotRunning) {
		return plugin.Mark(plugin.ErrNotReady, err)
	}
	return plugin.Mark(plugin.ErrInternal, err)
}

// ends reports whether a send of this kind ends (or interrupts) the turn.
func ends(k pb.SendKind) bool {
	return k != pb.SendKind_SEND_KIND_PROGRESS && k != pb.SendKind_SEND_KIND_ARTIFACT
}

// update converts a SendRequest into a tasks.Update, redacting secrets.
// apply is false for an artifact chunk held back entirely (chunks.go);
// released are updates of other tasks' streams given out to make room.
func (b *Bridge) update(req *pb.SendRequest) (u tasks.Update, apply bool, released []taskUpdate, err error) {
	u, err = b.updateFor(req, func(pa *pb.Artifact, art *a2a.Artifact, counted func(int)) (tasks.Update, bool) {
		var up tasks.Update
		up, apply, released = b.streamedArtifact(req.GetTaskId(), pa, art, counted)
		return up, apply
	})
	if err == nil && req.GetKind() != pb.SendKind_SEND_KIND_ARTIFACT {
		apply = true
	}
	return u, apply, released, err
}

// updateFor is update with the artifact step given: it gets the artifact
// with every string redacted but its text parts' text, which it redacts
// across chunks.
func (b *Bridge) updateFor(req *pb.SendRequest, artifact func(pa *pb.Artifact, art *a2a.Artifact, counted func(int)) (tasks.Update, bool)) (tasks.Update, error) {
	kind := req.GetKind()
	text := req.GetText()
	if kind == pb.SendKind_SEND_KIND_FINAL && strings.HasPrefix(strings.TrimSpace(text), InputRequiredPrefix) {
		kind = pb.SendKind_SEND_KIND_INPUT_REQUIRED
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), InputRequiredPrefix))
	}
	redactions := 0
	redact := func(s string) string {
		out, n := security.Redact(s)
		redactions += n
		return out
	}
	defer func() {
		if redactions > 0 {
			b.log.Info("redacted credential-shaped strings from a reply", "task_id", req.GetTaskId(), "context_id", req.GetChatId(),
				"peer", b.peerOf(req.GetChatId()), "count", redactions)
			if b.obs != nil {
				b.obs.Redactions(redactions)
			}
		}
	}()
	parts, err := PartsFromProto(req.GetParts(), redact)
	if err != nil {
		return tasks.Update{}, err
	}
	if kind == pb.SendKind_SEND_KIND_ARTIFACT {
		pa := req.GetArtifact()
		if pa == nil {
			return tasks.Update{}, errors.New("an ARTIFACT send needs an artifact")
		}
		aparts, err := PartsFromProto(pa.GetParts(), redact)
		if err != nil {
			return tasks.Update{}, err
		}
		if len(aparts) == 0 {
			return tasks.Update{}, errors.New("the artifact has no parts")
		}
		md, err := fromStruct(pa.GetMetadata())
		if err != nil {
			return tasks.Update{}, err
		}
		if md != nil {
			md = redactValue(md, redact).(map[string]any)
		}
		// Text parts are redacted across chunks, from their raw text.
		for i, q := range pa.GetParts() {
			if t, ok := q.GetContent().(*pb.Part_Text); ok {
				raw := t.Text
				aparts[i].Text = &raw
			}
		}
		art := &a2a.Artifact{ArtifactID: pa.GetArtifactId(), Name: redact(pa.GetName()), Description: redact(pa.GetDescription()), Parts: aparts, Metadata: md}
		u, _ := artifact(pa, art, func(n int) { redactions += n })
		return u, nil
	}
	if text != "" {
		parts = append([]a2a.Part{a2a.TextPart(redact(text))}, parts...)
	}
	if len(parts) == 0 {
		return tasks.Update{}, fmt.Errorf("a %s send needs text or parts", kind)
	}
	md, err := fromStruct(req.GetMetadata())
	if err != nil {
		return tasks.Update{}, err
	}
	if md != nil {
		md = redactValue(md, redact).(map[string]any)
	}
	msg := a2a.NewMessage(a2a.RoleAgent, parts...)
	msg.Metadata = md
	u := tasks.Update{Message: &msg}
	switch kind {
	case pb.SendKind_SEND_KIND_PROGRESS:
		u.Kind = tasks.UpdateProgress
	case pb.SendKind_SEND_KIND_FINAL:
		u.Kind = tasks.UpdateFinal
	case pb.SendKind_SEND_KIND_INPUT_REQUIRED:
		u.Kind = tasks.UpdateInputRequired
	case pb.SendKind_SEND_KIND_AUTH_REQUIRED:
		u.Kind = tasks.UpdateAuthRequired
	case pb.SendKind_SEND_KIND_DIRECT_REPLY:
		u.Kind = tasks.UpdateDirectReply
	default:
		return tasks.Update{}, fmt.Errorf("kind %s is not one of PROGRESS, FINAL, INPUT_REQUIRED, ARTIFACT, DIRECT_REPLY, AUTH_REQUIRED", kind)
	}
	return u, nil
}

// ProcessingComplete ends a turn.
func (b *Bridge) ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	if req.GetTaskId() == "" {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, errors.New("processing complete: task_id is required"))
	}
	var o tasks.Outcome
	switch req.GetOutcome() {
	case pb.Outcome_OUTCOME_SUCCESS:
		o = tasks.OutcomeSuccess
	case pb.Outcome_OUTCOME_FAILURE:
		o = tasks.OutcomeFailure
	case pb.Outcome_OUTCOME_CANCELLED:
		o = tasks.OutcomeCancelled
	case pb.Outcome_OUTCOME_REJECTED:
		o = tasks.OutcomeRejected
	default:
		return nil, plugin.Mark(plugin.ErrInvalidArgument, fmt.Errorf("processing complete: outcome %s is not SUCCESS, FAILURE, CANCELLED or REJECTED", req.GetOutcome()))
	}
	errText, _ := security.Redact(req.GetError())
	b.applyReleased(ctx, req.GetTaskId(), b.releaseFor(req.GetTaskId()))
	err := b.tasks.EndTurn(ctx, req.GetTaskId(), o, errText)
	b.turnEnded(req.GetChatId())
	if err != nil {
		return nil, taskError(err)
	}
	return &pb.ProcessingCompleteResponse{}, nil
}

// PartsToProto converts A2A parts to the contract's parts.
func PartsToProto(parts []a2a.Part) ([]*pb.Part, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	out := make([]*pb.Part, 0, len(parts))
	for i := range parts {
		p := &parts[i]
		md, err := toStruct(p.Metadata)
		if err != nil {
			return nil, fmt.Errorf("part %d metadata: %w", i, err)
		}
		q := &pb.Part{MediaType: p.MediaType, Filename: p.Filename, Metadata: md}
		switch p.Kind() {
		case a2a.PartText:
			q.Content = &pb.Part_Text{Text: *p.Text}
		case a2a.PartRaw:
			q.Content = &pb.Part_Raw{Raw: p.Raw}
		case a2a.PartURL:
			q.Content = &pb.Part_Url{Url: *p.URL}
		case a2a.PartData:
			v := &structpb.Value{}
			if err := protojson.Unmarshal(p.Data, v); err != nil {
				return nil, fmt.Errorf("part %d data: %w", i, err)
			}
			q.Content = &pb.Part_Data{Data: v}
		default:
			return nil, fmt.Errorf("part %d has no content", i)
		}
		out = append(out, q)
	}
	return out, nil
}

// PartsFromProto converts the contract's parts to A2A parts, passing text
// through redact (when non-nil).
func PartsFromProto(parts []*pb.Part, redact func(string) string) ([]a2a.Part, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	out := make([]a2a.Part, 0, len(parts))
	for i, q := range parts {
		md, err := fromStruct(q.GetMetadata())
		if err != nil {
			return nil, fmt.Errorf("part %d metadata: %w", i, err)
		}
		var p a2a.Part
		switch c := q.GetContent().(type) {
		case *pb.Part_Text:
			p = a2a.TextPart(redact(c.Text))
		case *pb.Part_Raw:
			p = a2a.Part{Raw: c.Raw}
		case *pb.Part_Url:
			u := redact(c.Url)
			p = a2a.Part{URL: &u}
		case *pb.Part_Data:
			b, err := protojson.Marshal(c.Data)
			if err != nil {
				return nil, fmt.Errorf("part %d data: %w", i, err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				return nil, fmt.Errorf("part %d data: %w", i, err)
			}
			p = a2a.DataPart(redactValue(v, redact))
		default:
			return nil, fmt.Errorf("part %d has no content (set text, raw, url or data)", i)
		}
		if md != nil {
			md = redactValue(md, redact).(map[string]any)
		}
		p.MediaType, p.Filename, p.Metadata = q.GetMediaType(), redact(q.GetFilename()), md
		out = append(out, p)
	}
	return out, nil
}

func toStruct(m map[string]any) (*structpb.Struct, error) {
	if len(m) == 0 {
		return nil, nil
	}
	return structpb.NewStruct(normalizeJSON(m).(map[string]any))
}

func fromStruct(s *structpb.Struct) (map[string]any, error) {
	if s == nil || len(s.GetFields()) == 0 {
		return nil, nil
	}
	return s.AsMap(), nil
}

// normalizeJSON converts values structpb cannot take (json.Number, typed
// slices) by a JSON round trip when needed.
func normalizeJSON(v any) any {
	if _, err := structpb.NewValue(v); err == nil {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}
