//go:build unix

package hostsdk_test

import (
	"context"
	"slices"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/host-sdk/internal/testplugin"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// BenchmarkLaunchToReady measures one plugin process from launch to ready:
// fork/exec, go-plugin handshake with AutoMTLS, Describe, Configure (host
// callback through the broker) and Connect. Close is not timed.
func BenchmarkLaunchToReady(b *testing.B) {
	bin := build(b, goodPlugin)[0]
	dataDir := b.TempDir()
	ctx := context.Background()
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		m := hostsdk.NewManager(hostsdk.Options{Paths: []string{bin}, DataDir: dataDir})
		start := time.Now()
		if err := m.Start(ctx); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		if p, ok := m.Plugin("testplugin"); !ok || p.State() != hostsdk.StateReady {
			b.Fatal("the plugin is not ready after Start")
		}
		_ = m.Close(ctx)
		b.StartTimer()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/launch")
}

// BenchmarkHandleMessageRoundTrip measures the inbound path of a platform:
// the plugin calls Host.HandleMessage, the host answers with Platform.Send,
// and the plugin receives it. One iteration is one "inject" tool call, so
// it also includes the host → plugin CallTool that triggers it.
func BenchmarkHandleMessageRoundTrip(b *testing.B) {
	req := &pb.CallToolRequest{Name: "inject", ArgumentsJson: `{"text":"ping","chat_id":"bench"}`}
	run := func(b *testing.B, ts plugin.Toolset) {
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			res, err := ts.CallTool(ctx, req, nil)
			if err != nil || res.GetContent() != "echo: ping" {
				b.Fatalf("inject = %v, %v", res, err)
			}
		}
	}
	b.Run("process", func(b *testing.B) {
		bin := build(b, goodPlugin)[0]
		var m *hostsdk.Manager
		m = hostsdk.NewManager(hostsdk.Options{Paths: []string{bin}, Host: managerHost(&m), DataDir: b.TempDir()})
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = m.Close(context.Background()) }()
		p, _ := m.Plugin("testplugin")
		ts, _ := p.Toolset()
		run(b, ts)
	})
	b.Run("in-process", func(b *testing.B) {
		var p *hostsdk.Plugin
		host := &testHost{platform: func(string) (plugin.Platform, bool) { return p.Platform() }}
		p = hostsdk.ServeInProcess(b, testplugin.New("testplugin", "1.0.0", nil).ServeOpts(), hostsdk.InProcessOptions{Host: host})
		ts, _ := p.Toolset()
		run(b, ts)
	})
}
