package plugin_test

import (
	"context"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// hello is a toolset plugin with one tool.
type hello struct{}

func (hello) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Name: "hello", Version: "0.1.0", Description: "Says hello"}, nil
}

func (hello) Configure(ctx context.Context, req *pb.ConfigureRequest, host plugin.Host) (*pb.ConfigureResponse, error) {
	return &pb.ConfigureResponse{}, nil // req.ConfigJson holds the host's section for "hello"
}

func (hello) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	return &pb.DrainResponse{}, nil
}

func (hello) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return []*pb.ToolDefinition{{Name: "say_hello", Description: "Greets someone",
		ParametersJsonSchema: `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`}}, nil
}

func (hello) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	_ = progress(&pb.ToolProgress{Message: "thinking", Fraction: 0.5})
	return &pb.ToolResult{Content: "hello! (" + req.GetArgumentsJson() + ")"}, nil
}

// A plugin's main serves only the roles it implements; Serve handles the
// handshake, panic recovery, logging and exiting when the host goes away.
func Example_serve() {
	logger := plugin.NewLogger("hello")
	plugin.Serve(plugin.ServeOpts{Lifecycle: hello{}, Toolset: hello{}, Logger: logger})
}
