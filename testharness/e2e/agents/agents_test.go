// Package agents_test runs the real plugin binary for a host with two
// agents (contract 1.4) and talks to each through the one port with the
// official Go and JS SDK clients, by its URL and by tenant, over JSON-RPC,
// HTTP+JSON and gRPC.
package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// The two agents' callers: alice may use the default agent "main" (the
// plugin-wide token), dana only "shout" (its own token).
const (
	tokAlice = "alice-main-token-0123456789"
	tokDana  = "dana-shout-token-0123456789"
)

// shout answers with the text in capitals: the second agent's behaviour,
// unlike main's echo.
var shout = testharness.BehaviorFunc(func(ctx context.Context, t *testharness.Turn) error {
	_, err := t.EndWith(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_FINAL, Text: strings.ToUpper(testharness.PartsText(t.Request))})
	return err
})

type host struct {
	*testharness.Host
	url string // the root URL, without a trailing slash
}

// startHost runs the plugin for a host with the agents main (echo) and
// shout (capitals), each with its own token.
func startHost(t *testing.T) *host {
	t.Helper()
	h := testharness.Start(t, testharness.Options{
		Agents: []testharness.HostAgent{
			{ID: "main", Name: "Main", Description: "Echoes what it is told."},
			{ID: "shout", Name: "Shouter", Description: "Answers in capitals.", Agent: shout,
				Skills: []*pb.AgentSkill{{Id: "shout", Name: "Shout", Description: "Repeats a message in capitals", Tags: []string{"text"}}}},
		},
		PluginConfig: map[string]any{
			"port": 0, "store": "sqlite", "loopback_is_local": false,
			"peer_tokens":   map[string]string{"alice": tokAlice},
			"trusted_peers": []string{"alice"},
			"agent_settings": map[string]any{
				"shout": map[string]any{"peer_tokens": map[string]string{"dana": tokDana}, "trusted_peers": []string{"dana"}},
			},
		},
	})
	url := strings.TrimSuffix(h.Endpoint(testharness.A2APluginName), "/")
	return &host{Host: h, url: url}
}

func within(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// getCard fetches a card, strictly validated against the v1.0 schema.
func getCard(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	a2atest.ValidateJSON(t, "Agent Card", body)
	var c map[string]any
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTwoAgentsOnePortSeparateCards: the root card is the default agent's;
// each agent's card names its own endpoints (its gRPC interface its
// tenant) and its own skills.
func TestTwoAgentsOnePortSeparateCards(t *testing.T) {
	h := startHost(t)
	root := getCard(t, h.url+"/.well-known/agent-card.json")
	sh := getCard(t, h.url+"/agents/shout/.well-known/agent-card.json")
	if root["name"] != "Main" || sh["name"] != "Shouter" {
		t.Fatalf("names %v, %v", root["name"], sh["name"])
	}
	for _, in := range sh["supportedInterfaces"].([]any) {
		in := in.(map[string]any)
		switch in["protocolBinding"] {
		case "JSONRPC":
			if in["url"] != h.url+"/agents/shout/" {
				t.Errorf("shout's JSON-RPC interface %v", in)
			}
		case "HTTP+JSON":
			if in["url"] != h.url+"/agents/shout" {
				t.Errorf("shout's HTTP+JSON interface %v", in)
			}
		case "GRPC":
			if in["url"] != strings.TrimPrefix(h.url, "http://") || in["tenant"] != "shout" {
				t.Errorf("shout's gRPC interface %v", in)
			}
		}
	}
	if s := sh["skills"].([]any); len(s) != 1 || s[0].(map[string]any)["id"] != "shout" {
		t.Errorf("shout's skills %v", s)
	}
	if resp, err := http.Get(h.url + "/agents/nobody/.well-known/agent-card.json"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("an agent the host does not have: %v %v", resp.StatusCode, err)
	}
}

// goClient is an official Go SDK client of one agent: from its card at
// cardBase (by URL) or the root card (by tenant, then every request names
// the agent), over binding.
func goClient(t *testing.T, ctx context.Context, h *host, token, cardBase, binding string) *a2aclient.Client {
	t.Helper()
	hc := sdkclient.Bearer(token, nil)
	card := sdkclient.ResolveCard(t, ctx, hc, cardBase)
	var opts []a2aclient.FactoryOption
	switch binding {
	case "jsonrpc":
		opts = []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(hc)}
	case "rest":
		opts = []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(hc)}
	case "grpc":
		opts = []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(),
			a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(sdkclient.BearerRPC(token)))}
	}
	client, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("client from the card at %s over %s: %v", cardBase, binding, err)
	}
	t.Cleanup(func() { _ = client.Destroy() })
	return client
}

