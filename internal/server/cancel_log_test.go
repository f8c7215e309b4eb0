package server

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// TestAClientCancelIsRecordedAsCancelledNotATimeout: gRPC calls the client
// cancels before sending its message (what a rapid-reset client does by
// the thousand) are audited once each as "cancelled" (499), not as a 408
// timeout, and log nothing at the default level.
func TestAClientCancelIsRecordedAsCancelledNotATimeout(t *testing.T) {
	logs := &syncBuffer{}
	e := newEnv(t, func(o *Options) { o.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}) })
	e.grpc.client(t)
	const calls = 50
	for range calls {
		ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(context.Background(),
			metadata.Pairs("authorization", "Bearer "+tokAlice, "a2a-version", "1.0")))
		st, err := e.grpc.cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, a2apb.A2AService_SendMessage_FullMethodName)
		if err != nil {
			t.Fatal(err)
		}
		_ = st.SendMsg // the message never comes
		cancel()
	}
	waitFor(t, "an audit record of every cancelled call", func() bool {
		n := 0
		for _, r := range e.audit.all() {
			if r.Method == "SendMessage" {
				n++
			}
		}
		return n == calls
	})
	for _, r := range e.audit.all() {
		if r.Method == "SendMessage" && (r.Outcome != outcomeCancelled || r.Code != statusCancelled) {
			t.Fatalf("a cancelled call was audited as %s %d (%s), want cancelled 499", r.Outcome, r.Code, r.Error)
		}
	}
	if n := strings.Count(logs.String(), "a2a request"); n != 0 {
		t.Errorf("%d log lines for calls the client cancelled, want none at level info:\n%s", n, logs.String())
	}
}

// TestRefusalsDoNotFloodTheLog: a hundred refused requests leave a
// hundred audit records but at most refusalLogLines log lines.
func TestRefusalsDoNotFloodTheLog(t *testing.T) {
	logs := &syncBuffer{}
	e := newEnv(t, func(o *Options) { o.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}) })
	body, _ := a2a.MarshalRequest(1, "ListTasks", &a2a.ListTasksRequest{})
	const refused = 100
	for range refused {
		if status, _, _ := e.post("not-a-token-0123456789", body, nil); status != 401 {
			t.Fatalf("HTTP %d, want 401", status)
		}
	}
	waitFor(t, "every audit record", func() bool { return len(e.audit.all()) >= refused })
	if n := strings.Count(logs.String(), "a2a request refused"); n == 0 || n > refusalLogLines {
		t.Errorf("%d log lines for %d refusals, want 1 to %d", n, refused, refusalLogLines)
	}
}
