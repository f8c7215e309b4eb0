package app

// Several agents behind one plugin (contract 1.4): the host lists its
// agents in HostInfo.agents; the plugin serves those the configuration
// exposes, each with its own task manager over its view of the one store
// (store.ForAgent), its own bridge (which names the agent in every
// HandleMessage and CancelTurn, and keeps its own conversations), and its
// own card, tokens, policy, rate limit and loop guard on the one server.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/bridge"
	"github.com/a2a-plugin/a2a-plugin/internal/cluster"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/server"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// agentRun is one host agent the plugin serves, with what runs its tasks.
// A host without agents has one, with id "".
type agentRun struct {
	id   string
	info *pb.HostAgent // nil for a host without agents
	set  config.AgentSettings

	bridge *bridge.Bridge
	tasks  *tasks.Manager
}

// servedAgents are the host agents to serve, the default first: the one
// agent ("") of a host that declares none. A host's own mistakes (an id
// that is not one, twice the same id) fail Configure as the host's.
func servedAgents(cfg *config.Config, host *pb.HostInfo) ([]*agentRun, error) {
	declared := host.GetAgents()
	byID := make(map[string]*pb.HostAgent, len(declared))
	ids := make([]string, 0, len(declared))
	for i, ag := range declared {
		switch {
		case !config.ValidAgentID(ag.GetId()):
			return nil, fmt.Errorf("a2a plugin: the host's agent %d has id %q, which is no agent id (lower-case letters, digits, '-' and '_', at most 64): fix the host's agent list (HostInfo.agents)", i, ag.GetId())
		case byID[ag.GetId()] != nil:
			return nil, fmt.Errorf("a2a plugin: the host lists agent %q twice (HostInfo.agents): ids must be unique", ag.GetId())
		}
		byID[ag.GetId()] = ag
		ids = append(ids, ag.GetId())
	}
	serve, err := cfg.CheckHostAgents(ids)
	if err != nil {
		return nil, err
	}
	if len(serve) == 0 {
		return []*agentRun{{}}, nil
	}
	out := make([]*agentRun, 0, len(serve))
	for _, id := range serve {
		set := cfg.AgentSettings[id]
		if set.Policy != "" {
			if _, err := security.ParsePolicy(set.Policy); err != nil {
				return nil, fmt.Errorf("a2a plugin: agent_settings.%s (A2A_AGENT_SETTINGS): policy: %w", id, err)
			}
		}
		out = append(out, &agentRun{id: id, info: byID[id], set: set})
	}
	return out, nil
}

// agentServerOptions are base (the plugin-wide server options) made the
// agent's own: its card's name, description and skills, its tokens,
// trusted peers, policy and rate limit, a loop guard of its own, its task
// manager.
func (p *parts) agentServerOptions(base server.Options, ar *agentRun, host plugin.Host) (server.Options, error) {
	o := base
	o.Tasks = ar.tasks
	if ar.info == nil {
		return o, nil
	}
	cfg, set := p.cfg, ar.set
	o.Card.Name = firstOf(set.Name, ar.info.GetName(), cfg.AgentName)
	o.Card.Description = firstOf(set.Description, ar.info.GetDescription(), cfg.AgentDescription)
	if skills := ar.info.GetSkills(); len(skills) > 0 {
		fixed := make([]a2a.AgentSkill, 0, len(skills))
		for _, s := range skills {
			fixed = append(fixed, a2a.AgentSkill{ID: s.GetId(), Name: firstOf(s.GetName(), s.GetId()),
				Description: firstOf(s.GetDescription(), s.GetName(), s.GetId()), Tags: orTags(s.GetTags()), Examples: s.GetExamples()})
		}
		sort.Slice(fixed, func(i, j int) bool { return fixed[i].ID < fixed[j].ID })
		o.Skills = func(context.Context) ([]a2a.AgentSkill, error) { return fixed, nil }
	} else {
		o.Skills = hostSkills(host, cfg.AdvertisedToolsets)
	}
	where := fmt.Sprintf("agent_settings.%s (A2A_AGENT_SETTINGS)", ar.id)
	// Trusted peers are named by their tokens: an agent with tokens of
	// its own trusts only the peers it names itself.
	trusted := cfg.TrustedPeers
	if set.OwnTokens() {
		trusted = nil
	}
	if set.TrustedPeers != nil {
		trusted = set.TrustedPeers
	}
	var errs []error
	// An agent with tokens of its own admits the plugin's OAuth tokens
	// only when its settings say so (AdmitsOAuth).
	oauth := p.oauth
	if !set.AdmitsOAuth() {
		oauth = nil
	}
	if oauth != nil && set.OAuth.Limited() {
		// Its own issuers or audience: a token minted for another agent
		// does not work here.
		view, err := oauth.ForAgent(set.OAuth.Issuers, set.OAuth.Audience)
		if err != nil {
			return o, fmt.Errorf("%s: oauth: %w", where, err)
		}
		oauth = view
	}
	if set.OwnTokens() || set.TrustedPeers != nil || oauth != p.oauth {
		bearer, peers := cfg.BearerToken, cfg.PeerTokens
		if set.OwnTokens() {
			bearer, peers = set.BearerToken, set.PeerTokens
		}
		auth, err := security.NewAuthenticator(security.AuthConfig{
			BearerToken: bearer, PeerTokens: peers, TrustedPeers: trusted,
			LoopbackIsLocal: cfg.LoopbackIsLocal, OAuth: oauth,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
		o.Auth = auth
		o.Gate = nil
		if len(trusted) > 0 {
			gate, err := security.NewTrustGate(append([]string{"local:*"}, trusted...))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: trusted_peers: %w", where, err))
			}
			if oauth != nil && gate != nil {
				gate = gate.WithMinTier(security.TierTrusted)
			}
			o.Gate = gate
		}
	}
	if set.Policy != "" {
		pol, err := security.ParsePolicy(set.Policy)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: policy: %w", where, err))
		}
		o.Policy = pol
	}
	rate := cfg.RateLimit
	if set.RateLimit != nil {
		rate = *set.RateLimit
	}
	// Every agent counts its own callers' requests.
	o.RateLimit = security.NewRateLimiter(rate, nil)
	o.Turns = security.NewTurnGuard(cfg.MaxPingPongTurns)
	return o, errors.Join(errs...)
}

