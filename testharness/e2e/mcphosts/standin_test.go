package mcphosts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// The MCP server the CLIs launch. Until the project's MCP face (issue 28)
// is merged, it is this test binary run again with standinEnv set: it
// launches the real A2A plugin through host-sdk (testharness.StartHost,
// as a host does) with the peer configured, and offers the plugin's tools
// over MCP stdio, forwarding each call to the plugin's CallTool.
const (
	standinEnv     = "MCPHOSTS_STANDIN"
	standinPeer    = "MCPHOSTS_PEER_URL"
	standinPlugins = "MCPHOSTS_PLUGINS"
)

// mcpServer is how a CLI launches the MCP face: command, arguments and
// environment.
type mcpServer struct {
	command string
	args    []string
	env     map[string]string
}

// mcpFace is the MCP server for the tests' CLIs, with the reference host
// as the plugin's peer "peer".
func (w *world) mcpFace() (mcpServer, error) {
	self, err := os.Executable()
	if err != nil {
		return mcpServer{}, fmt.Errorf("finding the test binary: %w", err)
	}
	return mcpServer{command: self, args: []string{"-test.run=^$"}, env: map[string]string{
		standinEnv: "1", standinPeer: w.peerURL, standinPlugins: w.plugins,
	}}, nil
}

func runStandin() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logf := testharness.LoggerFunc(func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	})
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	h, err := testharness.StartHost(startCtx, testharness.Options{
		PluginsDir: os.Getenv(standinPlugins),
		Logger:     logf,
		LogLevel:   "warn",
		PluginConfig: map[string]any{"port": 0, "store": "memory", "rate_limit": 0,
			"a2a_agents": []any{map[string]any{"name": "peer", "url": os.Getenv(standinPeer), "trust": "trusted"}}},
	})
	cancel()
	if err != nil {
		logf("stand-in MCP server: %v", err)
		return 1
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Close(ctx)
	}()
	tools, err := h.Tools(ctx)
	if err != nil {
		logf("stand-in MCP server: listing the plugin's tools: %v", err)
		return 1
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "a2a-standin", Version: "test"}, nil)
	for _, td := range tools {
		name := td.GetName()
		srv.AddTool(&mcp.Tool{Name: name, Description: td.GetDescription(), InputSchema: json.RawMessage(td.GetParametersJsonSchema())},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := string(req.Params.Arguments)
				if args == "" {
					args = "{}"
				}
				r, _, err := h.CallTool(ctx, name, args)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
				}
				return &mcp.CallToolResult{IsError: r.GetIsError(), Content: []mcp.Content{&mcp.TextContent{Text: r.GetContent()}}}, nil
			})
	}
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		logf("stand-in MCP server: %v", err)
		return 1
	}
	return 0
}
