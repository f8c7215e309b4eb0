package testharness_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// BenchmarkA2APluginLaunchToReady measures the real a2a-plugin binary from
// launch to ready, the way a host runs it: process start, go-plugin
// handshake (AutoMTLS), Describe, Configure (store opened — SQLite created
// and migrated —, HTTP listener bound, host callback through the broker)
// and Connect. Each launch gets a fresh data directory; the host's own
// set-up (its echo agent) is included, stopping is not. It reports the
// median over b.N launches.
func BenchmarkA2APluginLaunchToReady(b *testing.B) {
	for _, store := range []string{"memory", "sqlite"} {
		b.Run(store, func(b *testing.B) {
			cfg := map[string]any{"port": 0, "store": store}
			// The first start builds the binary (not timed).
			dir := testharness.Start(b, testharness.Options{PluginConfig: cfg, LogLevel: "error"}).PluginsDir()
			ctx := context.Background()
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				opts := testharness.Options{PluginConfig: cfg, PluginsDir: dir, LogLevel: "error",
					DataDir: filepath.Join(b.TempDir(), "data")}
				start := time.Now()
				h, err := testharness.StartHost(ctx, opts)
				if err != nil {
					b.Fatalf("launch %d: %v", i, err)
				}
				took = append(took, time.Since(start))
				b.StopTimer()
				if h.Endpoint(testharness.A2APluginName) == "" {
					b.Fatal("the plugin serves no endpoint once ready")
				}
				if err := h.Close(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/launch")
		})
	}
}
