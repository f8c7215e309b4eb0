// Package testplugin is a small agentplugin plugin for host-sdk's tests: a
// platform that injects messages into the host on command and a toolset
// whose tools misbehave on request. cmd/testplugin wraps it in a binary.
package testplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// EnvPrefix is the prefix of environment variables the plugin declares.
const EnvPrefix = "TESTPLUGIN_"

// Plugin implements plugin.Lifecycle, plugin.Platform and plugin.Toolset.
type Plugin struct {
	name, version string
	log           hclog.Logger

	mu        sync.Mutex
	host      plugin.Host
	dataDir   string
	connected bool
	waiters   map[string]chan *pb.SendRequest // task id → its Send
	nextTask  int
}

// New returns a test plugin that calls itself name at version.
func New(name, version string, log hclog.Logger) *Plugin {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Plugin{name: name, version: version, log: log, waiters: map[string]chan *pb.SendRequest{}}
}

// ServeOpts serves p as lifecycle, platform and toolset.
func (p *Plugin) ServeOpts() plugin.ServeOpts {
	return plugin.ServeOpts{Lifecycle: p, Platform: p, Toolset: p, Logger: p.log}
}

// Describe implements plugin.Lifecycle.
func (p *Plugin) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{
		Name: p.name, Version: p.version, Description: "host-sdk test plugin",
		Capabilities: []pb.Capability{pb.Capability_CAPABILITY_PLATFORM, pb.Capability_CAPABILITY_TOOLSET},
		EnvPrefixes:  []string{EnvPrefix},
	}, nil
}

// Config is the plugin's configuration section.
type Config struct {
	// Refuse makes Configure fail with this message.
	Refuse string `json:"refuse"`
}

// Configure implements plugin.Lifecycle.
func (p *Plugin) Configure(_ context.Context, req *pb.ConfigureRequest, host plugin.Host) (*pb.ConfigureResponse, error) {
	var cfg Config
	if err := json.Unmarshal(req.GetConfigJson(), &cfg); err != nil {
		return nil, fmt.Errorf("config is not a JSON object: %v: %w", err, plugin.ErrInvalidArgument)
	}
	if cfg.Refuse != "" {
		return nil, fmt.Errorf("config.refuse is set (%s); remove it: %w", cfg.Refuse, plugin.ErrInvalidArgument)
	}
	p.mu.Lock()
	p.host, p.dataDir = host, req.GetDataDir()
	p.mu.Unlock()
	p.log.Debug("configured", "data_dir", req.GetDataDir(), "host", req.GetHost().GetName())
	return &pb.ConfigureResponse{}, nil
}

// Drain implements plugin.Lifecycle; it leaves a "drained" file in the data
// directory so a test can see that it ran.
func (p *Plugin) Drain(context.Context, *pb.DrainRequest) (*pb.DrainResponse, error) {
	p.mu.Lock()
	dir := p.dataDir
	p.mu.Unlock()
	if dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "drained"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return nil, fmt.Errorf("write drain marker: %w", err)
		}
	}
	return &pb.DrainResponse{}, nil
}

// Connect implements plugin.Platform.
func (p *Plugin) Connect(context.Context, *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	p.mu.Lock()
	p.connected = true
	p.mu.Unlock()
	return &pb.ConnectResponse{Endpoints: []string{fmt.Sprintf("test://%s/%d", p.name, os.Getpid())}}, nil
}

// Disconnect implements plugin.Platform.
func (p *Plugin) Disconnect(context.Context, *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	p.mu.Lock()
	p.connected = false
	p.mu.Unlock()
	return &pb.DisconnectResponse{}, nil
}

// Send implements plugin.Platform: it hands the output to the inject call
// waiting for its task.
func (p *Plugin) Send(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	p.mu.Lock()
	ch, ok := p.waiters[req.GetTaskId()]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no turn is waiting for task %q: %w", req.GetTaskId(), plugin.ErrInvalidArgument)
	}
	select {
	case ch <- req:
	default:
	}
	return &pb.SendResponse{MessageId: "msg-" + req.GetTaskId()}, nil
}

// ProcessingComplete implements plugin.Platform.
func (p *Plugin) ProcessingComplete(context.Context, *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	return &pb.ProcessingCompleteResponse{}, nil
}

