// Package testplugin is the one small agentplugin plugin the tests of
// hosts use instead of the A2A plugin: host-sdk's own tests (in process and
// as a binary) and testharness's (as a binary, testharness.TestPluginBinary,
// which cmd/agenthost's tests launch too). cmd/testplugin wraps it in a
// binary.
//
// Its platform has no network channel of its own: the tool "inject" plays
// the role of an inbound message. It calls Host.HandleMessage, collects what
// the host's agent sends back through PlatformAdapter.Send until
// ProcessingComplete (or a Send that ends the turn), and returns the final
// text as the tool result (the PROGRESS texts become progress events). That
// is the whole loop Host.HandleMessage → agent → PlatformAdapter.Send.
//
// The other tools exercise the host's side of the contract: "host_tools"
// (Host.ListTools), "complete" (Host.Complete), "cancel" (Host.CancelTurn),
// "config" (what Configure received), "env" (one environment variable, or
// all of them), "pid", "echo" (its arguments), "progress" and "sleep"
// (progress, then a result), "fail" (an is_error result), "hang" (until the
// call is cancelled), "panic" (in the handler) and "crash" (the process
// exits with status 3).
//
// Configuration (JSON): {"refuse": "why"} makes Configure fail with
// ErrInvalidArgument; {"platform": "…"} names the platform in HandleMessage
// (default the plugin's name).
package testplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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

	mu       sync.Mutex
	host     plugin.Host
	cfg      Config
	rawCfg   string
	dataDir  string
	hostInfo *pb.HostInfo
	waiters  map[string]*waiter // by task id
	seq      int
}

// waiter collects a task's output until its turn ends.
type waiter struct {
	progress chan string
	final    []string
	done     chan *pb.ProcessingCompleteRequest
}

// New returns a test plugin that calls itself name at version.
func New(name, version string, log hclog.Logger) *Plugin {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Plugin{name: name, version: version, log: log, waiters: map[string]*waiter{}}
}

// ServeOpts serves p as lifecycle, platform and toolset.
func (p *Plugin) ServeOpts() plugin.ServeOpts {
	return plugin.ServeOpts{Lifecycle: p, Platform: p, Toolset: p, Logger: p.log}
}

// Describe implements plugin.Lifecycle.
func (p *Plugin) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{
		Name: p.name, Version: p.version, Description: "test plugin: a platform driven by its inject tool, and tools that exercise the host",
		Capabilities: []pb.Capability{pb.Capability_CAPABILITY_PLATFORM, pb.Capability_CAPABILITY_TOOLSET},
		EnvPrefixes:  []string{EnvPrefix},
	}, nil
}

// Config is the plugin's configuration section.
type Config struct {
	// Refuse makes Configure fail with this message.
	Refuse string `json:"refuse"`
	// Platform is the platform name of injected messages (default the
	// plugin's name).
	Platform string `json:"platform"`
}

// Configure implements plugin.Lifecycle.
func (p *Plugin) Configure(_ context.Context, req *pb.ConfigureRequest, host plugin.Host) (*pb.ConfigureResponse, error) {
	var cfg Config
	if len(req.GetConfigJson()) > 0 {
		if err := json.Unmarshal(req.GetConfigJson(), &cfg); err != nil {
			return nil, fmt.Errorf("config is not a JSON object: %v: %w", err, plugin.ErrInvalidArgument)
		}
	}
	if cfg.Refuse != "" {
		return nil, fmt.Errorf("config.refuse is set (%s); remove it: %w", cfg.Refuse, plugin.ErrInvalidArgument)
	}
	if cfg.Platform == "" {
		cfg.Platform = p.name
	}
	p.mu.Lock()
	p.host, p.cfg, p.rawCfg, p.dataDir, p.hostInfo = host, cfg, string(req.GetConfigJson()), req.GetDataDir(), req.GetHost()
	p.mu.Unlock()
	p.log.Debug("configured", "data_dir", req.GetDataDir(), "host", req.GetHost().GetName())
	var warnings []string
	if host == nil {
		warnings = append(warnings, "no host callback: inject will fail")
	}
	return &pb.ConfigureResponse{Warnings: warnings}, nil
}

