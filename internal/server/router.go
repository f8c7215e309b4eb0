package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// AgentOptions is one more agent a server serves beside the default agent
// of Options (contract 1.4: a host with several agents). Its Options are
// the agent's own — Tasks (its task manager), Skills, Card, Auth, Policy,
// Gate, RateLimit, RateLimitLocal, Turns, MaxDelegationDepth, Push, and
// Extra (operator routes whose patterns are under /agents/{id}/, e.g. its
// inspector) — and the server's for the rest: Limits, Streams, Audit,
// Observer, Tracer, DisableGRPC, Logger and Now are taken from the
// server's Options whatever they say here.
type AgentOptions struct {
	// ID is the agent's id: its path /agents/{id}/ and its tenant.
	ID      string
	Options Options
}

// ValidAgentID reports whether id can name an agent. The rule is the
// configuration's (config.ValidAgentID), one rule for the ids a host
// declares and the ids the server routes: an id appears in paths and gRPC
// tenants unescaped.
func ValidAgentID(id string) bool { return config.ValidAgentID(id) }

// site is one agent as the server serves it: its options, its pipeline
// (over its own service) and its card.
type site struct {
	// id is the agent's id; "" for the one agent of a host without agents.
	id string
	// prefix is where its endpoints live: "" for the default agent (the
	// root), "/agents/{id}" for the others.
	prefix string
	opts   Options
	pipe   *pipeline
	card   *cardHandler
	// extra serves the agent's operator routes (AgentOptions.Options.Extra,
	// patterns under the agent's path, e.g. GET /agents/{id}/inspector/);
	// nil when it has none.
	extra *http.ServeMux
}

// router is the Handler the bindings use: it sends each exchange to its
// agent's pipeline. The agent is the one a path names (/agents/{id}/…,
// the HTTP+JSON /{tenant}/ prefix), else the one the request's tenant
// field names, else the default agent. A request at the root URL is
// authenticated by the default agent, or — when its credential is not the
// default agent's but another agent's — provisionally, until its tenant
// names that agent; no rate limit counts it until its tenant is read.
// The named agent then authenticates, rate-limits and authorizes it as if
// it had come in on its own URL; only that agent's limit counts it. With one agent the
// router is that agent's pipeline, and a tenant is ignored as it always
// was.
type router struct {
	def   *site
	sites map[string]*site
	// ids are the agents' ids in the order configured (for messages).
	ids []string
}

var _ Handler = (*router)(nil)

func (rt *router) multi() bool { return len(rt.sites) > 0 }

// Admit implements Handler. An exchange at the root URL of a server with
// several agents is authenticated by the default agent but not counted
// by its rate limit yet: its agent, and so whose limit it spends, is
// settled by its tenant (route).
func (rt *router) Admit(ctx context.Context, peer Peer) (context.Context, *Call, error) {
	if !rt.multi() {
		ctx, c, err := rt.def.pipe.Admit(ctx, peer)
		c.site, c.routed = rt.def, true
		return ctx, c, err
	}
	if peer.Tenant != "" {
		s := rt.sites[peer.Tenant]
		if s == nil {
			// The HTTP+JSON /{tenant}/ prefix of an agent this server
			// does not serve (paths under /agents/ are checked first).
			ctx, c := rt.def.pipe.begin(ctx, peer)
			c.site, c.routed = rt.def, true
			r := refusal(rt.errNoAgent(peer.Tenant))
			c.Refused(r)
			return ctx, c, r
		}
		ctx, c, err := s.pipe.Admit(ctx, peer)
		c.site, c.routed = s, true
		return ctx, c, err
	}
	ctx, c := rt.def.pipe.begin(ctx, peer)
	c.site = rt.def
	r := rt.def.pipe.authenticate(ctx, c)
	switch {
	case r == nil:
		c.uncharged = true
		return ctx, c, nil
	case r.Status == http.StatusUnauthorized && rt.otherAgentAccepts(ctx, peer):
		// The credential is another agent's: the request may name it
		// with its tenant. Refused there unless it does; not a failed
		// login until then.
		c.deferred, c.uncharged = r, true
		return ctx, c, nil
	}
	r = rt.def.pipe.charge(c, r)
	c.Refused(r)
	return ctx, c, r
}

