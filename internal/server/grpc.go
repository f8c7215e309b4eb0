package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/grpcwire"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// grpcBinding is the gRPC binding: lf.a2a.v1.A2AService with the official
// generated wire types (a2apb), converted at one seam (grpcwire). Every
// RPC is served by a stream handler rather than the generated unary
// ones, so that the handler's steps keep their order: the caller is
// admitted and authorized from the request's metadata before its message
// is read (within Limits.MaxBodyBytes and Limits.ReadTimeout), exactly as
// the HTTP bindings read no body before that.
type grpcBinding struct {
	h      Handler
	limits *Limits
	log    hclog.Logger
	// active counts the RPCs being served, streams included, for Shutdown
	// to wait for.
	active streamCount
}

// grpcRPC is one RPC: its operation, its request message, and how to run
// it — unary or streaming.
type grpcRPC struct {
	op     a2a.Operation
	newReq func() proto.Message
	unary  func(ctx context.Context, h Handler, c *Call, req proto.Message) (proto.Message, error)
	stream func(ctx context.Context, h Handler, c *Call, req proto.Message) (*Stream, error)
}

// grpcRPCs maps every method of A2AService to its operation.
var grpcRPCs = map[string]grpcRPC{
	a2a.MethodSendMessage: {a2a.OpSendMessage, func() proto.Message { return new(a2apb.SendMessageRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.SendMessageRequestFromProto(m.(*a2apb.SendMessageRequest)))
			if err != nil {
				return nil, err
			}
			res, err := h.SendMessage(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return encoded(grpcwire.SendMessageResponseToProto(res))
		}, nil},
	a2a.MethodSendStreamingMessage: {a2a.OpSendStreamingMessage, func() proto.Message { return new(a2apb.SendMessageRequest) }, nil,
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (*Stream, error) {
			req, err := decoded(grpcwire.SendMessageRequestFromProto(m.(*a2apb.SendMessageRequest)))
			if err != nil {
				return nil, err
			}
			return h.SendStreamingMessage(ctx, c, req)
		}},
	a2a.MethodGetTask: {a2a.OpGetTask, func() proto.Message { return new(a2apb.GetTaskRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.GetTaskRequestFromProto(m.(*a2apb.GetTaskRequest)), nil)
			if err != nil {
				return nil, err
			}
			t, err := h.GetTask(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return encoded(grpcwire.TaskToProto(t))
		}, nil},
	a2a.MethodListTasks: {a2a.OpListTasks, func() proto.Message { return new(a2apb.ListTasksRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.ListTasksRequestFromProto(m.(*a2apb.ListTasksRequest)), nil)
			if err != nil {
				return nil, err
			}
			res, err := h.ListTasks(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return encoded(grpcwire.ListTasksResponseToProto(res))
		}, nil},
	a2a.MethodCancelTask: {a2a.OpCancelTask, func() proto.Message { return new(a2apb.CancelTaskRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.CancelTaskRequestFromProto(m.(*a2apb.CancelTaskRequest)), nil)
			if err != nil {
				return nil, err
			}
			t, err := h.CancelTask(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return encoded(grpcwire.TaskToProto(t))
		}, nil},
	a2a.MethodSubscribeToTask: {a2a.OpSubscribeToTask, func() proto.Message { return new(a2apb.SubscribeToTaskRequest) }, nil,
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (*Stream, error) {
			req, err := decoded(grpcwire.SubscribeToTaskRequestFromProto(m.(*a2apb.SubscribeToTaskRequest)), nil)
			if err != nil {
				return nil, err
			}
			return h.SubscribeToTask(ctx, c, req)
		}},
	a2a.MethodCreateTaskPushNotificationConfig: {a2a.OpCreatePushConfig, func() proto.Message { return new(a2apb.TaskPushNotificationConfig) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.PushConfigFromProto(m.(*a2apb.TaskPushNotificationConfig)), nil)
			if err != nil {
				return nil, err
			}
			res, err := h.CreateTaskPushNotificationConfig(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return grpcwire.PushConfigToProto(res), nil
		}, nil},
	a2a.MethodGetTaskPushNotificationConfig: {a2a.OpGetPushConfig, func() proto.Message { return new(a2apb.GetTaskPushNotificationConfigRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.GetPushConfigRequestFromProto(m.(*a2apb.GetTaskPushNotificationConfigRequest)), nil)
			if err != nil {
				return nil, err
			}
			res, err := h.GetTaskPushNotificationConfig(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return grpcwire.PushConfigToProto(res), nil
		}, nil},
	a2a.MethodListTaskPushNotificationConfigs: {a2a.OpListPushConfigs, func() proto.Message { return new(a2apb.ListTaskPushNotificationConfigsRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.ListPushConfigsRequestFromProto(m.(*a2apb.ListTaskPushNotificationConfigsRequest)), nil)
			if err != nil {
				return nil, err
			}
			res, err := h.ListTaskPushNotificationConfigs(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return grpcwire.ListPushConfigsResponseToProto(res), nil
		}, nil},
	a2a.MethodDeleteTaskPushNotificationConfig: {a2a.OpDeletePushConfig, func() proto.Message { return new(a2apb.DeleteTaskPushNotificationConfigRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.DeletePushConfigRequestFromProto(m.(*a2apb.DeleteTaskPushNotificationConfigRequest)), nil)
			if err != nil {
				return nil, err
			}
			if err := h.DeleteTaskPushNotificationConfig(ctx, c, req); err != nil {
				return nil, err
			}
			return &emptypb.Empty{}, nil
		}, nil},
	a2a.MethodGetExtendedAgentCard: {a2a.OpGetExtendedCard, func() proto.Message { return new(a2apb.GetExtendedAgentCardRequest) },
		func(ctx context.Context, h Handler, c *Call, m proto.Message) (proto.Message, error) {
			req, err := decoded(grpcwire.ExtendedCardRequestFromProto(m.(*a2apb.GetExtendedAgentCardRequest)), nil)
			if err != nil {
				return nil, err
			}
			card, err := h.GetExtendedAgentCard(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return encoded(grpcwire.AgentCardToProto(card))
		}, nil},
}

// decoded checks a converted request as the JSON bindings' decoder checks
// theirs: a value without ProtoJSON meaning, or one Validate refuses, is
// -32602 naming the field.
func decoded[T interface{ Validate() error }](req T, err error) (T, error) {
	if err != nil {
		var fe *grpcwire.FieldError
		if errors.As(err, &fe) {
			return req, refusal(a2a.ErrInvalidParams(fe.Field, fe.Problem))
		}
		return req, refusal(a2a.ErrInvalidParams("", err.Error()))
	}
	if err := req.Validate(); err != nil {
		return req, RefusalOf(err)
	}
	return req, nil
}

// encoded turns a conversion failure of an answer (a value with no
// protobuf form) into an internal error.
func encoded[T proto.Message](m T, err error) (proto.Message, error) {
	if err != nil {
		return nil, refusal(a2a.ErrInternal("the answer could not be encoded for gRPC: " + err.Error()))
	}
	return m, nil
}

// serviceDesc is A2AService as the generated code declares it (its
// method names), every method served by this binding's stream handler.
func (g *grpcBinding) serviceDesc() *grpc.ServiceDesc {
	gen := &a2apb.A2AService_ServiceDesc
	sd := &grpc.ServiceDesc{ServiceName: gen.ServiceName, HandlerType: gen.HandlerType, Metadata: gen.Metadata}
	for _, m := range gen.Methods {
		sd.Streams = append(sd.Streams, grpc.StreamDesc{StreamName: m.MethodName, Handler: g.handler(m.MethodName)})
	}
	for _, s := range gen.Streams {
		sd.Streams = append(sd.Streams, grpc.StreamDesc{StreamName: s.StreamName, Handler: g.handler(s.StreamName), ServerStreams: true})
	}
	return sd
}

// newServer is the gRPC server of the binding: messages bounded by
// Limits.MaxBodyBytes, headers by Limits.MaxHeaderBytes, idle connections
// closed after Limits.IdleTimeout.
//
// A message over MaxBodyBytes is refused with REQUEST_TOO_LARGE and its
// ErrorInfo, as over HTTP: gRPC's receive limit is MaxBodyBytes, so it
// refuses a larger message from its length prefix, before reading it,
// and recv turns that refusal into ours. A message within it is counted
// before it is decoded (grpcCodec), so that its cost stays bounded by
// its size (valueBudget).
func (g *grpcBinding) newServer() *grpc.Server {
	l := g.limits
	s := grpc.NewServer(
		grpc.Creds(connCreds{insecure.NewCredentials()}),
		grpc.ForceServerCodecV2(newGRPCCodec()),
		grpc.MaxRecvMsgSize(int(l.MaxBodyBytes)),
		grpc.MaxHeaderListSize(uint32(l.MaxHeaderBytes)),
		grpc.ConnectionTimeout(l.ReadHeaderTimeout),
		grpc.MaxConcurrentStreams(grpcMaxStreamsPerConn),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: l.IdleTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 20 * time.Second, PermitWithoutStream: true}),
		// RPCs run on a pool of goroutines that keep their grown stacks
		// (as net/http's connection goroutines do), instead of a fresh
		// goroutine per RPC whose stack grows, by copying, through the
		// handler's call depth every time; a busy pool spawns more.
		grpc.NumStreamWorkers(uint32(max(16, 4*runtime.GOMAXPROCS(0)))),
		// Fixed flow-control windows instead of gRPC's bandwidth-delay
		// estimation, which sends a PING (and reads its ack) for nearly
		// every request on a connection that carries small unary calls
		// (docs/performance.md). The windows bound what a client may send
		// before we read it.
		grpc.InitialWindowSize(grpcStreamWindow),
		grpc.InitialConnWindowSize(grpcConnWindow),
	)
	s.RegisterService(g.serviceDesc(), nil)
	return s
}

// The gRPC binding's flow-control windows: a stream may have 256 KiB in
// flight (5 MB/s to a peer 50 ms away), a connection 1 MiB.
const (
	grpcStreamWindow = 256 << 10
	grpcConnWindow   = 1 << 20
)

// grpcMaxStreamsPerConn bounds the RPCs one gRPC connection carries at
// once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS).
const grpcMaxStreamsPerConn = 128

// handler serves one RPC: admit and authorize from the metadata, read
// and decode the message, run the operation, answer or stream.
func (g *grpcBinding) handler(method string) grpc.StreamHandler {
	rpc, known := grpcRPCs[method]
	return func(_ any, ss grpc.ServerStream) (rerr error) {
		if !known {
			return status.Errorf(codes.Unimplemented, "method %s is not served", method)
		}
		g.active.add()
		defer g.active.done()
		if pr, ok := peer.FromContext(ss.Context()); ok {
			if ci, ok := pr.AuthInfo.(connInfo); ok {
				ci.conn.callStarted()
				defer ci.conn.callEnded()
			}
		}
		md, _ := metadata.FromIncomingContext(ss.Context())
		ctx, c, err := g.h.Admit(ss.Context(), g.peer(ss.Context(), md))
		defer g.h.Finish(c)
		defer g.recoverPanic(c, &rerr)
		if err != nil {
			return g.refuse(c, RefusalOf(err))
		}
		// Named only once admitted, as the other bindings do: every
		// binding leaves the same audit record.
		c.Op, c.Method = rpc.op, rpc.op.String()
		// With several agents, an RPC without a path names its agent in
		// the message's tenant: it is authorized once that is read.
		err = g.h.Authorize(ctx, c)
		if err != nil {
			g.echoExtensions(ss, c)
			return g.refuse(c, RefusalOf(err))
		}
		breq := &budgetedRequest{msg: rpc.newReq()}
		if r := g.recv(ss, breq); r != nil {
			return g.refuse(c, r)
		}
		req := breq.msg
		c.BytesIn = int64(breq.size)
		if breq.tooMany > 0 {
			return g.refuse(c, refusedWith(413, errTooManyValues(breq.tooMany, breq.size)))
		}
		if protoTooDeep(req.ProtoReflect(), 1, g.limits.MaxJSONDepth) {
			return g.refuse(c, refusal(errTooDeep(g.limits.MaxJSONDepth)))
		}
		if t, ok := req.(interface{ GetTenant() string }); ok {
			err = routeTenant(ctx, g.h, c, t.GetTenant)
		}
		if err == nil {
			err = g.h.Authorize(ctx, c)
		}
		g.echoExtensions(ss, c)
		if err != nil {
			return g.refuse(c, RefusalOf(err))
		}
		if rpc.unary != nil {
			out, err := rpc.unary(ctx, g.h, c, req)
			if err != nil {
				if errors.Is(ss.Context().Err(), context.Canceled) {
					// The client canceled while the operation ran.
					return g.refuse(c, refusedWith(statusCancelled, errClientCancelled()))
				}
				return g.refuse(c, RefusalOf(err))
			}
			c.BytesOut = int64(proto.Size(out))
			return ss.SendMsg(out)
		}
		st, err := rpc.stream(ctx, g.h, c, req)
		if err != nil {
			return g.refuse(c, RefusalOf(err))
		}
		sink := &grpcSink{ss: ss, c: c, timeout: g.limits.WriteTimeout, log: g.log}
		st.Run(ctx, sink, 0)
		return sink.final
	}
}

// recoverPanic turns a panic while serving an RPC into INTERNAL (-32603)
// and a log line with the stack, as the HTTP bindings' recoverer does:
// gRPC recovers no panic, so without this one request would end the
// process. The peer never sees the stack.
func (g *grpcBinding) recoverPanic(c *Call, rerr *error) {
	p := recover()
	if p == nil {
		return
	}
	g.log.Error("panic while serving a request", c.logArgs("remote", c.RemoteAddr, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))...)
	*rerr = g.refuse(c, refusal(errInternal()))
}

// echoExtensions sends the activated extensions as response metadata.
func (g *grpcBinding) echoExtensions(ss grpc.ServerStream, c *Call) {
	if len(c.Activated) > 0 {
		_ = ss.SetHeader(metadata.Pairs(grpcwire.MetadataExtensions, strings.Join(c.Activated, ", ")))
	}
}

// peer is what the handler needs of an RPC before its message is read.
func (g *grpcBinding) peer(ctx context.Context, md metadata.MD) Peer {
	first := func(key string) string {
		if v := md.Get(key); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	p := Peer{
		Binding:       a2a.BindingGRPC,
		Authorization: md.Get(grpcwire.MetadataAuthorization),
		Host:          first(":authority"),
		Origin:        first("origin"),
		FetchSite:     first("sec-fetch-site"),
		Trace:         traceContext(first(grpcwire.MetadataTraceparent), first(grpcwire.MetadataTracestate)),
		Version:       first(grpcwire.MetadataVersion),
	}
	for _, v := range md.Get(grpcwire.MetadataExtensions) {
		for _, uri := range strings.Split(v, ",") {
			if uri = strings.TrimSpace(uri); uri != "" {
				p.Extensions = append(p.Extensions, uri)
			}
		}
	}
	if pr, ok := peer.FromContext(ctx); ok {
		if pr.Addr != nil {
			p.RemoteAddr = pr.Addr.String()
		}
		p.LocalAddr = pr.LocalAddr
		_, p.TLS = pr.AuthInfo.(credentials.TLSInfo)
	}
	return p
}

// recv reads the request message within Limits.ReadTimeout. A message
// over the size limit (gRPC refuses it while reading), one that does not
// decode, or none at all is refused as the HTTP bindings refuse such a
// body.
func (g *grpcBinding) recv(ss grpc.ServerStream, req *budgetedRequest) *Refusal {
	done := make(chan error, 1)
	receivers.run(recvJob{ss: ss, msg: req, done: done})
	timer := readTimers.get(g.limits.ReadTimeout)
	var err error
	select {
	case err = <-done:
		readTimers.put(timer)
	case <-timer.C:
		// The receiver still answers into done (buffered) once the RPC
		// ends, which returning from the handler does.
		readTimers.put(timer)
		return refusedWith(408, errBodyTimeout(g.limits.ReadTimeout))
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return refusal(a2a.ErrInvalidRequest("the call carries no request message"))
	case status.Code(err) == codes.ResourceExhausted:
		return refusedWith(413, errTooLarge(g.limits.MaxBodyBytes))
	case status.Code(err) == codes.Canceled:
		// The client canceled (or reset) the call: not a timeout.
		return refusedWith(statusCancelled, errClientCancelled())
	case status.Code(err) == codes.DeadlineExceeded:
		return refusedWith(408, errBodyTimeout(g.limits.ReadTimeout))
	}
	e := a2a.ErrParse("")
	e.Message = "Parse error: the request message is not a valid lf.a2a.v1 message of this method: " + status.Convert(err).Message()
	return refusal(e)
}

// protoTooDeep reports whether m nests deeper than limit when it opens
// at level, counted as its ProtoJSON form nests objects and arrays — the
// depth Limits.MaxJSONDepth bounds in the JSON bindings' bodies. protobuf
// itself decodes 10,000 levels of google.protobuf.Struct, which the task
// then carries in its JSON to the store, the host and JSON clients. A
// google.protobuf.Value is its content (a scalar opens no level);
// Timestamp and Duration are strings.
func protoTooDeep(m protoreflect.Message, level, limit int) bool {
	switch m.Descriptor().FullName() {
	case "google.protobuf.Timestamp", "google.protobuf.Duration":
		return false
	case "google.protobuf.Value":
		if fd := m.WhichOneof(m.Descriptor().Oneofs().Get(0)); fd != nil && fd.Message() != nil {
			return protoTooDeep(m.Get(fd).Message(), level, limit)
		}
		return false
	}
	if level > limit {
		return true
	}
	// A Struct and a ListValue are the object and the array of their one
	// field.
	inner := level + 1
	if n := m.Descriptor().FullName(); n == "google.protobuf.Struct" || n == "google.protobuf.ListValue" {
		inner = level
	}
	deep := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			if deep = inner > limit; !deep && fd.Message() != nil {
				l := v.List()
				for i := 0; i < l.Len() && !deep; i++ {
					deep = protoTooDeep(l.Get(i).Message(), inner+1, limit)
				}
			}
		case fd.IsMap():
			if deep = inner > limit; !deep && fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					deep = protoTooDeep(mv.Message(), inner+1, limit)
					return !deep
				})
			}
		case fd.Message() != nil:
			deep = protoTooDeep(v.Message(), level+1, limit)
		}
		return !deep
	})
	return deep
}