// Drain implements plugin.Lifecycle; it leaves a "drained" file in the data
// directory so a test can see that it ran, and reports the injected turns
// still waiting as abandoned.
func (p *Plugin) Drain(context.Context, *pb.DrainRequest) (*pb.DrainResponse, error) {
	p.mu.Lock()
	dir, waiting := p.dataDir, len(p.waiters)
	p.mu.Unlock()
	if dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "drained"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return nil, fmt.Errorf("write drain marker: %w", err)
		}
	}
	return &pb.DrainResponse{Abandoned: uint32(waiting)}, nil
}

// Connect implements plugin.Platform.
func (p *Plugin) Connect(context.Context, *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	return &pb.ConnectResponse{Endpoints: []string{fmt.Sprintf("test://%s/%d", p.name, os.Getpid())}}, nil
}

// Disconnect implements plugin.Platform.
func (p *Plugin) Disconnect(context.Context, *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	return &pb.DisconnectResponse{}, nil
}

func (p *Plugin) waiter(taskID string) *waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiters[taskID]
}

// Send implements plugin.Platform: it hands the output to the inject call
// waiting for its task.
func (p *Plugin) Send(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	w := p.waiter(req.GetTaskId())
	if w == nil {
		return nil, fmt.Errorf("no turn is waiting for task %q: %w", req.GetTaskId(), plugin.ErrInvalidArgument)
	}
	switch req.GetKind() {
	case pb.SendKind_SEND_KIND_PROGRESS:
		select {
		case w.progress <- req.GetText():
		default: // nobody reads fast enough; progress may be dropped
		}
	case pb.SendKind_SEND_KIND_ARTIFACT:
		for _, part := range req.GetArtifact().GetParts() {
			if t := part.GetText(); t != "" {
				p.mu.Lock()
				w.final = append(w.final, t)
				p.mu.Unlock()
			}
		}
	default:
		p.mu.Lock()
		w.final = append(w.final, req.GetText())
		p.mu.Unlock()
	}
	return &pb.SendResponse{MessageId: "sent-" + req.GetTaskId()}, nil
}

// ProcessingComplete implements plugin.Platform: it ends the inject call
// waiting for the task.
func (p *Plugin) ProcessingComplete(_ context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	w := p.waiter(req.GetTaskId())
	if w == nil {
		return nil, fmt.Errorf("no turn is waiting for task %q: %w", req.GetTaskId(), plugin.ErrInvalidArgument)
	}
	select {
	case w.done <- req:
	default:
	}
	return &pb.ProcessingCompleteResponse{}, nil
}

func object(props string, required ...string) string {
	r, _ := json.Marshal(required)
	return fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, props, r)
}

