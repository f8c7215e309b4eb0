package plugin_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// conn is one in-process plugin connection: the plugin served by
// plugin.Serve in go-plugin's test mode, and the host's go-plugin client
// reattached to it.
type conn struct {
	rpc       goplugin.ClientProtocol
	pluginLog *syncBuffer
}

func (c *conn) lifecycle(t *testing.T) plugin.Lifecycle {
	t.Helper()
	return dispense[plugin.Lifecycle](t, c.rpc, plugin.NameLifecycle)
}

func (c *conn) platform(t *testing.T) plugin.Platform {
	t.Helper()
	return dispense[plugin.Platform](t, c.rpc, plugin.NamePlatform)
}

func (c *conn) toolset(t *testing.T) plugin.Toolset {
	t.Helper()
	return dispense[plugin.Toolset](t, c.rpc, plugin.NameToolset)
}

func dispense[T any](t *testing.T, rpc goplugin.ClientProtocol, name string) T {
	t.Helper()
	raw, err := rpc.Dispense(name)
	if err != nil {
		t.Fatalf("dispense %s: %v", name, err)
	}
	v, ok := raw.(T)
	if !ok {
		t.Fatalf("dispense %s: got %T", name, raw)
	}
	return v
}

// serveInProcess serves opts with plugin.Serve in test mode and connects a
// go-plugin client to it through a ReattachConfig, as host-sdk does
// (plugin.ConnectInProcess).
func serveInProcess(t *testing.T, opts plugin.ServeOpts) *conn {
	t.Helper()
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug, JSONFormat: true})
	}
	client, err := plugin.ConnectInProcess(opts, hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug}), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		t.Fatalf("connect to the in-process plugin: %v", err)
	}
	t.Cleanup(func() {
		// Closing the client stops the plugin's server (go-plugin's
		// controller), and Serve returns.
		_ = rpc.Close()
		for deadline := time.Now().Add(10 * time.Second); !client.Exited(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Error("plugin.Serve did not return within 10s of the host closing")
				break
			}
		}
		client.Kill()
	})
	return &conn{rpc: rpc, pluginLog: logs}
}

// fakePlugin implements Lifecycle, Platform and Toolset; a nil hook gives a
// plain default.
type fakePlugin struct {
	describe  func(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error)
	configure func(context.Context, *pb.ConfigureRequest, plugin.Host) (*pb.ConfigureResponse, error)
	drain     func(context.Context, *pb.DrainRequest) (*pb.DrainResponse, error)
	connect   func(context.Context, *pb.ConnectRequest) (*pb.ConnectResponse, error)
	send      func(context.Context, *pb.SendRequest) (*pb.SendResponse, error)
	complete  func(context.Context, *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error)
	listTools func(context.Context) ([]*pb.ToolDefinition, error)
	callTool  func(context.Context, *pb.CallToolRequest, plugin.ProgressFunc) (*pb.ToolResult, error)
	panicky   bool // every method panics

	mu   sync.Mutex
	host plugin.Host
}

func (f *fakePlugin) maybePanic(method string) {
	if f.panicky {
		panic(fmt.Sprintf("boom in %s", method))
	}
}

func (f *fakePlugin) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	f.maybePanic("Describe")
	if f.describe != nil {
		return f.describe(ctx, req)
	}
	return &pb.DescribeResponse{Name: "fake", Version: "1.2.3"}, nil
}

func (f *fakePlugin) Configure(ctx context.Context, req *pb.ConfigureRequest, host plugin.Host) (*pb.ConfigureResponse, error) {
	f.maybePanic("Configure")
	f.mu.Lock()
	f.host = host
	f.mu.Unlock()
	if f.configure != nil {
		return f.configure(ctx, req, host)
	}
	return &pb.ConfigureResponse{}, nil
}

func (f *fakePlugin) Host() plugin.Host {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.host
}

func (f *fakePlugin) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	f.maybePanic("Drain")
	if f.drain != nil {
		return f.drain(ctx, req)
	}
	return &pb.DrainResponse{}, nil
}

func (f *fakePlugin) Connect(ctx context.Context, req *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	f.maybePanic("Connect")
	if f.connect != nil {
		return f.connect(ctx, req)
	}
	return &pb.ConnectResponse{Endpoints: []string{"test://fake"}}, nil
}

func (f *fakePlugin) Disconnect(context.Context, *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	f.maybePanic("Disconnect")
	return &pb.DisconnectResponse{}, nil
}

func (f *fakePlugin) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	f.maybePanic("Send")
	if f.send != nil {
		return f.send(ctx, req)
	}
	return &pb.SendResponse{MessageId: "m-" + req.GetTaskId()}, nil
}

func (f *fakePlugin) ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	f.maybePanic("ProcessingComplete")
	if f.complete != nil {
		return f.complete(ctx, req)
	}
	return &pb.ProcessingCompleteResponse{}, nil
}

func (f *fakePlugin) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	f.maybePanic("ListTools")
	if f.listTools != nil {
		return f.listTools(ctx)
	}
	return []*pb.ToolDefinition{{Name: "echo", ParametersJsonSchema: `{"type":"object"}`}}, nil
}

func (f *fakePlugin) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	f.maybePanic("CallTool")
	if f.callTool != nil {
		return f.callTool(ctx, req, progress)
	}
	return &pb.ToolResult{Content: req.GetArgumentsJson()}, nil
}

// serveFake serves f as lifecycle, platform and toolset.
func serveFake(t *testing.T, f *fakePlugin) *conn {
	t.Helper()
	return serveInProcess(t, plugin.ServeOpts{Lifecycle: f, Platform: f, Toolset: f})
}

// fakeHost is a HostHandler with hooks.
type fakeHost struct {
	handleMessage func(context.Context, *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error)
	panicky       bool
}

func (h *fakeHost) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	if h.panicky {
		panic("host boom")
	}
	if h.handleMessage != nil {
		return h.handleMessage(ctx, req)
	}
	return &pb.HandleMessageResponse{TurnId: "turn-" + req.GetTaskId()}, nil
}

func (h *fakeHost) CancelTurn(context.Context, *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	return &pb.CancelTurnResponse{Cancelled: true}, nil
}

func (h *fakeHost) ListTools(context.Context) ([]*pb.ToolDefinition, error) {
	return []*pb.ToolDefinition{{Name: "host_tool"}}, nil
}

func (h *fakeHost) RecordDelegation(context.Context, *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	return &pb.RecordDelegationResponse{}, nil
}
