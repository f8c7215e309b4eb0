// Package mcp is the MCP face of the agentplugin plugins: a Model Context
// Protocol server (github.com/modelcontextprotocol/go-sdk) that launches and
// supervises a plugin binary (normally the A2A plugin, cmd/a2a-plugin)
// through host-sdk, exactly as cmd/agenthost does, and gives any MCP host —
// Claude Code, Codex, Gemini CLI, Cursor — its tools. One MCP session is one
// host agent; cmd/a2a-mcp serves one session over stdio.
//
// What it translates:
//
//   - tools/list and tools/call ↔ the plugin's ListTools and CallTool: every
//     tool with its description and JSON schema as the plugin gives them; a
//     failed call (the plugin's is_error result, or the plugin down) is an
//     MCP tool result with isError, never a protocol error;
//   - the plugin's CallTool progress stream → notifications/progress, when
//     the client's call carried a progressToken;
//   - notifications/cancelled → the cancel of the CallTool's context, which
//     makes the A2A plugin cancel the remote task of an a2a_call (and, through
//     the delegation chain, what that task delegated).
//
// With Options.Inbound (Claude Code channels, off by default) the session is
// also the plugin's live session: each inbound A2A task the plugin hands the
// host (HostService.HandleMessage) is pushed into the session as the
// notification notifications/claude/channel, and the model answers with the
// tool a2a_reply, which becomes the platform's Send (a final answer, or a
// question that leaves the task INPUT_REQUIRED). See channel.go.
package mcp