// firstOf is the first non-empty string.
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// buildAgents builds, for every served agent, its bridge and its task
// manager over its view of the store.
//
// With replicas on PostgreSQL (cl set) every agent's manager runs on the
// one cluster, through the agent's view of it (cluster.ForAgent).
func (a *App) buildAgents(agents []*agentRun, host plugin.Host, st store.Store, cl *cluster.Cluster, topts tasks.Options, p *parts) error {
	for _, ar := range agents {
		log := a.log
		if ar.id != "" {
			log = log.With("agent", ar.id)
		}
		br, err := bridge.New(bridge.Options{Host: host, Agent: ar.id, Logger: log.Named("bridge"), Observer: p.bridgeObserver(), Tracer: p.tracer})
		if err != nil {
			return err
		}
		o := topts
		o.Store, o.Executor, o.Logger = store.ForAgent(st, ar.id), br, log.Named("tasks")
		if cl != nil {
			o.Cluster = cl.ForAgent(ar.id)
		}
		mgr, err := tasks.NewManager(o)
		if err != nil {
			return err
		}
		ar.bridge, ar.tasks = br, mgr
	}
	return nil
}

// startAgents starts every agent's task manager (failing what its
// previous run left running) and returns how many tasks were failed in
// all.
func startAgents(ctx context.Context, agents []*agentRun, undo *undoList) (int, error) {
	failed := 0
	for _, ar := range agents {
		n, err := ar.tasks.Start(ctx) // with a cluster, also runs it
		if err != nil {
			return failed, err
		}
		undo.add(ar.tasks.Close)
		failed += n
	}
	return failed, nil
}

// agentFor returns the served agent of id, or, for "" with several, the
// default agent; ok is false for an agent not served. A host that declares
// no agents has one, whatever id it sends.
func (a *App) agentFor(id string) (*agentRun, bool) {
	if id == "" || a.agents[0].id == "" {
		return a.agents[0], true
	}
	for _, ar := range a.agents {
		if ar.id == id {
			return ar, true
		}
	}
	return nil, false
}

// agentOfOutput returns the agent a Send or ProcessingComplete is for: the
// one it names, else the one whose manager holds the task it answers (a
// host that does not echo agent_id), else the one the store keeps it with,
// else the default agent (whose manager then says the task is unknown).
func (a *App) agentOfOutput(ctx context.Context, agentID, taskID string) (*agentRun, error) {
	if agentID != "" {
		ar, ok := a.agentFor(agentID)
		if !ok {
			return nil, plugin.Mark(plugin.ErrInvalidArgument, fmt.Errorf("agent_id %q is not an agent this platform serves (%s)", agentID, a.agentIDs()))
		}
		return ar, nil
	}
	if len(a.agents) > 1 && taskID != "" {
		for _, ar := range a.agents {
			if ar.tasks.Holds(taskID) {
				return ar, nil
			}
		}
		if rec, err := a.store.GetTask(ctx, taskID, ""); err == nil {
			if ar, ok := a.agentFor(rec.Agent); ok && rec.Agent != "" {
				return ar, nil
			}
		}
	}
	return a.agents[0], nil
}

// agentIDs lists the served agents' ids.
func (a *App) agentIDs() string {
	ids := make([]string, 0, len(a.agents))
	for _, ar := range a.agents {
		ids = append(ids, ar.id)
	}
	return strings.Join(ids, ", ")
}
