package testharness

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// These tests launch the test plugin (host-sdk/internal/testplugin) as a
// real process through host-sdk; its "inject" tool plays an inbound
// message, so a tool call exercises the whole loop Host.HandleMessage →
// agent → PlatformAdapter.Send.

func startTestPlugin(t *testing.T, opts Options) *Host {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and launches a plugin binary")
	}
	opts.NoA2APlugin = true
	if opts.Binaries == nil {
		opts.Binaries = []Binary{TestPluginBinary}
	}
	return Start(t, opts)
}

func callTool(t *testing.T, h *Host, name, args string) (*pb.ToolResult, []*pb.ToolProgress) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, progress, err := h.CallTool(ctx, name, args)
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	return res, progress
}

func TestInjectedMessageReachesTheAgentAndTheReplyComesBackThroughSend(t *testing.T) {
	s := &Scenario{Default: &Rule{Actions: []Action{Progress("thinking"), Echo("echo: ")}}}
	h := startTestPlugin(t, Options{Agent: s})

	if ep := h.Endpoint("testplugin"); !strings.HasPrefix(ep, "test://testplugin/") {
		t.Fatalf("Endpoint = %q", ep)
	}
	res, progress := callTool(t, h, "inject", `{"text":"hello","chat_id":"c1","task_id":"task-1"}`)
	if res.GetIsError() || res.GetContent() != "echo: hello" {
		t.Fatalf("result = %v", res)
	}
	if len(progress) != 1 || progress[0].GetMessage() != "thinking" {
		t.Fatalf("progress = %v", progress)
	}

	rec := h.Recorder()
	// The end of the turn (the FINAL send with ends_turn, or a
	// ProcessingComplete after it) may be recorded after the tool already
	// returned the reply.
	wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if pc, err := rec.WaitForCompletion(wctx, "task-1"); err != nil || pc.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("completion = %v, %v", pc, err)
	}
	hm := rec.CallsOf(KindHandleMessage)
	if len(hm) != 1 {
		t.Fatalf("HandleMessage calls: %v", hm)
	}
	req := hm[0].HandleMessage()
	if req.GetPlatform() != "testplugin" || req.GetChatId() != "c1" || req.GetTaskId() != "task-1" ||
		req.GetText() != "hello" || !req.GetUnattended() || req.GetTrustTier() != pb.TrustTier_TRUST_TIER_LOCAL {
		t.Fatalf("HandleMessage request = %v", req)
	}
	sends := rec.Sends("task-1")
	if len(sends) != 2 || sends[1].GetKind() != pb.SendKind_SEND_KIND_FINAL || sends[1].GetText() != "echo: hello" {
		t.Fatalf("sends = %v", sends)
	}
	for _, c := range rec.CallsOf(KindSend) {
		if c.Err != nil || c.Response.(*pb.SendResponse).GetMessageId() != "sent-task-1" {
			t.Fatalf("Send did not reach the plugin: %v", c)
		}
	}
	tc := rec.CallsOf(KindCallTool)
	if len(tc) != 1 || tc[0].ToolCall().GetName() != "inject" || tc[0].ToolResult().GetContent() != "echo: hello" || len(tc[0].Progress) != 1 {
		t.Fatalf("CallTool record = %v", tc)
	}
}

func TestPluginGetsItsConfigDataDirEnvAndHostInfo(t *testing.T) {
	dataDir := t.TempDir()
	h := startTestPlugin(t, Options{
		PluginConfigs: map[string]any{"testplugin": map[string]any{"platform": "testplugin", "extra": 42}},
		PluginEnv:     map[string]map[string]string{"testplugin": {"TESTPLUGIN_GREETING": "hi there"}},
		DataDir:       dataDir,
		HostName:      "myhost",
		Agent:         &Scenario{Completions: []CompletionRule{{Reply: "model says {{prompt}}"}}, Default: &Rule{Actions: []Action{Echo("")}}},
	})
	res, _ := callTool(t, h, "config", "")
	var got struct {
		Config       map[string]any `json:"config"`
		DataDir      string         `json:"data_dir"`
		Host         string         `json:"host"`
		OptionalRPCs []string       `json:"optional_rpcs"`
	}
	if err := json.Unmarshal([]byte(res.GetContent()), &got); err != nil {
		t.Fatal(err)
	}
	if got.Config["extra"] != 42.0 || got.DataDir != filepath.Join(dataDir, "testplugin") || got.Host != "myhost" ||
		fmt.Sprint(got.OptionalRPCs) != "[RecordDelegation Complete]" {
		t.Fatalf("config = %+v", got)
	}
	if res, _ := callTool(t, h, "env", `{"name":"TESTPLUGIN_GREETING"}`); res.GetContent() != "hi there" {
		t.Fatalf("env = %q", res.GetContent())
	}
	if res, _ := callTool(t, h, "complete", `{"prompt":"route?"}`); res.GetContent() != "model says route?" {
		t.Fatalf("complete = %v", res)
	}
}

func TestPluginSeesTheHostToolRegistry(t *testing.T) {
	s := &Scenario{
		Tools:   []ToolSpec{{Name: "web_search", Toolset: "web"}, {Name: "calendar_add"}},
		Default: &Rule{Actions: []Action{Echo("")}},
	}
	h := startTestPlugin(t, Options{Agent: s})
	if res, _ := callTool(t, h, "host_tools", ""); res.GetContent() != "web_search,calendar_add" {
		t.Fatalf("host_tools = %v", res)
	}
	if len(h.Recorder().CallsOf(KindListTools)) != 1 {
		t.Fatal("ListTools not recorded")
	}
}

