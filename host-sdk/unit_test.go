package hostsdk

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hclog "github.com/hashicorp/go-hclog"
)

func TestDiscoverListsExecutablesAndSaysWhatItSkips(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("b-plugin", 0o755)
	write("a-plugin", 0o700)
	write("notes.txt", 0o644)
	write(".hidden", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "b-plugin"), filepath.Join(dir, "c-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "d-dangling")); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})

	got, err := Discover(dir, log)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
		if c.Path != filepath.Join(dir, c.Name) {
			t.Errorf("%s: path %q", c.Name, c.Path)
		}
	}
	if want := []string{"a-plugin", "b-plugin", "c-link"}; !slices.Equal(names, want) {
		t.Errorf("candidates = %v, want %v", names, want)
	}
	for _, want := range []string{
		"not executable", "notes.txt",
		"skipping directory", "subdir",
		"hidden", ".hidden",
		"dangling", "d-dangling",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestDiscoverOfAMissingDirectoryIsAnError(t *testing.T) {
	_, err := Discover(filepath.Join(t.TempDir(), "nope"), nil)
	if err == nil || !strings.Contains(err.Error(), "plugins directory") {
		t.Fatalf("err = %v", err)
	}
}

func TestBuildEnvPassesOnlyTheAllowlist(t *testing.T) {
	environ := []string{
		"PATH=/bin", "HOME=/home/u", "LC_ALL=C", "https_proxy=http://p", "GOCOVERDIR=/cov",
		"AWS_SECRET_ACCESS_KEY=s3cr3t", "OPENAI_API_KEY=sk-x", "A2A_TOKEN=t", "MYAPP_MODE=x",
		"TESTPLUGIN_FLAVOUR=y", "EMPTY=", "=weird",
	}
	got := buildEnv(environ, []string{"MYAPP_*", "EMPTY"}, []string{"TESTPLUGIN_", ""},
		map[string]string{"FROM_CONFIG": "1", "PATH": "/override"}, "debug")
	want := []string{
		"AGENTPLUGIN_LOG_LEVEL=debug", "EMPTY=", "FROM_CONFIG=1", "GOCOVERDIR=/cov", "HOME=/home/u",
		"LC_ALL=C", "MYAPP_MODE=x", "PATH=/override", "TESTPLUGIN_FLAVOUR=y", "https_proxy=http://p",
	}
	if !slices.Equal(got, want) {
		t.Errorf("env =\n%v\nwant\n%v", got, want)
	}
}

func TestCompareVersionsKeepsTheHigherRelease(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"1.0.0", "2.0.0", -1},
		{"v2.1.0", "2.0.9", 1},
		{"1.10.0", "1.9.0", 1},
		{"1.0.0", "1.0.0-rc1", 1},
		{"1.0.0-rc1", "1.0.0-rc2", -1},
		{"1.2", "1.2.0", 0},
		{"dev", "0.0.1", -1},
		{"1.0.0+build5", "1.0.0", 0},
	}
	for _, c := range cases {
		if got := compareVersions(c.a, c.b); got != c.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestStderrRingKeepsTheLastLinesReadably(t *testing.T) {
	r := newLineRing(3)
	_, _ = r.Write([]byte("one\ntw"))
	_, _ = r.Write([]byte("o\n"))
	_, _ = r.Write([]byte(`{"@level":"error","@message":"crashing on purpose","@timestamp":"x","reason":"disk full"}` + "\n"))
	_, _ = r.Write([]byte("four\n\n"))
	want := []string{"two", "error: crashing on purpose reason=disk full", "four"}
	if got := r.tail(0); !slices.Equal(got, want) {
		t.Errorf("tail = %q, want %q", got, want)
	}
	if got := r.tail(1); !slices.Equal(got, want[2:]) {
		t.Errorf("tail(1) = %q", got)
	}
	mark := r.mark()
	_, _ = r.Write([]byte(`{"@level":"debug","@message":"chatter"}` + "\n" + "panic: boom\n"))
	if got := r.notableSince(mark, 5); !slices.Equal(got, []string{"panic: boom"}) {
		t.Errorf("notableSince = %q, want only the new non-debug line", got)
	}
}