// TestOfficialGoSDKTalksToEachAgentByURLAndByTenant: the Go SDK client of
// each agent, by its URL and by tenant, over every binding, gets that
// agent's answer; a task of one agent is unknown to the other; a token of
// one agent is refused by the other.
func TestOfficialGoSDKTalksToEachAgentByURLAndByTenant(t *testing.T) {
	h := startHost(t)
	ctx := within(t)
	tasks := map[string]sdk.TaskID{}
	for _, binding := range []string{"jsonrpc", "rest", "grpc"} {
		for _, c := range []struct {
			agent, token, cardBase, tenant, want string
		}{
			{"main", tokAlice, h.url, "", "hello main"},
			{"shout", tokDana, h.url + "/agents/shout", "", "HELLO SHOUT"},
			{"shout", tokDana, h.url, "shout", "HELLO SHOUT"},
		} {
			client := goClient(t, ctx, h, c.token, c.cardBase, binding)
			req := &sdk.SendMessageRequest{Tenant: c.tenant, Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello "+c.agent))}
			res, err := client.SendMessage(ctx, req)
			task, ok := res.(*sdk.Task)
			if err != nil || !ok || task.Status.State != sdk.TaskStateCompleted || len(task.Artifacts) != 1 || !strings.Contains(task.Artifacts[0].Parts[0].Text(), c.want) {
				t.Fatalf("%s over %s (card %s, tenant %q): %#v %v; want %q", c.agent, binding, c.cardBase, c.tenant, res, err, c.want)
			}
			if got, err := client.GetTask(ctx, &sdk.GetTaskRequest{Tenant: c.tenant, ID: task.ID}); err != nil || got.ID != task.ID {
				t.Errorf("%s over %s: its own task: %v", c.agent, binding, err)
			}
			tasks[c.agent+"/"+binding] = task.ID
		}
	}
	// The host saw each message with its agent.
	for key, id := range tasks {
		c, err := h.Recorder().WaitFor(ctx, func(c testharness.Call) bool {
			return c.Kind == testharness.KindHandleMessage && c.TaskID == string(id)
		})
		if err != nil || c.HandleMessage().GetAgentId() != strings.Split(key, "/")[0] {
			t.Errorf("%s: the host's HandleMessage %v (%v)", key, c.HandleMessage(), err)
		}
	}
	// Across agents: tasks unknown, tokens refused.
	for _, binding := range []string{"jsonrpc", "rest", "grpc"} {
		mainClient := goClient(t, ctx, h, tokAlice, h.url, binding)
		if _, err := mainClient.GetTask(ctx, &sdk.GetTaskRequest{ID: tasks["shout/"+binding]}); !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Errorf("shout's task at main over %s: %v, want task not found", binding, err)
		}
		shoutByTenant := goClient(t, ctx, h, tokDana, h.url, binding)
		if _, err := shoutByTenant.GetTask(ctx, &sdk.GetTaskRequest{Tenant: "shout", ID: tasks["main/"+binding]}); !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Errorf("main's task at shout by tenant over %s: %v, want task not found", binding, err)
		}
		// The SDK's JSON-RPC transport reports the HTTP 401 as a status,
		// the others as ErrUnauthenticated.
		_, err := mainClient.SendMessage(ctx, &sdk.SendMessageRequest{Tenant: "shout", Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("x"))})
		if err == nil || !errors.Is(err, sdk.ErrUnauthenticated) && !strings.Contains(err.Error(), "401") {
			t.Errorf("alice's token naming shout over %s: %v, want unauthenticated", binding, err)
		}
	}
}

// jsStep is one line of client-agents.mjs.
type jsStep struct {
	Step       string   `json:"step"`
	OK         bool     `json:"ok"`
	Error      string   `json:"error"`
	Name       string   `json:"name"`
	Interfaces []string `json:"interfaces"`
	TaskID     string   `json:"taskId"`
	State      string   `json:"state"`
	Answer     string   `json:"answer"`
	Requests   []string `json:"requests"`
}

// TestOfficialJSSDKTalksToEachAgentByURLAndByTenant: the JS SDK client
// (testharness/interop/js/client-agents.mjs) of the second agent, by its
// URL and by tenant, over every binding, gets its answer.
func TestOfficialJSSDKTalksToEachAgentByURLAndByTenant(t *testing.T) {
	h := startHost(t)
	for _, binding := range []string{"jsonrpc", "rest", "grpc"} {
		for _, mode := range []string{"url", "tenant"} {
			steps := map[string]jsStep{}
			testharness.RunNodeJSONLines(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + tokDana}, Timeout: 90 * time.Second},
				func(s jsStep) { steps[s.Step] = s }, "client-agents.mjs", h.url, "shout", binding, mode)
			for _, name := range []string{"card", "send", "get", "done"} {
				if s, ok := steps[name]; !ok || !s.OK {
					t.Errorf("%s by %s: step %s: %+v", binding, mode, name, s)
				}
			}
			wantCard := map[string]string{"url": "Shouter", "tenant": "Main"}[mode]
			if steps["card"].Name != wantCard {
				t.Errorf("%s by %s: card %q, want %q", binding, mode, steps["card"].Name, wantCard)
			}
			if s := steps["send"]; s.State != "TASK_STATE_COMPLETED" || s.Answer != strings.ToUpper("hello shout over "+binding+" by "+mode) {
				t.Errorf("%s by %s: send %+v", binding, mode, s)
			}
			for _, r := range steps["done"].Requests {
				if mode == "tenant" && strings.Contains(r, "/agents/") {
					t.Errorf("%s by tenant went to an agent's path: %s", binding, r)
				}
			}
		}
	}
	// A token of the other agent is refused, by URL and by tenant.
	steps := map[string]jsStep{}
	testharness.RunNodeJSONLines(t, testharness.NodeOptions{Env: []string{"A2A_TOKEN=" + tokAlice}, Timeout: 90 * time.Second},
		func(s jsStep) { steps[s.Step] = s }, "client-agents.mjs", h.url, "shout", "jsonrpc", "tenant")
	if s := steps["send"]; s.OK {
		t.Errorf("alice's token naming shout: %+v, want refused", s)
	}
}
