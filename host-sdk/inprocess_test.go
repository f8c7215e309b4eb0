//go:build unix

package hostsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/host-sdk/internal/testplugin"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// serveTestPlugin serves the test plugin in process with a host that echoes
// through the plugin's own platform.
func serveTestPlugin(t *testing.T, opts hostsdk.InProcessOptions) *hostsdk.Plugin {
	t.Helper()
	var p *hostsdk.Plugin
	if opts.Host == nil {
		opts.Host = &testHost{platform: func(string) (plugin.Platform, bool) { return p.Platform() }}
	}
	if opts.Logger == nil {
		opts.Logger, _ = testLogger(t)
	}
	p = hostsdk.ServeInProcess(t, testplugin.New("testplugin", "1.0.0", nil).ServeOpts(), opts)
	return p
}

func TestInProcessPluginIsReadyWithItsCapabilities(t *testing.T) {
	p := serveTestPlugin(t, hostsdk.InProcessOptions{})
	if p.State() != hostsdk.StateReady || p.Name() != "testplugin" || p.Describe().GetVersion() != "1.0.0" {
		t.Fatalf("state %v name %q describe %v", p.State(), p.Name(), p.Describe())
	}
	if _, ok := p.Platform(); !ok {
		t.Error("no platform view")
	}
	if eps := p.Endpoints(); len(eps) != 1 || !strings.HasPrefix(eps[0], "test://testplugin/") {
		t.Errorf("endpoints = %v", eps)
	}
	if p.Pid() != 0 {
		t.Errorf("Pid of an in-process plugin = %d, want 0 (it is the test's own)", p.Pid())
	}
}

func TestInProcessInjectedMessageIsAnsweredThroughPlatformSend(t *testing.T) {
	p := serveTestPlugin(t, hostsdk.InProcessOptions{})
	ts, _ := p.Toolset()
	res, err := ts.CallTool(ctxT(t), &pb.CallToolRequest{Name: "inject", ArgumentsJson: `{"text":"hi","chat_id":"c1"}`}, nil)
	if err != nil || res.GetContent() != "echo: hi" {
		t.Fatalf("inject = %v, %v", res, err)
	}
}

func TestInProcessToolCallsStreamProgressAndMapErrors(t *testing.T) {
	p := serveTestPlugin(t, hostsdk.InProcessOptions{})
	ts, _ := p.Toolset()
	ctx := ctxT(t)
	var steps []string
	res, err := ts.CallTool(ctx, &pb.CallToolRequest{Name: "progress", ArgumentsJson: `{"n":3}`},
		func(pr *pb.ToolProgress) error { steps = append(steps, pr.GetMessage()); return nil })
	if err != nil || res.GetContent() != "did 3 steps" {
		t.Fatalf("progress = %v, %v", res, err)
	}
	if want := []string{"step 1/3", "step 2/3", "step 3/3"}; !slices.Equal(steps, want) {
		t.Errorf("progress events = %v, want %v", steps, want)
	}
	res, err = ts.CallTool(ctx, &pb.CallToolRequest{Name: "fail"}, nil)
	if err != nil || !res.GetIsError() {
		t.Errorf("fail = %v, %v; want an is_error result", res, err)
	}
	_, err = ts.CallTool(ctx, &pb.CallToolRequest{Name: "nope"}, nil)
	if !errors.Is(err, plugin.ErrUnknownTool) || status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `plugin "testplugin"`) {
		t.Errorf("unknown tool: err = %v", err)
	}
	_, err = ts.CallTool(ctx, &pb.CallToolRequest{Name: "panic"}, nil)
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "panic tool panicked") {
		t.Errorf("panic tool: err = %v, want Internal", err)
	}
	if _, err := ts.CallTool(ctx, &pb.CallToolRequest{Name: "echo", ArgumentsJson: `{}`}, nil); err != nil {
		t.Errorf("echo after a panic: %v", err)
	}
	hctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = ts.CallTool(hctx, &pb.CallToolRequest{Name: "hang"}, nil)
	if status.Code(err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hang with a deadline: err = %v", err)
	}
}

func TestInProcessNoConfigureLetsTheTestSeeARefusedConfiguration(t *testing.T) {
	p := serveTestPlugin(t, hostsdk.InProcessOptions{NoConfigure: true})
	_, err := p.Lifecycle().Configure(ctxT(t), &pb.ConfigureRequest{ConfigJson: []byte(`{"refuse":"because"}`)}, nil)
	if !errors.Is(err, plugin.ErrInvalidArgument) || !strings.Contains(err.Error(), "config.refuse is set (because)") {
		t.Fatalf("Configure err = %v", err)
	}
}

func TestInProcessRefusedConfigurationFailsTheTestHelper(t *testing.T) {
	// ServeInProcess fails its test; run it on a fake TB to see that.
	ft := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		hostsdk.ServeInProcess(ft, testplugin.New("testplugin", "1.0.0", nil).ServeOpts(),
			hostsdk.InProcessOptions{Config: json.RawMessage(`{"refuse":"nope"}`)})
	}()
	<-done
	ft.runCleanups()
	if !strings.Contains(ft.fatal, "refused its configuration") {
		t.Fatalf("ServeInProcess failure = %q", ft.fatal)
	}
}

type fakeTB struct {
	testing.TB
	fatal    string
	cleanups []func()
}

func (f *fakeTB) Helper()             {}
func (f *fakeTB) Cleanup(fn func())   { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) TempDir() string     { return f.TB.TempDir() }
func (f *fakeTB) Logf(string, ...any) {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic("fatal")
}
func (f *fakeTB) Fatal(args ...any) { f.fatal = fmt.Sprint(args...); panic("fatal") }
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestHandlesOfAStoppedPluginFailFast(t *testing.T) {
	var p *hostsdk.Plugin
	t.Run("serve", func(t *testing.T) { p = serveTestPlugin(t, hostsdk.InProcessOptions{}) })
	// The subtest's cleanup stopped the plugin.
	if p.State() != hostsdk.StateStopped {
		t.Fatalf("state = %v, want stopped", p.State())
	}
	ts, _ := p.Toolset()
	start := time.Now()
	_, err := ts.CallTool(context.Background(), &pb.CallToolRequest{Name: "echo"}, nil)
	if !errors.Is(err, hostsdk.ErrUnavailable) || !strings.Contains(err.Error(), `plugin "testplugin" is unavailable (stopped by the host)`) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a call to a stopped plugin took %s", d)
	}
}
