package hostsdk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
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

// sendRecorder is a Platform that records what reaches it.
type sendRecorder struct {
	plugin.Platform // unused methods panic
	calls           []string
}

func (r *sendRecorder) Send(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	r.calls = append(r.calls, fmt.Sprintf("Send %s ends_turn=%t", req.GetKind(), req.GetEndsTurn()))
	return &pb.SendResponse{MessageId: "m"}, nil
}

func (r *sendRecorder) ProcessingComplete(_ context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	r.calls = append(r.calls, fmt.Sprintf("ProcessingComplete %s %s", req.GetTaskId(), req.GetOutcome()))
	return &pb.ProcessingCompleteResponse{}, nil
}

func TestSendEndingTheTurnReachesAnOlderPluginAsSendThenProcessingComplete(t *testing.T) {
	for minor, want := range map[uint32]string{
		0: "[Send SEND_KIND_FINAL ends_turn=false ProcessingComplete t OUTCOME_SUCCESS]",
		1: "[Send SEND_KIND_FINAL ends_turn=true]",
	} {
		rec := &sendRecorder{}
		desc := &pb.DescribeResponse{Name: "p", ProtocolMinor: minor, Capabilities: []pb.Capability{pb.Capability_CAPABILITY_PLATFORM}}
		p := &Plugin{name: "p", state: StateReady, desc: desc, inst: &instance{platform: rec, desc: desc}}
		pf, ok := p.Platform()
		if !ok {
			t.Fatal("no platform")
		}
		req := &pb.SendRequest{TaskId: "t", Kind: pb.SendKind_SEND_KIND_FINAL, Text: "x", EndsTurn: true}
		if resp, err := pf.Send(context.Background(), req); err != nil || resp.GetMessageId() != "m" {
			t.Fatalf("minor %d: Send = %v, %v", minor, resp, err)
		}
		if got := fmt.Sprint(rec.calls); got != want {
			t.Errorf("minor %d: the plugin got %s, want %s", minor, got, want)
		}
		if !req.GetEndsTurn() {
			t.Errorf("minor %d: the caller's request was changed", minor)
		}
		if got := pf.(interface{ ProtocolMinor() uint32 }).ProtocolMinor(); got != minor {
			t.Errorf("ProtocolMinor() = %d, want %d", got, minor)
		}
	}
}
