package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/grpcwire"
)

// The gRPC transport. A peer whose card prefers a GRPC interface for
// protocol 1.0 (or offers nothing else this client speaks) is called over
// lf.a2a.v1.A2AService: the same operations, the same *Error kinds, the
// same origin and credential rules. The interface URL is read as a gRPC
// target — "host:port" as the official SDKs publish it, or an http://,
// https://, grpc:// or grpcs:// URL — and kept as "http://host:port" or
// "https://host:port" (TLS when the card says grpcs/https, or when a bare
// host:port came in a card fetched over https), so that the checks made
// for the other bindings apply to it unchanged. The gRPC connections live
// in the Client, one per address, and dial through the SSRF guard.

// resolveGRPCURL reads the URL of a GRPC interface found on a card fetched
// from cardURL and returns it as "http://host:port" or "https://host:port".
func resolveGRPCURL(cardURL, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	for _, p := range []string{"dns:///", "dns:", "passthrough:///"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			s = rest
			break
		}
	}
	scheme := ""
	if sch, rest, ok := strings.Cut(s, "://"); ok {
		switch strings.ToLower(sch) {
		case "http", "grpc":
			scheme = "http"
		case "https", "grpcs":
			scheme = "https"
		default:
			return "", fmt.Errorf("scheme %q is not a gRPC address: use host:port (or http://, https://, grpc://, grpcs://)", sch)
		}
		s = rest
	} else {
		scheme = "http"
		if u, err := url.Parse(cardURL); err == nil && strings.EqualFold(u.Scheme, "https") {
			scheme = "https"
		}
	}
	hostport, _, _ := strings.Cut(s, "/") // a path means nothing to gRPC
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if host == "" {
		return "", errors.New("a gRPC interface needs a host (host:port)")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("port %q is not a TCP port", port)
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// grpcTransport calls a GRPC interface at protocol 1.0.
type grpcTransport struct{ cn *conn }

// encodeError marks a request that could not be converted to its proto
// message, so that grpcUnary and grpcStream report it as such rather than
// as a failed call.
type encodeError struct{ err error }

func (e encodeError) Error() string { return e.err.Error() }

func (t *grpcTransport) sendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return grpcUnary(ctx, t.cn, a2a.OpSendMessage,
		func(ctx context.Context, api a2apb.A2AServiceClient) (*a2apb.SendMessageResponse, error) {
			pr, err := grpcwire.SendMessageRequestToProto(req)
			if err != nil {
				return nil, encodeError{err}
			}
			return api.SendMessage(ctx, pr)
		},
		func(resp *a2apb.SendMessageResponse) (*a2a.SendMessageResponse, error) {
			v, err := grpcwire.SendMessageResponseFromProto(resp)
			if err == nil {
				err = checkSendResponse(v)
			}
			return v, err
		})
}

func (t *grpcTransport) getTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return grpcUnary(ctx, t.cn, a2a.OpGetTask,
		func(ctx context.Context, api a2apb.A2AServiceClient) (*a2apb.Task, error) {
			return api.GetTask(ctx, grpcwire.GetTaskRequestToProto(req))
		}, taskFromProto)
}

func (t *grpcTransport) cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return grpcUnary(ctx, t.cn, a2a.OpCancelTask,
		func(ctx context.Context, api a2apb.A2AServiceClient) (*a2apb.Task, error) {
			pr, err := grpcwire.CancelTaskRequestToProto(req)
			if err != nil {
				return nil, encodeError{err}
			}
			return api.CancelTask(ctx, pr)
		}, taskFromProto)
}

func (t *grpcTransport) listTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return grpcUnary(ctx, t.cn, a2a.OpListTasks,
		func(ctx context.Context, api a2apb.A2AServiceClient) (*a2apb.ListTasksResponse, error) {
			return api.ListTasks(ctx, grpcwire.ListTasksRequestToProto(req))
		}, grpcwire.ListTasksResponseFromProto)
}

func (t *grpcTransport) sendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, deliver func(Event) error) error {
	return t.cn.grpcStream(ctx, a2a.OpSendStreamingMessage,
		func(ctx context.Context, api a2apb.A2AServiceClient) (grpc.ServerStreamingClient[a2apb.StreamResponse], error) {
			pr, err := grpcwire.SendMessageRequestToProto(req)
			if err != nil {
				return nil, encodeError{err}
			}
			return api.SendStreamingMessage(ctx, pr)
		}, deliver)
}

func (t *grpcTransport) subscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, deliver func(Event) error) error {
	return t.cn.grpcStream(ctx, a2a.OpSubscribeToTask,
		func(ctx context.Context, api a2apb.A2AServiceClient) (grpc.ServerStreamingClient[a2apb.StreamResponse], error) {
			return api.SubscribeToTask(ctx, grpcwire.SubscribeToTaskRequestToProto(req))
		}, deliver)
}

// grpcKey identifies a shared connection: the address, TLS and whether
// it dials without the guard (the configured peer's own origin).
type grpcKey struct {
	addr, serverName string
	tls, direct      bool
}