var tools = []*pb.ToolDefinition{
	{Name: "inject", Description: "Deliver text to the host's agent as an inbound message and return its reply.",
		ParametersJsonSchema: object(`"text":{"type":"string"},"chat_id":{"type":"string"},"task_id":{"type":"string"},"continuation":{"type":"boolean"}`, "text")},
	{Name: "host_tools", Description: "List the host's tools.", ParametersJsonSchema: object("")},
	{Name: "complete", Description: "Ask the host's model.", ParametersJsonSchema: object(`"prompt":{"type":"string"}`, "prompt")},
	{Name: "cancel", Description: "Cancel the host's turn in a chat.", ParametersJsonSchema: object(`"chat_id":{"type":"string"},"task_id":{"type":"string"}`, "chat_id")},
	{Name: "config", Description: "Show what Configure received.", ParametersJsonSchema: object("")},
	{Name: "env", Description: "Show an environment variable, or the whole environment as a JSON array.", ParametersJsonSchema: object(`"name":{"type":"string"}`)},
	{Name: "pid", Description: "Return the process id.", ParametersJsonSchema: object("")},
	{Name: "echo", Description: "Return its arguments.", ParametersJsonSchema: `{"type":"object"}`},
	{Name: "progress", Description: "Report n progress events, then answer.", ParametersJsonSchema: object(`"n":{"type":"integer"}`)},
	{Name: "sleep", Description: "Report progress while sleeping ms milliseconds in steps, then answer.", ParametersJsonSchema: object(`"ms":{"type":"integer"},"steps":{"type":"integer"}`)},
	{Name: "fail", Description: "Answer with an error result.", ParametersJsonSchema: object(`"message":{"type":"string"}`)},
	{Name: "hang", Description: "Block until the call is cancelled.", ParametersJsonSchema: object("")},
	{Name: "panic", Description: "Panic in the handler.", ParametersJsonSchema: object("")},
	{Name: "crash", Description: "Log reason to stderr and exit with status 3.", ParametersJsonSchema: object(`"reason":{"type":"string"}`)},
}

// ListTools implements plugin.Toolset.
func (p *Plugin) ListTools(context.Context) ([]*pb.ToolDefinition, error) { return tools, nil }

type args struct {
	Text         string `json:"text"`
	ChatID       string `json:"chat_id"`
	TaskID       string `json:"task_id"`
	Continuation bool   `json:"continuation"`
	Prompt       string `json:"prompt"`
	Name         string `json:"name"`
	Message      string `json:"message"`
	Reason       string `json:"reason"`
	N            int    `json:"n"`
	MS           int    `json:"ms"`
	Steps        int    `json:"steps"`
}

// CallTool implements plugin.Toolset.
func (p *Plugin) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	var a args
	if s := req.GetArgumentsJson(); s != "" {
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			return nil, fmt.Errorf("arguments of %q are not a JSON object: %v: %w", req.GetName(), err, plugin.ErrInvalidArgument)
		}
	}
	if progress == nil {
		progress = func(*pb.ToolProgress) error { return nil }
	}
	p.mu.Lock()
	host, cfg := p.host, p.cfg
	p.mu.Unlock()
	switch req.GetName() {
	case "inject":
		return p.inject(ctx, host, cfg, a, progress)
	case "host_tools":
		if host == nil {
			return errResult("no host"), nil
		}
		tools, err := host.ListTools(ctx)
		if err != nil {
			return errResult(err.Error()), nil
		}
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.GetName()
		}
		return &pb.ToolResult{Content: strings.Join(names, ",")}, nil
	case "complete":
		if host == nil {
			return errResult("no host"), nil
		}
		resp, err := host.Complete(ctx, &pb.CompleteRequest{Prompt: a.Prompt})
		if err != nil {
			return errResult(err.Error()), nil
		}
		return &pb.ToolResult{Content: resp.GetText()}, nil
	case "cancel":
		if host == nil {
			return errResult("no host"), nil
		}
		resp, err := host.CancelTurn(ctx, &pb.CancelTurnRequest{Platform: cfg.Platform, ChatId: a.ChatID, TaskId: a.TaskID, Reason: "cancel tool"})
		if err != nil {
			return errResult(err.Error()), nil
		}
		return &pb.ToolResult{Content: fmt.Sprintf("cancelled=%t", resp.GetCancelled())}, nil
	case "config":
		p.mu.Lock()
		defer p.mu.Unlock()
		out, _ := json.Marshal(map[string]any{
			"config": json.RawMessage(orJSON(p.rawCfg)), "data_dir": p.dataDir,
			"host": p.hostInfo.GetName(), "optional_rpcs": p.hostInfo.GetOptionalRpcs(),
			"cancel_turn_unsupported": p.hostInfo.GetCancelTurnUnsupported(),
		})
		return &pb.ToolResult{Content: string(out)}, nil
	case "env":
		if a.Name != "" {
			return &pb.ToolResult{Content: os.Getenv(a.Name)}, nil
		}
		env := os.Environ()
		slices.Sort(env)
		b, _ := json.Marshal(env)
		return &pb.ToolResult{Content: string(b)}, nil
	case "pid":
		return &pb.ToolResult{Content: strconv.Itoa(os.Getpid())}, nil
	case "echo":
		return &pb.ToolResult{Content: req.GetArgumentsJson()}, nil
	case "progress":
		for i := 1; i <= a.N; i++ {
			if err := progress(&pb.ToolProgress{Message: fmt.Sprintf("step %d/%d", i, a.N), Fraction: float64(i) / float64(a.N)}); err != nil {
				return nil, err
			}
		}
		return &pb.ToolResult{Content: fmt.Sprintf("did %d steps", a.N)}, nil
	case "sleep":
		steps := max(a.Steps, 1)
		for i := range steps {
			if err := progress(&pb.ToolProgress{Message: fmt.Sprintf("step %d/%d", i+1, steps), Fraction: float64(i) / float64(steps)}); err != nil {
				return nil, err
			}
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond / time.Duration(steps)):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &pb.ToolResult{Content: "slept"}, nil
	case "fail":
		if a.Message == "" {
			a.Message = "the fail tool failed, as asked"
		}
		return errResult(a.Message), nil
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "panic":
		panic("testplugin: the panic tool panicked")
	case "crash":
		p.log.Error("crashing on purpose", "reason", a.Reason)
		os.Exit(3)
	}
	return nil, fmt.Errorf("no tool %q (see ListTools): %w", req.GetName(), plugin.ErrUnknownTool)
}

