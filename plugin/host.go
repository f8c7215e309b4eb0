package plugin

import (
	"context"
	"fmt"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// ---------------------------------------------------------------------------
// Plugin side: the Host a plugin's Configure receives.
// ---------------------------------------------------------------------------

// hostClient is the plugin's view of the host callback service: a thin
// wrapper over the generated client on the broker connection.
type hostClient struct {
	conn   *grpc.ClientConn
	client pb.HostServiceClient
	// messages carries HandleMessage over the HandleMessages call stream;
	// nil when the host is older than protocol 1.2.
	messages *callClient[*pb.HandleMessageRequest, *pb.HandleMessageResponse, *pb.HandleMessagesRequest, *pb.HandleMessagesResponse]
}

var _ Host = (*hostClient)(nil)

// newHostClient wraps the broker connection to a host of contract minor
// hostMinor (from ConfigureRequest.host).
func newHostClient(conn *grpc.ClientConn, hostMinor uint32) *hostClient {
	h := &hostClient{conn: conn, client: pb.NewHostServiceClient(conn)}
	if hostMinor >= 2 {
		h.messages = &callClient[*pb.HandleMessageRequest, *pb.HandleMessageResponse, *pb.HandleMessagesRequest, *pb.HandleMessagesResponse]{
			open: func(ctx context.Context) (callStreamClient[*pb.HandleMessagesRequest, *pb.HandleMessagesResponse], error) {
				return h.client.HandleMessages(ctx)
			},
			wrap: func(id uint64, timeoutMS uint32, in *pb.HandleMessageRequest) *pb.HandleMessagesRequest {
				return &pb.HandleMessagesRequest{CallId: id, Request: in, TimeoutMs: timeoutMS}
			},
			cancel: func(id uint64) *pb.HandleMessagesRequest {
				return &pb.HandleMessagesRequest{CallId: id, Cancel: true}
			},
			unary: h.handleMessageUnary,
		}
	}
	return h
}

func (h *hostClient) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	if h.messages != nil {
		return h.messages.call(ctx, req)
	}
	return h.handleMessageUnary(ctx, req)
}

func (h *hostClient) handleMessageUnary(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	resp, err := h.client.HandleMessage(ctx, req)
	return resp, fromStatus(err)
}

func (h *hostClient) CancelTurn(ctx context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	resp, err := h.client.CancelTurn(ctx, req)
	return resp, fromStatus(err)
}

func (h *hostClient) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	resp, err := h.client.ListTools(ctx, &pb.HostServiceListToolsRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	return resp.GetTools(), nil
}

func (h *hostClient) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	resp, err := h.client.Complete(ctx, req)
	return resp, fromStatus(err)
}

func (h *hostClient) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	resp, err := h.client.RecordDelegation(ctx, req)
	return resp, fromStatus(err)
}

// watch opens the Watch stream (used by Serve's watchdog).
func (h *hostClient) watch(ctx context.Context) (pb.HostService_WatchClient, error) {
	return h.client.Watch(ctx, &pb.WatchRequest{})
}

// Close closes the broker connection to the host.
func (h *hostClient) Close() error {
	if h.messages != nil {
		h.messages.close()
	}
	return h.conn.Close()
}

// ---------------------------------------------------------------------------
// Host side: serving a HostHandler.
// ---------------------------------------------------------------------------

// DefaultHeartbeat is how often a HostServer sends a heartbeat on each Watch
// stream when NewHostServer is given no interval.
const DefaultHeartbeat = 5 * time.Second

// HostServer serves HostService for one host: it is a Host that forwards to
// a HostHandler, plus the Watch stream, which it implements itself. Watch
// streams a heartbeat every interval until Shutdown, then sends a
// ShutdownNotice and ends; the stream also ends when the host process dies,
// which is how a plugin notices that its host is gone.
//
// A host passes a *HostServer as the Host argument of Lifecycle.Configure on
// a client half; the client half serves it through the go-plugin broker.
// Passing any other Host wraps it in a new HostServer.
type HostServer struct {
	impl      HostHandler
	heartbeat time.Duration

	once     sync.Once
	shutdown chan struct{}
	reason   string // written before shutdown is closed
}

var _ Host = (*HostServer)(nil)

// NewHostServer returns a HostServer for impl, which may be nil (a host
// without callbacks: every RPC but Watch answers Unimplemented). heartbeat
// <= 0 means DefaultHeartbeat.
func NewHostServer(impl HostHandler, heartbeat time.Duration) *HostServer {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	return &HostServer{impl: impl, heartbeat: heartbeat, shutdown: make(chan struct{})}
}

// Shutdown sends a ShutdownNotice with reason on every open and future Watch
// stream and ends them. A plugin that receives it expects the host to stop it
// soon and does not treat the end of the stream as the host's death. Only
// the first call has an effect.
func (s *HostServer) Shutdown(reason string) {
	s.once.Do(func() {
		s.reason = reason
		close(s.shutdown)
	})
}

func unimplemented(method string) error {
	return fmt.Errorf("the host does not implement HostService.%s: %w", method, ErrUnimplemented)
}