// grpcConn is one shared connection to a gRPC peer.
type grpcConn struct {
	cc  *grpc.ClientConn
	api a2apb.A2AServiceClient
	// blocked is the guard's refusal of the last dial, if any: gRPC only
	// hands the call a status with its text.
	blocked atomic.Pointer[error]
}

// grpcConns holds the client's gRPC connections.
type grpcConns struct {
	mu    sync.Mutex
	conns map[grpcKey]*grpcConn
}

// closeAll closes every connection.
func (g *grpcConns) closeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, c := range g.conns {
		_ = c.cc.Close()
		delete(g.conns, k)
	}
}

// grpcConn returns the shared connection for target ("http(s)://host:port"),
// creating it on first use. direct dials without the guard: the caller
// decided the address is the configured peer's own origin.
func (c *Client) grpcConn(target *url.URL, direct bool) (*grpcConn, error) {
	key := grpcKey{addr: target.Host, serverName: target.Hostname(), tls: target.Scheme == "https", direct: direct || c.tr == nil}
	g := &c.grpc
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc := g.conns[key]; gc != nil {
		return gc, nil
	}
	gc := &grpcConn{}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		if key.direct || c.opts.Guard == nil {
			return dialer.DialContext(ctx, "tcp", addr)
		}
		conn, err := guardedDial(c.opts.Guard, dialer.DialContext)(ctx, "tcp", addr)
		var be blockedError
		if errors.As(err, &be) {
			gc.blocked.Store(&err)
		}
		return conn, err
	}
	creds := insecure.NewCredentials()
	if key.tls {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.opts.TLSConfig != nil {
			cfg = c.opts.TLSConfig.Clone()
		}
		cfg.ServerName = key.serverName
		creds = credentials.NewTLS(cfg)
	}
	cc, err := grpc.NewClient("passthrough:///"+key.addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(dial),
		grpc.WithUserAgent(c.opts.UserAgent),
		// Pings at the rate a stock gRPC server accepts (5 min), so that
		// a peer gone silent under a stream is noticed.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 5 * time.Minute, Timeout: 20 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(int(c.opts.MaxResponseBytes))),
	)
	if err != nil {
		return nil, err
	}
	gc.cc, gc.api = cc, a2apb.NewA2AServiceClient(cc)
	if g.conns == nil {
		g.conns = make(map[grpcKey]*grpcConn)
	}
	g.conns[key] = gc
	return gc, nil
}

// grpcPrepare checks a call to the GRPC interface as newRequest checks an
// HTTP one (credential origin, guard) and returns the connection and the
// context carrying the call's metadata: a2a-version, the trace context
// and, where credentialsFor allows them, the peer's credentials.
func (cn *conn) grpcPrepare(ctx context.Context, op a2a.Operation) (context.Context, *grpcConn, error) {
	if err := cn.prepare(op); err != nil {
		return nil, nil, err
	}
	p := cn.p
	ctx = p.c.scoped(ctx, p)
	raw := cn.info.Interface.URL
	if err := p.c.checkURL(ctx, raw); err != nil {
		return nil, nil, cn.fail(ErrBlocked, op, 0, err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, cn.fail(ErrBadCard, op, 0, err)
	}
	direct := p.ep.Configured && p.origin != "" && originOfURL(u) == p.origin
	gc, err := p.c.grpcConn(u, direct)
	if err != nil {
		return nil, nil, cn.fail(ErrBadCard, op, 0, err)
	}
	md := metadata.MD{}
	md.Set(grpcwire.MetadataVersion, a2a.ProtocolVersion)
	h := make(map[string][]string, 2)
	cn.p.call.setTraceHeaders(h)
	for k, v := range h {
		md[strings.ToLower(k)] = v
	}
	if p.credentialsFor(u, cn.info.Verified != nil) {
		// Metadata keys are lower case: Authorization arrives as
		// grpcwire.MetadataAuthorization.
		p.setCredentials(func(name, value string) { md.Set(strings.ToLower(name), value) })
	}
	return metadata.NewOutgoingContext(ctx, md), gc, nil
}

// grpcUnary performs one unary call — call sends the request, decode
// converts the answer — with the call timeout and the checks and metadata
// of grpcPrepare.
func grpcUnary[Resp, Out any](ctx context.Context, cn *conn, op a2a.Operation,
	call func(context.Context, a2apb.A2AServiceClient) (Resp, error), decode func(Resp) (Out, error)) (Out, error) {
	var zero Out
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cn.p.timeout(cn.p.c.opts.Timeout))
	defer cancel()
	ctx, gc, err := cn.grpcPrepare(ctx, op)
	if err != nil {
		return zero, err
	}
	resp, err := call(ctx, gc.api)
	if err != nil {
		var ee encodeError
		if errors.As(err, &ee) {
			return zero, cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("encoding the request: %w", ee.err))
		}
		return zero, cn.grpcError(parent, ctx, op, gc, err)
	}
	out, err := decode(resp)
	if err != nil {
		return zero, cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("result: %w", err))
	}
	return out, nil
}

