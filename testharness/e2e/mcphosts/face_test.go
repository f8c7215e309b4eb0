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
// itself), and writes the plugin's settings: the reference host as the
// trusted peer "peer".
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
	cfg, _ := json.Marshal(map[string]any{"store": "memory", "rate_limit": 0,
		"a2a_agents": []any{map[string]any{"name": "peer", "url": w.peerURL, "trust": "trusted"}}})
	w.faceConfig = filepath.Join(dir, "a2a.json")
	if err := os.WriteFile(w.faceConfig, cfg, 0o600); err != nil {
		return fmt.Errorf("writing the MCP face's settings: %w", err)
	}
	w.face = filepath.Join(dir, "a2a-mcp")
	return nil
}

// mcpFace is the MCP server entry for the tests' CLIs: a2a-mcp, its
// settings given by the environment block every MCP host supports.
func (w *world) mcpFace() mcpServer {
	return mcpServer{command: w.face, args: []string{}, env: map[string]string{
		"A2A_MCP_CONFIG":    w.faceConfig,
		"A2A_MCP_LOG_LEVEL": "warn",
	}}
}
