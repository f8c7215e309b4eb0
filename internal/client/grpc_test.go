package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// grpcFake is a scriptable lf.a2a.v1.A2AService with its card. With
// samePort the card and the service share one port (HTTP/1.1 and h2c
// beside each other, as this project's server serves them); otherwise
// the service has a port of its own, as the official SDKs' examples do.
type grpcFake struct {
	a2apb.UnimplementedA2AServiceServer
	// URL is the card's base URL; Addr the gRPC address on the card.
	URL, Addr string
	// send answers SendMessage (default: a completed task).
	send func(ctx context.Context, r *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error)

	mu sync.Mutex
	md metadata.MD
}

func (f *grpcFake) SendMessage(ctx context.Context, r *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.md = md
	f.mu.Unlock()
	if f.send != nil {
		return f.send(ctx, r)
	}
	return &a2apb.SendMessageResponse{Payload: &a2apb.SendMessageResponse_Task{Task: &a2apb.Task{Id: "t1", ContextId: "c1",
		Status: &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_COMPLETED}}}}, nil
}

func (f *grpcFake) SubscribeToTask(r *a2apb.SubscribeToTaskRequest, s grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	_ = s.Send(&a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Task{Task: &a2apb.Task{Id: r.GetId(), ContextId: "c1",
		Status: &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_WORKING}}}})
	// Cut before the task settles.
	return status.Error(codes.Unavailable, "going away")
}

func (f *grpcFake) metadata() metadata.MD {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.md
}

// grpcCard is a card offering GRPC (first) and, with jsonrpc, JSONRPC.
func grpcCard(addr, base string, grpcFirst, jsonrpc bool) string {
	g := fmt.Sprintf(`{"url":%q,"protocolBinding":"GRPC","protocolVersion":"1.0"}`, addr)
	j := fmt.Sprintf(`{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}`, base+"/rpc")
	ifs := g
	switch {
	case jsonrpc && grpcFirst:
		ifs = g + "," + j
	case jsonrpc:
		ifs = j + "," + g
	}
	return `{"name":"Fake","description":"fake","version":"1","supportedInterfaces":[` + ifs + `],
	 "capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
	 "skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`
}

func startGRPCFake(t *testing.T, samePort, grpcFirst, jsonrpc bool) *grpcFake {
	t.Helper()
	f := &grpcFake{}
	gs := grpc.NewServer()
	a2apb.RegisterA2AServiceServer(gs, f)
	t.Cleanup(gs.Stop)
	cardLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.URL = "http://" + cardLn.Addr().String()
	card := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, grpcCard(f.Addr, f.URL, grpcFirst, jsonrpc))
	}
	hs := &http.Server{Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	if samePort {
		f.Addr = cardLn.Addr().String()
		hs.Protocols.SetUnencryptedHTTP2(true)
		hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
				gs.ServeHTTP(w, r)
				return
			}
			card(w, r)
		})
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f.Addr = ln.Addr().String()
		go func() { _ = gs.Serve(ln) }()
		hs.Handler = http.HandlerFunc(card)
	}
	go func() { _ = hs.Serve(cardLn) }()
	t.Cleanup(func() { _ = hs.Close() })
	return f
}

func TestGRPCInterfaceIsChosenWhenPreferredOrAlone(t *testing.T) {
	for _, tc := range []struct {
		name               string
		grpcFirst, jsonrpc bool
		want               string
	}{
		{"gRPC only", true, false, a2a.BindingGRPC},
		{"gRPC listed first", true, true, a2a.BindingGRPC},
		{"JSON-RPC listed first", false, true, a2a.BindingJSONRPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startGRPCFake(t, false, tc.grpcFirst, tc.jsonrpc)
			c := client.New(client.Options{Timeout: 5 * time.Second})
			defer c.Close()
			info, err := c.Peer(client.Endpoint{URL: f.URL}).Card(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if info.Interface.ProtocolBinding != tc.want {
				t.Fatalf("chose %+v, want %s", info.Interface, tc.want)
			}
			if tc.want == a2a.BindingGRPC && info.Interface.URL != "http://"+f.Addr {
				t.Errorf("gRPC interface URL kept as %q, want http://%s", info.Interface.URL, f.Addr)
			}
		})
	}
}

