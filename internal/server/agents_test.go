package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// tokDana is the token of the beta agent's only peer.
const tokDana = "dana-token-0123456789abcdef"

// agentsEnv is a server with two agents over one store: the default agent
// "main" (the test peers alice, bob and carol) and "beta", whose only peer
// is dana, each with its own task manager on its view of the store.
type agentsEnv struct {
	*testEnv
	beta     *tasks.Manager
	betaExec *scriptExec
}

func newAgentsEnv(t *testing.T) *agentsEnv {
	t.Helper()
	return newAgentsEnvWith(t, func(_, beta *Options) { beta.Push = PushOptions{Enabled: true} })
}

// newAgentsEnvWith is newAgentsEnv with each agent's options changed by
// set before the server is built.
func newAgentsEnvWith(t *testing.T, set func(main, beta *Options)) *agentsEnv {
	t.Helper()
	var shared *store.Memory
	var beta *tasks.Manager
	betaExec := newScriptExec()
	e := newEnvTasks(t, func(o *tasks.Options) {
		shared = o.Store.(*store.Memory) // newEnvTasks's store
		o.Store = store.ForAgent(shared, "main")
	}, func(o *Options) {
		o.AgentID = "main"
		auth, err := security.NewAuthenticator(security.AuthConfig{PeerTokens: map[string]string{"dana": tokDana}, TrustedPeers: []string{"dana"}})
		if err != nil {
			t.Fatal(err)
		}
		var merr error
		beta, merr = tasks.NewManager(tasks.Options{Store: store.ForAgent(shared, "beta"), Executor: betaExec, RequestTimeout: 10 * time.Second})
		if merr != nil {
			t.Fatal(merr)
		}
		betaExec.m = beta
		if _, err := beta.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = beta.Close(context.Background()) })
		bo := Options{
			Tasks: beta, Auth: auth,
			Card: CardConfig{Name: "Beta Agent", Description: "The second agent of the host", Version: "2.0.0"},
		}
		set(o, &bo)
		o.Agents = []AgentOptions{{ID: "beta", Options: bo}}
	})
	return &agentsEnv{testEnv: e, beta: beta, betaExec: betaExec}
}

// newRateEnv is newAgentsEnv with rate limits of their own: main allows
// mainRate requests a minute, beta betaRate (on a frozen clock); with
// sharedAuth beta admits main's peers (an agent without tokens of its
// own, as the app builds it when agent_settings gives it none), else only
// dana.
func newRateEnv(t *testing.T, mainRate, betaRate int, sharedAuth bool) *agentsEnv {
	t.Helper()
	frozen := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return frozen }
	return newAgentsEnvWith(t, func(main, beta *Options) {
		main.RateLimit = security.NewRateLimiter(mainRate, clock)
		beta.RateLimit = security.NewRateLimiter(betaRate, clock)
		if sharedAuth {
			beta.Auth = main.Auth
		}
	})
}

