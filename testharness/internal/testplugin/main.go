// Command testplugin is a tiny platform + toolset plugin that exercises the
// harness host end to end without the A2A plugin.
//
// Its platform has no network channel of its own: the tool "inject" plays
// the role of an inbound message. It calls Host.HandleMessage, collects what
// the host's agent sends back through PlatformAdapter.Send until
// ProcessingComplete, and returns the FINAL text as the tool result (the
// PROGRESS texts become progress events). That is the whole loop
// Host.HandleMessage → agent → PlatformAdapter.Send.
//
// Other tools: "host_tools" (Host.ListTools), "complete" (Host.Complete),
// "cancel" (Host.CancelTurn), "config" (what Configure received), "env" (an
// environment variable), "sleep" (progress then a result; cancellable),
// "fail" (an is_error result), "crash" (the process exits).
//
// The plugin's name is $TESTPLUGIN_NAME, else the executable's file name, so
// one binary copied under two names is two plugins. Configuration (JSON):
// {"fail_configure": "why"} makes Configure fail; {"platform": "…"} names
// the platform in HandleMessage (default the plugin name).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func main() {
	logger := plugin.NewLogger("testplugin")
	p := &testPlugin{name: envOr("TESTPLUGIN_NAME", filepath.Base(os.Args[0])), waiters: map[string]*waiter{}}
	p.log = func(msg string, args ...any) { logger.Info(msg, args...) }
	plugin.Serve(plugin.ServeOpts{Lifecycle: p, Platform: p, Toolset: p, Logger: logger})
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

type config struct {
	FailConfigure string `json:"fail_configure"`
	Platform      string `json:"platform"`
}

type testPlugin struct {
	name string
	log  func(msg string, args ...any)

	mu       sync.Mutex
	host     plugin.Host
	cfg      config
	rawCfg   string
	dataDir  string
	hostInfo *pb.HostInfo
	waiters  map[string]*waiter // by task id
	seq      int
}

// waiter collects a task's output until ProcessingComplete.
type waiter struct {
	progress chan string
	final    []string
	done     chan *pb.ProcessingCompleteRequest
}

func (p *testPlugin) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{
		Name: p.name, Version: "0.1.0", Description: "harness test plugin: platform driven by the inject tool",
		Capabilities: []pb.Capability{pb.Capability_CAPABILITY_PLATFORM, pb.Capability_CAPABILITY_TOOLSET},
		EnvPrefixes:  []string{"TESTPLUGIN_"},
	}, nil
}

func (p *testPlugin) Configure(_ context.Context, req *pb.ConfigureRequest, host plugin.Host) (*pb.ConfigureResponse, error) {
	var cfg config
	if len(req.GetConfigJson()) > 0 {
		if err := json.Unmarshal(req.GetConfigJson(), &cfg); err != nil {
			return nil, fmt.Errorf("testplugin config: %w", err)
		}
	}
	if cfg.FailConfigure != "" {
		return nil, fmt.Errorf("testplugin: configured to fail: %s", cfg.FailConfigure)
	}
	if cfg.Platform == "" {
		cfg.Platform = p.name
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host, p.cfg, p.rawCfg, p.dataDir, p.hostInfo = host, cfg, string(req.GetConfigJson()), req.GetDataDir(), req.GetHost()
	var warnings []string
	if host == nil {
		warnings = append(warnings, "no host callback: inject will fail")
	}
	return &pb.ConfigureResponse{Warnings: warnings}, nil
}

func (p *testPlugin) Drain(context.Context, *pb.DrainRequest) (*pb.DrainResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &pb.DrainResponse{Abandoned: uint32(len(p.waiters))}, nil
}

func (p *testPlugin) Connect(context.Context, *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	return &pb.ConnectResponse{Endpoints: []string{fmt.Sprintf("test://%s/%d", p.name, os.Getpid())}}, nil
}

func (p *testPlugin) Disconnect(context.Context, *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	return &pb.DisconnectResponse{}, nil
}

func (p *testPlugin) waiter(taskID string) *waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiters[taskID]
}

func (p *testPlugin) Send(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	w := p.waiter(req.GetTaskId())
	if w == nil {
		return nil, fmt.Errorf("testplugin: Send for unknown task %q", req.GetTaskId())
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

func (p *testPlugin) ProcessingComplete(_ context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	w := p.waiter(req.GetTaskId())
	if w == nil {
		return nil, fmt.Errorf("testplugin: ProcessingComplete for unknown task %q", req.GetTaskId())
	}
	select {
	case w.done <- req:
	default:
	}
	return &pb.ProcessingCompleteResponse{}, nil
}

func (p *testPlugin) ListTools(context.Context) ([]*pb.ToolDefinition, error) {
	obj := func(props string, required ...string) string {
		r, _ := json.Marshal(required)
		return fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, props, r)
	}
	return []*pb.ToolDefinition{
		{Name: "inject", Description: "Deliver text to the host's agent as an inbound message and return its reply.",
			ParametersJsonSchema: obj(`"text":{"type":"string"},"chat_id":{"type":"string"},"task_id":{"type":"string"},"continuation":{"type":"boolean"}`, "text")},
		{Name: "host_tools", Description: "List the host's tools.", ParametersJsonSchema: obj("")},
		{Name: "complete", Description: "Ask the host's model.", ParametersJsonSchema: obj(`"prompt":{"type":"string"}`, "prompt")},
		{Name: "cancel", Description: "Cancel the host's turn in a chat.", ParametersJsonSchema: obj(`"chat_id":{"type":"string"},"task_id":{"type":"string"}`, "chat_id")},
		{Name: "config", Description: "Show what Configure received.", ParametersJsonSchema: obj("")},
		{Name: "env", Description: "Show an environment variable.", ParametersJsonSchema: obj(`"name":{"type":"string"}`, "name")},
		{Name: "sleep", Description: "Report progress, then answer.", ParametersJsonSchema: obj(`"ms":{"type":"integer"},"steps":{"type":"integer"}`)},
		{Name: "fail", Description: "Answer with an error result.", ParametersJsonSchema: obj(`"message":{"type":"string"}`)},
		{Name: "crash", Description: "Exit the plugin process.", ParametersJsonSchema: obj("")},
	}, nil
}

type args struct {
	Text         string `json:"text"`
	ChatID       string `json:"chat_id"`
	TaskID       string `json:"task_id"`
	Continuation bool   `json:"continuation"`
	Prompt       string `json:"prompt"`
	Name         string `json:"name"`
	Message      string `json:"message"`
	MS           int    `json:"ms"`
	Steps        int    `json:"steps"`
}

func (p *testPlugin) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	var a args
	if s := req.GetArgumentsJson(); s != "" {
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			return &pb.ToolResult{Content: "bad arguments: " + err.Error(), IsError: true}, nil
		}
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
		})
		return &pb.ToolResult{Content: string(out)}, nil
	case "env":
		return &pb.ToolResult{Content: os.Getenv(a.Name)}, nil
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
		return errResult(a.Message), nil
	case "crash":
		p.log("crashing on request")
		os.Exit(3)
	}
	return nil, fmt.Errorf("testplugin: unknown tool %q", req.GetName())
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
func (p *testPlugin) inject(ctx context.Context, host plugin.Host, cfg config, a args, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
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
			return nil, errors.New("inject: the caller went away before the turn ended")
		}
	}
}
