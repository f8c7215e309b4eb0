// Command a2a-plugin is the A2A (Agent2Agent v1.0) plugin for agent hosts.
// A host launches it with hashicorp go-plugin over gRPC (see host-sdk); it
// serves a platform adapter (inbound A2A server feeding the host's live
// session) and a toolset (outbound a2a_* tools).
//
// Run by hand it only answers --version; anything else explains how it is
// meant to be started. It never writes to stdout before the handshake.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/app"
	"github.com/a2a-plugin/a2a-plugin/internal/version"
	"github.com/a2a-plugin/a2a-plugin/plugin"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--version", "-version", "version", "-v":
			fmt.Print(version.Get("a2a-plugin").String())
			fmt.Println("  A2A protocol      1.0 (JSON-RPC, HTTP+JSON, gRPC), 0.3 compatible")
			return
		case "--help", "-help", "-h", "help":
			fmt.Fprint(os.Stderr, usage)
			return
		}
	}
	if os.Getenv(plugin.Handshake.MagicCookieKey) != plugin.Handshake.MagicCookieValue {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(1)
	}
	// Heap profiling samples allocations into a table of about 1.5 MiB
	// that only /debug/pprof/ reads: off until a Configure turns pprof on
	// (heap profiles then cover what was allocated since), unless the
	// operator chose a rate with GODEBUG=memprofilerate=N.
	rate := runtime.MemProfileRate
	if !strings.Contains(os.Getenv("GODEBUG"), "memprofilerate=") {
		runtime.MemProfileRate = 0
	}
	// The GC keeps Go's defaults (GOGC=100, no memory limit); GOGC and
	// GOMEMLIMIT in the plugin's environment apply as usual. A higher GOGC
	// saves CPU but not within the RSS budget: docs/performance.md,
	// "Decisions the code refers to" (the GC runs with Go's defaults).
	logger := plugin.NewLogger("a2a")
	info := version.Get("a2a-plugin")
	logger.Info("a2a-plugin starting", info.LogArgs()...)
	a := app.New(logger, info.Version, os.Getenv)
	a.PprofOn = func() { runtime.MemProfileRate = rate }
	a.Environ = os.Environ
	plugin.Serve(plugin.ServeOpts{Lifecycle: a, Platform: a, Toolset: a, Logger: logger})
}

const usage = `a2a-plugin is a plugin: an agent host starts it, it is not run by hand.

Put the binary in your host's plugins directory (for the reference host:
bin/plugins, then 'make run'), configure it in the host's config section
"a2a" or with A2A_* environment variables, and the host will launch it.

  a2a-plugin --version   print version information
`