// rpcAt posts one JSON-RPC request to path.
func (e *agentsEnv) rpcAt(path, token, method string, params any) rpcResult {
	e.t.Helper()
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": nextID(), "method": method, "params": params})
	req, err := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	status, hdr, b := e.do(req, token, nil)
	res := rpcResult{status: status, header: hdr, body: b}
	if status == http.StatusOK {
		var env struct {
			Result json.RawMessage `json:"result"`
			Error  *a2a.Error      `json:"error"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			e.t.Fatalf("%s %s: %v in %s", path, method, err, b)
		}
		res.result, res.err = env.Result, env.Error
	}
	return res
}

func (e *agentsEnv) sendAt(path, token string, params map[string]any) *a2a.Task {
	e.t.Helper()
	r := e.rpcAt(path, token, "SendMessage", params)
	if r.status != http.StatusOK || r.err != nil {
		e.t.Fatalf("SendMessage at %s: HTTP %d, %v: %s", path, r.status, r.err, r.body)
	}
	var res a2a.SendMessageResponse
	if err := a2a.Unmarshal(r.result, &res); err != nil || res.Task == nil {
		e.t.Fatalf("SendMessage at %s answered %s (%v)", path, r.result, err)
	}
	return res.Task
}

func msgParams(text string, extra map[string]any) map[string]any {
	p := map[string]any{"message": map[string]any{"messageId": a2a.NewID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func (e *agentsEnv) card(path string) *a2a.AgentCard {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
	status, _, body := e.do(req, "", nil)
	if status != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, status, body)
	}
	a2atest.ValidateJSON(e.t, "Agent Card", body)
	var c a2a.AgentCard
	if err := json.Unmarshal(body, &c); err != nil {
		e.t.Fatal(err)
	}
	return &c
}

// TestAgentsHaveTheirOwnCards: the root card is the default agent's; each
// agent's card, under /agents/{id}/, names its endpoints there (and its
// gRPC interface its tenant), strictly valid against the v1.0 schema.
func TestAgentsHaveTheirOwnCards(t *testing.T) {
	e := newAgentsEnv(t)
	root, main, beta := e.card("/.well-known/agent-card.json"), e.card("/agents/main/.well-known/agent-card.json"), e.card("/agents/beta/.well-known/agent-card.json")
	if root.Name != "Test Agent" || main.Name != "Test Agent" || beta.Name != "Beta Agent" || beta.Version != "2.0.0" {
		t.Fatalf("names: root %q, main %q, beta %q", root.Name, main.Name, beta.Name)
	}
	want := map[string]string{
		a2a.BindingJSONRPC:  e.url + "/agents/beta/",
		a2a.BindingHTTPJSON: e.url + "/agents/beta",
		a2a.BindingGRPC:     strings.TrimPrefix(e.url, "http://"),
	}
	for _, in := range beta.SupportedInterfaces {
		if in.URL != want[in.ProtocolBinding] {
			t.Errorf("beta's %s interface %q, want %q", in.ProtocolBinding, in.URL, want[in.ProtocolBinding])
		}
		if wantTenant := map[bool]string{true: "beta"}[in.ProtocolBinding == a2a.BindingGRPC]; in.Tenant != wantTenant {
			t.Errorf("beta's %s interface has tenant %q, want %q", in.ProtocolBinding, in.Tenant, wantTenant)
		}
	}
	for _, in := range root.SupportedInterfaces {
		if strings.Contains(in.URL, "/agents/") || in.Tenant != "" {
			t.Errorf("the root card's %s interface %q (tenant %q) is not the root's", in.ProtocolBinding, in.URL, in.Tenant)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/agents/nobody/.well-known/agent-card.json", nil)
	if status, _, body := e.do(req, "", nil); status != http.StatusNotFound {
		t.Errorf("the card of an agent not served: %d %s, want 404", status, body)
	}
}

// TestAgentsTasksAreInvisibleAcrossAgents: a task of one agent is unknown
// (-32001, exactly like an unknown id) to the other, by path and by
// tenant, for every task operation; lists are per agent.
func TestAgentsTasksAreInvisibleAcrossAgents(t *testing.T) {
	e := newAgentsEnv(t)
	bt := e.sendAt("/agents/beta/", tokDana, msgParams("hello beta", nil))
	mt := e.sendAt("/", tokAlice, msgParams("hello main", nil))
	if bt.Status.State != a2a.TaskStateCompleted || mt.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("states %s, %s", bt.Status.State, mt.Status.State)
	}
	if got := e.betaExec.turnTexts(); len(got) != 1 || got[0] != "hello beta" {
		t.Fatalf("beta's host turns = %v", got)
	}
	if got := e.exec.turnTexts(); len(got) != 1 || got[0] != "hello main" {
		t.Fatalf("main's host turns = %v", got)
	}
	unknown := e.rpcAt("/", tokAlice, "GetTask", map[string]any{"id": a2a.NewID()}).err
	for _, c := range []struct {
		path, token, method string
		params              map[string]any
	}{
		{"/", tokAlice, "GetTask", map[string]any{"id": bt.ID}},
		{"/agents/main/", tokAlice, "CancelTask", map[string]any{"id": bt.ID}},
		{"/", tokAlice, "ListTaskPushNotificationConfigs", map[string]any{"taskId": bt.ID}},
		{"/agents/beta/", tokDana, "GetTask", map[string]any{"id": mt.ID}},
		{"/", tokDana, "GetTask", map[string]any{"id": mt.ID, "tenant": "beta"}},
		{"/agents/beta", tokDana, "SubscribeToTask", map[string]any{"id": mt.ID}},
	} {
		r := e.rpcAt(c.path, c.token, c.method, c.params)
		if r.err == nil || r.err.Code != a2a.CodeTaskNotFound || r.err.Reason != unknown.Reason {
			t.Errorf("%s %s of the other agent's task: %d %v; want %v like an unknown id", c.path, c.method, r.status, r.err, unknown)
		}
	}
	// The same task by its own agent, by path and by tenant.
	for _, c := range []struct {
		path   string
		params map[string]any
	}{{"/agents/beta/", map[string]any{"id": bt.ID}}, {"/", map[string]any{"id": bt.ID, "tenant": "beta"}}} {
		if r := e.rpcAt(c.path, tokDana, "GetTask", c.params); r.err != nil {
			t.Errorf("beta's own task at %s %v: %v", c.path, c.params, r.err)
		}
	}
	list := func(path, token string, params map[string]any) []string {
		r := e.rpcAt(path, token, "ListTasks", params)
		if r.err != nil {
			t.Fatalf("ListTasks at %s: %v", path, r.err)
		}
		var res a2a.ListTasksResponse
		if err := a2a.Unmarshal(r.result, &res); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tk := range res.Tasks {
			ids = append(ids, tk.ID)
		}
		return ids
	}
	if got := list("/agents/beta/", tokDana, map[string]any{}); len(got) != 1 || got[0] != bt.ID {
		t.Errorf("beta's list = %v, want [%s]", got, bt.ID)
	}
	if got := list("/", tokDana, map[string]any{"tenant": "beta", "contextId": mt.ContextID}); len(got) != 0 {
		t.Errorf("beta's list of main's context = %v, want none", got)
	}
	// A context of one agent is unknown to the other, exactly like a
	// context id nobody used.
	inCtx := func(ctx string) map[string]any {
		return map[string]any{"message": map[string]any{"messageId": a2a.NewID(), "role": "ROLE_USER", "contextId": ctx, "parts": []any{map[string]any{"text": "reuse"}}}}
	}
	asMain := e.rpcAt("/", tokAlice, "SendMessage", inCtx(bt.ContextID))
	nobody := e.rpcAt("/", tokAlice, "SendMessage", inCtx(a2a.NewID()))
	if asMain.err == nil || nobody.err == nil || asMain.err.Code != nobody.err.Code || asMain.err.Reason != nobody.err.Reason {
		t.Errorf("main's message in beta's context: %v; in an unused context: %v; want the same refusal", asMain.err, nobody.err)
	}
	if got := e.betaExec.turnTexts(); len(got) != 1 {
		t.Errorf("beta's host turns after main's attempts: %v", got)
	}
}

// TestAgentsTokensArePerAgent: each agent admits only its own callers —
// by path, and at the root URL by tenant (a credential of another agent
// is refused unless its tenant names that agent) — over JSON-RPC,
// HTTP+JSON and gRPC.
func TestAgentsTokensArePerAgent(t *testing.T) {
	e := newAgentsEnv(t)
	for _, c := range []struct {
		name, path, token string
		params            map[string]any
		status, code      int
	}{
		{"alice at beta's URL", "/agents/beta/", tokAlice, nil, http.StatusUnauthorized, 0},
		{"dana at the root", "/", tokDana, nil, http.StatusUnauthorized, 0},
		{"dana at main's URL", "/agents/main/", tokDana, nil, http.StatusUnauthorized, 0},
		{"alice at the root naming beta", "/", tokAlice, map[string]any{"tenant": "beta"}, http.StatusUnauthorized, 0},
		{"dana at the root naming main", "/", tokDana, map[string]any{"tenant": "main"}, http.StatusUnauthorized, 0},
		{"a bad token naming beta", "/", "not-a-token-of-anyone-here", map[string]any{"tenant": "beta"}, http.StatusUnauthorized, 0},
		{"dana at beta's URL naming main", "/agents/beta/", tokDana, map[string]any{"tenant": "main"}, http.StatusOK, a2a.CodeInvalidParams},
		{"an unknown tenant", "/", tokAlice, map[string]any{"tenant": "zeta"}, http.StatusOK, a2a.CodeInvalidParams},
		{"dana at the root naming beta", "/", tokDana, map[string]any{"tenant": "beta"}, http.StatusOK, 0},
		{"alice at the root", "/", tokAlice, nil, http.StatusOK, 0},
		{"dana at beta's URL", "/agents/beta/", tokDana, nil, http.StatusOK, 0},
	} {
		r := e.rpcAt(c.path, c.token, "SendMessage", msgParams("hi", c.params))
		code := 0
		if r.err != nil {
			code = r.err.Code
		}
		if r.status != c.status || code != c.code {
			t.Errorf("%s: HTTP %d, error %v; want HTTP %d, code %d", c.name, r.status, r.err, c.status, c.code)
		}
		if c.code == a2a.CodeInvalidParams && (r.err == nil || !strings.Contains(r.err.Message, "tenant")) {
			t.Errorf("%s: the error does not name the tenant: %v", c.name, r.err)
		}
	}

	// HTTP+JSON: the agent's path, and the /{tenant}/ prefix.
	rest := func(path, token string) int {
		body := mustJSON(msgParams("over rest", nil))
		req, _ := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/a2a+json")
		status, _, _ := e.do(req, token, nil)
		return status
	}
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/agents/beta/message:send", tokDana, 200}, {"/beta/message:send", tokDana, 200},
		{"/agents/beta/message:send", tokAlice, 401}, {"/beta/message:send", tokAlice, 401},
		{"/message:send", tokDana, 401}, {"/zeta/message:send", tokDana, 400},
		{"/agents/zeta/message:send", tokDana, 404},
	} {
		if got := rest(c.path, c.token); got != c.want {
			t.Errorf("HTTP+JSON %s: %d, want %d", c.path, got, c.want)
		}
	}

	// gRPC routes by the request's tenant.
	cl := e.grpc.client(t)
	send := func(token, tenant string) error {
		ctx, cancel := grpcContext(token, nil)
		defer cancel()
		_, err := cl.SendMessage(ctx, &a2apb.SendMessageRequest{Tenant: tenant, Message: &a2apb.Message{
			MessageId: a2a.NewID(), Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "over grpc"}}}}})
		return err
	}
	before := len(e.betaExec.turnTexts())
	if err := send(tokDana, "beta"); err != nil {
		t.Errorf("gRPC, dana naming beta: %v", err)
	}
	if got := e.betaExec.turnTexts(); len(got) != before+1 || got[len(got)-1] != "over grpc" {
		t.Errorf("gRPC with tenant beta did not reach beta: %v", got)
	}
	for _, c := range []struct{ token, tenant string }{{tokDana, ""}, {tokAlice, "beta"}, {tokDana, "main"}} {
		err := send(c.token, c.tenant)
		if st, _ := status.FromError(err); err == nil || st.Code() != codes.Unauthenticated {
			t.Errorf("gRPC with tenant %q and another agent's token: %v, want Unauthenticated", c.tenant, err)
		}
	}
	if err := send(tokAlice, "zeta"); err == nil || grpcError(t, err).Code != a2a.CodeInvalidParams {
		t.Errorf("gRPC with an unknown tenant: %v, want invalid params", err)
	}
}

// TestOneAgentIgnoresTenants: a server without AgentOptions (a host
// without agents) ignores tenants and serves no /agents/ paths, as
// before contract 1.4.
func TestOneAgentIgnoresTenants(t *testing.T) {
	e := newEnv(t)
	if r := e.rpc(tokAlice, "SendMessage", msgParams("hi", map[string]any{"tenant": "anything"})); r.err != nil {
		t.Errorf("a tenant at a one-agent server: %v", r.err)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/agents/main/.well-known/agent-card.json", nil)
	if status, _, _ := e.do(req, "", nil); status != http.StatusNotFound {
		t.Errorf("/agents/ at a one-agent server: %d, want 404", status)
	}
	// The HTTP+JSON /{tenant}/ prefix is ignored whatever it says, "agents"
	// too.
	body := mustJSON(msgParams("over rest with a tenant", nil))
	for _, tenant := range []string{"agents", "acme"} {
		req, _ = http.NewRequest(http.MethodPost, e.url+"/"+tenant+"/message:send", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/a2a+json")
		if status, _, b := e.do(req, tokAlice, nil); status != http.StatusOK {
			t.Errorf("POST /%s/message:send at a one-agent server: %d %s, want 200 as before contract 1.4", tenant, status, b)
		}
	}
}

// TestAgentsRateLimitCountsOnlyTheNamedAgentsRequests: requests that name
// beta by tenant at the root URL are beta's; they do not spend the
// default agent's rate limit (so beta's traffic by tenant neither
// throttles main's callers nor is refused by main's limit).
func TestAgentsRateLimitCountsOnlyTheNamedAgentsRequests(t *testing.T) {
	e := newRateEnv(t, 3, 100, true)
	for i := 0; i < 5; i++ {
		r := e.rpcAt("/", tokAlice, "SendMessage", msgParams("to beta by tenant", map[string]any{"tenant": "beta"}))
		if r.status != http.StatusOK || r.err != nil {
			t.Fatalf("request %d to beta by tenant (beta allows 100/min): HTTP %d %v; main's limit of 3/min was applied", i+1, r.status, r.err)
		}
	}
	// main's own budget is untouched by beta's traffic, and still applies.
	for i := 0; i < 3; i++ {
		if r := e.rpcAt("/", tokAlice, "SendMessage", msgParams("to main", nil)); r.status != http.StatusOK || r.err != nil {
			t.Fatalf("alice's request %d to main after 5 to beta: HTTP %d %v, want served (main's limit is 3/min)", i+1, r.status, r.err)
		}
	}
	if r := e.rpcAt("/", tokAlice, "SendMessage", msgParams("to main", nil)); r.status != http.StatusTooManyRequests {
		t.Errorf("alice's 4th request to main: HTTP %d, want 429 (main's limit is 3/min)", r.status)
	}
	// A malformed request at the root (its tenant never read) is still
	// counted by main's limit.
	e2 := newRateEnv(t, 1, 100, true)
	req, _ := http.NewRequest(http.MethodPost, e2.url+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod"}`))
	req.Header.Set("Content-Type", "application/json")
	e2.do(req, tokAlice, nil)
	if r := e2.rpcAt("/", tokAlice, "SendMessage", msgParams("to main", nil)); r.status != http.StatusTooManyRequests {
		t.Errorf("a send after a malformed request at a limit of 1/min: HTTP %d, want 429", r.status)
	}
}

