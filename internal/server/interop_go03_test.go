package server

import (
	"context"
	"errors"
	"testing"
	"time"

	sdk03 "github.com/a2aproject/a2a-go/a2a"
	client03 "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestOfficialGoSDK03ClientInterop drives our server with the official Go
// SDK's 0.3 client (github.com/a2aproject/a2a-go v0.3.15, a client we did
// not write): it discovers the agent from the 0.3 card (at the legacy
// path, and at the canonical path by asking for 0.3), then sends, streams,
// gets, cancels and resubscribes over the 0.3 JSON-RPC methods, and reads
// our errors as its typed errors.
func TestOfficialGoSDK03ClientInterop(t *testing.T) {
	e := newEnv(t)
	hc := sdkclient.Bearer(tokAlice, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resolver := agentcard.NewResolver(hc)
	for name, opt := range map[string]agentcard.ResolveOption{
		"legacy path": agentcard.WithPath("/.well-known/agent.json"),
		"negotiated":  agentcard.WithRequestHeader("A2A-Version", "0.3"),
	} {
		card, err := resolver.Resolve(ctx, e.url, opt)
		if err != nil {
			t.Fatalf("%s: resolve the 0.3 card: %v", name, err)
		}
		if card.URL != e.url+"/" || card.PreferredTransport != sdk03.TransportProtocolJSONRPC || card.Name != "Test Agent" || !card.Capabilities.Streaming {
			t.Fatalf("%s: card = %+v", name, card)
		}
	}
	card, _ := resolver.Resolve(ctx, e.url, agentcard.WithPath("/.well-known/agent.json"))
	client, err := client03.NewFromCard(ctx, card, client03.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("client from card: %v", err)
	}
	defer client.Destroy()

	// Blocking send: the answer is the artifact.
	res, err := client.SendMessage(ctx, &sdk03.MessageSendParams{Message: sdk03.NewMessage(sdk03.MessageRoleUser, sdk03.TextPart{Text: "hello from 0.3"})})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*sdk03.Task)
	if !ok || task.Status.State != sdk03.TaskStateCompleted || len(task.Artifacts) != 1 || text03(task.Artifacts[0].Parts) != "echo: hello from 0.3" {
		t.Fatalf("send result = %#v", res)
	}
	// A direct reply is a message.
	res, err = client.SendMessage(ctx, &sdk03.MessageSendParams{Message: sdk03.NewMessage(sdk03.MessageRoleUser, sdk03.TextPart{Text: "direct yo"})})
	if msg, ok := res.(*sdk03.Message); err != nil || !ok || text03(msg.Parts) != "direct: yo" {
		t.Fatalf("direct reply = %#v, %v", res, err)
	}

	// Stream: the task first, the last status update final.
	var kinds []string
	for ev, err := range client.SendStreamingMessage(ctx, &sdk03.MessageSendParams{Message: sdk03.NewMessage(sdk03.MessageRoleUser, sdk03.TextPart{Text: "progress 0.3"})}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk03.Task:
			kinds = append(kinds, "task")
		case *sdk03.TaskStatusUpdateEvent:
			k := "status:" + string(v.Status.State)
			if v.Final {
				k += ":final"
			}
			kinds = append(kinds, k)
		case *sdk03.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		}
	}
	if len(kinds) != 7 || kinds[0] != "task" || kinds[6] != "status:completed:final" {
		t.Fatalf("stream events = %v", kinds)
	}

	// Get, cancel, and the errors of both, as the SDK's typed errors.
	got, err := client.GetTask(ctx, &sdk03.TaskQueryParams{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != sdk03.TaskStateCompleted {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := client.GetTask(ctx, &sdk03.TaskQueryParams{ID: "no-such-task"}); !errors.Is(err, sdk03.ErrTaskNotFound) {
		t.Errorf("unknown task: %v, want the SDK's ErrTaskNotFound", err)
	}
	slow := e.startGated(tokAlice, "slow 0.3")
	canceled, err := client.CancelTask(ctx, &sdk03.TaskIDParams{ID: sdk03.TaskID(slow.ID)})
	if err != nil || canceled.Status.State != sdk03.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", canceled, err)
	}
	if _, err := client.CancelTask(ctx, &sdk03.TaskIDParams{ID: sdk03.TaskID(slow.ID)}); !errors.Is(err, sdk03.ErrTaskNotCancelable) {
		t.Errorf("second cancel: %v, want the SDK's ErrTaskNotCancelable", err)
	}
	if _, err := client.SendMessage(ctx, &sdk03.MessageSendParams{Message: &sdk03.Message{ID: "m", Role: sdk03.MessageRoleUser, TaskID: "no-such-task",
		Parts: sdk03.ContentParts{sdk03.TextPart{Text: "x"}}}}); !errors.Is(err, sdk03.ErrTaskNotFound) {
		t.Errorf("send to an unknown task: %v, want the SDK's ErrTaskNotFound", err)
	}

	// Resubscribe to a running task.
	other := e.startGated(tokAlice, "slow again")
	go func() {
		time.Sleep(100 * time.Millisecond)
		e.exec.release(other.ID)
	}()
	kinds = nil
	for ev, err := range client.ResubscribeToTask(ctx, &sdk03.TaskIDParams{ID: sdk03.TaskID(other.ID)}) {
		if err != nil {
			t.Fatalf("resubscribe: %v", err)
		}
		switch v := ev.(type) {
		case *sdk03.Task:
			kinds = append(kinds, "task:"+string(v.Status.State))
		case *sdk03.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk03.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		}
	}
	if len(kinds) != 3 || kinds[0] != "task:working" || kinds[2] != "status:completed" {
		t.Fatalf("resubscribe events = %v", kinds)
	}
}

// text03 joins the text parts of a 0.3 message or artifact.
func text03(parts sdk03.ContentParts) string {
	s := ""
	for _, p := range parts {
		if tp, ok := p.(sdk03.TextPart); ok {
			s += tp.Text
		}
	}
	return s
}
