package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestDescribeReportsExactlyTheServedCapabilities(t *testing.T) {
	f := &fakePlugin{describe: func(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
		// Claims a platform it does not serve, forgets the toolset it does.
		return &pb.DescribeResponse{Name: "fake", Version: "1.0.0",
			Capabilities: []pb.Capability{pb.Capability_CAPABILITY_PLATFORM}}, nil
	}}
	c := serveInProcess(t, plugin.ServeOpts{Lifecycle: f, Toolset: f})
	resp, err := c.lifecycle(t).Describe(ctxT(t), &pb.DescribeRequest{HostProtocolMinor: plugin.ProtocolMinor})
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if resp.GetName() != "fake" || resp.GetVersion() != "1.0.0" {
		t.Errorf("Describe = %v", resp)
	}
	if got, want := resp.GetCapabilities(), []pb.Capability{pb.Capability_CAPABILITY_TOOLSET}; !slices.Equal(got, want) {
		t.Errorf("capabilities = %v, want %v", got, want)
	}
	if !strings.Contains(c.pluginLog.String(), "capability whose service was not given to Serve") {
		t.Errorf("no warning about the false platform claim in the plugin log:\n%s", c.pluginLog)
	}
}

func TestUnsuppliedServiceAnswersUnimplemented(t *testing.T) {
	f := &fakePlugin{}
	c := serveInProcess(t, plugin.ServeOpts{Lifecycle: f})
	_, err := c.platform(t).Send(ctxT(t), &pb.SendRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("Send on a plugin without a platform: err = %v, want Unimplemented", err)
	}
}

func TestConfigureAndDrainReachTheImplementation(t *testing.T) {
	var gotCfg *pb.ConfigureRequest
	var drained uint32
	f := &fakePlugin{
		configure: func(_ context.Context, req *pb.ConfigureRequest, _ plugin.Host) (*pb.ConfigureResponse, error) {
			gotCfg = req
			return &pb.ConfigureResponse{Warnings: []string{"w1"}}, nil
		},
		drain: func(_ context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
			drained = req.GetTimeoutMs()
			return &pb.DrainResponse{Abandoned: 2}, nil
		},
	}
	c := serveFake(t, f)
	lc := c.lifecycle(t)
	resp, err := lc.Configure(ctxT(t), &pb.ConfigureRequest{ConfigJson: []byte(`{"a":1}`), DataDir: "/data", LogLevel: "debug"}, nil)
	if err != nil {
		t.Fatalf("Configure: %v", err)
	}
	if !slices.Equal(resp.GetWarnings(), []string{"w1"}) {
		t.Errorf("warnings = %v", resp.GetWarnings())
	}
	if string(gotCfg.GetConfigJson()) != `{"a":1}` || gotCfg.GetDataDir() != "/data" || gotCfg.GetHostBrokerId() != 0 {
		t.Errorf("plugin saw %v", gotCfg)
	}
	if f.Host() != nil {
		t.Errorf("Configure without a host gave the plugin Host %T, want nil", f.Host())
	}
	d, err := lc.Drain(ctxT(t), &pb.DrainRequest{TimeoutMs: 1500})
	if err != nil || d.GetAbandoned() != 2 || drained != 1500 {
		t.Fatalf("Drain = %v, %v (plugin saw timeout %d)", d, err, drained)
	}
}