// refuse records a refusal and returns its gRPC status.
func (g *grpcBinding) refuse(c *Call, r *Refusal) error {
	c.Refused(r)
	return grpcStatus(r).Err()
}

// grpcStatus is the gRPC status of a refusal: the code of its class (see
// grpcCode), the message, and the ErrorInfo (with retryAfterSeconds when
// the caller should wait) in the details.
func grpcStatus(r *Refusal) *status.Status {
	e := r.Err
	if r.RetryAfter > 0 && e.Metadata["retryAfterSeconds"] == "" {
		cp := *e
		cp.Metadata = make(map[string]string, len(e.Metadata)+1)
		for k, v := range e.Metadata {
			cp.Metadata[k] = v
		}
		cp.Metadata["retryAfterSeconds"] = retryAfter(r.RetryAfter)
		e = &cp
	}
	return grpcwire.ToStatus(e, grpcCode(r))
}

// grpcCode maps a refusal's class to a gRPC code: a transport-level
// refusal by its HTTP status (401 UNAUTHENTICATED, 403 and 421
// PERMISSION_DENIED, 408 DEADLINE_EXCEEDED, 413 and 429
// RESOURCE_EXHAUSTED, 499 CANCELLED, 503 UNAVAILABLE); a protocol error by the
// specification's table (grpcwire.Code), except an operation the
// caller's tier may not use, PERMISSION_DENIED, and a stream cut by
// shutdown, UNAVAILABLE — as the HTTP+JSON binding maps them to 403 and
// 503.
func grpcCode(r *Refusal) codes.Code {
	switch r.Status {
	case 401:
		return codes.Unauthenticated
	case 403, 421:
		return codes.PermissionDenied
	case 408:
		return codes.DeadlineExceeded
	case 413, 429:
		return codes.ResourceExhausted
	case statusCancelled:
		return codes.Canceled
	case 503:
		return codes.Unavailable
	}
	switch r.Err.Reason {
	case reasonUnauthorized:
		return codes.PermissionDenied
	case reasonUnavailable:
		return codes.Unavailable
	}
	return grpcwire.Code(r.Err)
}

