package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// mcpTool is the MCP form of a plugin's tool: its name, description and
// argument schema as the plugin wrote them for a model. The SDK requires an
// object schema (AddTool panics otherwise), so anything else is an error
// here rather than a panic there.
func mcpTool(def *pb.ToolDefinition) (*sdk.Tool, error) {
	raw := def.GetParametersJsonSchema()
	if raw == "" {
		raw = `{"type":"object"}`
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(raw), &schema); err != nil {
		return nil, fmt.Errorf("its parameters schema is not a JSON object: %w", err)
	}
	if schema["type"] != "object" {
		return nil, fmt.Errorf("its parameters schema has type %v, not \"object\"", schema["type"])
	}
	return &sdk.Tool{Name: def.GetName(), Description: def.GetDescription(), InputSchema: json.RawMessage(raw)}, nil
}

// textResult is a tool result holding text.
func textResult(text string, isError bool) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
}

// callHandler forwards tools/call of one tool to the plugin. Every failure
// is a tool result with isError, which the model reads: a protocol error
// would only tell the host that something broke. The handler's context is
// cancelled by the SDK on notifications/cancelled; that cancels the
// plugin's CallTool, and a cancelled a2a_call cancels its remote task.
func (f *Face) callHandler(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args, forTask, err := splitTurnArg(req.Params.Arguments)
		if err != nil {
			return textResult(fmt.Sprintf("%s: %v", name, err), true), nil
		}
		call := &pb.CallToolRequest{Name: name, ArgumentsJson: args, Platform: "mcp"}
		if f.opts.Inbound {
			if t, err := f.inbound.turnFor(forTask); err != nil {
				return textResult(fmt.Sprintf("%s: %v", name, err), true), nil
			} else if t != nil {
				// The call works for that inbound task: the plugin continues
				// its delegation chain (loop guard) and its cancel reaches
				// what the call starts (cascade).
				call.Platform, call.ChatId, call.AgentId = t.platform, t.chat, t.agent
			}
		}
		res, err := f.manager.CallTool(ctx, call, progressTo(ctx, req))
		switch {
		case err != nil && ctx.Err() != nil:
			// The client cancelled (or went away): it reads no answer.
			return textResult(fmt.Sprintf("%s was cancelled", name), true), nil
		case err != nil:
			f.log.Warn("tool call failed", "tool", name, "error", err)
			return textResult(fmt.Sprintf("%s failed: %v", name, err), true), nil
		}
		return textResult(res.GetContent(), res.GetIsError()), nil
	}
}

// TurnArg is the argument the MCP face adds to every plugin tool when
// inbound is on: the inbound task the call works for. It is taken out of
// the arguments before they reach the plugin.
const TurnArg = "inbound_task_id"

const turnArgDescription = "Only when you make this call while working on an A2A task that reached you as a channel message: " +
	"that message's task_id. It links the call to the task (the loop guard sees the chain, and canceling the task cancels " +
	"the work this call started). With only one such task open it is implied."

// withTurnArg adds TurnArg to an object schema (a copy).
func withTurnArg(tool *sdk.Tool) *sdk.Tool {
	var schema map[string]any
	if err := json.Unmarshal(tool.InputSchema.(json.RawMessage), &schema); err != nil {
		return tool
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, taken := props[TurnArg]; taken {
		return tool
	}
	props[TurnArg] = map[string]any{"type": "string", "description": turnArgDescription}
	schema["properties"] = props
	b, err := json.Marshal(schema)
	if err != nil {
		return tool
	}
	out := *tool
	out.InputSchema = json.RawMessage(b)
	return &out
}

// splitTurnArg takes TurnArg out of a call's arguments: the arguments for
// the plugin ("{}" when none) and the inbound task id ("" when not given).
func splitTurnArg(raw json.RawMessage) (args, forTask string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", "", nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", "", fmt.Errorf("the arguments must be a JSON object: %w", err)
	}
	v, ok := m[TurnArg]
	if !ok {
		return string(raw), "", nil
	}
	if err := json.Unmarshal(v, &forTask); err != nil {
		return "", "", fmt.Errorf("%s must be a string (the task_id of the channel message you work on)", TurnArg)
	}
	delete(m, TurnArg)
	b, err := json.Marshal(m)
	return string(b), forTask, err
}

// progressTo relays the plugin's progress events of a call as
// notifications/progress, when the client asked for them with a
// progressToken; nil otherwise. progress counts the events (it must grow);
// a fraction the plugin knows goes into the message.
func progressTo(ctx context.Context, req *sdk.CallToolRequest) func(*pb.ToolProgress) error {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	var mu sync.Mutex // the plugin may report from several goroutines
	n := 0
	return func(p *pb.ToolProgress) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		msg := p.GetMessage()
		if fr := p.GetFraction(); fr >= 0 && fr <= 1 {
			msg = fmt.Sprintf("%s (%.0f%%)", msg, fr*100)
		}
		err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Message: msg, Progress: float64(n)})
		if err != nil && errors.Is(err, sdk.ErrConnectionClosed) {
			return err // the client is gone: the tool should stop
		}
		return nil
	}
}
