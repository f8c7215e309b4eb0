package mcp_test

import (
	"strings"
	"testing"
	"time"
)

// A plugin killed under the session is restarted by host-sdk's supervisor
// and the tools work again, in the same session.
func TestKilledPluginIsRestarted(t *testing.T) {
	f := startFace(t, faceOptions{protocol: proto20251125})
	if _, isErr := f.call(t, "a2a_list", map[string]any{}); isErr {
		t.Fatal("a2a_list failed before the kill")
	}
	old := f.pluginPid(t)
	if err := killPid(old); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(patience)
	sawDown := false
	for {
		text, isErr := f.call(t, "a2a_list", map[string]any{})
		if !isErr {
			break
		}
		sawDown = sawDown || strings.Contains(text, "unavailable")
		if time.Now().After(deadline) {
			t.Fatalf("the tools never came back after the plugin was killed: %s", text)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if now := f.pluginPid(t); now == old || !alive(now) {
		t.Fatalf("plugin pid %d after the kill, was %d", now, old)
	}
	t.Logf("the call right after the kill saw the plugin down: %t", sawDown)
}

// Closing the MCP session (the host closes stdin) stops a2a-mcp and its
// plugin: no process is left behind.
func TestClosedSessionLeavesNoProcess(t *testing.T) {
	f := startFace(t, faceOptions{protocol: proto20260728, inbound: true, config: map[string]any{"port": 0}})
	plugin := f.pluginPid(t)
	server := f.cmd.Process.Pid
	if err := f.session.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	deadline := time.Now().Add(patience)
	for alive(server) || alive(plugin) {
		if time.Now().After(deadline) {
			t.Fatalf("after the session closed: a2a-mcp alive=%t, plugin alive=%t", alive(server), alive(plugin))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := f.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("a2a-mcp exited with status %d; stderr:\n%s", code, f.stderr.String())
	}
}
