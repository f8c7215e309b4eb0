package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestOfficialGoSDKGRPCClientInterop drives our gRPC binding with the
// official Go SDK's gRPC transport (a2a-go v2.4.0, a2agrpc/v1), chosen
// from our card's GRPC interface: every operation of goSDKSession, with
// the token as authorization metadata, and the SDK's typed errors decoded
// from our statuses.
func TestOfficialGoSDKGRPCClientInterop(t *testing.T) {
	e := startedEnv(t)
	card := sdkclient.ResolveCard(t, context.Background(), sdkclient.Bearer(tokAlice, nil), e.url)
	// The gRPC transport alone: the client must pick the card's GRPC
	// interface although the JSON-RPC ones are listed first.
	opts := []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(sdkclient.BearerRPC(tokAlice)))}
	goSDKSession(t, e, card, opts, tokAlice)
	// The session went over gRPC: the exchanges' records say so.
	grpcCalls := 0
	for _, a := range e.audit.all() {
		if a.Method == "SendMessage" && a.Outcome == "ok" {
			grpcCalls++
		}
	}
	if grpcCalls == 0 {
		t.Error("no SendMessage reached the server")
	}

	// Without a token the SDK's client gets its unauthenticated error.
	plain, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithDefaultsDisabled(),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Destroy()
	if _, err := plain.ListTasks(context.Background(), &sdk.ListTasksRequest{}); !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Errorf("without a token: %v", err)
	}
}

// TestOfficialJSSDKGRPCClientInterop drives our gRPC binding with the
// official JS SDK's gRPC transport (@a2a-js/sdk 1.3.0 on @grpc/grpc-js)
// through testharness/interop/js/client-binding.mjs: every operation,
// push configs included, the SDK's typed errors decoded from our
// statuses, and nothing but the card fetched over HTTP.
func TestOfficialJSSDKGRPCClientInterop(t *testing.T) {
	e := startedEnv(t)
	steps := testharness.RunJSClient(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + tokAlice}}, e.exec.release, "client-binding.mjs", e.url, "grpc")
	for _, name := range []string{"card", "send", "direct", "stream", "get", "list", "push", "cancel", "resubscribe",
		"unknown-task", "not-cancelable", "terminal-subscribe", "invalid-params", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	if s := steps["send"]; s.State != "TASK_STATE_COMPLETED" || s.Answer != "echo: hello from js grpc" || s.ProtocolVersion != "1.0" {
		t.Errorf("send = %+v", s)
	}
	if d := steps["direct"]; d.Answer != "direct: js grpc" {
		t.Errorf("direct = %+v", d)
	}
	want := "task:TASK_STATE_SUBMITTED,statusUpdate:TASK_STATE_WORKING,statusUpdate:TASK_STATE_WORKING,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate:TASK_STATE_COMPLETED"
	if got := strings.Join(steps["stream"].Events, ","); got != want {
		t.Errorf("stream = %s\nwant      %s", got, want)
	}
	if p := steps["push"]; p.Created != "js-cfg" || p.Token != "js-token" || p.Listed != 1 || p.AfterDelete == nil || *p.AfterDelete != 0 {
		t.Errorf("push = %+v", p)
	}
	if c := steps["cancel"]; c.State != "TASK_STATE_CANCELED" {
		t.Errorf("cancel = %+v", c)
	}
	if r := steps["resubscribe"]; len(r.Events) != 3 || r.Events[0] != "task:TASK_STATE_WORKING" || r.Events[2] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("resubscribe = %+v", r)
	}
	// The SDK maps our statuses (by code and ErrorInfo reason) to its
	// typed errors.
	for name, class := range map[string]string{
		"unknown-task":       "TaskNotFoundError",
		"not-cancelable":     "TaskNotCancelableError",
		"terminal-subscribe": "UnsupportedOperationError",
		"invalid-params":     "RequestMalformedError",
	} {
		if s := steps[name]; s.Name != class {
			t.Errorf("%s = %+v, want %s", name, s, class)
		}
	}
	// Only the card went over HTTP.
	if r := steps["done"].Requests; len(r) != 1 || r[0] != http.MethodGet+" /.well-known/agent-card.json" {
		t.Errorf("HTTP requests of the gRPC client: %v", r)
	}
}