var tools = []*pb.ToolDefinition{
	{Name: "echo", Description: "Returns its arguments.", ParametersJsonSchema: `{"type":"object"}`},
	{Name: "progress", Description: "Reports n progress events, then returns.", ParametersJsonSchema: `{"type":"object","properties":{"n":{"type":"integer"}}}`},
	{Name: "fail", Description: "Returns an error result.", ParametersJsonSchema: `{"type":"object"}`},
	{Name: "hang", Description: "Blocks until the call is cancelled.", ParametersJsonSchema: `{"type":"object"}`},
	{Name: "panic", Description: "Panics in the handler.", ParametersJsonSchema: `{"type":"object"}`},
	{Name: "crash", Description: "Logs reason to stderr and exits with status 3.", ParametersJsonSchema: `{"type":"object","properties":{"reason":{"type":"string"}}}`},
	{Name: "env", Description: "Returns the process environment as a JSON array.", ParametersJsonSchema: `{"type":"object"}`},
	{Name: "pid", Description: "Returns the process id.", ParametersJsonSchema: `{"type":"object"}`},
	{Name: "inject", Description: "Sends text to the host with HandleMessage and returns the host's answer (its Platform.Send).", ParametersJsonSchema: `{"type":"object","properties":{"text":{"type":"string"},"chat_id":{"type":"string"}}}`},
}

// ListTools implements plugin.Toolset.
func (p *Plugin) ListTools(context.Context) ([]*pb.ToolDefinition, error) { return tools, nil }

type args struct {
	N      int    `json:"n"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
	ChatID string `json:"chat_id"`
}

// CallTool implements plugin.Toolset.
func (p *Plugin) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	var a args
	if s := req.GetArgumentsJson(); s != "" {
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			return nil, fmt.Errorf("arguments of %q are not a JSON object: %v: %w", req.GetName(), err, plugin.ErrInvalidArgument)
		}
	}
	switch req.GetName() {
	case "echo":
		return &pb.ToolResult{Content: req.GetArgumentsJson()}, nil
	case "progress":
		for i := 1; i <= a.N; i++ {
			if err := progress(&pb.ToolProgress{Message: fmt.Sprintf("step %d/%d", i, a.N), Fraction: float64(i) / float64(a.N)}); err != nil {
				return nil, err
			}
		}
		return &pb.ToolResult{Content: fmt.Sprintf("did %d steps", a.N)}, nil
	case "fail":
		return &pb.ToolResult{Content: "the fail tool failed, as asked", IsError: true}, nil
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "panic":
		panic("testplugin: the panic tool panicked")
	case "crash":
		p.log.Error("crashing on purpose", "reason", a.Reason)
		os.Exit(3)
	case "env":
		env := os.Environ()
		slices.Sort(env)
		b, _ := json.Marshal(env)
		return &pb.ToolResult{Content: string(b)}, nil
	case "pid":
		return &pb.ToolResult{Content: strconv.Itoa(os.Getpid())}, nil
	case "inject":
		return p.inject(ctx, a)
	}
	return nil, fmt.Errorf("no tool %q (see ListTools): %w", req.GetName(), plugin.ErrUnknownTool)
}

// inject is the platform's inbound path: it hands a message to the host and
// waits for the host's answer on Send.
func (p *Plugin) inject(ctx context.Context, a args) (*pb.ToolResult, error) {
	p.mu.Lock()
	host := p.host
	p.nextTask++
	task := fmt.Sprintf("task-%d", p.nextTask)
	ch := make(chan *pb.SendRequest, 1)
	p.waiters[task] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiters, task)
		p.mu.Unlock()
	}()
	if host == nil {
		return nil, errors.New("not configured with a host")
	}
	if _, err := host.HandleMessage(ctx, &pb.HandleMessageRequest{
		Platform: p.name, ChatId: a.ChatID, TaskId: task, Text: a.Text,
		Sender: &pb.Sender{Id: "test:injector"}, TrustTier: pb.TrustTier_TRUST_TIER_LOCAL, Unattended: true,
	}); err != nil {
		return nil, fmt.Errorf("host.HandleMessage: %w", err)
	}
	select {
	case sent := <-ch:
		return &pb.ToolResult{Content: sent.GetText()}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
