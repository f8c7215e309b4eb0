package plugin_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// bareHost has only the RPCs every host has.
type bareHost struct{}

func (bareHost) HandleMessage(context.Context, *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	return &pb.HandleMessageResponse{}, nil
}
func (bareHost) CancelTurn(context.Context, *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	return &pb.CancelTurnResponse{}, nil
}
func (bareHost) ListTools(context.Context) ([]*pb.ToolDefinition, error) { return nil, nil }

// modelHost adds a model.
type modelHost struct{ bareHost }

func (modelHost) Complete(context.Context, *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	return &pb.CompleteResponse{Text: "ok"}, nil
}

// fullHost adds delegation memory and says it cannot stop running turns.
type fullHost struct {
	modelHost
	noCancel bool
}

func (fullHost) RecordDelegation(context.Context, *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	return &pb.RecordDelegationResponse{}, nil
}
func (h fullHost) CancelTurnUnsupported() bool { return h.noCancel }

// TestHostInfoIsDerivedFromTheInterfacesAHostImplements: optional_rpcs and
// cancel_turn_unsupported follow the optional interfaces, whatever the
// given HostInfo listed by hand; its other fields are kept.
func TestHostInfoIsDerivedFromTheInterfacesAHostImplements(t *testing.T) {
	claims := &pb.HostInfo{Name: "h", Version: "1", OptionalRpcs: []string{"Complete", "RecordDelegation"}, CancelTurnUnsupported: true}
	for _, c := range []struct {
		host     plugin.HostHandler
		rpcs     string
		noCancel bool
	}{
		{nil, "[]", false},
		{bareHost{}, "[]", false},
		{modelHost{}, "[Complete]", false},
		{fullHost{}, "[RecordDelegation Complete]", false},
		{fullHost{noCancel: true}, "[RecordDelegation Complete]", true},
	} {
		got := plugin.HostInfoOf(c.host, claims)
		if fmt.Sprint(got.GetOptionalRpcs()) != c.rpcs || got.GetCancelTurnUnsupported() != c.noCancel || got.GetName() != "h" || got.GetVersion() != "1" {
			t.Errorf("%T: %v", c.host, got)
		}
	}
	if len(claims.GetOptionalRpcs()) != 2 {
		t.Error("HostInfoOf changed the HostInfo it was given")
	}
	// What a host lacks is answered Unimplemented, not stubbed.
	hs := plugin.NewHostServer(bareHost{}, 0)
	if _, err := hs.Complete(context.Background(), &pb.CompleteRequest{}); err == nil {
		t.Error("Complete on a host without a model succeeded")
	}
	if resp, err := plugin.NewHostServer(modelHost{}, 0).Complete(context.Background(), &pb.CompleteRequest{}); err != nil || resp.GetText() != "ok" {
		t.Errorf("Complete on a host with a model: %v %v", resp, err)
	}
}