// HandleMessage forwards to the handler.
func (s *HostServer) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	if s.impl == nil {
		return nil, unimplemented("HandleMessage")
	}
	return s.impl.HandleMessage(ctx, req)
}

// CancelTurn forwards to the handler.
func (s *HostServer) CancelTurn(ctx context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	if s.impl == nil {
		return nil, unimplemented("CancelTurn")
	}
	return s.impl.CancelTurn(ctx, req)
}

// ListTools forwards to the handler.
func (s *HostServer) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	if s.impl == nil {
		return nil, unimplemented("ListTools")
	}
	return s.impl.ListTools(ctx)
}

// Complete forwards to a handler that is a HostWithComplete, and answers
// Unimplemented for any other.
func (s *HostServer) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	h, ok := s.impl.(HostWithComplete)
	if !ok {
		return nil, unimplemented("Complete")
	}
	return h.Complete(ctx, req)
}

// RecordDelegation forwards to a handler that is a
// HostWithRecordDelegation, and answers Unimplemented for any other.
func (s *HostServer) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	h, ok := s.impl.(HostWithRecordDelegation)
	if !ok {
		return nil, unimplemented("RecordDelegation")
	}
	return h.RecordDelegation(ctx, req)
}

// HostInfoOf fills in what a host tells plugins about its capabilities,
// derived from the interfaces h implements, not listed by hand: the
// optional RPCs it serves (optional_rpcs: "RecordDelegation", "Complete")
// and whether its CancelTurn cannot stop a running turn
// (cancel_turn_unsupported). It returns a copy of info (nil: an empty
// one) with those two fields set; the others are left as given.
func HostInfoOf(h HostHandler, info *pb.HostInfo) *pb.HostInfo {
	out := &pb.HostInfo{}
	if info != nil {
		out = proto.Clone(info).(*pb.HostInfo)
	}
	out.OptionalRpcs = nil
	if _, ok := h.(HostWithRecordDelegation); ok {
		out.OptionalRpcs = append(out.OptionalRpcs, "RecordDelegation")
	}
	if _, ok := h.(HostWithComplete); ok {
		out.OptionalRpcs = append(out.OptionalRpcs, "Complete")
	}
	nc, ok := h.(HostWithoutRunningCancel)
	out.CancelTurnUnsupported = ok && nc.CancelTurnUnsupported()
	return out
}

// watch sends a heartbeat at once and then every interval, until Shutdown
// (then a ShutdownNotice) or until the plugin goes away.
func (s *HostServer) watch(stream pb.HostService_WatchServer) error {
	beat := func() error {
		return stream.Send(&pb.WatchResponse{Event: &pb.WatchResponse_Heartbeat{
			Heartbeat: &pb.Heartbeat{UnixMs: time.Now().UnixMilli()},
		}})
	}
	if err := beat(); err != nil {
		return err
	}
	t := time.NewTicker(s.heartbeat)
	defer t.Stop()
	for {
		select {
		case <-stream.Context().Done():
			return status.FromContextError(stream.Context().Err()).Err()
		case <-s.shutdown:
			return stream.Send(&pb.WatchResponse{Event: &pb.WatchResponse_Shutdown{
				Shutdown: &pb.ShutdownNotice{Reason: s.reason},
			}})
		case <-t.C:
			if err := beat(); err != nil {
				return err
			}
		}
	}
}

// hostServiceServer adapts a HostServer to the generated server.
type hostServiceServer struct {
	pb.UnimplementedHostServiceServer
	hs     *HostServer
	logger hclog.Logger // panics of calls on HandleMessages
}

func (s *hostServiceServer) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	resp, err := s.hs.HandleMessage(ctx, req)
	return resp, toStatus(err)
}

// HandleMessages serves HandleMessage calls on a call stream (1.2).
func (s *hostServiceServer) HandleMessages(stream pb.HostService_HandleMessagesServer) error {
	return serveCalls(stream, s.logger, pb.HostService_HandleMessages_FullMethodName, s.HandleMessage,
		func(id uint64, out *pb.HandleMessageResponse, e *pb.CallError) *pb.HandleMessagesResponse {
			return &pb.HandleMessagesResponse{CallId: id, Response: out, Error: e}
		})
}

func (s *hostServiceServer) CancelTurn(ctx context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	resp, err := s.hs.CancelTurn(ctx, req)
	return resp, toStatus(err)
}

func (s *hostServiceServer) ListTools(ctx context.Context, _ *pb.HostServiceListToolsRequest) (*pb.HostServiceListToolsResponse, error) {
	tools, err := s.hs.ListTools(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.HostServiceListToolsResponse{Tools: tools}, nil
}

func (s *hostServiceServer) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	resp, err := s.hs.Complete(ctx, req)
	return resp, toStatus(err)
}

func (s *hostServiceServer) RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error) {
	resp, err := s.hs.RecordDelegation(ctx, req)
	return resp, toStatus(err)
}

func (s *hostServiceServer) Watch(_ *pb.WatchRequest, stream pb.HostService_WatchServer) error {
	return s.hs.watch(stream)
}