// The broker callback path: the plugin calls Host.HandleMessage, and the
// host answers through Platform.Send on the same connection.
func TestPluginCallsHostAndHostAnswersThroughPlatformSend(t *testing.T) {
	sent := make(chan *pb.SendRequest, 1)
	f := &fakePlugin{send: func(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
		sent <- req
		return &pb.SendResponse{MessageId: "delivered"}, nil
	}}
	c := serveFake(t, f)
	platform := c.platform(t)
	host := &fakeHost{handleMessage: func(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		// Answer asynchronously, as a host's agent loop does.
		go func() {
			_, _ = platform.Send(context.Background(), &pb.SendRequest{
				Platform: req.GetPlatform(), ChatId: req.GetChatId(), TaskId: req.GetTaskId(),
				Kind: pb.SendKind_SEND_KIND_FINAL, Text: "echo: " + req.GetText(),
			})
		}()
		return &pb.HandleMessageResponse{TurnId: "turn-1"}, nil
	}}
	if _, err := c.lifecycle(t).Configure(ctxT(t), &pb.ConfigureRequest{}, plugin.NewHostServer(host, 0)); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	h := f.Host()
	if h == nil {
		t.Fatal("Configure with a host gave the plugin a nil Host")
	}
	resp, err := h.HandleMessage(ctxT(t), &pb.HandleMessageRequest{
		Platform: "fake", ChatId: "ctx-1", TaskId: "task-1", Text: "hello", Unattended: true,
	})
	if err != nil || resp.GetTurnId() != "turn-1" {
		t.Fatalf("HandleMessage = %v, %v", resp, err)
	}
	select {
	case req := <-sent:
		if req.GetTaskId() != "task-1" || req.GetText() != "echo: hello" || req.GetKind() != pb.SendKind_SEND_KIND_FINAL {
			t.Fatalf("plugin received Send %v", req)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the host's answer never reached Platform.Send")
	}

	tools, err := h.ListTools(ctxT(t))
	if err != nil || len(tools) != 1 || tools[0].GetName() != "host_tool" {
		t.Fatalf("Host.ListTools = %v, %v", tools, err)
	}
	cancelled, err := h.CancelTurn(ctxT(t), &pb.CancelTurnRequest{ChatId: "ctx-1"})
	if err != nil || !cancelled.GetCancelled() {
		t.Fatalf("Host.CancelTurn = %v, %v", cancelled, err)
	}
	_, err = h.Complete(ctxT(t), &pb.CompleteRequest{Prompt: "x"})
	if status.Code(err) != codes.Unimplemented || !errors.Is(err, plugin.ErrUnimplemented) {
		t.Fatalf("Host.Complete on a host without a model: err = %v, want Unimplemented matching ErrUnimplemented", err)
	}
}

func TestSendEndingTheTurnRunsProcessingCompleteAfterIt(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	f := &fakePlugin{
		send: func(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, fmt.Sprintf("Send %s %s ends_turn=%t", req.GetTaskId(), req.GetKind(), req.GetEndsTurn()))
			if req.GetText() == "refuse" {
				return nil, fmt.Errorf("no such task: %w", plugin.ErrNotReady)
			}
			return &pb.SendResponse{MessageId: "m1"}, nil
		},
		complete: func(_ context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, fmt.Sprintf("ProcessingComplete %s %s %s", req.GetChatId(), req.GetTaskId(), req.GetOutcome()))
			return &pb.ProcessingCompleteResponse{}, nil
		},
	}
	if desc, err := serveFake(t, f).lifecycle(t).Describe(ctxT(t), &pb.DescribeRequest{}); err != nil || desc.GetProtocolMinor() < 1 {
		t.Fatalf("Describe = %v, %v: a plugin served by Serve honours ends_turn, so it must say protocol minor 1 or more", desc, err)
	}
	pf := serveFake(t, f).platform(t)
	for _, kind := range []pb.SendKind{pb.SendKind_SEND_KIND_FINAL, pb.SendKind_SEND_KIND_INPUT_REQUIRED,
		pb.SendKind_SEND_KIND_AUTH_REQUIRED, pb.SendKind_SEND_KIND_DIRECT_REPLY} {
		resp, err := pf.Send(ctxT(t), &pb.SendRequest{ChatId: "c", TaskId: "t", Kind: kind, Text: "x", EndsTurn: true})
		if err != nil || resp.GetMessageId() != "m1" {
			t.Fatalf("Send %s with ends_turn = %v, %v", kind, resp, err)
		}
	}
	for _, kind := range []pb.SendKind{pb.SendKind_SEND_KIND_PROGRESS, pb.SendKind_SEND_KIND_ARTIFACT} {
		if _, err := pf.Send(ctxT(t), &pb.SendRequest{TaskId: "t", Kind: kind, Text: "x", EndsTurn: true}); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("Send %s with ends_turn: err = %v, want InvalidArgument", kind, err)
		}
	}
	// A refused Send does not end the turn.
	if _, err := pf.Send(ctxT(t), &pb.SendRequest{TaskId: "t2", Kind: pb.SendKind_SEND_KIND_FINAL, Text: "refuse", EndsTurn: true}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("refused Send: err = %v", err)
	}
	// Without ends_turn nothing changes.
	if _, err := pf.Send(ctxT(t), &pb.SendRequest{TaskId: "t3", Kind: pb.SendKind_SEND_KIND_FINAL, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"Send t SEND_KIND_FINAL ends_turn=true", "ProcessingComplete c t OUTCOME_SUCCESS",
		"Send t SEND_KIND_INPUT_REQUIRED ends_turn=true", "ProcessingComplete c t OUTCOME_SUCCESS",
		"Send t SEND_KIND_AUTH_REQUIRED ends_turn=true", "ProcessingComplete c t OUTCOME_SUCCESS",
		"Send t SEND_KIND_DIRECT_REPLY ends_turn=true", "ProcessingComplete c t OUTCOME_SUCCESS",
		"Send t2 SEND_KIND_FINAL ends_turn=true",
		"Send t3 SEND_KIND_FINAL ends_turn=false",
	}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("the implementation saw\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

func TestNilHostHandlerStillServesWatchButNoCallbacks(t *testing.T) {
	f := &fakePlugin{}
	c := serveFake(t, f)
	hs := plugin.NewHostServer(nil, 0)
	if _, err := c.lifecycle(t).Configure(ctxT(t), &pb.ConfigureRequest{}, hs); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	_, err := f.Host().HandleMessage(ctxT(t), &pb.HandleMessageRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("HandleMessage on a host without a handler: %v, want Unimplemented", err)
	}
}

func TestCallToolStreamsProgressThenResult(t *testing.T) {
	f := &fakePlugin{callTool: func(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
		for i := range 5 {
			if err := progress(&pb.ToolProgress{Message: fmt.Sprintf("step %d", i), Fraction: float64(i) / 5}); err != nil {
				return nil, err
			}
		}
		return &pb.ToolResult{Content: "done " + req.GetArgumentsJson()}, nil
	}}
	c := serveFake(t, f)
	var got []string
	res, err := c.toolset(t).CallTool(ctxT(t), &pb.CallToolRequest{Name: "progress", ArgumentsJson: `{"n":5}`},
		func(p *pb.ToolProgress) error {
			got = append(got, p.GetMessage())
			return nil
		})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if res.GetContent() != `done {"n":5}` || res.GetIsError() {
		t.Errorf("result = %v", res)
	}
	if want := []string{"step 0", "step 1", "step 2", "step 3", "step 4"}; !slices.Equal(got, want) {
		t.Errorf("progress = %v, want %v", got, want)
	}
}

func TestCallToolWithNilProgressFuncStillReturnsResult(t *testing.T) {
	f := &fakePlugin{callTool: func(_ context.Context, _ *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
		_ = progress(&pb.ToolProgress{Message: "ignored"})
		return &pb.ToolResult{Content: "ok", IsError: true}, nil
	}}
	res, err := serveFake(t, f).toolset(t).CallTool(ctxT(t), &pb.CallToolRequest{Name: "x"}, nil)
	if err != nil || res.GetContent() != "ok" || !res.GetIsError() {
		t.Fatalf("CallTool = %v, %v", res, err)
	}
}

func TestProgressCallbackErrorStopsTheToolCall(t *testing.T) {
	toolSaw := make(chan error, 1)
	f := &fakePlugin{callTool: func(ctx context.Context, _ *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
		for {
			if err := progress(&pb.ToolProgress{Message: "tick"}); err != nil {
				toolSaw <- err
				return nil, err
			}
			select {
			case <-ctx.Done():
				toolSaw <- ctx.Err()
				return nil, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}}
	stop := errors.New("caller went away")
	_, err := serveFake(t, f).toolset(t).CallTool(ctxT(t), &pb.CallToolRequest{Name: "loop"},
		func(*pb.ToolProgress) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("CallTool err = %v, want it to wrap the progress callback's error", err)
	}
	select {
	case <-toolSaw:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool kept running after the caller stopped the call")
	}
}

func TestProgressAfterTheCallReturnedIsRefused(t *testing.T) {
	late := make(chan plugin.ProgressFunc, 1)
	f := &fakePlugin{callTool: func(_ context.Context, _ *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
		late <- progress
		return &pb.ToolResult{Content: "ok"}, nil
	}}
	if _, err := serveFake(t, f).toolset(t).CallTool(ctxT(t), &pb.CallToolRequest{Name: "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := (<-late)(&pb.ToolProgress{Message: "too late"}); err == nil {
		t.Fatal("a ProgressFunc used after its call returned succeeded; want an error")
	}
}

// A raw server that ends the stream without a result, which our server half
// never does; the client half must say so rather than return (nil, nil).
func TestCallToolStreamEndingWithoutResultIsAnError(t *testing.T) {
	gc, _ := goplugin.TestGRPCConn(t, func(s *grpc.Server) {
		pb.RegisterToolsetServiceServer(s, &resultlessToolset{})
	})
	t.Cleanup(func() { _ = gc.Close() })
	raw, err := (&plugin.ToolsetGRPCPlugin{}).GRPCClient(context.Background(), nil, gc)
	if err != nil {
		t.Fatal(err)
	}
	var progressed int
	res, err := raw.(plugin.Toolset).CallTool(ctxT(t), &pb.CallToolRequest{Name: "broken"},
		func(*pb.ToolProgress) error { progressed++; return nil })
	if !errors.Is(err, plugin.ErrNoResult) || res != nil {
		t.Fatalf("CallTool = %v, %v; want ErrNoResult", res, err)
	}
	if !strings.Contains(err.Error(), `"broken"`) {
		t.Errorf("error %q does not name the tool", err)
	}
	if progressed != 1 {
		t.Errorf("progress events = %d, want 1", progressed)
	}
}

type resultlessToolset struct {
	pb.UnimplementedToolsetServiceServer
}

func (resultlessToolset) CallTool(_ *pb.CallToolRequest, s pb.ToolsetService_CallToolServer) error {
	return s.Send(&pb.CallToolResponse{Event: &pb.CallToolResponse_Progress{Progress: &pb.ToolProgress{Message: "p"}}})
}

func TestToolReturningNeitherResultNorErrorIsInternal(t *testing.T) {
	f := &fakePlugin{callTool: func(context.Context, *pb.CallToolRequest, plugin.ProgressFunc) (*pb.ToolResult, error) {
		return nil, nil
	}}
	_, err := serveFake(t, f).toolset(t).CallTool(ctxT(t), &pb.CallToolRequest{Name: "nil"}, nil)
	if status.Code(err) != codes.Internal {
		t.Fatalf("err = %v, want Internal", err)
	}
}

func TestErrorsCrossTheBoundaryWithTheirGRPCCode(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		code     codes.Code
		sentinel error
	}{
		{"unknown tool", fmt.Errorf("no tool %q; ListTools says which exist: %w", "zzz", plugin.ErrUnknownTool), codes.NotFound, plugin.ErrUnknownTool},
		{"invalid argument", fmt.Errorf("argument url is required: %w", plugin.ErrInvalidArgument), codes.InvalidArgument, plugin.ErrInvalidArgument},
		{"not ready", fmt.Errorf("call Connect first: %w", plugin.ErrNotReady), codes.FailedPrecondition, plugin.ErrNotReady},
		{"unimplemented", plugin.ErrUnimplemented, codes.Unimplemented, plugin.ErrUnimplemented},
		{"deadline", fmt.Errorf("peer slow: %w", context.DeadlineExceeded), codes.DeadlineExceeded, context.DeadlineExceeded},
		{"explicit status", status.Error(codes.PermissionDenied, "peer not trusted"), codes.PermissionDenied, nil},
		{"wrapped status", fmt.Errorf("outer: %w", status.Error(codes.ResourceExhausted, "quota")), codes.ResourceExhausted, nil},
		{"plain error", errors.New("disk on fire"), codes.Unknown, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePlugin{callTool: func(context.Context, *pb.CallToolRequest, plugin.ProgressFunc) (*pb.ToolResult, error) {
				return nil, tc.err
			}, send: func(context.Context, *pb.SendRequest) (*pb.SendResponse, error) {
				return nil, tc.err
			}}
			c := serveFake(t, f)
			_, callErr := c.toolset(t).CallTool(ctxT(t), &pb.CallToolRequest{Name: "x"}, nil)
			_, sendErr := c.platform(t).Send(ctxT(t), &pb.SendRequest{})
			for what, err := range map[string]error{"CallTool": callErr, "Send": sendErr} {
				if got := status.Code(err); got != tc.code {
					t.Errorf("%s: code = %v, want %v (err %v)", what, got, tc.code, err)
				}
				if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
					t.Errorf("%s: errors.Is(%v, %v) = false", what, err, tc.sentinel)
				}
				want := tc.err.Error()
				if st, ok := status.FromError(tc.err); ok {
					want = st.Message()
				}
				if err != nil && !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %q lost the plugin's message %q", what, err, want)
				}
				// The message reads as the plugin wrote it, without gRPC's
				// "rpc error: code = … desc =" wrapping.
				if err != nil && tc.name != "wrapped status" && strings.Contains(err.Error(), "rpc error") {
					t.Errorf("%s: error %q carries gRPC's wrapping", what, err)
				}
			}
		})
	}
}

func TestPanickingHandlerReturnsInternalAndTheServerKeepsServing(t *testing.T) {
	f := &fakePlugin{}
	c := serveFake(t, f)
	lc, pf, ts := c.lifecycle(t), c.platform(t), c.toolset(t)
	ctx := ctxT(t)
	calls := map[string]func() error{
		"Describe":           func() error { _, err := lc.Describe(ctx, &pb.DescribeRequest{}); return err },
		"Configure":          func() error { _, err := lc.Configure(ctx, &pb.ConfigureRequest{}, nil); return err },
		"Drain":              func() error { _, err := lc.Drain(ctx, &pb.DrainRequest{}); return err },
		"Connect":            func() error { _, err := pf.Connect(ctx, &pb.ConnectRequest{}); return err },
		"Disconnect":         func() error { _, err := pf.Disconnect(ctx, &pb.DisconnectRequest{}); return err },
		"Send":               func() error { _, err := pf.Send(ctx, &pb.SendRequest{}); return err },
		"ProcessingComplete": func() error { _, err := pf.ProcessingComplete(ctx, &pb.ProcessingCompleteRequest{}); return err },
		"ListTools":          func() error { _, err := ts.ListTools(ctx); return err },
		"CallTool":           func() error { _, err := ts.CallTool(ctx, &pb.CallToolRequest{Name: "x"}, nil); return err },
	}
	f.panicky = true
	for method, call := range calls {
		err := call()
		if status.Code(err) != codes.Internal {
			t.Errorf("%s: err = %v, want Internal", method, err)
			continue
		}
		if !strings.Contains(err.Error(), "/"+method) || !strings.Contains(err.Error(), "boom in "+method) {
			t.Errorf("%s: error %q should name the method and the panic", method, err)
		}
	}
	f.panicky = false
	for method, call := range calls {
		if err := call(); err != nil {
			t.Errorf("%s after the panics: %v (the server should keep serving)", method, err)
		}
	}
	logs := c.pluginLog.String()
	if !strings.Contains(logs, "recovered from a panic") || !strings.Contains(logs, "goroutine ") {
		t.Errorf("plugin log lacks the panic line with its stack:\n%.2000s", logs)
	}
}

func TestPanickingHostHandlerReturnsInternalToThePlugin(t *testing.T) {
	f := &fakePlugin{}
	c := serveFake(t, f)
	host := &fakeHost{panicky: true}
	if _, err := c.lifecycle(t).Configure(ctxT(t), &pb.ConfigureRequest{}, plugin.NewHostServer(host, 0)); err != nil {
		t.Fatal(err)
	}
	_, err := f.Host().HandleMessage(ctxT(t), &pb.HandleMessageRequest{})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "HandleMessage") {
		t.Fatalf("err = %v, want Internal naming HandleMessage", err)
	}
	host.panicky = false
	if _, err := f.Host().HandleMessage(ctxT(t), &pb.HandleMessageRequest{}); err != nil {
		t.Fatalf("the host callback server died with the panic: %v", err)
	}
}

