// Package version is what every program of this repository says about
// itself: its release version, the commit it was built from, the
// host↔plugin contract version it speaks and the Go toolchain that built
// it. `--version` prints it and the plugin logs it at start, so a bug
// report names the exact build.
//
// A release build injects the version and commit with the linker
// (make release):
//
//	-ldflags "-X github.com/a2a-plugin/a2a-plugin/internal/version.version=v1.2.3
//	          -X github.com/a2a-plugin/a2a-plugin/internal/version.commit=0123abcd…"
//
// Without them (go build, go install, go run) the version is "dev" (or the
// module version go install recorded) and the commit comes from the
// build information the Go toolchain embeds (vcs.revision, vcs.modified).
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/plugin"
)

// Set by the linker (see the package comment); empty in a plain go build.
var (
	version string
	commit  string
)

// Dev is the version of a build that was not given one.
const Dev = "dev"

// Info describes one build of one program.
type Info struct {
	// Program is the program's name (a2a-plugin, agenthost, …).
	Program string `json:"program"`
	// Version is the release version (v1.2.3, from git describe), or Dev.
	Version string `json:"version"`
	// Commit is the full commit hash the binary was built from, with
	// "-dirty" when the work tree had changes; empty when unknown.
	Commit string `json:"commit,omitempty"`
	// Contract is the host↔plugin contract version it speaks,
	// major.minor (plugin.ProtocolMajor, plugin.ProtocolMinor).
	Contract string `json:"contract"`
	// GoVersion is the Go toolchain that built it (runtime.Version).
	GoVersion string `json:"go"`
	// Platform is GOOS/GOARCH of the binary.
	Platform string `json:"platform"`
}

// Get returns the build information of program.
func Get(program string) Info {
	i := Info{
		Program:   program,
		Version:   version,
		Commit:    commit,
		Contract:  fmt.Sprintf("%d.%d", plugin.ProtocolMajor, plugin.ProtocolMinor),
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fromBuildInfo(&i, bi)
	}
	if i.Version == "" {
		i.Version = Dev
	}
	return i
}

// fromBuildInfo fills what the linker did not set from the build
// information the toolchain embedded.
func fromBuildInfo(i *Info, bi *debug.BuildInfo) {
	if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		i.Version = bi.Main.Version // go install module@v1.2.3
	}
	if i.Commit != "" {
		return
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	i.Commit = rev
}

// Version is the release version of this build, or Dev.
func Version() string { return Get("").Version }

// String is the multi-line answer to --version.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", i.Program, i.Version)
	commit := i.Commit
	if commit == "" {
		commit = "unknown"
	}
	fmt.Fprintf(&b, "  commit            %s\n", commit)
	fmt.Fprintf(&b, "  contract          agentplugin %s\n", i.Contract)
	fmt.Fprintf(&b, "  go                %s %s\n", i.GoVersion, i.Platform)
	return b.String()
}

// LogArgs are the key/value pairs a program logs at start.
func (i Info) LogArgs() []any {
	return []any{"version", i.Version, "commit", i.Commit, "contract", i.Contract, "go", i.GoVersion, "platform", i.Platform}
}
