package testharness

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The module's tests run some Node.js scripts: the official JS SDK's
// interop clients and peers (testharness/interop/js) and the inspector's
// browser test (testharness/inspector). `make deps` installs their npm
// packages; the helpers below skip a test when node is not installed and
// fail it when the packages are missing.

// JSSDKPackage is the npm package of the official A2A JS SDK, which the
// scripts in JSDir import.
const JSSDKPackage = "@a2a-js/sdk"

// DefaultNodeTimeout bounds a script run whose NodeOptions.Timeout is zero.
const DefaultNodeTimeout = 60 * time.Second

// JSDir returns the directory testharness/interop/js of this module: the
// official JS SDK's interop scripts and their node_modules.
func JSDir() string { return filepath.Join(harnessDir(), "interop", "js") }

// InspectorDir returns the directory testharness/inspector of this module:
// the inspector's browser test (run.mjs) and its node_modules.
func InspectorDir() string { return filepath.Join(harnessDir(), "inspector") }

// harnessDir is the directory of this package's sources.
func harnessDir() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Dir(file)
	}
	// Built with -trimpath: find the module from the working directory.
	if root, err := ModuleRoot(""); err == nil {
		return filepath.Join(root, "testharness")
	}
	return "testharness"
}

// RequireNode skips t when node is not on PATH and fails it, with the
// command that installs it, when the npm package pkg is not installed in
// dir/node_modules. It returns the path of node.
func RequireNode(t testing.TB, dir, pkg string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; this test needs Node.js 20 or later (see README)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		t.Fatalf("%s is not installed in %s: run `make deps` (or `npm ci` in that directory) first", pkg, dir)
	}
	return node
}

// NodeOptions says how RunNodeScript runs a script. The zero value runs a
// script of JSDir, which needs the JS SDK, for at most DefaultNodeTimeout.
type NodeOptions struct {
	// Dir is the directory of the script and of the node_modules it needs;
	// JSDir() when empty.
	Dir string
	// Needs is the npm package the script needs (RequireNode checks it);
	// JSSDKPackage when empty.
	Needs string
	// Env is added to the test's environment.
	Env []string
	// Timeout bounds the run (the script is killed then, and the test
	// fails); DefaultNodeTimeout when zero.
	Timeout time.Duration
	// OnLine, when set, is called with each line the script prints on
	// stdout, as it prints it, in the test's goroutine. What it returns,
	// when not empty, is written to the script's stdin: scripts that need
	// something from the test ask for it on stdout.
	OnLine func(line string) (answer string)
}

// RunNodeScript runs `node script args…` in opts.Dir, once RequireNode
// passes. It logs every line the script prints on stdout and passes it to
// opts.OnLine; it fails the test, with what the script printed on stderr,
// when the script exits with an error or outlives opts.Timeout. It returns
// the lines of stdout and the script's stderr.
func RunNodeScript(t testing.TB, opts NodeOptions, script string, args ...string) (stdout []string, stderr string) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = JSDir()
	}
	if opts.Needs == "" {
		opts.Needs = JSSDKPackage
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultNodeTimeout
	}
	node := RequireNode(t, opts.Dir, opts.Needs)
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), opts.Env...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node %s: %v", script, err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		stdout = append(stdout, line)
		t.Logf("%s: %s", script, line)
		if opts.OnLine == nil {
			continue
		}
		if answer := opts.OnLine(line); answer != "" {
			_, _ = io.WriteString(stdin, answer)
		}
	}
	if err := sc.Err(); err != nil {
		t.Errorf("reading the output of %s: %v", script, err)
		_, _ = io.Copy(io.Discard, out) // let the script finish
	}
	err = cmd.Wait()
	t.Logf("%s ran for %s", script, time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		t.Fatalf("%s failed: %v\n%s", script, err, errOut.String())
	}
	return stdout, errOut.String()
}

// RunNodeJSONLines runs script like RunNodeScript; every line it prints on
// stdout must be a JSON value (a line that is not fails the test), which is
// decoded into an S and passed to each as the script prints it, before
// opts.OnLine sees the line.
func RunNodeJSONLines[S any](t testing.TB, opts NodeOptions, each func(S), script string, args ...string) {
	t.Helper()
	onLine := opts.OnLine
	opts.OnLine = func(line string) string {
		t.Helper()
		var s S
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Errorf("%s printed a non-JSON line: %s", script, line)
			return ""
		}
		each(s)
		if onLine == nil {
			return ""
		}
		return onLine(line)
	}
	RunNodeScript(t, opts, script, args...)
}

// JSClientStep is one line of what the official JS SDK's client scripts
// client-check.mjs (JSON-RPC) and client-binding.mjs (HTTP+JSON, gRPC) of
// JSDir print: a step, whether it went as expected, and what it saw.
type JSClientStep struct {
	Step  string `json:"step"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`

	Name            string   `json:"name"`
	Streaming       bool     `json:"streaming"`
	Interfaces      []string `json:"interfaces"`
	Skills          []string `json:"skills"`
	SecuritySchemes []string `json:"securitySchemes"`
	ProtocolVersion string   `json:"protocolVersion"`
	TaskID          string   `json:"taskId"`
	ContextID       string   `json:"contextId"`
	State           string   `json:"state"`
	Before          string   `json:"before"`
	Answer          string   `json:"answer"`
	// AllText is every text of the task a client that joins them all
	// shows: the status message, the artifacts, the history.
	AllText       string   `json:"allText"`
	History       int      `json:"history"`
	Events        []string `json:"events"`
	Count         int      `json:"count"`
	TotalSize     int      `json:"totalSize"`
	NextPageToken *string  `json:"nextPageToken"`
	SecondCancel  string   `json:"secondCancel"`

	// client-binding.mjs: the SDK's typed REST (and gRPC) errors, push
	// configs and the requests the server saw.
	StatusCode  int      `json:"statusCode"`
	Transport   string   `json:"transport"`
	Artifacts   int      `json:"artifacts"`
	Created     string   `json:"created"`
	Token       string   `json:"token"`
	Listed      int      `json:"listed"`
	AfterDelete *int     `json:"afterDelete"`
	Requests    []string `json:"requests"`
}

// RunJSClient runs one of JSDir's JS SDK client scripts (client-check.mjs,
// client-binding.mjs) like RunNodeJSONLines and returns the last step of each
// name. When the script has subscribed to a task the test holds, it prints
// the step "subscribed" with the task's id: onSubscribed lets the task
// finish.
func RunJSClient(t testing.TB, opts NodeOptions, onSubscribed func(taskID string), script string, args ...string) map[string]JSClientStep {
	t.Helper()
	steps := map[string]JSClientStep{}
	RunNodeJSONLines(t, opts, func(s JSClientStep) {
		if s.Step == "subscribed" {
			onSubscribed(s.TaskID)
			return
		}
		steps[s.Step] = s
	}, script, args...)
	return steps
}