func TestCancelFromThePluginStopsTheHostTurn(t *testing.T) {
	s := &Scenario{Default: &Rule{Actions: []Action{Progress("started"), Wait(time.Minute), Reply("too late")}}}
	h := startTestPlugin(t, Options{Agent: s})
	var wg sync.WaitGroup
	var res *pb.ToolResult
	wg.Go(func() { res, _ = callTool(t, h, "inject", `{"text":"slow","chat_id":"c","task_id":"t-slow"}`) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.Recorder().WaitFor(ctx, func(c Call) bool { return c.Kind == KindSend && c.TaskID == "t-slow" }); err != nil {
		t.Fatal(err)
	}
	if c, _ := callTool(t, h, "cancel", `{"chat_id":"c","task_id":"t-slow"}`); c.GetContent() != "cancelled=true" {
		t.Fatalf("cancel = %v", c)
	}
	wg.Wait()
	if !res.GetIsError() || !strings.Contains(res.GetContent(), "OUTCOME_CANCELLED") {
		t.Fatalf("inject after cancel = %v", res)
	}
}

func TestAgentCallsAPluginToolDuringATurn(t *testing.T) {
	s := &Scenario{Default: &Rule{Actions: []Action{
		CallTool(ToolCallSpec{Name: "sleep", Args: map[string]any{"ms": 20, "steps": 2}, ForwardProgress: true, Reply: "tool said {{result}} for {{text}}"}),
	}}}
	h := startTestPlugin(t, Options{Agent: s})
	res, progress := callTool(t, h, "inject", `{"text":"nap","task_id":"t1"}`)
	if res.GetContent() != "tool said slept for nap" {
		t.Fatalf("result = %v", res)
	}
	if len(progress) != 2 || progress[0].GetMessage() != "step 1/2" {
		t.Fatalf("forwarded progress = %v", progress)
	}
	calls := h.Recorder().CallsOf(KindCallTool)
	if len(calls) != 2 || calls[0].ToolCall().GetName() != "sleep" || calls[0].ToolCall().GetChatId() != "chat-1" || len(calls[0].Progress) != 2 {
		t.Fatalf("tool calls = %v", calls)
	}
}

func TestRestartBringsThePluginBackWithANewProcess(t *testing.T) {
	var mu sync.Mutex
	var readyEndpoints []string
	h := startTestPlugin(t, Options{OnReady: func(p *hostsdk.Plugin) {
		mu.Lock()
		defer mu.Unlock()
		readyEndpoints = append(readyEndpoints, p.Endpoints()...)
	}})
	p := h.Plugin("testplugin")
	old := p.Pid()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Restart(ctx, "testplugin"); err != nil {
		t.Fatal(err)
	}
	if p.Pid() == old || p.State() != hostsdk.StateReady {
		t.Fatalf("pid %d → %d, state %s", old, p.Pid(), p.State())
	}
	if res, _ := callTool(t, h, "inject", `{"text":"again"}`); res.GetContent() != "again" {
		t.Fatalf("after restart: %v", res)
	}
	var kinds []string
	for _, ev := range h.Events() {
		kinds = append(kinds, ev.Kind.String())
	}
	if fmt.Sprint(kinds) != "[ready crashed ready]" {
		t.Fatalf("events = %v", kinds)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{fmt.Sprintf("test://testplugin/%d", old), fmt.Sprintf("test://testplugin/%d", p.Pid())}; fmt.Sprint(readyEndpoints) != fmt.Sprint(want) {
		t.Fatalf("OnReady saw %v, want %v", readyEndpoints, want)
	}
}

func TestRefusedConfigurationFailsStartWithTheReason(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and launches a plugin binary")
	}
	h := startTestPlugin(t, Options{
		AllowFailures: true,
		PluginConfigs: map[string]any{"testplugin": `{"refuse":"no token set"}`},
	})
	p := h.Plugin("testplugin")
	if p.State() != hostsdk.StateFailed || !strings.Contains(fmt.Sprint(p.LastError()), "no token set") {
		t.Fatalf("state %s, last error %v", p.State(), p.LastError())
	}

	root, err := ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := BuildBinary(context.Background(), root, TestPluginBinary)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := InstallBinary(bin, dir, "testplugin"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = StartHost(ctx, Options{PluginsDir: dir, Logger: t, DataDir: t.TempDir(),
		PluginConfigs: map[string]any{"testplugin": map[string]string{"refuse": "no token set"}}})
	if err == nil || !strings.Contains(err.Error(), "no token set") {
		t.Fatalf("StartHost error = %v", err)
	}
}

func TestOutputIsRoutedToThePlatformTheMessageCameFrom(t *testing.T) {
	h := startTestPlugin(t, Options{Binaries: []Binary{
		{Name: "alpha", Package: TestPluginBinary.Package},
		{Name: "beta", Package: TestPluginBinary.Package},
	}, Agent: &Scenario{Default: &Rule{Actions: []Action{Reply("{{platform}} got {{text}}")}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, name := range []string{"alpha", "beta"} {
		// Both offer "inject"; call each plugin's own toolset so each
		// platform sends its own HandleMessage.
		ts, ok := h.Plugin(name).Toolset()
		if !ok {
			t.Fatalf("%s has no toolset", name)
		}
		res, err := ts.CallTool(ctx, &pb.CallToolRequest{Name: "inject", ArgumentsJson: `{"text":"x"}`}, func(*pb.ToolProgress) error { return nil })
		if err != nil || res.GetContent() != name+" got x" {
			t.Fatalf("%s: %v %v", name, res, err)
		}
	}
	rp := routerPlatform{h}
	if _, err := rp.Send(ctx, &pb.SendRequest{Platform: "gamma"}); err == nil ||
		!strings.Contains(err.Error(), `no platform plugin named "gamma" (platforms: alpha, beta)`) {
		t.Fatalf("send to an unknown platform = %v", err)
	}
}
