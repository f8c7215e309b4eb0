package plugin

import (
	"context"
	"testing"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// endRecorder is a Platform that records the turn ends it is told.
type endRecorder struct {
	ends []*pb.ProcessingCompleteRequest
}

func (r *endRecorder) Connect(context.Context, *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	return &pb.ConnectResponse{}, nil
}

func (r *endRecorder) Disconnect(context.Context, *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	return &pb.DisconnectResponse{}, nil
}

func (r *endRecorder) Send(context.Context, *pb.SendRequest) (*pb.SendResponse, error) {
	return &pb.SendResponse{}, nil
}

func (r *endRecorder) ProcessingComplete(_ context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	r.ends = append(r.ends, req)
	return &pb.ProcessingCompleteResponse{}, nil
}

// The turn SendThenEndTurn ends is the one the Send was for, agent
// included: with several agents a ProcessingComplete without agent_id
// would have to find its agent by searching every agent's turns.
func TestSendThenEndTurnEndsTheTurnOfTheSendsAgent(t *testing.T) {
	r := &endRecorder{}
	req := &pb.SendRequest{Platform: "a2a", ChatId: "c1", TaskId: "t1", AgentId: "billing", Kind: pb.SendKind_SEND_KIND_FINAL, Text: "done"}
	if _, err := SendThenEndTurn(context.Background(), r, req); err != nil {
		t.Fatal(err)
	}
	if len(r.ends) != 1 {
		t.Fatalf("turn ends = %d, want 1", len(r.ends))
	}
	got := r.ends[0]
	if got.GetAgentId() != "billing" || got.GetTaskId() != "t1" || got.GetChatId() != "c1" || got.GetPlatform() != "a2a" || got.GetOutcome() != pb.Outcome_OUTCOME_SUCCESS {
		t.Fatalf("ProcessingComplete = %v; want the Send's agent, task, chat and platform with SUCCESS", got)
	}
}
