package app

import (
	"testing"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// TestHostRPCsSayWhatTheHostOffers: the optional RPCs the tools may use
// come from Configure's host information; a host that sent none leaves
// the tools to find out (nil), a host that sent it is taken at its word.
func TestHostRPCsSayWhatTheHostOffers(t *testing.T) {
	if got := hostRPCs(&pb.ConfigureRequest{}); got != nil {
		t.Fatalf("no host info: %v, want nil", got)
	}
	if got := hostRPCs(&pb.ConfigureRequest{Host: &pb.HostInfo{Name: "h"}}); got == nil || len(got) != 0 {
		t.Fatalf("host info without optional RPCs: %#v, want an empty list", got)
	}
	got := hostRPCs(&pb.ConfigureRequest{Host: &pb.HostInfo{OptionalRpcs: []string{"RecordDelegation", "Complete"}}})
	if len(got) != 2 || got[0] != "RecordDelegation" {
		t.Fatalf("optional RPCs %v", got)
	}
}