func orJSON(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func errResult(msg string) *pb.ToolResult { return &pb.ToolResult{Content: msg, IsError: true} }

// inject plays an inbound message through the host and waits for the turn
// to end.
func (p *Plugin) inject(ctx context.Context, host plugin.Host, cfg Config, a args, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	if host == nil {
		return errResult("no host callback"), nil
	}
	p.mu.Lock()
	p.seq++
	if a.ChatID == "" {
		a.ChatID = "chat-1"
	}
	if a.TaskID == "" {
		a.TaskID = fmt.Sprintf("task-%d-%d", os.Getpid(), p.seq)
	}
	w := &waiter{progress: make(chan string, 64), done: make(chan *pb.ProcessingCompleteRequest, 1)}
	p.waiters[a.TaskID] = w
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiters, a.TaskID)
		p.mu.Unlock()
	}()
	_, err := host.HandleMessage(ctx, &pb.HandleMessageRequest{
		Platform: cfg.Platform, ChatId: a.ChatID, TaskId: a.TaskID, Text: a.Text,
		Parts:     []*pb.Part{{Content: &pb.Part_Text{Text: a.Text}}},
		MessageId: "msg-" + a.TaskID, Sender: &pb.Sender{Id: "local:inject"},
		TrustTier: pb.TrustTier_TRUST_TIER_LOCAL, Unattended: true, Continuation: a.Continuation,
	})
	if err != nil {
		return errResult("HandleMessage: " + err.Error()), nil
	}
	for {
		select {
		case text := <-w.progress:
			if err := progress(&pb.ToolProgress{Message: text, Fraction: -1}); err != nil {
				return nil, err
			}
		case pc := <-w.done:
			// Progress sent before completion is already queued; flush it.
			for flushed := false; !flushed; {
				select {
				case text := <-w.progress:
					_ = progress(&pb.ToolProgress{Message: text, Fraction: -1})
				default:
					flushed = true
				}
			}
			p.mu.Lock()
			final := strings.Join(w.final, "\n")
			p.mu.Unlock()
			if pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
				return errResult(fmt.Sprintf("%s: %s", pc.GetOutcome(), pc.GetError())), nil
			}
			return &pb.ToolResult{Content: final}, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("inject: the caller went away before the turn ended: %w", ctx.Err())
		}
	}
}
