package app_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/internal/app"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

func serve(t *testing.T, cfg string, env map[string]string, opts hostsdk.InProcessOptions) *hostsdk.Plugin {
	t.Helper()
	return serveApp(t, app.New(nil, "test", func(k string) string { return env[k] }), cfg, opts)
}

// serveApp is serve with an App the test made.
func serveApp(t *testing.T, a *app.App, cfg string, opts hostsdk.InProcessOptions) *hostsdk.Plugin {
	t.Helper()
	if opts.Host == nil {
		agent, err := testharness.NewAgent(testharness.EchoScenario(), testharness.AgentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opts.Host = agent.Handler()
		t.Cleanup(func() { agent.Close() })
	}
	opts.Config = []byte(cfg)
	return hostsdk.ServeInProcess(t, plugin.ServeOpts{Lifecycle: a, Platform: a, Toolset: a}, opts)
}

func TestDescribeNamesThePluginAndItsEnvironment(t *testing.T) {
	p := serve(t, `{"port":0,"store":"memory"}`, nil, hostsdk.InProcessOptions{})
	d := p.Describe()
	if d.GetName() != "a2a" || d.GetVersion() != "test" || len(d.GetCapabilities()) != 2 || d.GetEnvPrefixes()[0] != "A2A_" {
		t.Fatalf("describe = %v", d)
	}
}

func TestMisconfigurationFailsConfigureNamingTheSetting(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{`{"prot": 1}`, `unknown setting "prot"`},
		{`{"host": "0.0.0.0"}`, "A2A_BEARER_TOKEN"},
		{`{"a2a_agents": [{"name": "x", "url": "not a url"}]}`, "a2a_agents"},
		{`{"policy": "public=fly"}`, "fly"},
	} {
		p := serve(t, `{}`, nil, hostsdk.InProcessOptions{NoConfigure: true})
		_, err := p.Lifecycle().Configure(context.Background(), &pb.ConfigureRequest{ConfigJson: []byte(tc.cfg), DataDir: t.TempDir()}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %s: err = %v, want it to mention %q", tc.cfg, err, tc.want)
		}
	}
}

func TestWebhookSigningKeyIsGeneratedOnceAndKeptPrivate(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, `{"port":0}`, nil, hostsdk.InProcessOptions{DataDir: dir})
	path := filepath.Join(dir, "a2a", app.PushSecretFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no generated key: %v (plugin %s)", err, p.Name())
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, want 0600", st.Mode().Perm())
	}
	first, _ := os.ReadFile(path)
	// A second start (the first stopped: one store serves a database at a
	// time) reuses the key receivers were given.
	if _, err := p.Lifecycle().Drain(context.Background(), &pb.DrainRequest{}); err != nil {
		t.Fatal(err)
	}
	serve(t, `{"port":0}`, nil, hostsdk.InProcessOptions{DataDir: dir})
	second, _ := os.ReadFile(path)
	if string(first) != string(second) || len(strings.TrimSpace(string(first))) != 64 {
		t.Fatalf("key changed or malformed: %q → %q", first, second)
	}
	// A configured secret needs no file.
	dir2 := t.TempDir()
	serve(t, `{"port":0}`, map[string]string{"A2A_PUSH_SECRET": "configured-secret"}, hostsdk.InProcessOptions{DataDir: dir2})
	if _, err := os.Stat(filepath.Join(dir2, "a2a", app.PushSecretFile)); !os.IsNotExist(err) {
		t.Fatalf("a configured secret must not create a key file: %v", err)
	}
}

func TestConnectServesTheAgentAndMetricsToTheLocalOperator(t *testing.T) {
	p := serve(t, `{"port":0,"store":"memory","agent_name":"Inproc"}`, nil, hostsdk.InProcessOptions{})
	eps := p.Endpoints()
	if len(eps) != 1 || !strings.HasPrefix(eps[0], "http://127.0.0.1:") {
		t.Fatalf("endpoints = %v", eps)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(eps[0] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/.well-known/agent-card.json"); code != 200 || !strings.Contains(body, `"name":"Inproc"`) {
		t.Fatalf("card: %d %s", code, body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "a2a_requests_total") {
		t.Fatalf("metrics: %d %.200s", code, body)
	}
}

func TestDrainLetsTheHostFinishAnOpenStream(t *testing.T) {
	agent, err := testharness.NewAgent(&testharness.Scenario{Name: "slow", Default: &testharness.Rule{
		Actions: []testharness.Action{testharness.Wait(300 * time.Millisecond), testharness.Reply("finished")}}},
		testharness.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	p := serve(t, `{"port":0,"store":"memory"}`, nil, hostsdk.InProcessOptions{Host: agent.Handler()})
	plat, _ := p.Platform()
	agent.Attach(plat)
	body := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}}`
	resp, err := http.Post(p.Endpoints()[0], "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := agent.Recorder().WaitFor(ctx, func(c testharness.Call) bool { return c.Kind == testharness.KindHandleMessage }); err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = p.Lifecycle().Drain(context.Background(), &pb.DrainRequest{TimeoutMs: 5000})
	}()
	stream, _ := io.ReadAll(resp.Body)
	<-drained
	if !strings.Contains(string(stream), "TASK_STATE_COMPLETED") || !strings.Contains(string(stream), "finished") {
		t.Fatalf("the host's answer during the drain was lost; the stream said:\n%s", stream)
	}
}

// TestWebhookSigningKeyIsNeverTheBearerToken: with a bearer token and no
// A2A_PUSH_SECRET, webhooks are signed with the generated key in the data
// directory, not with the token (a webhook receiver must not hold a
// credential that also authenticates calls to the agent).
func TestWebhookSigningKeyIsNeverTheBearerToken(t *testing.T) {
	dir := t.TempDir()
	const token = "the-inbound-bearer-token-0123456789"
	serve(t, `{"port":0}`, map[string]string{"A2A_BEARER_TOKEN": token}, hostsdk.InProcessOptions{DataDir: dir})
	key, err := os.ReadFile(filepath.Join(dir, "a2a", app.PushSecretFile))
	if err != nil {
		t.Fatalf("no generated signing key beside a bearer token: %v", err)
	}
	if k := strings.TrimSpace(string(key)); k == token || len(k) != 64 {
		t.Fatalf("signing key %q", k)
	}
}