// TestGRPCCallCarriesMetadataAndCredentials: over gRPC the version, the
// trace context and — on the peer's own origin — its credentials travel
// as metadata.
func TestGRPCCallCarriesMetadataAndCredentials(t *testing.T) {
	f := startGRPCFake(t, true, true, false)
	c := client.New(client.Options{Timeout: 5 * time.Second, UserAgent: "test-agent"})
	defer c.Close()
	p := c.Peer(client.Endpoint{URL: f.URL, Auth: client.Auth{Token: "tok-1", HeaderName: "X-Api-Key", HeaderValue: "k"}})
	resp, err := p.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Task == nil || resp.Task.ID != "t1" || resp.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answer %+v", resp)
	}
	md := f.metadata()
	for key, want := range map[string]string{"authorization": "Bearer tok-1", "x-api-key": "k", "a2a-version": "1.0"} {
		if got := md.Get(key); len(got) != 1 || got[0] != want {
			t.Errorf("metadata %s = %q, want %q", key, got, want)
		}
	}
	if tp := md.Get("traceparent"); len(tp) != 1 || len(tp[0]) != 55 {
		t.Errorf("traceparent = %q", tp)
	}
	if ua := md.Get("user-agent"); len(ua) == 0 || !strings.HasPrefix(ua[0], "test-agent") {
		t.Errorf("user-agent = %q", ua)
	}
}

// TestGRPCCredentialsStayOnTheirOrigin: a card that moves the gRPC
// interface to another port gets no credentials (the call is refused
// before anything is sent); without credentials the call goes.
func TestGRPCCredentialsStayOnTheirOrigin(t *testing.T) {
	f := startGRPCFake(t, false, true, false)
	c := client.New(client.Options{Timeout: 5 * time.Second})
	defer c.Close()
	ctx := context.Background()
	req := func() *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hi"))}
	}
	_, err := c.Peer(client.Endpoint{URL: f.URL, Auth: client.Auth{Token: "secret"}}).SendMessage(ctx, req())
	if !errors.Is(err, client.ErrCrossOrigin) {
		t.Fatalf("with a token: err = %v, want ErrCrossOrigin", err)
	}
	if md := f.metadata(); md != nil {
		t.Fatalf("the refused call reached the peer: %v", md)
	}
	if _, err := c.Peer(client.Endpoint{URL: f.URL}).SendMessage(ctx, req()); err != nil {
		t.Fatalf("without a token: %v", err)
	}
	if got := f.metadata().Get("authorization"); len(got) != 0 {
		t.Errorf("authorization sent: %q", got)
	}
}

