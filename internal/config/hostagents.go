package config

// The settings of a host with several agents (contract 1.4): which of the
// host's agents the plugin serves, which one is at the root URL, and each
// agent's own name, description, tokens and policy. The host declares its
// agents only at Configure, so Validate checks what it can alone and
// CheckHostAgents the rest against the host's list.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// AgentSettings are one host agent's own settings (agent_settings); an
// unset field takes the plugin-wide setting, except the tokens: an agent
// with bearer_token or peer_tokens of its own admits only those (and
// trusts only the trusted_peers it names itself), one without admits the
// plugin-wide tokens.
type AgentSettings struct {
	// Name and Description of the agent's card (default: the host's name
	// and description of the agent, else agent_name and agent_description).
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// BearerToken and PeerTokens as the plugin-wide bearer_token and
	// peer_tokens, for this agent only.
	BearerToken string            `json:"bearer_token,omitempty"`
	PeerTokens  map[string]string `json:"peer_tokens,omitempty"`
	// TrustedPeers, Policy and RateLimit as trusted_peers, policy and
	// rate_limit (nil RateLimit: the plugin-wide one).
	TrustedPeers []string `json:"trusted_peers,omitempty"`
	Policy       string   `json:"policy,omitempty"`
	RateLimit    *int     `json:"rate_limit,omitempty"`
	// OAuth says whether the agent admits the OAuth access tokens of
	// oauth_issuers. nil: an agent with tokens of its own admits none (it
	// admits only its own tokens), one without admits them as the plugin
	// does.
	OAuth *bool `json:"oauth,omitempty"`
}

// AdmitsOAuth reports whether the agent admits the plugin's OAuth access
// tokens (see OAuth).
func (a AgentSettings) AdmitsOAuth() bool {
	if a.OAuth != nil {
		return *a.OAuth
	}
	return !a.OwnTokens()
}

// agentTokens reports whether some host agent has tokens of its own (then
// CheckHostAgents requires a token of every agent served beyond loopback).
func (c *Config) agentTokens() bool {
	for _, a := range c.AgentSettings {
		if a.OwnTokens() {
			return true
		}
	}
	return false
}

// OwnTokens reports whether the agent admits tokens of its own.
func (a AgentSettings) OwnTokens() bool { return a.BearerToken != "" || len(a.PeerTokens) > 0 }

// hostAgentIDRe is what a host agent's id may be; the server routes by
// the same rule (server.ValidAgentID calls ValidAgentID).
var hostAgentIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidAgentID reports whether id can name a host agent: lower-case
// letters, digits, '-' and '_', starting with a letter or digit, at most
// 64 characters (it is a URL path segment and a gRPC tenant).
func ValidAgentID(id string) bool { return hostAgentIDRe.MatchString(id) }

// decodeAgentSettings reads agent_settings strictly: a misspelled key is
// an error, not a setting silently dropped (a token, a policy).
func decodeAgentSettings(b []byte) (map[string]AgentSettings, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m map[string]AgentSettings
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("want a JSON object of agent ids to {name, description, bearer_token, peer_tokens, trusted_peers, policy, rate_limit}: %v", err)
	}
	return m, nil
}

// UnmarshalJSON decodes one agent's settings strictly (see
// decodeAgentSettings).
func (a *AgentSettings) UnmarshalJSON(b []byte) error {
	type plain AgentSettings
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("an agent's settings are {name, description, bearer_token, peer_tokens, trusted_peers, policy, rate_limit}: %v", err)
	}
	*a = AgentSettings(p)
	return nil
}

