package docs_test

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// upPath matches a relative path that climbs: "../x", "../../bin/y".
var upPath = regexp.MustCompile("(?:\\.\\./)+[^\\s\"'`)\\]},;:]*")

// outsideMarks are spellings of places beside or above a checkout that
// the maintainers' machines have and a user's clone does not.
// outsideMarks are spelt in pieces so that this file, which must name them,
// does not itself match a search for them (as the checkout hook's grep).
var outsideMarks = []string{"../" + "shared", "shared" + "/spec/", "/work/"}

// self is this file, which spells the marks out to look for them.
const self = "testharness/e2e/docs/standalone_test.go"

// TestNoFileReachesOutsideTheRepository keeps a clone standing alone:
// no file git tracks (or would track), Markdown aside, names the folder beside the clone or
// another path that resolves, from the file's directory, outside the
// repository. Tests, the Makefile and scripts run with their own
// directory as the base, so such a path would read something a user's
// clone does not have.
func TestNoFileReachesOutsideTheRepository(t *testing.T) {
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	checked := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if strings.HasSuffix(name, ".md") || name == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || bytes.IndexByte(b, 0) >= 0 {
			continue // deleted in the working tree, or binary
		}
		checked++
		for _, p := range outsideProblems(name, string(b)) {
			t.Errorf("%s: %s", name, p)
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files: is git ls-files listing the repository?", checked)
	}
}

// outsideProblems lists the lines of the file name (a slash path relative
// to the repository root) that refer to a place outside the repository.
func outsideProblems(name, text string) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		for _, m := range outsideMarks {
			if strings.Contains(line, m) {
				out = append(out, "line "+strconv.Itoa(i+1)+" names "+m+": "+strings.TrimSpace(line))
			}
		}
		for _, rel := range upPath.FindAllString(line, -1) {
			if p := path.Join(path.Dir(name), rel); p == ".." || strings.HasPrefix(p, "../") {
				out = append(out, "line "+strconv.Itoa(i+1)+": "+rel+" resolves outside the repository ("+p+")")
			}
		}
	}
	return out
}

func TestOutsideProblemsFindsPathsLeavingTheRepository(t *testing.T) {
	cases := []struct {
		name, file, line string
		bad              bool
	}{
		{"the old schema path", "internal/a2a/a2atest/a2atest.go", `filepath.Join(dir, "..", "shared", "spec") // ../` + `shared/spec`, true},
		{"a digest in a comment", "internal/server/doc.go", "// (shared" + "/spec/A2A-V1.md)", true},
		{"a machine path", "Makefile", "SCHEMA ?= /work/" + "shared/x.json", true},
		{"climbing out of the root", "Makefile", "include ../other/rules.mk", true},
		{"climbing out of a package", "cmd/a2a-bench/bench_test.go", `build.Dir = "../../.."`, true},
		{"climbing to the root", "cmd/a2a-bench/go.mod", "replace github.com/a2a-plugin/a2a-plugin => ../..", false},
		{"a sibling inside", "host-sdk/openclaw/package.json", `"@a2a-plugin/host-sdk": "file:../node"`, false},
		{"no path", "main.go", "x := a / b", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := outsideProblems(c.file, c.line); (len(got) > 0) != c.bad {
				t.Fatalf("outsideProblems(%q, %q) = %v, want a problem: %v", c.file, c.line, got, c.bad)
			}
		})
	}
}

// TestMakeBuildSaysWhatTheFirstBuildDoes keeps make build (and so the
// first make run) from compiling for minutes without a word: its first
// command says what is built and how long the first build takes.
func TestMakeBuildSaysWhatTheFirstBuildDoes(t *testing.T) {
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "-n", "--no-print-directory", "build")
	cmd.Dir = root
	// Under make test this runs inside make: without its variables, the
	// inner make neither prints "Entering directory" nor inherits flags.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=") || strings.HasPrefix(kv, "MFLAGS=")
	})
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	for _, want := range []string{"echo ", "first build", "minutes"} {
		if !strings.Contains(first, want) {
			t.Errorf("make build's first command %q lacks %q: say what the first build does before it starts", first, want)
		}
	}
}