// TestGRPCErrorsKeepTheirKind: a status from the peer becomes the same
// *Error kind an HTTP answer of the same meaning gives.
func TestGRPCErrorsKeepTheirKind(t *testing.T) {
	withInfo := func(c codes.Code, msg, reason string, md map[string]string) error {
		st, _ := status.New(c, msg).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: a2a.ErrorDomain, Metadata: md})
		return st.Err()
	}
	for _, tc := range []struct {
		name  string
		err   error
		kind  client.Kind
		code  int
		retry time.Duration
	}{
		{"task not found", withInfo(codes.NotFound, "no task", "TASK_NOT_FOUND", map[string]string{"taskId": "x"}), client.ErrRPC, a2a.CodeTaskNotFound, 0},
		{"invalid params", withInfo(codes.InvalidArgument, "bad", "INVALID_PARAMS", nil), client.ErrRPC, a2a.CodeInvalidParams, 0},
		{"unauthenticated", withInfo(codes.Unauthenticated, "token", "UNAUTHENTICATED", nil), client.ErrAuthRefused, a2a.CodeUnauthorized, 0},
		{"tier", withInfo(codes.PermissionDenied, "tier", "UNAUTHORIZED", nil), client.ErrAuthRefused, a2a.CodeUnauthorized, 0},
		{"rate limited", withInfo(codes.ResourceExhausted, "slow", "RATE_LIMITED", map[string]string{"retryAfterSeconds": "7"}), client.ErrRateLimited, a2a.CodeRateLimited, 7 * time.Second},
		{"bare unimplemented", status.Error(codes.Unimplemented, "unknown method"), client.ErrRPC, a2a.CodeMethodNotFound, 0},
		{"bare internal", status.Error(codes.Internal, "boom"), client.ErrRPC, a2a.CodeInternalError, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startGRPCFake(t, false, true, false)
			f.send = func(context.Context, *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
				return nil, tc.err
			}
			c := client.New(client.Options{Timeout: 5 * time.Second})
			defer c.Close()
			_, err := c.Peer(client.Endpoint{URL: f.URL}).SendMessage(context.Background(),
				&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hi"))})
			if client.KindOf(err) != tc.kind {
				t.Fatalf("err = %v, want kind %s", err, tc.kind)
			}
			if re, ok := client.RPCError(err); !ok || re.Code != tc.code {
				t.Fatalf("a2a error %+v, want code %d", re, tc.code)
			}
			var ce *client.Error
			if errors.As(err, &ce) && ce.RetryAfter != tc.retry {
				t.Errorf("RetryAfter %s, want %s", ce.RetryAfter, tc.retry)
			}
		})
	}
}

// TestGRPCStreamCutIsReported: a stream that breaks before its task
// settles is ErrStreamCut, with the task it had reached.
func TestGRPCStreamCutIsReported(t *testing.T) {
	f := startGRPCFake(t, false, true, false)
	c := client.New(client.Options{Timeout: 5 * time.Second})
	defer c.Close()
	events := 0
	err := c.Peer(client.Endpoint{URL: f.URL}).SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: "t9"},
		func(client.Event) error { events++; return nil })
	if !errors.Is(err, client.ErrStreamCut) || events != 1 || !strings.Contains(err.Error(), "t9") {
		t.Fatalf("after %d events: %v", events, err)
	}
}

// TestGRPCUnreachableAndBlocked: a dead address is ErrUnreachable; an
// address the guard refuses is ErrBlocked, and nothing is dialed.
func TestGRPCUnreachableAndBlocked(t *testing.T) {
	ctx := context.Background()
	// A card naming a port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	f := startGRPCFake(t, false, true, false)
	live := f.Addr
	f.Addr = dead
	c := client.New(client.Options{Timeout: 5 * time.Second})
	defer c.Close()
	_, err = c.Peer(client.Endpoint{URL: f.URL}).SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hi"))})
	if !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("dead address: %v, want ErrUnreachable", err)
	}
	f.Addr = live

	guarded := client.New(client.Options{Timeout: 5 * time.Second, Guard: refuseGRPCPort{port: portOf(f.Addr)}})
	defer guarded.Close()
	_, err = guarded.Peer(client.Endpoint{URL: f.URL}).SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hi"))})
	if !errors.Is(err, client.ErrBlocked) {
		t.Fatalf("guarded: %v, want ErrBlocked", err)
	}
	if f.metadata() != nil {
		t.Fatal("the blocked call reached the peer")
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// refuseGRPCPort is a guard that refuses one port (checking URLs and
// dials), and allows everything else.
type refuseGRPCPort struct{ port string }

func (g refuseGRPCPort) CheckURL(_ context.Context, raw string) error {
	if strings.HasSuffix(raw, ":"+g.port) {
		return errors.New("address not allowed by the test guard")
	}
	return nil
}

func (g refuseGRPCPort) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if portOf(addr) == g.port {
		return nil, errors.New("address not allowed by the test guard")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
