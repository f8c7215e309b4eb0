package release_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// TestAnotherModuleBuildsAHostAndAPluginOnThePublicAPI writes a fresh Go
// module outside the repository that imports host-sdk and plugin (through
// a replace directive, as docs/install.md tells a Go developer to until
// the module is published), builds a plugin and a host with them, and
// runs the host, which launches the plugin and calls its tool. Go refuses
// an internal package across modules, so this passing shows the public
// API is enough.
func TestAnotherModuleBuildsAHostAndAPluginOnThePublicAPI(t *testing.T) {
	t.Parallel()
	repo, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/myhost\n\ngo 1.26\n\nrequire github.com/a2a-plugin/a2a-plugin v0.0.0\n\nreplace github.com/a2a-plugin/a2a-plugin => " + repo + "\n",
		"cmd/hello-plugin/main.go": `package main

import (
	"context"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

type hello struct{}

func (hello) Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Name: "hello", Version: "0.1.0", Description: "Says hello"}, nil
}
func (hello) Configure(ctx context.Context, req *pb.ConfigureRequest, host plugin.Host) (*pb.ConfigureResponse, error) {
	return &pb.ConfigureResponse{}, nil
}
func (hello) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error) {
	return &pb.DrainResponse{}, nil
}
func (hello) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return []*pb.ToolDefinition{{Name: "say_hello", Description: "Greets someone", ParametersJsonSchema: ` + "`" + `{"type":"object"}` + "`" + `}}, nil
}
func (hello) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	return &pb.ToolResult{Content: "hello from another module " + req.GetArgumentsJson()}, nil
}

func main() {
	plugin.Serve(plugin.ServeOpts{Lifecycle: hello{}, Toolset: hello{}, Logger: plugin.NewLogger("hello")})
}
`,
		"cmd/myhost/main.go": `package main

import (
	"context"
	"fmt"
	"os"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func main() {
	ctx := context.Background()
	m := hostsdk.NewManager(hostsdk.Options{Dir: os.Args[1], DataDir: os.Args[2]})
	if err := m.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer m.Close(ctx)
	res, err := m.CallTool(ctx, &pb.CallToolRequest{Name: "say_hello", ArgumentsJson: "{}"}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(res.GetContent())
}
`,
	}
	for name, body := range files {
		p := filepath.Join(mod, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goEnv := []string{"GOFLAGS=-mod=mod", "GOWORK=off"}
	run(t, mod, goEnv, "go", "mod", "tidy")
	plugins := filepath.Join(mod, "plugins")
	run(t, mod, goEnv, "go", "build", "-o", filepath.Join(plugins, "hello-plugin"), "./cmd/hello-plugin")
	run(t, mod, goEnv, "go", "build", "-o", filepath.Join(mod, "myhost"), "./cmd/myhost")
	cmd := exec.Command(filepath.Join(mod, "myhost"), plugins, t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the host of another module: %v", err)
	}
	if !strings.Contains(string(out), "hello from another module {}") {
		t.Errorf("the host of another module printed %q", out)
	}
}
