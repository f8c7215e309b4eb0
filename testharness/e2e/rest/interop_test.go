package rest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// goSDKCard parses the binary's card for the Go SDK, whose v2.4.0 parser
// cannot read the ProtoJSON form of security requirement scopes
// (a2aproject/a2a-go#430): they are rewritten as bare arrays first.
func goSDKCard(b []byte) (*sdk.AgentCard, error) {
	var card map[string]any
	if err := json.Unmarshal(b, &card); err != nil {
		return nil, err
	}
	reqs, _ := card["securityRequirements"].([]any)
	for _, r := range reqs {
		schemes, _ := r.(map[string]any)["schemes"].(map[string]any)
		for name, v := range schemes {
			list, _ := v.(map[string]any)["list"].([]any)
			if list == nil {
				list = []any{}
			}
			schemes[name] = list
		}
	}
	fixed, err := json.Marshal(card)
	if err != nil {
		return nil, err
	}
	return agentcard.DefaultCardParser(fixed)
}

// TestOfficialGoSDKRESTClientAgainstTheBinary: the official Go SDK with
// only its REST transport picks the binary's HTTP+JSON interface and runs
// the operations; our google.rpc.Status errors arrive as its typed errors.
func TestOfficialGoSDKRESTClientAgainstTheBinary(t *testing.T) {
	h := startHost(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	hc := &http.Client{Transport: bearer{token: tokAlice, next: http.DefaultTransport}}
	card, err := (&agentcard.Resolver{Client: hc, CardParser: goSDKCard}).Resolve(ctx, h.url)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()

	res, err := client.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello from the go sdk"))})
	task, ok := res.(*sdk.Task)
	if err != nil || !ok || task.Status.State != sdk.TaskStateCompleted || task.Artifacts[0].Parts[0].Text() != "echo: hello from the go sdk" {
		t.Fatalf("send = %#v, %v", res, err)
	}
	var kinds []string
	for ev, err := range client.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("progress go"))}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task")
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		}
	}
	if len(kinds) < 4 || kinds[0] != "task" || kinds[len(kinds)-1] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("stream events = %v", kinds)
	}
	one := 1
	if got, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &one}); err != nil || len(got.History) != 1 {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if list, err := client.ListTasks(ctx, &sdk.ListTasksRequest{ContextID: task.ContextID}); err != nil || len(list.Tasks) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if cfg, err := client.CreateTaskPushConfig(ctx, &sdk.PushConfig{TaskID: task.ID, ID: "go", URL: "http://127.0.0.1:9/hook"}); err != nil || cfg.ID != "go" {
		t.Fatalf("push config = %+v, %v", cfg, err)
	}
	if err := client.DeleteTaskPushConfig(ctx, &sdk.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "go"}); err != nil {
		t.Fatalf("delete push config: %v", err)
	}
	if _, err := client.CancelTask(ctx, &sdk.CancelTaskRequest{ID: task.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Errorf("cancel a completed task: %v", err)
	}
	if _, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("unknown task: %v", err)
	}
	plain, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ListTasks(ctx, &sdk.ListTasksRequest{}); !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Errorf("without a token: %v", err)
	}
}

// jsStep is one line of client-rest.mjs output.
type jsStep struct {
	Step       string   `json:"step"`
	OK         bool     `json:"ok"`
	Error      string   `json:"error"`
	Name       string   `json:"name"`
	StatusCode int      `json:"statusCode"`
	TaskID     string   `json:"taskId"`
	State      string   `json:"state"`
	Answer     string   `json:"answer"`
	Events     []string `json:"events"`
	Requests   []string `json:"requests"`
}

// TestOfficialJSSDKRESTClientAgainstTheBinary runs
// testharness/interop/js/client-rest.mjs (the official JS SDK's REST
// transport) against the binary.
func TestOfficialJSSDKRESTClientAgainstTheBinary(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the JS SDK interop test needs Node.js 20 or later")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := testharness.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "testharness", "interop", "js")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		t.Fatalf("the official JS SDK is not installed in %s: run `make deps` (or `npm ci` in that directory) first", dir)
	}
	h := startHost(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client-rest.mjs", h.url)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "A2A_TOKEN="+tokAlice, "A2A_WEBHOOK_URL=http://127.0.0.1:9/hook")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	steps := map[string]jsStep{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s jsStep
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Errorf("client-rest printed a non-JSON line: %s", sc.Bytes())
			continue
		}
		t.Logf("js %s", sc.Bytes())
		if s.Step == "subscribed" {
			h.agent.release(s.TaskID)
			continue
		}
		steps[s.Step] = s
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client-rest failed: %v\n%s", err, stderr.String())
	}
	for _, name := range []string{"card", "send", "direct", "stream", "get", "list", "push", "cancel", "resubscribe",
		"unknown-task", "not-cancelable", "terminal-subscribe", "invalid-params", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	if s := steps["send"]; s.State != "TASK_STATE_COMPLETED" || s.Answer != "echo: hello from js rest" {
		t.Errorf("send = %+v", s)
	}
	if s := steps["direct"]; s.Answer != "direct: js rest" {
		t.Errorf("direct = %+v", s)
	}
	if ev := steps["stream"].Events; len(ev) < 4 || ev[0] != "task:TASK_STATE_SUBMITTED" || ev[len(ev)-1] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("stream = %v", ev)
	}
	if s := steps["cancel"]; s.State != "TASK_STATE_CANCELED" {
		t.Errorf("cancel = %+v", s)
	}
	if ev := steps["resubscribe"].Events; len(ev) == 0 || ev[0] != "task:TASK_STATE_WORKING" || ev[len(ev)-1] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Errorf("resubscribe = %v", ev)
	}
	for name, want := range map[string]struct {
		class  string
		status int
	}{
		"unknown-task":       {"TaskNotFoundError", 404},
		"not-cancelable":     {"TaskNotCancelableError", 400},
		"terminal-subscribe": {"UnsupportedOperationError", 400},
		"invalid-params":     {"RequestMalformedError", 400},
	} {
		if s := steps[name]; s.Name != want.class || s.StatusCode != want.status {
			t.Errorf("%s = %+v, want %s HTTP %d", name, s, want.class, want.status)
		}
	}
	for _, r := range steps["done"].Requests {
		if r == "POST /" {
			t.Errorf("the REST client called the JSON-RPC endpoint: %v", steps["done"].Requests)
			break
		}
	}
}