// otherAgentAccepts reports whether an agent other than the default one
// would admit the credentials of peer.
func (rt *router) otherAgentAccepts(ctx context.Context, peer Peer) bool {
	for _, id := range rt.ids {
		s := rt.sites[id]
		if s == rt.def {
			continue
		}
		ident, err := s.opts.Auth.AuthenticateCredentials(ctx, peer.RemoteAddr, peer.Authorization)
		if err == nil && s.opts.Auth.Admit(ident) == nil {
			return true
		}
	}
	return false
}

// route settles the agent of an exchange admitted at the root URL once
// its tenant is known (operations call it with their request's tenant;
// the JSON-RPC and gRPC bindings call it as soon as they read it). An
// exchange whose agent a path named refuses a tenant naming another.
func (rt *router) route(ctx context.Context, c *Call, tenant string) error {
	if c.routed {
		if tenant != "" && rt.multi() && tenant != c.site.id {
			e := a2a.ErrInvalidParams("tenant", fmt.Sprintf("tenant %q does not name the agent of this endpoint (%q): omit the tenant, or send the request to the endpoint of agent %q", tenant, c.site.id, tenant))
			r := refusal(e)
			c.Refused(r)
			return r
		}
		return nil
	}
	c.routed = true
	target := rt.def
	if tenant != "" {
		if target = rt.sites[tenant]; target == nil {
			r := refusal(rt.errNoAgent(tenant))
			c.Refused(r)
			return r
		}
	}
	if target == c.site {
		// The default agent's: its rate limit counts it now (a deferred
		// credential as the failed login it is there).
		r := c.site.pipe.charge(c, c.deferred)
		c.deferred, c.uncharged = nil, false
		if r != nil {
			c.Refused(r)
			return r
		}
		return nil
	}
	// Authenticated by the default agent (or provisionally), counted by
	// no agent yet: the named agent admits it again, with its own
	// credentials and rate limit.
	c.site, c.deferred, c.uncharged, c.authorized, c.Activated = target, nil, false, false, nil
	if r := target.pipe.admit(ctx, c); r != nil {
		c.Refused(r)
		return r
	}
	return nil
}

// errNoAgent is the error for a tenant that names no agent served here.
func (rt *router) errNoAgent(tenant string) *a2a.Error {
	ids := append([]string(nil), rt.ids...)
	sort.Strings(ids)
	return a2a.ErrInvalidParams("tenant", fmt.Sprintf("tenant %q names no agent of this server: use one of %s, or omit the tenant for the default agent %q",
		shortTenant(tenant), strings.Join(ids, ", "), rt.def.id))
}

// shortTenant bounds a caller's tenant quoted in an error.
func shortTenant(t string) string {
	if len(t) > 64 {
		return t[:64] + "…"
	}
	return t
}

// routeTenant is what a binding calls once it can read the request's
// tenant. tenant is called only when the server has several agents: with
// one, a tenant is ignored and reading it (a decode of the JSON-RPC
// params) would be work on every request for nothing.
func routeTenant(ctx context.Context, h Handler, c *Call, tenant func() string) error {
	if rt, ok := h.(*router); ok && rt.multi() {
		return rt.route(ctx, c, tenant())
	}
	return nil
}

