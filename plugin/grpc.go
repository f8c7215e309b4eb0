package plugin

import (
	"context"
	"fmt"
	"runtime/debug"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MaxMessageBytes bounds one gRPC message in either direction, on every
// connection of the contract (plugin services and the host callback). gRPC's
// default of 4 MiB is too small for files carried inline in Part.raw.
const MaxMessageBytes = 64 << 20

// streamWorkers is how many long-lived goroutines each gRPC server keeps to
// run calls (grpc.NumStreamWorkers); a call arriving while all are busy
// gets a goroutine of its own, as without workers. A fresh goroutine per
// call starts with a small stack and grows it again on every call (a Send
// that saves the task goes deep into JSON encoding): reusing workers takes
// that stack growth off the path (docs/performance.md, "Decisions the code
// refers to").
const streamWorkers = 16

// windowBytes and connWindowBytes are the HTTP/2 flow-control windows of
// every contract connection, per stream and per connection, fixed. gRPC's
// default is a window that grows by bandwidth-delay estimation, which
// sends a PING (and a WINDOW_UPDATE) after each DATA frame received while
// no estimate is under way: in a contract's call-and-answer traffic that
// is after nearly every message, so each call-stream message cost both
// processes two more frames, their writes and reads, and the estimate
// never grows past its start, on a local connection that has no delay to
// measure. A fixed window of 1 MiB still lets a large inline file flow
// (a WINDOW_UPDATE per quarter of it read), and bounds what a peer that
// stops reading can be sent on one stream (docs/performance.md, "The task
// manager and the contract path").
const (
	windowBytes     = 1 << 20
	connWindowBytes = 2 << 20
)

// ServerOptions are the gRPC server options both sides use: panic recovery
// (a panicking handler becomes codes.Internal naming the method, logged with
// its stack, and the process keeps serving), MaxMessageBytes, a pool of
// stream workers and fixed flow-control windows (windowBytes). Serve
// applies them to the plugin's server; the host callback server gets them
// too.
func ServerOptions(logger hclog.Logger) []grpc.ServerOption {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(recoverUnary(logger)),
		grpc.ChainStreamInterceptor(recoverStream(logger)),
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.NumStreamWorkers(streamWorkers),
		grpc.InitialWindowSize(windowBytes),
		grpc.InitialConnWindowSize(connWindowBytes),
	}
}

// DialOptions are the gRPC dial options both sides use: MaxMessageBytes for
// sending and receiving, and fixed flow-control windows (windowBytes).
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageBytes),
			grpc.MaxCallSendMsgSize(MaxMessageBytes),
		),
		grpc.WithInitialWindowSize(windowBytes),
		grpc.WithInitialConnWindowSize(connWindowBytes),
	}
}

func recoverUnary(logger hclog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				resp, err = nil, panicError(logger, info.FullMethod, r)
			}
		}()
		return handler(ctx, req)
	}
}

func recoverStream(logger hclog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = panicError(logger, info.FullMethod, r)
			}
		}()
		return handler(srv, ss)
	}
}

// panicError logs a recovered panic with its stack and turns it into the
// error the caller sees. Only panics on the handler's own goroutine can be
// recovered; a panic on a goroutine the handler started still kills the
// process (and the host restarts it).
func panicError(logger hclog.Logger, method string, r any) error {
	logger.Error("recovered from a panic in a gRPC handler; still serving",
		"method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "%s panicked: %v (stack in the log of the serving process)", method, r)
}
