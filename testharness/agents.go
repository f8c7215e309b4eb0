package testharness

import (
	"context"
	"fmt"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// HostAgent is one agent of a simulated host that runs several (contract
// 1.4, HostInfo.agents): the plugin serves each as its own A2A agent and
// names it in every HandleMessage, and the host plays the turn with that
// agent's behavior.
type HostAgent struct {
	// ID is the agent's id (lower-case letters, digits, '-' and '_').
	ID string
	// Name, Description and Skills describe it to the plugin (its Agent
	// Card).
	Name, Description string
	Skills            []*pb.AgentSkill
	// Agent is what this agent does; nil: the host's Options.Agent.
	Agent Behavior
}

// hostAgentsInfo is the HostInfo.agents of agents.
func hostAgentsInfo(agents []HostAgent) []*pb.HostAgent {
	out := make([]*pb.HostAgent, 0, len(agents))
	for _, a := range agents {
		out = append(out, &pb.HostAgent{Id: a.ID, Name: a.Name, Description: a.Description, Skills: a.Skills})
	}
	return out
}

// AgentRouter plays each turn with the behavior of the host agent it is
// for (HandleMessageRequest.agent_id), and the turns of any other agent
// (or of none) with Default.
type AgentRouter struct {
	Default Behavior
	ByAgent map[string]Behavior
}

// NewAgentRouter routes the turns of agents to their behaviors, the others
// to def.
func NewAgentRouter(def Behavior, agents []HostAgent) *AgentRouter {
	r := &AgentRouter{Default: def, ByAgent: map[string]Behavior{}}
	for _, a := range agents {
		if a.Agent != nil {
			r.ByAgent[a.ID] = a.Agent
		}
	}
	return r
}

// Play implements Behavior.
func (r *AgentRouter) Play(ctx context.Context, t *Turn) error {
	if b, ok := r.ByAgent[t.Request.GetAgentId()]; ok {
		return b.Play(ctx, t)
	}
	if r.Default == nil {
		return fmt.Errorf("no behavior for agent %q", t.Request.GetAgentId())
	}
	return r.Default.Play(ctx, t)
}

// HostTools implements ToolLister with the default behavior's tools.
func (r *AgentRouter) HostTools() []*pb.ToolDefinition {
	if tl, ok := r.Default.(ToolLister); ok {
		return tl.HostTools()
	}
	return nil
}