// grpcSink writes a stream as server-streamed StreamResponse messages.
// gRPC keeps the stream alive itself (HTTP/2 pings), so there are no
// keep-alive messages; the error that ends a stream is the RPC's status.
type grpcSink struct {
	ss      grpc.ServerStream
	c       *Call
	timeout time.Duration
	log     hclog.Logger
	// final is the status the RPC ends with (nil: OK).
	final error
}

// Event implements Sink: one message, sent within the write timeout (a
// client that stops reading is cut; the task never waits for it).
func (s *grpcSink) Event(ev *tasks.Event) error {
	m, err := grpcwire.StreamResponseToProto(&ev.Response)
	if err != nil {
		s.log.Error("encoding a stream event for gRPC failed", s.c.logArgs("error", err)...)
		return errEncoding
	}
	done := make(chan error, 1)
	go func() { done <- s.ss.SendMsg(m) }()
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err == nil {
			s.c.BytesOut += int64(proto.Size(m))
		}
		return err
	case <-timer.C:
		s.final = status.Error(codes.DeadlineExceeded, "the client did not read the stream within the write timeout")
		return errors.New("stream write timed out")
	}
}

// KeepAlive implements Sink: nothing to write.
func (s *grpcSink) KeepAlive() error { return nil }

// Fail implements Sink: the RPC ends with the refusal's status.
func (s *grpcSink) Fail(r *Refusal) { s.final = grpcStatus(r).Err() }
