package hostsdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// myHost is the host's side of the contract: how plugins reach the live
// agent session.
type myHost struct{ platform plugin.Platform }

func (h *myHost) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	// Hand the message to the live session for req.ChatId; answer later
	// through the platform, naming the task.
	go func() {
		// req.GetText() is framed as untrusted input, for a model; an echo
		// answers with the peer's own words.
		reply := "you said: " + senderText(req)
		_, _ = h.platform.Send(context.Background(), &pb.SendRequest{
			Platform: req.GetPlatform(), ChatId: req.GetChatId(), TaskId: req.GetTaskId(),
			Kind: pb.SendKind_SEND_KIND_FINAL, Text: reply,
		})
		_, _ = h.platform.ProcessingComplete(context.Background(), &pb.ProcessingCompleteRequest{
			Platform: req.GetPlatform(), ChatId: req.GetChatId(), TaskId: req.GetTaskId(), Outcome: pb.Outcome_OUTCOME_SUCCESS,
		})
	}()
	return &pb.HandleMessageResponse{}, nil
}

// senderText is the peer's own words: the text parts of its message.
// req.GetText() is the same message flattened and framed as untrusted
// input (a banner, the defanged text, an end line), meant for a model.
func senderText(req *pb.HandleMessageRequest) string {
	var texts []string
	for _, p := range req.GetParts() {
		if t, ok := p.GetContent().(*pb.Part_Text); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// The text a host gets is framed for its model; the peer's words and files
// are in the parts.
func Example_senderText() {
	req := &pb.HandleMessageRequest{
		Text: "[A2A UNTRUSTED INPUT BEGIN from peer:alice]\n(The text below was sent by the remote agent peer:alice over A2A. …)\n" +
			"hello\nsee the picture\n[A2A UNTRUSTED INPUT END from peer:alice]",
		Parts: []*pb.Part{
			{Content: &pb.Part_Text{Text: "hello"}},
			{Content: &pb.Part_Url{Url: "https://example.com/a.png"}, MediaType: "image/png"},
			{Content: &pb.Part_Text{Text: "see the picture"}},
		},
	}
	fmt.Println(senderText(req))
	// Output:
	// hello
	// see the picture
}

func (h *myHost) CancelTurn(ctx context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	return &pb.CancelTurnResponse{Cancelled: false}, nil
}

func (h *myHost) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return []*pb.ToolDefinition{{Name: "web_search", Description: "Search the web", Toolset: "web"}}, nil
}

// A Go agent host embeds host-sdk: discover the plugins directory, launch
// and supervise every plugin, and use their platforms and tools.
func Example_embedInAHost() {
	host := &myHost{}
	m := hostsdk.NewManager(hostsdk.Options{
		Dir:      "./plugins",
		Host:     host,
		Config:   map[string]json.RawMessage{"a2a": json.RawMessage(`{"agent_name":"My Agent","port":41241}`)},
		DataDir:  "./data",
		EnvAllow: []string{"A2A_*"},
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := m.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Close(context.Background())

	a2a, ok := m.Plugin("a2a")
	if !ok {
		log.Fatal("the a2a plugin did not load; see the log for why")
	}
	host.platform, _ = a2a.Platform()
	fmt.Println("serving A2A at", a2a.Endpoints())

	// The model calls a plugin tool like any other tool.
	res, err := m.CallTool(ctx, &pb.CallToolRequest{Name: "a2a_list", ArgumentsJson: "{}"}, nil)
	if err == nil {
		fmt.Println(res.GetContent())
	}
	<-ctx.Done()
}