// TestAgentsOtherAgentsCredentialAtRootIsNoFailedLogin: dana is only
// beta's peer. At the root URL with tenant beta her requests are beta's:
// the default agent does not count them as failed logins of her address
// (which would answer 429 once that bucket filled, and lock out every
// unauthenticated caller of that address at main).
func TestAgentsOtherAgentsCredentialAtRootIsNoFailedLogin(t *testing.T) {
	e := newRateEnv(t, 3, 100, false)
	for i := 0; i < 5; i++ {
		r := e.rpcAt("/", tokDana, "SendMessage", msgParams("to beta by tenant", map[string]any{"tenant": "beta"}))
		if r.status != http.StatusOK || r.err != nil {
			t.Fatalf("dana's request %d to beta by tenant at the root (beta allows 100/min): HTTP %d %v %s", i+1, r.status, r.err, r.body)
		}
	}
	// Without the tenant they are main's failed logins, counted as such.
	for i := 0; i < 3; i++ {
		if r := e.rpcAt("/", tokDana, "SendMessage", msgParams("to main", nil)); r.status != http.StatusUnauthorized {
			t.Fatalf("dana's request %d to main: HTTP %d, want 401", i+1, r.status)
		}
	}
	if r := e.rpcAt("/", tokDana, "SendMessage", msgParams("to main", nil)); r.status != http.StatusTooManyRequests {
		t.Errorf("dana's 4th failed login at main: HTTP %d, want 429 (main's limit is 3/min)", r.status)
	}
}

// TestAgentOptionsMistakes: bad agent ids and duplicates fail New with a
// message naming the agent.
func TestAgentOptionsMistakes(t *testing.T) {
	_, mgr := newInstantServer(t)
	for _, c := range []struct {
		def  string
		ids  []string
		want string
	}{
		{"", []string{"b"}, `default agent's id ""`},
		{"main", []string{"Bad Id"}, `agent id "Bad Id"`},
		{"main", []string{"b", "b"}, `agent "b" is configured twice`},
		{"main", []string{"main"}, `agent "main" is configured twice`},
	} {
		opts := Options{Tasks: mgr, AgentID: c.def}
		for _, id := range c.ids {
			opts.Agents = append(opts.Agents, AgentOptions{ID: id, Options: Options{Tasks: mgr}})
		}
		if _, err := New(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("agents %q/%v: %v, want an error with %s", c.def, c.ids, err, c.want)
		}
	}
}
