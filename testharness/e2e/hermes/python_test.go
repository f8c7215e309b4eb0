// Package hermes_test runs the Python host SDK's and the Hermes plugin's
// own test suites (host-sdk/python/tests, host-sdk/hermes/tests) on
// Debian's /usr/bin/python3 against the binary built here, and drives an
// agent hosted by the Hermes plugin with the official A2A SDK clients.
package hermes_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// python is Debian's interpreter, never a python3 that PATH may resolve to
// something else (pyenv): the suites run on Debian's grpcio and protobuf.
const python = "/usr/bin/python3"

// requirePython fails t, saying how to fix it, when /usr/bin/python3 or
// the Debian packages the suites need are missing.
func requirePython(t *testing.T) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import grpc, google.protobuf, cryptography, yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("%s cannot import grpc, protobuf, cryptography and yaml (%v): run `make python-deps` "+
			"(Debian's python3-grpcio, python3-protobuf, python3-cryptography, python3-yaml)\n%s", python, err, out)
	}
}

// moduleRoot is the repository root.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// pluginBinary builds cmd/a2a-plugin once per test binary.
func pluginBinary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := testharness.BuildBinary(ctx, moduleRoot(t), testharness.PluginBinary)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// runUnittest runs one unittest module of dir and fails t with its output
// when a test fails.
func runUnittest(t *testing.T, dir, module string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "-v", module)
	cmd.Dir = dir
	// A suite that hangs is stopped with SIGABRT, on which Python's fault
	// handler prints every thread's stack into the output.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGABRT) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(), "AGENTPLUGIN_A2A_BIN="+pluginBinary(t), "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1",
		"PYTHONFAULTHANDLER=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	summary := lastLines(out.String(), 3)
	if err != nil {
		t.Fatalf("python -m unittest %s (in %s): %v\n%s", module, dir, err, out.String())
	}
	t.Logf("%s: %s", module, summary)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// TestPythonHostSDK runs host-sdk/python/tests: the SDK against the real
// binary — every contract RPC both ways over AutoMTLS and a private socket
// directory, with and without call streams; a killed plugin restarted;
// candidates that are not plugins skipped; a killed host leaving no orphan.
func TestPythonHostSDK(t *testing.T) {
	requirePython(t)
	dir := filepath.Join(moduleRoot(t), "host-sdk", "python", "tests")
	for _, m := range []string{"test_units", "test_contract", "test_supervise"} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			runUnittest(t, dir, m)
		})
	}
}

// TestHermesPlugin runs host-sdk/hermes/tests: the plugin as installed by
// its install command, on the stand-in of Hermes' plugin API with a
// scripted model, against the real binary over real HTTP; and the
// stand-in's own tests, which pin it to Hermes' behaviour.
func TestHermesPlugin(t *testing.T) {
	requirePython(t)
	dir := filepath.Join(moduleRoot(t), "host-sdk", "hermes", "tests")
	for _, m := range []string{"test_gateway", "test_processes", "test_restart", "test_standin"} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			runUnittest(t, dir, m)
		})
	}
}
