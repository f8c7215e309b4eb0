package plugin

import (
	"context"
	"fmt"
	"sync/atomic"

	hclog "github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// PlatformGRPCPlugin carries PlatformAdapterService over go-plugin. On the
// plugin side Impl is served; on the host side GRPCClient returns a Platform
// backed by the gRPC client.
type PlatformGRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin

	// Impl is the plugin's Platform (plugin side only).
	Impl Platform
	// Logger receives panics of Send calls on the SendStream call stream
	// (plugin side; unary calls have ServerOptions' interceptor); nil
	// discards them.
	Logger hclog.Logger
}

var _ goplugin.GRPCPlugin = (*PlatformGRPCPlugin)(nil)

// GRPCServer registers PlatformAdapterService backed by Impl.
func (p *PlatformGRPCPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterPlatformAdapterServiceServer(s, &platformServer{impl: p.Impl, logger: p.Logger})
	return nil
}

// GRPCClient returns a Platform backed by the PlatformAdapterService client.
func (p *PlatformGRPCPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &platformClient{client: pb.NewPlatformAdapterServiceClient(c)}, nil
}

type platformServer struct {
	pb.UnimplementedPlatformAdapterServiceServer
	impl   Platform
	logger hclog.Logger
}

// SendStream serves Send calls on a call stream (1.2), each exactly as
// Send serves it.
func (s *platformServer) SendStream(stream pb.PlatformAdapterService_SendStreamServer) error {
	return serveCalls(stream, s.logger, pb.PlatformAdapterService_SendStream_FullMethodName, s.Send,
		func(id uint64, out *pb.SendResponse, e *pb.CallError) *pb.SendStreamResponse {
			return &pb.SendStreamResponse{CallId: id, Response: out, Error: e}
		})
}

func (s *platformServer) Connect(ctx context.Context, req *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	resp, err := s.impl.Connect(ctx, req)
	return resp, toStatus(err)
}

func (s *platformServer) Disconnect(ctx context.Context, req *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	resp, err := s.impl.Disconnect(ctx, req)
	return resp, toStatus(err)
}

// Send serves PlatformAdapterService.Send. A Send with ends_turn (protocol
// 1.1) is handled here for every Platform: the implementation's Send, then
// its ProcessingComplete with OUTCOME_SUCCESS in the same call, so an
// implementation needs no code of its own for it and Serve may announce
// protocol minor 1 on its behalf.
func (s *platformServer) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	if !req.GetEndsTurn() {
		resp, err := s.impl.Send(ctx, req)
		return resp, toStatus(err)
	}
	switch req.GetKind() {
	case pb.SendKind_SEND_KIND_FINAL, pb.SendKind_SEND_KIND_DIRECT_REPLY,
		pb.SendKind_SEND_KIND_INPUT_REQUIRED, pb.SendKind_SEND_KIND_AUTH_REQUIRED:
	default:
		return nil, status.Errorf(codes.InvalidArgument,
			"send: ends_turn is for a turn's last output (FINAL, DIRECT_REPLY, INPUT_REQUIRED, AUTH_REQUIRED), not %s; end the turn with ProcessingComplete", req.GetKind())
	}
	resp, err := SendThenEndTurn(ctx, s.impl, req)
	return resp, toStatus(err)
}

// SendThenEndTurn is what a Send with ends_turn means, for a receiver that
// does not read the field: p.Send delivers req, then, if it was delivered,
// p.ProcessingComplete ends the turn with OUTCOME_SUCCESS. A failed send leaves the
// turn open, for the host to end with ProcessingComplete. Serve uses it for
// every Platform, and the host SDK for plugins older than protocol 1.1.
func SendThenEndTurn(ctx context.Context, p Platform, req *pb.SendRequest) (*pb.SendResponse, error) {
	resp, err := p.Send(ctx, req)
	if err != nil {
		return nil, err
	}
	if _, err := p.ProcessingComplete(ctx, &pb.ProcessingCompleteRequest{
		Platform: req.GetPlatform(), ChatId: req.GetChatId(), TaskId: req.GetTaskId(),
		AgentId: req.GetAgentId(), Outcome: pb.Outcome_OUTCOME_SUCCESS,
	}); err != nil {
		return nil, fmt.Errorf("the output was delivered but ending the turn failed (send ProcessingComplete): %w", err)
	}
	return resp, nil
}

func (s *platformServer) ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	resp, err := s.impl.ProcessingComplete(ctx, req)
	return resp, toStatus(err)
}

type platformClient struct {
	client pb.PlatformAdapterServiceClient
	// sends carries Send over the SendStream call stream once
	// UseCallStreams saw a plugin of protocol 1.2 or later.
	sends atomic.Pointer[callClient[*pb.SendRequest, *pb.SendResponse, *pb.SendStreamRequest, *pb.SendStreamResponse]]
}

// UseCallStreams tells a Platform dispensed from a plugin (PluginMap) the
// contract minor the plugin gave in DescribeResponse.protocol_minor: from
// 1.2 on its Send calls travel on the SendStream call stream, which costs
// both processes less CPU per call than a unary RPC (see HandleMessages in
// the contract). Below 1.2, and for any other Platform, it does nothing.
// Hosts on the host SDK get this from it.
func UseCallStreams(p Platform, pluginMinor uint32) {
	c, ok := p.(*platformClient)
	if !ok || pluginMinor < 2 || c.sends.Load() != nil {
		return
	}
	c.sends.CompareAndSwap(nil, &callClient[*pb.SendRequest, *pb.SendResponse, *pb.SendStreamRequest, *pb.SendStreamResponse]{
		open: func(ctx context.Context) (callStreamClient[*pb.SendStreamRequest, *pb.SendStreamResponse], error) {
			return c.client.SendStream(ctx)
		},
		wrap: func(id uint64, timeoutMS uint32, in *pb.SendRequest) *pb.SendStreamRequest {
			return &pb.SendStreamRequest{CallId: id, Request: in, TimeoutMs: timeoutMS}
		},
		cancel: func(id uint64) *pb.SendStreamRequest {
			return &pb.SendStreamRequest{CallId: id, Cancel: true}
		},
		unary: c.sendUnary,
	})
}

var _ Platform = (*platformClient)(nil)

func (c *platformClient) Connect(ctx context.Context, req *pb.ConnectRequest) (*pb.ConnectResponse, error) {
	resp, err := c.client.Connect(ctx, req)
	return resp, fromStatus(err)
}

func (c *platformClient) Disconnect(ctx context.Context, req *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	resp, err := c.client.Disconnect(ctx, req)
	return resp, fromStatus(err)
}

func (c *platformClient) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	if s := c.sends.Load(); s != nil {
		return s.call(ctx, req)
	}
	return c.sendUnary(ctx, req)
}

func (c *platformClient) sendUnary(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	resp, err := c.client.Send(ctx, req)
	return resp, fromStatus(err)
}

func (c *platformClient) ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	resp, err := c.client.ProcessingComplete(ctx, req)
	return resp, fromStatus(err)
}
