package client

import (
	"context"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// transport is one binding's way of making the A2A calls: JSON-RPC at
// protocol 1.0 (jsonrpc.go), JSON-RPC at protocol 0.3 (v03.go), HTTP+JSON
// (rest.go) and gRPC (grpc.go). Requests and results are the v1.0 types
// whatever the binding speaks on the wire; failures are *Error. The Peer
// methods do what is common to every binding (card, defaults, tenant,
// capability checks) and hand the call to the transport newTransport
// picked for the peer's card.
//
// Adding a binding is one file implementing transport and one case in
// newTransport (and, for the card to offer it, spoken in interfaces.go).
type transport interface {
	sendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error)
	sendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, deliver func(Event) error) error
	getTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error)
	listTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error)
	cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error)
	subscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, deliver func(Event) error) error
}

// newTransport returns the transport of the interface pickInterface chose
// for the peer's card (cn.info.Interface): the only place the client
// branches on the binding.
func newTransport(cn *conn) transport {
	in := cn.info.Interface
	switch {
	case strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPC):
		return &grpcTransport{cn: cn}
	case strings.EqualFold(in.ProtocolBinding, a2a.BindingHTTPJSON):
		return &restTransport{cn: cn}
	case in.ProtocolVersion == a2a.ProtocolVersionV03:
		return newV03Transport(cn)
	}
	return newJSONRPCTransport(cn)
}
