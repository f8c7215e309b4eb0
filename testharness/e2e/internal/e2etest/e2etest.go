// Package e2etest holds the helpers that the end-to-end suites under
// testharness/e2e share: calling the A2A plugin's tools as the host's model
// does and checking their results, and gates that hold a scripted agent's
// turns until a test releases them. Go's internal rule keeps it theirs.
package e2etest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// CallTool calls a tool of h's plugins with args as the host's model does,
// within timeout, and logs the call, its progress and its result. A Go
// error (not an is_error result) fails the test: the tools answer every
// problem as a result.
func CallTool(t testing.TB, h *testharness.Host, tool string, args map[string]any, timeout time.Duration) (*pb.ToolResult, []*pb.ToolProgress) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, progress, err := h.CallTool(ctx, tool, string(b))
	if err != nil {
		t.Fatalf("%s %s: the tool call failed instead of answering: %v", tool, b, err)
	}
	var lines []string
	for _, p := range progress {
		lines = append(lines, p.GetMessage())
	}
	t.Logf("%s %s\n  progress: %q\n  is_error=%t:\n%s", tool, b, lines, res.GetIsError(), res.GetContent())
	return res, progress
}

// MustOK fails unless r is a successful result containing every string.
func MustOK(t testing.TB, r *pb.ToolResult, contains ...string) {
	t.Helper()
	if r.GetIsError() {
		t.Fatalf("unexpected is_error result:\n%s", r.GetContent())
	}
	MustContain(t, r, contains...)
}

// MustErr fails unless r is an is_error result containing every string.
func MustErr(t testing.TB, r *pb.ToolResult, contains ...string) {
	t.Helper()
	if !r.GetIsError() {
		t.Fatalf("want an is_error result, got:\n%s", r.GetContent())
	}
	MustContain(t, r, contains...)
}

// MustContain fails unless r's content contains every string.
func MustContain(t testing.TB, r *pb.ToolResult, contains ...string) {
	t.Helper()
	for _, c := range contains {
		if !strings.Contains(r.GetContent(), c) {
			t.Fatalf("result lacks %q:\n%s", c, r.GetContent())
		}
	}
}

// Summary is the JSON line a2a_call and a2a_task end their results with.
type Summary struct {
	Peer      string `json:"peer"`
	State     string `json:"state"`
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id"`
	Receipt   bool   `json:"receipt"`
}

// SummaryOf decodes the summary line that ends r; it fails the test when
// there is none.
func SummaryOf(t testing.TB, r *pb.ToolResult) Summary {
	t.Helper()
	c := r.GetContent()
	i := strings.LastIndex(c, "\n{\"")
	var s Summary
	if i < 0 || json.Unmarshal([]byte(c[i+1:]), &s) != nil {
		t.Fatalf("no JSON summary line in:\n%s", c)
	}
	return s
}

// Gates hold turns of a scripted agent: a turn waits on Gate(key) until
// Release(key), which may come first. The zero value is ready to use.
type Gates struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
}

// Gate returns the channel that closes when key is released.
func (g *Gates) Gate(key string) <-chan struct{} { return g.gate(key) }

func (g *Gates) gate(key string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.gates[key]
	if c == nil {
		if g.gates == nil {
			g.gates = map[string]chan struct{}{}
		}
		c = make(chan struct{})
		g.gates[key] = c
	}
	return c
}

// Release lets every turn waiting on key (now or later) go on.
func (g *Gates) Release(key string) {
	c := g.gate(key)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// ReleaseAll releases every key a turn waits on or was released already,
// so that held turns end (at the end of a test).
func (g *Gates) ReleaseAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.gates {
		select {
		case <-c:
		default:
			close(c)
		}
	}
}
