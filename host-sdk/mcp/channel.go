package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// ChannelMethod is the notification that pushes a message into a Claude
// Code session (Claude Code's MCP reference, "Push messages with
// channels"): params {content, meta}, meta keys of letters, digits and _.
const ChannelMethod = "notifications/claude/channel"

// ReplyTool is the tool the model answers an inbound task with.
const ReplyTool = "a2a_reply"

// inbound is the host side of the plugin's platform for one MCP session:
// the plugin's HostService callbacks (HandleMessage, CancelTurn) become
// channel notifications, and a2a_reply becomes the platform's Send.
//
// Sending a custom notification: the Go SDK has no public API for
// notifications outside the spec's set (go-sdk issue #745) — ServerSession
// sends only the methods it knows, and its jsonrpc2 connection is
// internal. But a Transport is ours to give: transport wraps the real one
// and keeps the Connection its Connect returns, unwrapped (so the SDK keeps
// every optional interface of the real connection), and a channel
// notification is one jsonrpc.Request without an ID written to that
// connection. Connection.Write may be called concurrently (its contract),
// so these frames interleave whole with the SDK's own. Notifications wait
// until the client sent notifications/initialized: nothing but the
// handshake may come first.
type inbound struct {
	on       bool
	log      hclog.Logger
	platform plugin.Platform // set by Run before the session is served
	turns    atomic.Uint64

	mu      sync.Mutex
	conn    sdk.Connection
	ready   bool              // the client sent notifications/initialized
	pending []json.RawMessage // channel params waiting for ready
	tasks   map[string]*openTask
}

// openTask is an inbound task delivered to the session and not answered yet.
type openTask struct {
	platform, chat, agent, peer string
}

var _ plugin.HostHandler = (*inbound)(nil)

func newInbound(on bool, log hclog.Logger) *inbound {
	return &inbound{on: on, log: log, tasks: map[string]*openTask{}}
}

// keepConn is a Transport that remembers the connection it made.
type keepConn struct {
	sdk.Transport
	in *inbound
}

func (k keepConn) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := k.Transport.Connect(ctx)
	if err == nil {
		k.in.mu.Lock()
		k.in.conn = c
		k.in.mu.Unlock()
	}
	return c, err
}

// SupportsProtocolVersion forwards to the wrapped transport when it
// declares what it supports (mcp.ProtocolVersionSupporter).
func (k keepConn) SupportsProtocolVersion(v string) bool {
	if s, ok := k.Transport.(sdk.ProtocolVersionSupporter); ok {
		return s.SupportsProtocolVersion(v)
	}
	return true
}

// transport wraps t when inbound is on.
func (in *inbound) transport(t sdk.Transport) sdk.Transport {
	if !in.on {
		return t
	}
	return keepConn{Transport: t, in: in}
}

// initialized sends the notifications that waited for the handshake.
func (in *inbound) initialized() {
	in.mu.Lock()
	in.ready = true
	pending := in.pending
	in.pending = nil
	conn := in.conn
	in.mu.Unlock()
	for _, p := range pending {
		in.write(conn, p)
	}
}

// channelParams are the params of ChannelMethod.
type channelParams struct {
	Content string            `json:"content"`
	Meta    map[string]string `json:"meta"`
}

// notify pushes content into the session (or queues it until the client
// initialized). Delivery has no acknowledgement: a session that did not
// register the server as a channel drops it, and the plugin's silence
// watchdog then fails the task with a message saying why.
func (in *inbound) notify(content string, meta map[string]string) {
	params, err := json.Marshal(channelParams{Content: content, Meta: meta})
	if err != nil {
		in.log.Error("encoding a channel notification", "error", err)
		return
	}
	in.mu.Lock()
	if !in.ready || in.conn == nil {
		in.pending = append(in.pending, params)
		in.mu.Unlock()
		return
	}
	conn := in.conn
	in.mu.Unlock()
	in.write(conn, params)
}

func (in *inbound) write(conn sdk.Connection, params json.RawMessage) {
	if err := conn.Write(context.Background(), &jsonrpc.Request{Method: ChannelMethod, Params: params}); err != nil {
		in.log.Warn("writing a channel notification", "error", err)
	}
}

// tierName is a trust tier as meta shows it.
func tierName(t pb.TrustTier) string {
	switch t {
	case pb.TrustTier_TRUST_TIER_LOCAL:
		return "local"
	case pb.TrustTier_TRUST_TIER_TRUSTED:
		return "trusted"
	case pb.TrustTier_TRUST_TIER_PUBLIC:
		return "public"
	}
	return "unknown"
}

// HandleMessage delivers an inbound task to the session as a channel
// notification and keeps the task open until a2a_reply answers it. The
// content is the text as the plugin gives any host: already filtered and
// framed for an untrusted sender.
func (in *inbound) HandleMessage(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	if !in.on {
		return nil, errors.New("this MCP session takes no inbound A2A tasks: a2a-mcp runs without --inbound (Claude Code channels), so only its tools are served")
	}
	if req.GetTaskId() == "" {
		return nil, errors.New("HandleMessage without a task_id: the MCP face answers tasks only")
	}
	meta := map[string]string{
		"task_id":    req.GetTaskId(),
		"context_id": req.GetChatId(),
		"peer":       req.GetSender().GetId(),
		"trust_tier": tierName(req.GetTrustTier()),
	}
	if n := req.GetSender().GetDisplayName(); n != "" {
		meta["peer_name"] = n
	}
	if a := req.GetAgentId(); a != "" {
		meta["agent_id"] = a
	}
	if req.GetContinuation() {
		meta["continuation"] = "true"
	}
	in.mu.Lock()
	in.tasks[req.GetTaskId()] = &openTask{platform: req.GetPlatform(), chat: req.GetChatId(), agent: req.GetAgentId(), peer: req.GetSender().GetId()}
	in.mu.Unlock()
	in.notify(req.GetText(), meta)
	return &pb.HandleMessageResponse{TurnId: "mcp-" + strconv.FormatUint(in.turns.Add(1), 10)}, nil
}