func TestMessagesLargerThanGRPCDefaultPassBothWays(t *testing.T) {
	big := strings.Repeat("x", 10<<20) // gRPC's default limit is 4 MiB
	var gotSend int
	var mu sync.Mutex
	f := &fakePlugin{
		send: func(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
			mu.Lock()
			gotSend = len(req.GetText())
			mu.Unlock()
			return &pb.SendResponse{}, nil
		},
		callTool: func(context.Context, *pb.CallToolRequest, plugin.ProgressFunc) (*pb.ToolResult, error) {
			return &pb.ToolResult{Content: big}, nil
		},
	}
	c := serveFake(t, f)
	var hostGot int
	host := &fakeHost{handleMessage: func(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		hostGot = len(req.GetText())
		return &pb.HandleMessageResponse{TurnId: big}, nil
	}}
	if _, err := c.lifecycle(t).Configure(ctxT(t), &pb.ConfigureRequest{}, plugin.NewHostServer(host, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.platform(t).Send(ctxT(t), &pb.SendRequest{Text: big}); err != nil {
		t.Fatalf("host→plugin 10 MiB Send: %v", err)
	}
	res, err := c.toolset(t).CallTool(ctxT(t), &pb.CallToolRequest{Name: "big"}, nil)
	if err != nil || len(res.GetContent()) != len(big) {
		t.Fatalf("plugin→host 10 MiB tool result: %v", err)
	}
	resp, err := f.Host().HandleMessage(ctxT(t), &pb.HandleMessageRequest{Text: big})
	if err != nil || len(resp.GetTurnId()) != len(big) || hostGot != len(big) {
		t.Fatalf("plugin↔host 10 MiB HandleMessage: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotSend != len(big) {
		t.Fatalf("plugin received %d bytes of Send text, want %d", gotSend, len(big))
	}
}

func TestConfigureFailureReachesTheHostWithItsCode(t *testing.T) {
	f := &fakePlugin{configure: func(context.Context, *pb.ConfigureRequest, plugin.Host) (*pb.ConfigureResponse, error) {
		return nil, fmt.Errorf("config: listen_addr %q is not host:port; fix the a2a section: %w", "nope", plugin.ErrInvalidArgument)
	}}
	_, err := serveFake(t, f).lifecycle(t).Configure(ctxT(t), &pb.ConfigureRequest{}, plugin.NewHostServer(&fakeHost{}, 0))
	if !errors.Is(err, plugin.ErrInvalidArgument) || !strings.Contains(err.Error(), "listen_addr") {
		t.Fatalf("Configure err = %v", err)
	}
}