// paramsTenant reads the tenant of JSON-RPC params ("" when there is none
// or the params are no object; decoding them later reports what is
// wrong).
func paramsTenant(params json.RawMessage) string {
	if len(params) == 0 || params[0] != '{' {
		return ""
	}
	var p struct {
		Tenant string `json:"tenant"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Tenant
}

// Authorize implements Handler. An exchange whose agent is not settled yet
// is authorized by its operation, once its tenant is known.
func (rt *router) Authorize(ctx context.Context, c *Call) error {
	if !c.routed {
		return nil
	}
	return c.site.pipe.Authorize(ctx, c)
}

// Finish implements Handler.
func (rt *router) Finish(c *Call) {
	s := c.site
	if s == nil {
		s = rt.def
	}
	if c.uncharged {
		// Answered before its tenant was read (a malformed request): the
		// default agent's rate limit still counts it.
		s.pipe.charge(c, c.deferred)
		c.uncharged = false
	}
	s.pipe.Finish(c)
}

// in routes c by tenant and returns the pipeline of its agent.
func (rt *router) in(ctx context.Context, c *Call, tenant string) (*pipeline, error) {
	if err := rt.route(ctx, c, tenant); err != nil {
		return nil, err
	}
	return c.site.pipe, nil
}

func (rt *router) SendMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.SendMessage(ctx, c, req)
}

func (rt *router) SendStreamingMessage(ctx context.Context, c *Call, req *a2a.SendMessageRequest) (*Stream, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.SendStreamingMessage(ctx, c, req)
}

func (rt *router) GetTask(ctx context.Context, c *Call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.GetTask(ctx, c, req)
}

func (rt *router) ListTasks(ctx context.Context, c *Call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.ListTasks(ctx, c, req)
}

func (rt *router) CancelTask(ctx context.Context, c *Call, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.CancelTask(ctx, c, req)
}

func (rt *router) SubscribeToTask(ctx context.Context, c *Call, req *a2a.SubscribeToTaskRequest) (*Stream, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.SubscribeToTask(ctx, c, req)
}

func (rt *router) CreateTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.CreateTaskPushNotificationConfig(ctx, c, req)
}

func (rt *router) GetTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.GetTaskPushNotificationConfig(ctx, c, req)
}

func (rt *router) ListTaskPushNotificationConfigs(ctx context.Context, c *Call, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.ListTaskPushNotificationConfigs(ctx, c, req)
}

func (rt *router) DeleteTaskPushNotificationConfig(ctx context.Context, c *Call, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return err
	}
	return p.DeleteTaskPushNotificationConfig(ctx, c, req)
}

func (rt *router) GetExtendedAgentCard(ctx context.Context, c *Call, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	p, err := rt.in(ctx, c, req.Tenant)
	if err != nil {
		return nil, err
	}
	return p.GetExtendedAgentCard(ctx, c, req)
}

// hasPattern reports whether mux has a route for r.
func hasPattern(mux *http.ServeMux, r *http.Request) bool {
	_, pattern := mux.Handler(r)
	return pattern != ""
}

// agentPathKey carries the agent an /agents/{id}/ path named into the
// bindings (httpBinding.peer).
type agentPathKey struct{}

// serveAgentPath serves /agents/{agent} and everything under it (with
// several agents): an agent this server does not serve is an unknown path
// (404 before authentication, as unknown paths always are); otherwise the path
// is the agent's own root — its card, its JSON-RPC endpoint, its
// HTTP+JSON routes — with the agent carried to the binding.
func (s *Server) serveAgentPath(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("agent")
	st := s.router.sites[id]
	if st == nil {
		e := a2a.ErrMethodNotFound(r.Method + " " + r.URL.Path)
		e.Message = fmt.Sprintf("No agent %q is served here: an agent's endpoints are under /agents/{id}/, with the id its card's interface URLs name", shortTenant(id))
		writeStatusError(w, restContentType(r), http.StatusNotFound, e)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, "/agents/"+id)
	r2 := r.Clone(context.WithValue(r.Context(), agentPathKey{}, id))
	r2.URL.Path = rest
	if r.URL.RawPath != "" {
		r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, "/agents/"+id)
	}
	switch {
	case rest == "" || rest == "/" || rest == "/a2a" || rest == "/rpc":
		if r.Method != http.MethodPost {
			restRouteMiss(w, r, http.MethodPost)
			return
		}
		r2.URL.Path = "/"
		s.rpc.ServeHTTP(w, r2)
	case st.extra != nil && hasPattern(st.extra, r):
		st.extra.ServeHTTP(w, r)
	case rest == "/.well-known/agent-card.json" || rest == legacyCardPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "the agent card takes GET", http.StatusMethodNotAllowed)
			return
		}
		st.card.ServeHTTP(w, r2)
	default:
		s.rest.ServeHTTP(w, r2)
	}
}
