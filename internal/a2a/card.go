package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// AgentCard is an agent's self-description, served at
// /.well-known/agent-card.json and by GetExtendedAgentCard.
type AgentCard struct {
	// Name is the agent's human-readable name.
	Name string `json:"name"`
	// Description says what the agent does.
	Description string `json:"description"`
	// SupportedInterfaces lists the endpoints, the first preferred.
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces,omitempty"`
	// Provider is the organisation running the agent.
	Provider *AgentProvider `json:"provider,omitempty"`
	// Version is the agent's own version (not the protocol's).
	Version string `json:"version"`
	// DocumentationURL points at documentation for the agent.
	DocumentationURL string `json:"documentationUrl,omitempty"`
	// Capabilities lists the optional protocol features the agent supports.
	Capabilities AgentCapabilities `json:"capabilities"`
	// SecuritySchemes maps scheme names to schemes.
	SecuritySchemes map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	// SecurityRequirements lists acceptable scheme combinations (OR).
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
	// DefaultInputModes lists the media types the agent accepts.
	DefaultInputModes []string `json:"defaultInputModes,omitempty"`
	// DefaultOutputModes lists the media types the agent produces.
	DefaultOutputModes []string `json:"defaultOutputModes,omitempty"`
	// Skills lists what the agent can do.
	Skills []AgentSkill `json:"skills,omitempty"`
	// Signatures are JWS signatures over the card.
	Signatures []AgentCardSignature `json:"signatures,omitempty"`
	// IconURL points at an icon for the agent.
	IconURL string `json:"iconUrl,omitempty"`
}

