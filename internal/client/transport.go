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
// Adding a binding is one file implementing transport and one line in
// bindings.
type transport interface {
	sendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error)
	sendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, deliver func(Event) error) error
	getTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error)
	listTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error)
	cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error)
	subscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, deliver func(Event) error) error
}

// binding is one interface this client speaks — a protocol binding at one
// protocol version — and the transport that calls it.
type binding struct {
	name, version string
	// leads makes the binding the choice when it is the card's first
	// interface at protocol 1.0 that this client speaks, ahead of the
	// bindings listed before it (see pickInterface).
	leads bool
	// transport returns the transport calling the interface of cn.
	transport func(cn *conn) transport
}

// bindings are the interfaces this client speaks, in the order it
// prefers their bindings (see pickInterface). Adding a binding is one file
// implementing transport and one line here.
var bindings = []binding{
	{name: a2a.BindingJSONRPC, version: a2a.ProtocolVersion, transport: func(cn *conn) transport { return newJSONRPCTransport(cn) }},
	{name: a2a.BindingJSONRPC, version: a2a.ProtocolVersionV03, transport: func(cn *conn) transport { return newV03Transport(cn) }},
	{name: a2a.BindingHTTPJSON, version: a2a.ProtocolVersion, transport: func(cn *conn) transport { return &restTransport{cn: cn} }},
	{name: a2a.BindingGRPC, version: a2a.ProtocolVersion, leads: true, transport: func(cn *conn) transport { return &grpcTransport{cn: cn} }},
}

// bindingOf returns the entry of bindings that speaks in, if any.
func bindingOf(in a2a.AgentInterface) (binding, bool) {
	for _, b := range bindings {
		if strings.EqualFold(in.ProtocolBinding, b.name) && in.ProtocolVersion == b.version {
			return b, true
		}
	}
	return binding{}, false
}

// newTransport returns the transport of the interface pickInterface chose
// for the peer's card (cn.info.Interface), from bindings: the only place
// the client picks code by the binding. An interface no entry speaks
// (which pickInterface never chooses) is called as JSON-RPC 1.0.
func newTransport(cn *conn) transport {
	if b, ok := bindingOf(cn.info.Interface); ok {
		return b.transport(cn)
	}
	return newJSONRPCTransport(cn)
}
