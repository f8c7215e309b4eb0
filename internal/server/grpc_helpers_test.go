package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/grpcwire"
)

// grpcTestConn serves a test server's gRPC binding on a loopback listener
// of its own (the same grpc.Server, handler and task manager as its HTTP
// bindings; Start's shared port is tested by grpc_test.go) and dials it,
// on first use.
type grpcTestConn struct {
	srv  *Server
	once sync.Once
	cc   *grpc.ClientConn
	addr string
	err  error
}

func (g *grpcTestConn) client(t testing.TB) a2apb.A2AServiceClient {
	t.Helper()
	g.once.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			g.err = err
			return
		}
		g.addr = ln.Addr().String()
		go func() { _ = g.srv.grpc.Serve(ln) }()
		g.cc, g.err = grpc.NewClient(g.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	return a2apb.NewA2AServiceClient(g.cc)
}

func (g *grpcTestConn) close() {
	if g.cc != nil {
		_ = g.cc.Close()
	}
}

// grpcContext is the context of one call: the token as authorization
// metadata, A2A-Version 1.0, and the test's headers as metadata.
func grpcContext(token string, hdr map[string]string) (context.Context, context.CancelFunc) {
	md := metadata.Pairs(grpcwire.MetadataVersion, "1.0")
	if token != "" {
		md.Set(grpcwire.MetadataAuthorization, "Bearer "+token)
	}
	for k, v := range hdr {
		md.Set(strings.ToLower(k), v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	return metadata.NewOutgoingContext(ctx, md), cancel
}

// grpcCall runs a unary operation over gRPC and returns its answer as the
// JSON bindings encode it (so that the records compare), or the A2A error
// of its status, whose gRPC code it checks against the mapping.
func (b bindingClient) grpcCall(token string, op a2a.Operation, params any) (json.RawMessage, *a2a.Error) {
	t := b.e.t
	t.Helper()
	api := b.e.grpc.client(t)
	ctx, cancel := grpcContext(token, b.hdr)
	defer cancel()
	var (
		res any
		err error
	)
	switch r := params.(type) {
	case *a2a.SendMessageRequest:
		pr, cerr := grpcwire.SendMessageRequestToProto(r)
		if cerr != nil {
			t.Fatal(cerr)
		}
		var out *a2apb.SendMessageResponse
		if out, err = api.SendMessage(ctx, pr); err == nil {
			res, err = grpcwire.SendMessageResponseFromProto(out)
		}
	case *a2a.GetTaskRequest:
		var out *a2apb.Task
		if out, err = api.GetTask(ctx, grpcwire.GetTaskRequestToProto(r)); err == nil {
			res, err = grpcwire.TaskFromProto(out)
		}
	case *a2a.ListTasksRequest:
		var out *a2apb.ListTasksResponse
		if out, err = api.ListTasks(ctx, grpcwire.ListTasksRequestToProto(r)); err == nil {
			res, err = grpcwire.ListTasksResponseFromProto(out)
		}
	case *a2a.CancelTaskRequest:
		pr, cerr := grpcwire.CancelTaskRequestToProto(r)
		if cerr != nil {
			t.Fatal(cerr)
		}
		var out *a2apb.Task
		if out, err = api.CancelTask(ctx, pr); err == nil {
			res, err = grpcwire.TaskFromProto(out)
		}
	case *a2a.TaskPushNotificationConfig:
		var out *a2apb.TaskPushNotificationConfig
		if out, err = api.CreateTaskPushNotificationConfig(ctx, grpcwire.PushConfigToProto(r)); err == nil {
			res = grpcwire.PushConfigFromProto(out)
		}
	case *a2a.GetTaskPushNotificationConfigRequest:
		var out *a2apb.TaskPushNotificationConfig
		if out, err = api.GetTaskPushNotificationConfig(ctx, grpcwire.GetPushConfigRequestToProto(r)); err == nil {
			res = grpcwire.PushConfigFromProto(out)
		}
	case *a2a.ListTaskPushNotificationConfigsRequest:
		var out *a2apb.ListTaskPushNotificationConfigsResponse
		if out, err = api.ListTaskPushNotificationConfigs(ctx, grpcwire.ListPushConfigsRequestToProto(r)); err == nil {
			res = grpcwire.ListPushConfigsResponseFromProto(out)
		}
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		if _, err = api.DeleteTaskPushNotificationConfig(ctx, grpcwire.DeletePushConfigRequestToProto(r)); err == nil {
			res = json.RawMessage("{}")
		}
	case *a2a.GetExtendedAgentCardRequest:
		var out *a2apb.AgentCard
		if out, err = api.GetExtendedAgentCard(ctx, grpcwire.ExtendedCardRequestToProto(r)); err == nil {
			var card *a2a.AgentCard
			card, err = grpcwire.AgentCardFromProto(out)
			// The test's gRPC listener has a port of its own (Start shares
			// the HTTP port): the card names the endpoint it was asked on.
			for i := range card.SupportedInterfaces {
				in := &card.SupportedInterfaces[i]
				in.URL = strings.Replace(in.URL, b.e.grpc.addr, strings.TrimPrefix(b.e.url, "http://"), 1)
			}
			res = card
		}
	case *a2a.SubscribeToTaskRequest:
		// A subscription that is refused: its status is the error.
		next := b.grpcOpen(token, op, params)
		ev, e := next()
		if e == nil {
			t.Fatalf("SubscribeToTask answered %+v where a refusal was expected", ev)
		}
		return nil, e
	default:
		t.Fatalf("no gRPC call for %T", params)
	}
	if err != nil {
		return nil, grpcError(t, err)
	}
	body, merr := a2a.Marshal(res)
	if merr != nil {
		t.Fatal(merr)
	}
	if def := resultDefs[op.String()]; def != "" {
		a2atest.ValidateJSON(t, def, body)
	}
	return body, nil
}

// grpcError reads the A2A error of a failed call and checks its gRPC code
// against the specification's table and this project's classes.
func grpcError(t testing.TB, err error) *a2a.Error {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("not a gRPC status: %v", err)
	}
	e := grpcwire.FromStatus(st)
	if e.Reason == "" {
		t.Errorf("status %v without an ErrorInfo: %v", st.Code(), err)
	}
	want := grpcwire.Code(e)
	switch e.Reason {
	case "UNAUTHORIZED":
		want = codes.PermissionDenied
	case "UNAVAILABLE", "SERVER_BUSY":
		want = codes.Unavailable
	case "REQUEST_TOO_LARGE":
		want = codes.ResourceExhausted
	case "REQUEST_TIMEOUT":
		want = codes.DeadlineExceeded
	case "CROSS_SITE_REQUEST", "MISDIRECTED_REQUEST":
		want = codes.PermissionDenied
	}
	if st.Code() != want {
		t.Errorf("code %d (%s): gRPC %v, want %v", e.Code, e.Reason, st.Code(), want)
	}
	return e
}

// grpcOpen starts a streaming operation over gRPC; next returns each
// event, then the status error that ended the stream, if any, then
// (nil, nil).
func (b bindingClient) grpcOpen(token string, op a2a.Operation, params any) func() (*a2a.StreamResponse, *a2a.Error) {
	t := b.e.t
	t.Helper()
	api := b.e.grpc.client(t)
	ctx, cancel := grpcContext(token, b.hdr)
	t.Cleanup(cancel)
	var (
		st  grpc.ServerStreamingClient[a2apb.StreamResponse]
		err error
	)
	switch r := params.(type) {
	case *a2a.SendMessageRequest:
		pr, cerr := grpcwire.SendMessageRequestToProto(r)
		if cerr != nil {
			t.Fatal(cerr)
		}
		st, err = api.SendStreamingMessage(ctx, pr)
	case *a2a.SubscribeToTaskRequest:
		st, err = api.SubscribeToTask(ctx, grpcwire.SubscribeToTaskRequestToProto(r))
	default:
		t.Fatalf("no gRPC stream for %T", params)
	}
	done := false
	return func() (*a2a.StreamResponse, *a2a.Error) {
		if done {
			return nil, nil
		}
		if err != nil {
			done = true
			return nil, grpcError(t, err)
		}
		m, rerr := st.Recv()
		if errors.Is(rerr, io.EOF) {
			done = true
			return nil, nil
		}
		if rerr != nil {
			done = true
			return nil, grpcError(t, rerr)
		}
		ev, cerr := grpcwire.StreamResponseFromProto(m)
		if cerr != nil {
			t.Fatal(cerr)
		}
		a2atest.ValidateJSON(t, "Stream Response", mustJSON(ev))
		return ev, nil
	}
}