// AgentInterface is one endpoint of an agent: a URL speaking one protocol
// binding at one protocol version.
type AgentInterface struct {
	// URL is the endpoint.
	URL string `json:"url"`
	// ProtocolBinding is BindingJSONRPC, BindingHTTPJSON, BindingGRPC or a
	// custom binding URI.
	ProtocolBinding string `json:"protocolBinding"`
	// Tenant, if set, must be copied into every request's tenant field.
	Tenant string `json:"tenant,omitempty"`
	// ProtocolVersion is "Major.Minor", e.g. "1.0" or "0.3".
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider is the organisation that runs an agent.
type AgentProvider struct {
	// URL is the organisation's web site.
	URL string `json:"url"`
	// Organization is the organisation's name.
	Organization string `json:"organization"`
}

// AgentCapabilities lists the optional features an agent supports. Unset
// means not supported.
type AgentCapabilities struct {
	// Streaming says SendStreamingMessage and SubscribeToTask work.
	Streaming *bool `json:"streaming,omitempty"`
	// PushNotifications says the push-config methods work.
	PushNotifications *bool `json:"pushNotifications,omitempty"`
	// Extensions lists the protocol extensions the agent supports.
	Extensions []AgentExtension `json:"extensions,omitempty"`
	// ExtendedAgentCard says GetExtendedAgentCard works.
	ExtendedAgentCard *bool `json:"extendedAgentCard,omitempty"`
}

// SupportsStreaming reports whether Streaming is set and true.
func (c AgentCapabilities) SupportsStreaming() bool { return c.Streaming != nil && *c.Streaming }

// SupportsPushNotifications reports whether PushNotifications is set and true.
func (c AgentCapabilities) SupportsPushNotifications() bool {
	return c.PushNotifications != nil && *c.PushNotifications
}

// SupportsExtendedAgentCard reports whether ExtendedAgentCard is set and true.
func (c AgentCapabilities) SupportsExtendedAgentCard() bool {
	return c.ExtendedAgentCard != nil && *c.ExtendedAgentCard
}

// AgentExtension declares a protocol extension an agent supports.
type AgentExtension struct {
	// URI identifies the extension.
	URI string `json:"uri"`
	// Description says how the agent uses it.
	Description string `json:"description,omitempty"`
	// Required says clients must request the extension (else -32008).
	Required bool `json:"required,omitempty"`
	// Params is extension-specific configuration.
	Params map[string]any `json:"params,omitempty"`
}

// AgentSkill is one thing an agent can do.
type AgentSkill struct {
	// ID identifies the skill.
	ID string `json:"id"`
	// Name is the skill's human-readable name.
	Name string `json:"name"`
	// Description says what the skill does.
	Description string `json:"description"`
	// Tags are keywords; at least one is required.
	Tags []string `json:"tags,omitempty"`
	// Examples are sample prompts.
	Examples []string `json:"examples,omitempty"`
	// InputModes overrides the card's default input media types.
	InputModes []string `json:"inputModes,omitempty"`
	// OutputModes overrides the card's default output media types.
	OutputModes []string `json:"outputModes,omitempty"`
	// SecurityRequirements overrides the card's security requirements.
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
}

// UnmarshalJSON also accepts the 0.3 `security` key for
// securityRequirements.
func (s *AgentSkill) UnmarshalJSON(b []byte) error {
	type plain AgentSkill
	var w struct {
		plain
		Security []map[string][]string `json:"security"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = AgentSkill(w.plain)
	if len(s.SecurityRequirements) == 0 {
		s.SecurityRequirements = requirementsFromV03(w.Security)
	}
	return nil
}

// AgentCardSignature is a JWS signature over an agent card.
type AgentCardSignature struct {
	// Protected is the base64url-encoded JWS protected header.
	Protected string `json:"protected"`
	// Signature is the base64url-encoded signature.
	Signature string `json:"signature"`
	// Header is the unprotected JWS header.
	Header map[string]any `json:"header,omitempty"`
}

// interfaceWire03 is an entry of a 0.3 card's additionalInterfaces.
type interfaceWire03 struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// UnmarshalJSON reads a v1.0 card and, tolerantly, a 0.3 one: when
// supportedInterfaces is absent it is synthesised from url,
// preferredTransport (default JSONRPC), protocolVersion (cut to
// Major.Minor, default "0.3") and additionalInterfaces;
// capabilities.extendedAgentCard falls back to the 0.3 top-level
// supportsAuthenticatedExtendedCard; 0.3 `security` becomes
// securityRequirements and 0.3 `type`-discriminated schemes become the
// v1.0 oneof form. Interface versions are cut to Major.Minor.
func (c *AgentCard) UnmarshalJSON(b []byte) error {
	type plain AgentCard
	var w struct {
		plain
		URL                               string                `json:"url"`
		PreferredTransport                string                `json:"preferredTransport"`
		ProtocolVersion                   string                `json:"protocolVersion"`
		AdditionalInterfaces              []interfaceWire03     `json:"additionalInterfaces"`
		SupportsAuthenticatedExtendedCard *bool                 `json:"supportsAuthenticatedExtendedCard"`
		Security                          []map[string][]string `json:"security"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := AgentCard(w.plain)
	if len(out.SupportedInterfaces) == 0 && (w.URL != "" || len(w.AdditionalInterfaces) > 0) {
		version := "0.3"
		if w.ProtocolVersion != "" {
			version = majorMinor(w.ProtocolVersion)
		}
		binding := w.PreferredTransport
		if binding == "" {
			binding = BindingJSONRPC
		}
		if w.URL != "" {
			out.SupportedInterfaces = append(out.SupportedInterfaces, AgentInterface{URL: w.URL, ProtocolBinding: binding, ProtocolVersion: version})
		}
		for _, ai := range w.AdditionalInterfaces {
			t := ai.Transport
			if t == "" {
				t = BindingJSONRPC
			}
			if ai.URL == w.URL && strings.EqualFold(t, binding) {
				continue // 0.3 cards often repeat the main interface here
			}
			out.SupportedInterfaces = append(out.SupportedInterfaces, AgentInterface{URL: ai.URL, ProtocolBinding: t, ProtocolVersion: version})
		}
	} else {
		for i := range out.SupportedInterfaces {
			in := &out.SupportedInterfaces[i]
			if in.ProtocolBinding == "" {
				in.ProtocolBinding = BindingJSONRPC
			}
			if in.ProtocolVersion == "" {
				in.ProtocolVersion = ProtocolVersion
			} else {
				in.ProtocolVersion = majorMinor(in.ProtocolVersion)
			}
		}
	}
	if out.Capabilities.ExtendedAgentCard == nil && w.SupportsAuthenticatedExtendedCard != nil {
		v := *w.SupportsAuthenticatedExtendedCard
		out.Capabilities.ExtendedAgentCard = &v
	}
	if len(out.SecurityRequirements) == 0 {
		out.SecurityRequirements = requirementsFromV03(w.Security)
	}
	*c = out
	return nil
}

// ParseAgentCard parses an agent card fetched from a peer, tolerating the
// 0.3 shape (see AgentCard.UnmarshalJSON). It fails only on malformed JSON
// or a card that names no endpoint at all.
func ParseAgentCard(data []byte) (*AgentCard, error) {
	var c AgentCard
	if err := Unmarshal(bytes.TrimPrefix(data, utf8BOM), &c); err != nil {
		return nil, fmt.Errorf("agent card is not valid JSON of the expected shape: %w", err)
	}
	if len(c.SupportedInterfaces) == 0 {
		return nil, errors.New("agent card names no endpoint: it has neither supportedInterfaces (v1.0) nor url (0.3)")
	}
	return &c, nil
}

// PreferredInterface picks the interface a client should use: the first
// one (in card order) whose binding is among bindings (all bindings when
// none are given; compared case-insensitively) and whose protocol version
// is "1.0", else the first such with version "0.3". Interfaces of other
// versions are never picked.
func (c *AgentCard) PreferredInterface(bindings ...string) (AgentInterface, bool) {
	acceptable := func(in AgentInterface) bool {
		if len(bindings) == 0 {
			return true
		}
		for _, b := range bindings {
			if strings.EqualFold(in.ProtocolBinding, b) {
				return true
			}
		}
		return false
	}
	for _, want := range []string{ProtocolVersion, ProtocolVersionV03} {
		for _, in := range c.SupportedInterfaces {
			if acceptable(in) && majorMinor(in.ProtocolVersion) == want {
				return in, true
			}
		}
	}
	return AgentInterface{}, false
}

// majorMinor cuts a version string to Major.Minor: "0.3.0" → "0.3",
// "1" → "1.0", "v1.0" → "1.0".
func majorMinor(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) == 1 {
		return parts[0] + ".0"
	}
	return parts[0] + "." + parts[1]
}
