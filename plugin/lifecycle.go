package plugin

import (
	"context"
	"fmt"
	"sync"

	hclog "github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// LifecycleGRPCPlugin carries PluginService over go-plugin. On the plugin side
// Impl is served; on the host side GRPCClient returns a Lifecycle backed by
// the gRPC client.
//
// The host callback travels through go-plugin's GRPCBroker: when the host
// calls Configure on the client half with a non-nil Host, the client half
// serves that Host (as a HostServer) on a fresh broker id and puts the id in
// ConfigureRequest.host_broker_id; the server half dials that id and passes
// a Host client to Impl.Configure.
type LifecycleGRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin

	// Impl is the plugin's Lifecycle (plugin side only).
	Impl Lifecycle
	// Logger logs panics of the host callback server (host side only).
	Logger hclog.Logger
}

var _ goplugin.GRPCPlugin = (*LifecycleGRPCPlugin)(nil)

// GRPCServer registers PluginService backed by Impl.
func (p *LifecycleGRPCPlugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterPluginServiceServer(s, &lifecycleServer{impl: p.Impl, broker: broker})
	return nil
}

// GRPCClient returns a Lifecycle backed by the PluginService client. The
// value also implements ExitNotifier: its Done channel closes when go-plugin
// reports that the plugin process exited.
func (p *LifecycleGRPCPlugin) GRPCClient(ctx context.Context, broker *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &lifecycleClient{
		client: pb.NewPluginServiceClient(c),
		broker: broker,
		logger: p.Logger,
		done:   ctx.Done(),
	}, nil
}

// ExitNotifier is implemented by the Lifecycle that LifecycleGRPCPlugin's
// GRPCClient returns, so a host learns at once that the plugin process died
// instead of polling.
type ExitNotifier interface {
	// Done is closed when the plugin process has exited or its client was
	// killed.
	Done() <-chan struct{}
}

// lifecycleServer adapts a Lifecycle to the generated server.
type lifecycleServer struct {
	pb.UnimplementedPluginServiceServer
	impl   Lifecycle
	broker *goplugin.GRPCBroker

	mu   sync.Mutex
	host *hostClient // host of the last successful Configure
}

func (s *lifecycleServer) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	resp, err := s.impl.Describe(ctx, req)
	return resp, toStatus(err)
}

func (s *lifecycleServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	var host Host // stays a nil interface when the host serves no callback
	var hc *hostClient
	if id := req.GetHostBrokerId(); id != 0 {
		conn, err := s.broker.DialWithOptions(id, DialOptions()...)
		if err != nil {
			return nil, status.Errorf(codes.Unavailable,
				"dial the host callback service on broker id %d: %v (the host must serve it before calling Configure)", id, err)
		}
		hc = newHostClient(conn, req.GetHost().GetProtocolMinor())
		host = hc
	}
	resp, err := s.impl.Configure(ctx, req, host)
	if err != nil {
		if hc != nil {
			_ = hc.Close()
		}
		return nil, toStatus(err)
	}
	if hc != nil {
		// A new Configure replaces the host of an earlier one.
		s.mu.Lock()
		old := s.host
		s.host = hc
		s.mu.Unlock()
		if old != nil {
			_ = old.Close()
		}
	}
	return resp, nil
}

func (s *lifecycleServer) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	resp, err := s.impl.Drain(ctx, req)
	return resp, toStatus(err)
}

// lifecycleClient is the host's Lifecycle backed by gRPC.
type lifecycleClient struct {
	client pb.PluginServiceClient
	broker *goplugin.GRPCBroker
	logger hclog.Logger
	done   <-chan struct{}

	mu         sync.Mutex
	hostServer *grpc.Server // callback server of the last successful Configure
}

var (
	_ Lifecycle    = (*lifecycleClient)(nil)
	_ ExitNotifier = (*lifecycleClient)(nil)
)

func (c *lifecycleClient) Done() <-chan struct{} { return c.done }

func (c *lifecycleClient) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	resp, err := c.client.Describe(ctx, req)
	return resp, fromStatus(err)
}

// Configure serves host (when non-nil) through the broker and calls the
// plugin's Configure with its broker id. Pass a *HostServer to control its
// Watch stream (heartbeat, Shutdown); any other Host is wrapped in a new
// HostServer. A successful Configure stops the callback server of an earlier
// one; a failed one stops its own.
func (c *lifecycleClient) Configure(ctx context.Context, req *pb.ConfigureRequest, host Host) (*pb.ConfigureResponse, error) {
	var srv *grpc.Server
	if host != nil {
		hs, ok := host.(*HostServer)
		if !ok {
			hs = NewHostServer(host, 0)
		}
		id := c.broker.NextId()
		created := make(chan *grpc.Server, 1)
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			c.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
				s := grpc.NewServer(append(opts, ServerOptions(c.logger)...)...)
				pb.RegisterHostServiceServer(s, &hostServiceServer{hs: hs, logger: c.logger})
				created <- s
				return s
			})
		}()
		// Wait until the server exists so that it can be stopped whatever
		// Configure returns; this takes microseconds.
		select {
		case srv = <-created:
		case <-ended:
			return nil, fmt.Errorf("serve the host callback service on broker id %d failed (the plugin connection is probably closed)", id)
		case <-ctx.Done():
			return nil, fmt.Errorf("serve the host callback service on broker id %d: %w", id, ctx.Err())
		}
		req = proto.CloneOf(req)
		req.HostBrokerId = id
	}
	resp, err := c.client.Configure(ctx, req)
	if err != nil {
		if srv != nil {
			srv.Stop()
		}
		return nil, fromStatus(err)
	}
	c.mu.Lock()
	old := c.hostServer
	c.hostServer = srv
	c.mu.Unlock()
	if old != nil {
		old.Stop()
	}
	return resp, nil
}

func (c *lifecycleClient) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	resp, err := c.client.Drain(ctx, req)
	return resp, fromStatus(err)
}
