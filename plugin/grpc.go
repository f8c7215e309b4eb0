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

// ServerOptions are the gRPC server options both sides use: panic recovery
// (a panicking handler becomes codes.Internal naming the method, logged with
// its stack, and the process keeps serving), MaxMessageBytes and a pool of
// stream workers. Serve applies them to the plugin's server; the host
// callback server gets them too.
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
	}
}

// DialOptions are the gRPC dial options both sides use: MaxMessageBytes for
// sending and receiving.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageBytes),
			grpc.MaxCallSendMsgSize(MaxMessageBytes),
		),
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
