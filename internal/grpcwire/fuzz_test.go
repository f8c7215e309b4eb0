package grpcwire

import (
	"testing"

	"google.golang.org/protobuf/proto"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// FuzzRequestsFromTheWire feeds arbitrary bytes to the conversions the
// gRPC binding runs on what a peer sent (as the message of every
// streaming and unary RPC that takes one) and of the answers the client
// reads: nothing may panic, and whatever converts converts back.
func FuzzRequestsFromTheWire(f *testing.F) {
	seed, _ := proto.Marshal(&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}})
	f.Add(seed)
	task, _ := proto.Marshal(&a2apb.Task{Id: "t", Status: &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_WORKING}})
	f.Add(task)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var send a2apb.SendMessageRequest
		if proto.Unmarshal(b, &send) == nil {
			if r, err := SendMessageRequestFromProto(&send); err == nil {
				_ = r.Validate()
				if _, err := SendMessageRequestToProto(r); err != nil {
					t.Fatalf("converted in but not back: %v", err)
				}
			}
		}
		var list a2apb.ListTasksRequest
		if proto.Unmarshal(b, &list) == nil {
			_ = ListTasksRequestFromProto(&list).Validate()
		}
		var cfg a2apb.TaskPushNotificationConfig
		if proto.Unmarshal(b, &cfg) == nil {
			_ = PushConfigFromProto(&cfg).Validate()
		}
		var resp a2apb.StreamResponse
		if proto.Unmarshal(b, &resp) == nil {
			if r, err := StreamResponseFromProto(&resp); err == nil {
				if _, err := StreamResponseToProto(r); err != nil {
					t.Fatalf("event converted in but not back: %v", err)
				}
			}
		}
		var card a2apb.AgentCard
		if proto.Unmarshal(b, &card) == nil {
			if c, err := AgentCardFromProto(&card); err == nil {
				if _, err := AgentCardToProto(c); err != nil {
					t.Fatalf("card converted in but not back: %v", err)
				}
			}
		}
	})
}
