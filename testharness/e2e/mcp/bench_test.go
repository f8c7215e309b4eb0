package mcp_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// BenchmarkA2ACall measures one a2a_call to the reference host's echo
// agent made two ways, side by side: by the reference host's own caller
// (testharness host → host-sdk → plugin) and through the MCP face (the
// SDK's MCP client → stdio → a2a-mcp → host-sdk → plugin). The difference
// is what the MCP face adds. Besides ns/op it reports the median of the
// calls (median-µs) and, for the MCP face, the resident memory of a2a-mcp
// itself after the calls (face-rss-KB; the plugin's is plugin-rss-KB).
//
//	go test ./testharness/e2e/mcp -run '^$' -bench A2ACall -benchtime 300x
func BenchmarkA2ACall(b *testing.B) {
	ref := testharness.Start(b, testharness.Options{PluginConfig: map[string]any{"port": 0, "store": "memory", "rate_limit": 0}})
	url := ref.Endpoint("a2a")
	const args = `{"agent":"ref","message":"ping"}`

	b.Run("reference-host", func(b *testing.B) {
		caller := testharness.Start(b, testharness.Options{PluginConfig: map[string]any{"port": 0, "store": "memory", "rate_limit": 0,
			"allow_loopback_urls": true, "a2a_agents": []map[string]any{{"name": "ref", "url": url}}}})
		call := func(ctx context.Context) error {
			res, _, err := caller.CallTool(ctx, "a2a_call", args)
			if err == nil && res.GetIsError() {
				err = fmt.Errorf("is_error: %s", res.GetContent())
			}
			return err
		}
		measure(b, call)
	})

	b.Run("mcp-face", func(b *testing.B) {
		f := startFace(b, faceOptions{protocol: proto20251125, config: peerConfig(url, nil)})
		call := func(ctx context.Context) error {
			res, err := f.session.CallTool(ctx, &sdk.CallToolParams{Name: "a2a_call", Arguments: map[string]any{"agent": "ref", "message": "ping"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("isError: %s", resultText(res))
			}
			return err
		}
		measure(b, call)
		b.ReportMetric(float64(rssKB(f.cmd.Process.Pid)), "face-rss-KB")
		if kids := children(f.cmd.Process.Pid); len(kids) == 1 {
			b.ReportMetric(float64(rssKB(kids[0])), "plugin-rss-KB")
		}
	})
}

// BenchmarkA2AList is the same pair for a tool that makes no network call
// (a2a_list), so only the path from the caller to the plugin is measured:
// what the MCP face adds, without the A2A round trip around it.
func BenchmarkA2AList(b *testing.B) {
	cfg := map[string]any{"port": 0, "store": "memory", "rate_limit": 0}
	b.Run("reference-host", func(b *testing.B) {
		h := testharness.Start(b, testharness.Options{PluginConfig: cfg})
		measure(b, func(ctx context.Context) error {
			_, _, err := h.CallTool(ctx, "a2a_list", "{}")
			return err
		})
	})
	b.Run("mcp-face", func(b *testing.B) {
		f := startFace(b, faceOptions{protocol: proto20251125})
		measure(b, func(ctx context.Context) error {
			_, err := f.session.CallTool(ctx, &sdk.CallToolParams{Name: "a2a_list", Arguments: map[string]any{}})
			return err
		})
	})
}

// measure runs call b.N times (after a few warm-up calls) and reports the
// median.
func measure(b *testing.B, call func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for range 5 {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "median-µs")
}

// rssKB is a process's resident set size (VmRSS), 0 when unknown.
func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}
