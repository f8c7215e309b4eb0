package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfoFillsWhatTheLinkerDidNotSet(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name       string
		linked     Info
		bi         debug.BuildInfo
		wantVer    string
		wantCommit string
	}{
		{"a plain go build in a clean checkout", Info{},
			debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}},
			"", rev},
		{"a plain go build with local changes", Info{},
			debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}},
			"", rev + "-dirty"},
		{"go install of a tagged module", Info{},
			debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			"v1.2.3", ""},
		{"a release build keeps what the linker set", Info{Version: "v2.0.0", Commit: "abc"},
			debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}},
			"v2.0.0", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := tt.linked
			fromBuildInfo(&i, &tt.bi)
			if i.Version != tt.wantVer || i.Commit != tt.wantCommit {
				t.Errorf("got version %q commit %q, want %q and %q", i.Version, i.Commit, tt.wantVer, tt.wantCommit)
			}
		})
	}
}

func TestStringNamesEveryPart(t *testing.T) {
	got := Info{Program: "a2a-plugin", Version: "v1.2.3", Commit: "abc", Contract: "1.4", GoVersion: "go1.26.0", Platform: "linux/amd64"}.String()
	for _, want := range []string{"a2a-plugin v1.2.3\n", "commit            abc", "agentplugin 1.4", "go1.26.0 linux/amd64"} {
		if !strings.Contains(got, want) {
			t.Errorf("String() = %q, lacks %q", got, want)
		}
	}
	if got := (Info{Program: "x", Version: Dev}).String(); !strings.Contains(got, "commit            unknown") {
		t.Errorf("an unknown commit is not said: %q", got)
	}
}

func TestGetDefaultsToDevAndTheContractOfThisTree(t *testing.T) {
	i := Get("p")
	if i.Version != Dev {
		t.Errorf("Version = %q without -ldflags, want %q", i.Version, Dev)
	}
	if i.Contract == "" || !strings.HasPrefix(i.Contract, "1.") {
		t.Errorf("Contract = %q", i.Contract)
	}
}
