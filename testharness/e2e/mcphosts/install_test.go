package mcphosts_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Each CLI's own "mcp add" registers the MCP face the way a user installs
// it (docs/mcp.md), and the CLI then lists it: Claude Code and Gemini CLI
// connect to each server to list it, so "Connected" means a2a-mcp started
// and answered the MCP handshake; Codex lists its configuration.
func TestMCPAddRegistersTheFaceAndTheCLIListsIt(t *testing.T) {
	t.Parallel()
	w := sharedWorld(t)
	face := w.mcpFace()
	cases := []struct {
		name, env, cli string
		// setup prepares HOME; add and list are the CLI's arguments.
		setup     func(t *testing.T, home string)
		add, list []string
		want      []string
	}{
		{
			name: "Claude Code", env: "MCPHOSTS_CLAUDE", cli: "Claude Code",
			add:  []string{"mcp", "add", "a2a", "-e", "A2A_AGENTS=" + face.env["A2A_AGENTS"], "--", face.command},
			list: []string{"mcp", "list"},
			want: []string{"a2a: " + face.command + "  - ✔ Connected"},
		},
		{
			name: "Codex CLI", env: "MCPHOSTS_CODEX", cli: "Codex CLI",
			add:  []string{"mcp", "add", "a2a", "--env", "A2A_AGENTS=" + face.env["A2A_AGENTS"], "--", face.command},
			list: []string{"mcp", "list"},
			want: []string{"a2a", face.command, "A2A_AGENTS=", "enabled"},
		},
		{
			name: "Gemini CLI", env: "MCPHOSTS_GEMINI", cli: "Gemini CLI",
			// Folder trust off, as in the other tests: a fresh temporary
			// directory is an untrusted folder, where Gemini CLI disables
			// every MCP server.
			setup: func(t *testing.T, home string) { geminiHomeIn(t, home, nil) },
			add:   []string{"mcp", "add", "--scope", "user", "a2a", face.command, "-e", "A2A_AGENTS=" + face.env["A2A_AGENTS"]},
			list:  []string{"mcp", "list"},
			want:  []string{"✓ a2a: " + face.command + "  (stdio) - Connected"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := cli(t, c.env, c.cli)
			home := t.TempDir()
			if c.setup != nil {
				c.setup(t, home)
			}
			env := append(baseEnv(home), "CODEX_HOME="+filepath.Join(home, ".codex"), "DISABLE_TELEMETRY=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
			if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
				t.Fatal(err)
			}
			run := func(args []string) string {
				ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, args...)
				cmd.Dir, cmd.Env = home, env
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %v: %v\n%s", c.cli, args, err, out)
				}
				checkGroupGone(t, cmd.Process.Pid)
				return string(out)
			}
			run(c.add)
			out := run(c.list)
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("%s mcp list lacks %q:\n%s", c.cli, want, out)
				}
			}
		})
	}
}
