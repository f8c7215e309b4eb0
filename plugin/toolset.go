package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// ToolsetGRPCPlugin carries ToolsetService over go-plugin. On the plugin side
// Impl is served; on the host side GRPCClient returns a Toolset backed by the
// gRPC client.
//
// CallTool is a server stream: the server half runs Impl.CallTool with a
// ProgressFunc that sends each progress event, then sends the one result;
// the client half hands progress events to the caller's ProgressFunc and
// returns the result.
type ToolsetGRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin

	// Impl is the plugin's Toolset (plugin side only).
	Impl Toolset
}

var _ goplugin.GRPCPlugin = (*ToolsetGRPCPlugin)(nil)

// GRPCServer registers ToolsetService backed by Impl.
func (p *ToolsetGRPCPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterToolsetServiceServer(s, &toolsetServer{impl: p.Impl})
	return nil
}

// GRPCClient returns a Toolset backed by the ToolsetService client.
func (p *ToolsetGRPCPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &toolsetClient{client: pb.NewToolsetServiceClient(c)}, nil
}

type toolsetServer struct {
	pb.UnimplementedToolsetServiceServer
	impl Toolset
}

func (s *toolsetServer) ListTools(ctx context.Context, _ *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	tools, err := s.impl.ListTools(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ListToolsResponse{Tools: tools}, nil
}

// errCallFinished is what a ProgressFunc returns when the tool reports
// progress after its call returned (e.g. from a goroutine it left running).
var errCallFinished = errors.New("the tool call already returned; progress is no longer delivered")

func (s *toolsetServer) CallTool(req *pb.CallToolRequest, stream pb.ToolsetService_CallToolServer) error {
	ctx := stream.Context()
	// A tool may report progress from several goroutines, and a gRPC stream
	// allows one sender at a time.
	var mu sync.Mutex
	finished := false
	progress := func(p *pb.ToolProgress) error {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return errCallFinished
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return stream.Send(&pb.CallToolResponse{Event: &pb.CallToolResponse_Progress{Progress: p}})
	}
	res, err := s.impl.CallTool(ctx, req, progress)
	mu.Lock()
	finished = true
	mu.Unlock()
	if err != nil {
		return toStatus(err)
	}
	if res == nil {
		return status.Errorf(codes.Internal, "tool %q returned neither a result nor an error (a Toolset must return one)", req.GetName())
	}
	return stream.Send(&pb.CallToolResponse{Event: &pb.CallToolResponse_Result{Result: res}})
}

type toolsetClient struct {
	client pb.ToolsetServiceClient
}

var _ Toolset = (*toolsetClient)(nil)

func (c *toolsetClient) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	resp, err := c.client.ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	return resp.GetTools(), nil
}

// ErrNoResult is returned by a client half's CallTool when the plugin ended
// the stream without sending a result, which a conforming plugin never does.
var ErrNoResult = errors.New("the plugin ended the tool call without a result")

func (c *toolsetClient) CallTool(ctx context.Context, req *pb.CallToolRequest, progress ProgressFunc) (*pb.ToolResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream if we stop reading early
	stream, err := c.client.CallTool(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("tool %q: %w", req.GetName(), ErrNoResult)
		}
		if err != nil {
			return nil, fromStatus(err)
		}
		switch ev := msg.GetEvent().(type) {
		case *pb.CallToolResponse_Progress:
			if progress == nil {
				continue
			}
			if err := progress(ev.Progress); err != nil {
				return nil, fmt.Errorf("tool %q: progress callback stopped the call: %w", req.GetName(), err)
			}
		case *pb.CallToolResponse_Result:
			return ev.Result, nil
		default:
			// An event a newer protocol minor added; skip it.
		}
	}
}
