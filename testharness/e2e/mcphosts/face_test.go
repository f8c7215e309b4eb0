package mcphosts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// mcpServer is how a CLI launches the MCP face: command, arguments and
// environment, as each CLI's configuration names them.
type mcpServer struct {
	command string
	args    []string
	env     map[string]string
}

// mcpBinary is the MCP face.
var mcpBinary = testharness.Binary{Name: "a2a-mcp", Package: "./cmd/a2a-mcp"}

// installFace builds cmd/a2a-mcp into its own directory beside a copy of
// the plugin, as a user installs it (a2a-mcp finds a2a-plugin next to
// itself), with the plugin's settings, the reference host as the trusted
// peer "peer", both as A2A_AGENTS and as a file for A2A_MCP_CONFIG (which
// the Claude Code plugin passes on).
func (w *world) installFace(ctx context.Context, plugin string) error {
	bin, err := testharness.BuildBinary(ctx, w.root, mcpBinary)
	if err != nil {
		return err
	}
	dir := filepath.Join(w.tmp, "mcp")
	if _, err := testharness.InstallBinary(bin, dir, "a2a-mcp"); err != nil {
		return err
	}
	if _, err := testharness.InstallBinary(plugin, dir, "a2a-plugin"); err != nil {
		return err
	}
	agents := []any{map[string]any{"name": "peer", "url": w.peerURL, "trust": "trusted"}}
	b, _ := json.Marshal(agents)
	w.agentsJSON = string(b)
	cfg, _ := json.Marshal(map[string]any{"a2a_agents": agents})
	w.faceConfig = filepath.Join(dir, "a2a.json")
	if err := os.WriteFile(w.faceConfig, cfg, 0o600); err != nil {
		return fmt.Errorf("writing the MCP face's settings: %w", err)
	}
	w.face = filepath.Join(dir, "a2a-mcp")
	return nil
}

// mcpFace is the MCP server entry for the tests' CLIs as docs/mcp.md
// installs it: a2a-mcp, the peers in A2A_AGENTS in the environment block
// every MCP host supports.
func (w *world) mcpFace() mcpServer {
	return mcpServer{command: w.face, args: []string{}, env: map[string]string{
		"A2A_AGENTS":        w.agentsJSON,
		"A2A_MCP_LOG_LEVEL": "warn",
	}}
}
