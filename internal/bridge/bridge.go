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
	Host   plugin.Host
	Logger hclog.Logger
	// Observer, when set, sees host call latencies and filter hits.
	Observer Observer
	// Agent is the id of the host agent whose turns this bridge runs
	// (contract 1.4): every HandleMessage and CancelTurn names it. "" for
	// a host without agents.
	Agent string
	// Tracer records a span per host call (nil: export off).
	Tracer *tracing.Tracer
}

// Bridge connects the task manager to the host. It implements
// tasks.Executor (toward the host, this file) and the output half of
// plugin.Platform (from the host, output.go), which hands the host's output
// to the task manager it is given (Tasks).
type Bridge struct {
	host   plugin.Host
	agent  string
	log    hclog.Logger
	obs    Observer
	tracer *tracing.Tracer

	// mu guards chats.
	mu sync.Mutex
	// chats remembers the latest inbound turn of each context with a turn
	// on the host (its delegation chain, the trace the host got, the
	// peer), so tools the agent calls during that turn continue the chain
	// and the trace instead of starting new ones. A conversation is
	// forgotten when its last open turn ends (ProcessingComplete, or a
	// Send with ends_turn), so the map holds the turns in progress, not
	// every conversation ever seen.
	chats map[string]chatTurn

	// streams redacts artifacts streamed in chunks (chunks.go).
	streams artifactStreams
}

// chatTurn is what the bridge remembers of a conversation's latest turn.
type chatTurn struct {
	chain security.Chain // zero ID: the turn came without a chain
	trace tracing.Context
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
	if opts.Host == nil {
		return nil, errors.New("bridge: Options.Host is required")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Bridge{host: opts.Host, agent: opts.Agent, log: opts.Logger, obs: opts.Observer, tracer: opts.Tracer, chats: map[string]chatTurn{}}, nil
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
func (b *Bridge) TraceFor(chatID string) (tracing.Context, bool) {
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
// (the task's, which the task manager set; else from the message
// metadata), the trace the host got and the peer.
func (b *Bridge) rememberTurn(t *tasks.Turn, trace tracing.Context) {
	c := t.Chain
	if c.ID == "" {
		var err error
		if c, err = security.ChainFromMetadata(t.Message.Metadata); err != nil {
			c = security.Chain{}
		}
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
	trace := t.Trace
	if sc := span.Context(); sc.Traceparent != "" {
		// The host's work is a child of the span recording its call.
		trace = sc
	}
	req.Trace = traceToProto(trace)
	b.rememberTurn(t, trace)
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
	_, err := b.host.CancelTurn(ctx, &pb.CancelTurnRequest{Platform: PlatformName, ChatId: t.ContextID, TaskId: t.TaskID, Reason: reason, AgentId: b.agent})
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
	ctx, span := b.tracer.Start(ctx, name, tracing.KindClient, t.Trace)
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
	hits += filterAcrossTextParts(inParts)
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
		AgentId:          b.agent,
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
	return req, hits, nil
}

// filterAcrossTextParts filters the text parts of parts once more as the
// one text a model reads them as (security.FilterInboundTexts), in place:
// an override split across two parts is defanged in the parts (and so in
// the sender's own words the host shows), not only in the framed text.
// It returns the patterns it defanged.
func filterAcrossTextParts(parts []a2a.Part) int {
	var texts []string
	var at []int
	for i := range parts {
		if parts[i].Text != nil {
			texts = append(texts, *parts[i].Text)
			at = append(at, i)
		}
	}
	if len(texts) < 2 {
		return 0
	}
	clean, hits := security.FilterInboundTexts(texts)
	if hits == 0 {
		return 0
	}
	for k, i := range at {
		s := clean[k]
		parts[i].Text = &s
	}
	return hits
}

// filterParts returns parts with every peer-written string passed through
// filter (the original parts are not modified).
func filterParts(parts []a2a.Part, filter func(string) string) []a2a.Part {
	out := make([]a2a.Part, len(parts))
	for i, p := range parts {
		if p.Text != nil {
			// A clean text (the usual case) keeps its pointer: nothing
			// writes through a part's Text, only replaces it.
			if s := filter(*p.Text); s != *p.Text {
				t := s
				p.Text = &t
			}
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
