package app_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// TestTheHostSeesOneCodePerKindOfMistake is the table of gRPC codes a host
// sees from the plugin, through the real contract (plugin.Serve and its
// client halves): a request or configuration that is wrong is
// InvalidArgument, a call out of order FailedPrecondition, an unknown tool
// NotFound — each the code of a plugin sentinel, which the host's error
// matches with errors.Is.
func TestTheHostSeesOneCodePerKindOfMistake(t *testing.T) {
	ctx := context.Background()
	fresh := serve(t, `{}`, nil, hostsdk.InProcessOptions{NoConfigure: true})
	ready := serve(t, `{"port":0,"store":"memory"}`, nil, hostsdk.InProcessOptions{})
	freshPlatform, _ := fresh.Platform()
	freshToolset, _ := fresh.Toolset()
	platform, _ := ready.Platform()
	toolset, _ := ready.Toolset()
	cases := []struct {
		name     string
		call     func() error
		code     codes.Code
		sentinel error
	}{
		{"a setting that is not one", func() error {
			_, err := fresh.Lifecycle().Configure(ctx, &pb.ConfigureRequest{ConfigJson: []byte(`{"prot":1}`), DataDir: t.TempDir()}, nil)
			return err
		}, codes.InvalidArgument, plugin.ErrInvalidArgument},
		{"a setting that cannot be used", func() error {
			_, err := fresh.Lifecycle().Configure(ctx, &pb.ConfigureRequest{ConfigJson: []byte(`{"policy":"public=fly"}`), DataDir: t.TempDir()}, nil)
			return err
		}, codes.InvalidArgument, plugin.ErrInvalidArgument},
		{"Send before Configure", func() error {
			_, err := freshPlatform.Send(ctx, &pb.SendRequest{TaskId: "t", Kind: pb.SendKind_SEND_KIND_FINAL, Text: "x"})
			return err
		}, codes.FailedPrecondition, plugin.ErrNotReady},
		{"ListTools before Configure", func() error {
			_, err := freshToolset.ListTools(ctx)
			return err
		}, codes.FailedPrecondition, plugin.ErrNotReady},
		{"Configure twice", func() error {
			_, err := ready.Lifecycle().Configure(ctx, &pb.ConfigureRequest{ConfigJson: []byte(`{"store":"memory"}`)}, nil)
			return err
		}, codes.FailedPrecondition, plugin.ErrNotReady},
		{"Send without a task", func() error {
			_, err := platform.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_FINAL, Text: "x"})
			return err
		}, codes.InvalidArgument, plugin.ErrInvalidArgument},
		{"Send with nothing to send", func() error {
			_, err := platform.Send(ctx, &pb.SendRequest{TaskId: "t", Kind: pb.SendKind_SEND_KIND_FINAL})
			return err
		}, codes.InvalidArgument, plugin.ErrInvalidArgument},
		{"Send for a task without a turn", func() error {
			_, err := platform.Send(ctx, &pb.SendRequest{TaskId: "no-such-task", Kind: pb.SendKind_SEND_KIND_FINAL, Text: "x"})
			return err
		}, codes.FailedPrecondition, plugin.ErrNotReady},
		{"ProcessingComplete without an outcome", func() error {
			_, err := platform.ProcessingComplete(ctx, &pb.ProcessingCompleteRequest{TaskId: "t"})
			return err
		}, codes.InvalidArgument, plugin.ErrInvalidArgument},
		{"an unknown tool", func() error {
			_, err := toolset.CallTool(ctx, &pb.CallToolRequest{Name: "a2a_fly"}, nil)
			return err
		}, codes.NotFound, plugin.ErrUnknownTool},
	}
	for _, c := range cases {
		err := c.call()
		if status.Code(err) != c.code || !errors.Is(err, c.sentinel) {
			t.Errorf("%s: %v (code %s), want %s", c.name, err, status.Code(err), c.code)
		}
	}
}
