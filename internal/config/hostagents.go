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
	// oauth_issuers (true or false), or which of them and for which
	// audience ({"issuers": [...], "audience": "..."}). nil: an agent with
	// tokens of its own admits none (it admits only its own tokens), one
	// without admits them as the plugin does.
	OAuth *AgentOAuth `json:"oauth,omitempty"`
}

// AgentOAuth is an agent's oauth setting: true or false, or an object
// that admits OAuth tokens with limits of the agent's own.
type AgentOAuth struct {
	// Admit: the agent admits OAuth access tokens (true for an object).
	Admit bool
	// Issuers names the oauth_issuers whose tokens the agent admits (by
	// their name); empty: all of them.
	Issuers []string
	// Audience is the aud the tokens must carry for this agent instead of
	// each issuer's audience ("": the issuer's), so that a token minted
	// for one agent does not work on another.
	Audience string
}

// agentOAuthObject is the object form of AgentOAuth.
type agentOAuthObject struct {
	Issuers  []string `json:"issuers,omitempty"`
	Audience string   `json:"audience,omitempty"`
}

// UnmarshalJSON reads true, false or {"issuers": [...], "audience": "..."}
// (strictly: another key is an error).
func (o *AgentOAuth) UnmarshalJSON(b []byte) error {
	switch t := string(bytes.TrimSpace(b)); t {
	case "true", "false":
		*o = AgentOAuth{Admit: t == "true"}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var obj agentOAuthObject
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf(`oauth is true, false or {"issuers": [names of oauth_issuers], "audience": "the aud of this agent's tokens"}: %v`, err)
	}
	*o = AgentOAuth{Admit: true, Issuers: obj.Issuers, Audience: obj.Audience}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (o AgentOAuth) MarshalJSON() ([]byte, error) {
	if len(o.Issuers) == 0 && o.Audience == "" {
		return json.Marshal(o.Admit)
	}
	return json.Marshal(agentOAuthObject{Issuers: o.Issuers, Audience: o.Audience})
}

// Limited reports whether the setting narrows the plugin's OAuth for the
// agent (issuers or audience of its own).
func (o *AgentOAuth) Limited() bool { return o != nil && (len(o.Issuers) > 0 || o.Audience != "") }

// AdmitsOAuth reports whether the agent admits the plugin's OAuth access
// tokens (see OAuth).
func (a AgentSettings) AdmitsOAuth() bool {
	if a.OAuth != nil {
		return a.OAuth.Admit
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
		return nil, fmt.Errorf("want a JSON object of agent ids to {name, description, bearer_token, peer_tokens, trusted_peers, policy, rate_limit, oauth}: %v", err)
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
		return fmt.Errorf("an agent's settings are {name, description, bearer_token, peer_tokens, trusted_peers, policy, rate_limit, oauth}: %v", err)
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
		c.validateAgentOAuth(where, a.OAuth, bad)
	}
}

// validateAgentOAuth checks an agent's oauth object against
// oauth_issuers: it names issuers that exist, and an audience that is
// not blank.
func (c *Config) validateAgentOAuth(where string, o *AgentOAuth, bad func(string, ...any)) {
	if !o.Limited() {
		return
	}
	if len(c.OAuthIssuers) == 0 {
		bad("%s: oauth names issuers or an audience, but no oauth_issuers are configured (A2A_OAUTH_ISSUERS); configure the issuers plugin-wide, then narrow them per agent", where)
		return
	}
	var names []string
	for _, is := range c.OAuthIssuers {
		names = append(names, is.IssuerName())
	}
	seen := map[string]bool{}
	for _, n := range o.Issuers {
		if !contains(names, n) {
			bad("%s: oauth.issuers names %q, which is not one of oauth_issuers (%s); name issuers by their name", where, n, strings.Join(names, ", "))
		}
		if seen[n] {
			bad("%s: oauth.issuers names %q twice", where, n)
		}
		seen[n] = true
	}
	if o.Audience != "" && strings.TrimSpace(o.Audience) != o.Audience {
		bad("%s: oauth.audience %q has spaces around it; set it to the exact aud the issuer puts into tokens for this agent", where, o.Audience)
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
