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
		args := "{}"
		if len(req.Params.Arguments) > 0 && string(req.Params.Arguments) != "null" {
			args = string(req.Params.Arguments)
		}
		res, err := f.callTool(ctx, name, args, progressTo(ctx, req))
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