// turnFor is the open inbound task a tool call works for: the one named
// (an error when it is not open), else the only one open, else none.
func (in *inbound) turnFor(id string) (*openTask, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if id != "" {
		t := in.tasks[id]
		if t == nil {
			return nil, fmt.Errorf("%s %q is not an open A2A task of this session: pass the task_id of the channel message you are working on, or leave it out", TurnArg, id)
		}
		return t, nil
	}
	if len(in.tasks) == 1 {
		for _, t := range in.tasks {
			return t, nil
		}
	}
	return nil, nil
}

// CancelTurn forgets the task and tells the model to stop working on it:
// its sender canceled it, or the plugin's watchdog failed it.
func (in *inbound) CancelTurn(_ context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	in.mu.Lock()
	_, open := in.tasks[req.GetTaskId()]
	delete(in.tasks, req.GetTaskId())
	in.mu.Unlock()
	if !open {
		return &pb.CancelTurnResponse{}, nil
	}
	why := req.GetReason()
	if why == "" {
		why = "canceled by its sender"
	}
	in.notify(fmt.Sprintf("A2A task %s has ended (%s). Stop working on it; a2a_reply can no longer answer it.", req.GetTaskId(), why),
		map[string]string{"task_id": req.GetTaskId(), "context_id": req.GetChatId(), "event": "canceled"})
	return &pb.CancelTurnResponse{Cancelled: true}, nil
}

// ListTools is the host's tool registry, which the plugin turns into card
// skills: an MCP server does not know its client's tools, so none.
func (in *inbound) ListTools(context.Context) ([]*pb.ToolDefinition, error) { return nil, nil }

// replyArgs are a2a_reply's arguments.
type replyArgs struct {
	TaskID string `json:"task_id"`
	Text   string `json:"text"`
	Kind   string `json:"kind"`
}

const replySchema = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "The task_id of the channel message you answer."},
    "text": {"type": "string", "description": "Your answer (kind final) or your question (kind question), as the sender will read it."},
    "kind": {"type": "string", "enum": ["final", "question"], "description": "final (default): your answer, which completes the task. question: you need more from the sender; the task waits for their answer, which arrives as a new channel message with the same task_id."}
  },
  "required": ["task_id", "text"],
  "additionalProperties": false
}`

func replyTool() *sdk.Tool {
	return &sdk.Tool{
		Name: ReplyTool,
		Description: "Answer an A2A task that another agent sent you (it arrived as a <channel source=\"a2a\" task_id=…> message). " +
			"kind \"final\" completes the task with your answer; kind \"question\" asks the sender for more and leaves the task waiting for their reply.",
		InputSchema: json.RawMessage(replySchema),
	}
}

// reply is a2a_reply: the answer (or question) becomes the platform's Send
// that ends the turn. A task that is not open here — never delivered,
// answered already, canceled, or failed by the watchdog — is a tool error
// saying so.
func (in *inbound) reply(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var a replyArgs
	dec := json.NewDecoder(strings.NewReader(string(req.Params.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return textResult(fmt.Sprintf("a2a_reply: bad arguments (want {task_id, text, kind}): %v", err), true), nil
	}
	if strings.TrimSpace(a.TaskID) == "" || strings.TrimSpace(a.Text) == "" {
		return textResult("a2a_reply: task_id and text are required: task_id is the task_id of the channel message you answer", true), nil
	}
	kind := pb.SendKind_SEND_KIND_FINAL
	switch a.Kind {
	case "", "final":
	case "question":
		kind = pb.SendKind_SEND_KIND_INPUT_REQUIRED
	default:
		return textResult(fmt.Sprintf("a2a_reply: kind must be \"final\" or \"question\", not %q", a.Kind), true), nil
	}
	in.mu.Lock()
	t := in.tasks[a.TaskID]
	delete(in.tasks, a.TaskID)
	in.mu.Unlock()
	if t == nil {
		return textResult(fmt.Sprintf("a2a_reply: there is no open A2A task %q in this session: it was answered already, "+
			"its sender canceled it, it failed after waiting too long for a reply, or the id is wrong (use the task_id of the channel message)", a.TaskID), true), nil
	}
	if in.platform == nil {
		return textResult("a2a_reply: the plugin serves no A2A platform, so nothing can be answered", true), nil
	}
	_, err := in.platform.Send(ctx, &pb.SendRequest{Platform: t.platform, ChatId: t.chat, TaskId: a.TaskID, AgentId: t.agent,
		Kind: kind, Text: a.Text, EndsTurn: true})
	if err != nil {
		if errors.Is(err, hostsdk.ErrUnavailable) {
			in.mu.Lock()
			in.tasks[a.TaskID] = t
			in.mu.Unlock()
			return textResult(fmt.Sprintf("a2a_reply: the A2A plugin is restarting; call a2a_reply again in a few seconds (%v)", err), true), nil
		}
		return textResult(fmt.Sprintf("a2a_reply: the answer to task %s was not delivered: %v", a.TaskID, err), true), nil
	}
	if kind == pb.SendKind_SEND_KIND_INPUT_REQUIRED {
		return textResult(fmt.Sprintf("Asked %s. Task %s now waits for their answer (INPUT_REQUIRED), which will arrive as a channel message with task_id %s.",
			t.peer, a.TaskID, a.TaskID), false), nil
	}
	return textResult(fmt.Sprintf("Answered %s: task %s is completed.", t.peer, a.TaskID), false), nil
}