// validateHostAgents checks the host-agent settings on their own.
func (c *Config) validateHostAgents(bad func(string, ...any)) {
	for _, id := range c.ExposeAgents {
		if !ValidAgentID(id) {
			bad("expose_agents names %q, which is no agent id (lower-case letters, digits, '-' and '_'; A2A_EXPOSE_AGENTS)", id)
		}
	}
	if c.DefaultAgent != "" && !ValidAgentID(c.DefaultAgent) {
		bad("default_agent %q is no agent id (lower-case letters, digits, '-' and '_'; A2A_DEFAULT_AGENT)", c.DefaultAgent)
	}
	if c.DefaultAgent != "" && len(c.ExposeAgents) > 0 && !contains(c.ExposeAgents, c.DefaultAgent) {
		bad("default_agent %q is not in expose_agents (%s): the agent at the root URL must be served (A2A_DEFAULT_AGENT, A2A_EXPOSE_AGENTS)", c.DefaultAgent, strings.Join(c.ExposeAgents, ", "))
	}
	ids := make([]string, 0, len(c.AgentSettings))
	for id := range c.AgentSettings {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := c.AgentSettings[id]
		where := fmt.Sprintf("agent_settings.%s (A2A_AGENT_SETTINGS)", id)
		if !ValidAgentID(id) {
			bad("agent_settings names %q, which is no agent id (lower-case letters, digits, '-' and '_'; A2A_AGENT_SETTINGS)", id)
			continue
		}
		if len(c.ExposeAgents) > 0 && !contains(c.ExposeAgents, id) {
			bad("%s: agent %q is not in expose_agents (%s); add it there or remove its settings", where, id, strings.Join(c.ExposeAgents, ", "))
		}
		for name := range a.PeerTokens {
			if strings.ContainsAny(name, " :,") {
				bad("%s: peer token name %q must not contain spaces, colons or commas", where, name)
			}
		}
		for _, tp := range a.TrustedPeers {
			if _, ok := a.PeerTokens[tp]; !ok {
				if _, global := c.PeerTokens[tp]; a.OwnTokens() || !global {
					bad("%s: trusted peer %q has no token in the agent's peer_tokens%s; trusted peers are named by their token", where, tp, map[bool]string{false: " or the plugin-wide peer_tokens"}[a.OwnTokens()])
				}
			}
		}
		if a.RateLimit != nil && *a.RateLimit < 0 {
			bad("%s: rate_limit must not be negative (0 means unlimited)", where)
		}
	}
}

// CheckHostAgents checks the host-agent settings against the agents the
// host declared (HostInfo.agents, in its order) and returns the ids to
// serve, the default first. A host that declares none is one agent: it
// returns nil, and any host-agent setting is an error.
func (c *Config) CheckHostAgents(declared []string) ([]string, error) {
	if len(declared) == 0 {
		var set []string
		if len(c.ExposeAgents) > 0 {
			set = append(set, "expose_agents (A2A_EXPOSE_AGENTS)")
		}
		if c.DefaultAgent != "" {
			set = append(set, "default_agent (A2A_DEFAULT_AGENT)")
		}
		if len(c.AgentSettings) > 0 {
			set = append(set, "agent_settings (A2A_AGENT_SETTINGS)")
		}
		if len(set) > 0 {
			return nil, fmt.Errorf("config: %s: the host declares no agents (it runs one agent, or speaks a contract older than 1.4), so there is nothing to choose; remove the setting, or configure the agent with the plugin-wide settings", strings.Join(set, ", "))
		}
		return nil, nil
	}
	have := strings.Join(declared, ", ")
	var serve []string
	if len(c.ExposeAgents) == 0 {
		serve = append(serve, declared...)
	} else {
		for _, id := range c.ExposeAgents {
			if !contains(declared, id) {
				return nil, fmt.Errorf("config: expose_agents (A2A_EXPOSE_AGENTS) names %q, but the host has no such agent; its agents are %s", id, have)
			}
			if !contains(serve, id) {
				serve = append(serve, id)
			}
		}
	}
	for id := range c.AgentSettings {
		if !contains(declared, id) {
			return nil, fmt.Errorf("config: agent_settings (A2A_AGENT_SETTINGS) has settings for %q, but the host has no such agent; its agents are %s", id, have)
		}
	}
	def := serve[0]
	if c.DefaultAgent != "" {
		if !contains(declared, c.DefaultAgent) {
			return nil, fmt.Errorf("config: default_agent (A2A_DEFAULT_AGENT) is %q, but the host has no such agent; its agents are %s", c.DefaultAgent, have)
		}
		if !contains(serve, c.DefaultAgent) {
			return nil, fmt.Errorf("config: default_agent (A2A_DEFAULT_AGENT) %q is not served: add it to expose_agents (A2A_EXPOSE_AGENTS: %s)", c.DefaultAgent, strings.Join(serve, ", "))
		}
		def = c.DefaultAgent
	}
	out := []string{def}
	for _, id := range serve {
		if id != def {
			out = append(out, id)
		}
	}
	if !isLoopbackHost(c.Host) {
		for _, id := range out {
			if !c.HasToken() && !c.AgentSettings[id].OwnTokens() {
				return nil, fmt.Errorf("config: host %q exposes agent %q beyond this machine, but it has no token: set its bearer_token or peer_tokens in agent_settings (A2A_AGENT_SETTINGS), or the plugin-wide A2A_BEARER_TOKEN, A2A_PEER_TOKENS or A2A_OAUTH_ISSUERS, or bind 127.0.0.1", c.Host, id)
			}
		}
	}
	return out, nil
}
