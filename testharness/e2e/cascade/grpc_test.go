package cascade_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/client/clienttest"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestACancelOverGRPCCascades: the root's CancelTask arrives over the
// gRPC binding, from the official Go SDK's gRPC client, and reaches the
// tree as one over JSON-RPC does: G's task delegated to P (one of these
// plugins) and to J, the official JS SDK server offering only gRPC, so
// that the cascade's own CancelTask goes out over gRPC too.
func TestACancelOverGRPCCascades(t *testing.T) {
	p := start(t, "P", holder, config(nil), nil)
	js := clienttest.StartJSGRPC(t, "JS gRPC Hop")
	var (
		mu   sync.Mutex
		jsID string
	)
	g := start(t, "G", testharness.BehaviorFunc(func(ctx context.Context, turn *testharness.Turn) error {
		label := testharness.PartsText(turn.Request)
		for _, c := range []struct{ agent, message string }{{"p", label + " p"}, {"j", "hold " + label + " j"}} {
			r, err := delegate(ctx, turn, map[string]any{"agent": c.agent, "message": c.message, "wait": false})
			if err != nil || r.GetIsError() {
				return fmt.Errorf("delegating to %s: %v %s", c.agent, err, r.GetContent())
			}
			if c.agent == "j" {
				mu.Lock()
				jsID = summaryTaskID(r)
				mu.Unlock()
			}
		}
		return hold(ctx, turn)
	}), config(map[string]any{"a2a_agents": peers("p", p.Endpoint(testharness.A2APluginName), "j", js.URL),
		// J's gRPC interface is a host:port on loopback, which the guard
		// checks as a URL of its own, not the configured peer's.
		"allow_loopback_urls": true}), nil)

	gURL := g.Endpoint(testharness.A2APluginName)
	root := send(t, gURL, "", "grpc")
	pTask := taskOf(t, "P", p, "grpc p")
	jTask := remote{name: "J"}
	waitFor(t, "G delegated to J", func(context.Context) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		jTask.id = jsID
		return jsID != "", "no task id yet"
	})
	rootTask := remote{"G", gURL, root.ID}
	waitState(t, "TASK_STATE_WORKING", rootTask, pTask)

	ctx, stop := context.WithTimeout(context.Background(), patience)
	defer stop()
	card := sdkclient.ResolveCard(t, ctx, http.DefaultClient, gURL)
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	jsClient, err := a2aclient.NewFromCard(ctx, sdkclient.ResolveCard(t, ctx, http.DefaultClient, js.URL), a2aclient.WithDefaultsDisabled(),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer jsClient.Destroy()
	if got, err := jsClient.GetTask(ctx, &sdk.GetTaskRequest{ID: sdk.TaskID(jTask.id)}); err != nil || got.Status.State != sdk.TaskStateWorking {
		t.Fatalf("J's task before the cancel: %+v, %v", got, err)
	}

	canceled, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: sdk.TaskID(root.ID)})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("CancelTask over gRPC = %+v, %v", canceled, err)
	}
	waitState(t, "TASK_STATE_CANCELED", pTask)
	waitFor(t, "J's task is canceled (read over gRPC)", func(ctx context.Context) (bool, string) {
		got, err := jsClient.GetTask(ctx, &sdk.GetTaskRequest{ID: sdk.TaskID(jTask.id)})
		if err != nil {
			return false, err.Error()
		}
		return got.Status.State == sdk.TaskStateCanceled, string(got.Status.State)
	})
	waitFor(t, "G's metadata says P and J were canceled", func(ctx context.Context) (bool, string) {
		tk, err := get(ctx, gURL, root.ID)
		if err != nil {
			return false, err.Error()
		}
		c := cascadeOf(tk)
		return c != nil && c["canceled"] == 2.0 && c["delegated"] == 2.0, fmt.Sprint(tk.Metadata)
	})
}