// taskFromProto converts a task answer and checks it has an id.
func taskFromProto(t *a2apb.Task) (*a2a.Task, error) {
	v, err := grpcwire.TaskFromProto(t)
	if err == nil && v.ID == "" {
		err = errors.New("the task has no id")
	}
	return v, err
}

// grpcStream runs one streaming call opened by open, delivering each event as the SSE
// path does. Its start (the answer's headers) is bounded by the call
// timeout; afterwards gRPC's keepalive, not an idle timer, tells a dead
// peer from a quiet one (a gRPC stream has no keep-alive messages).
func (cn *conn) grpcStream(ctx context.Context, op a2a.Operation,
	open func(context.Context, a2apb.A2AServiceClient) (grpc.ServerStreamingClient[a2apb.StreamResponse], error), fn func(Event) error) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var startTimedOut atomic.Bool
	timeout := cn.p.timeout(cn.p.c.opts.Timeout)
	startTimer := time.AfterFunc(timeout, func() { startTimedOut.Store(true); cancel() })
	defer startTimer.Stop()
	callCtx, gc, err := cn.grpcPrepare(ctx, op)
	if err != nil {
		return err
	}
	stream, err := open(callCtx, gc.api)
	if err != nil {
		var ee encodeError
		if errors.As(err, &ee) {
			return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("encoding the request: %w", ee.err))
		}
		return cn.grpcError(parent, ctx, op, gc, err)
	}
	st := &streamState{}
	deliver := func(ev Event) error {
		st.observe(ev)
		return fn(ev)
	}
	started := false
	for {
		msg, err := stream.Recv()
		if !started {
			started = true
			if !startTimer.Stop() && startTimedOut.Load() {
				return cn.fail(ErrTimeout, op, 0, fmt.Errorf("no response within %s", timeout))
			}
		}
		if errors.Is(err, io.EOF) {
			return cn.streamEnd(op, st)
		}
		if err != nil {
			if st.events == 0 || status.Code(err) != codes.Unavailable || parent.Err() != nil {
				return cn.grpcError(parent, ctx, op, gc, err)
			}
			return cn.fail(ErrStreamCut, op, 0, st.cutError(status.Convert(err).Message()))
		}
		sr, err := grpcwire.StreamResponseFromProto(msg)
		if err != nil {
			return cn.fail(ErrInvalidResponse, op, 0, fmt.Errorf("stream event: %w", err))
		}
		if sr.Kind() == "" {
			return cn.fail(ErrInvalidResponse, op, 0, errors.New("stream event has not exactly one of task, message, statusUpdate, artifactUpdate"))
		}
		ev := Event{Response: sr}
		ev.settle()
		if err := deliver(ev); err != nil {
			return err
		}
	}
}

// grpcError turns a failed gRPC call into an *Error of the same kind an
// HTTP call failing the same way gets: the A2A error of the status
// (ErrRPC), or — by the status code — refused credentials, a rate limit,
// an unreachable or blocked peer, a timeout. parent is the caller's
// context, ctx the call's.
func (cn *conn) grpcError(parent, ctx context.Context, op a2a.Operation, gc *grpcConn, err error) error {
	if pe := parent.Err(); pe == context.Canceled {
		return fmt.Errorf("%s to %s: %w", op, cn.p.name(), pe)
	}
	st, ok := status.FromError(err)
	if !ok {
		return cn.fail(classifyTransport(err, ctx), op, 0, err)
	}
	re := grpcwire.FromStatus(st)
	switch st.Code() {
	case codes.Unauthenticated, codes.PermissionDenied:
		return cn.fail(ErrAuthRefused, op, 0, re)
	case codes.ResourceExhausted:
		if re.Code == a2a.CodeRateLimited {
			e := cn.fail(ErrRateLimited, op, 0, re)
			if s, err := strconv.Atoi(re.Metadata["retryAfterSeconds"]); err == nil && s > 0 {
				e.RetryAfter = time.Duration(s) * time.Second
			}
			return e
		}
	case codes.Unavailable:
		if re.Reason == "" {
			if b := gc.blocked.Load(); b != nil {
				return cn.fail(ErrBlocked, op, 0, *b)
			}
			return cn.fail(ErrUnreachable, op, 0, errors.New(st.Message()))
		}
		e := cn.fail(ErrUnreachable, op, 0, re)
		e.RetryAfter = 5 * time.Second
		return e
	case codes.DeadlineExceeded:
		if ctx.Err() != nil || re.Reason == "" {
			return cn.fail(ErrTimeout, op, 0, errors.New(st.Message()))
		}
	case codes.Canceled:
		if ctx.Err() != nil {
			return cn.fail(ErrTimeout, op, 0, errors.New(st.Message()))
		}
	case codes.Unimplemented:
		if re.Reason == "" {
			re.Code = a2a.CodeMethodNotFound
		}
	}
	return cn.fail(ErrRPC, op, 0, re)
}
