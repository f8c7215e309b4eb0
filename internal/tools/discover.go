package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// discoverArgs are the arguments of a2a_discover.
type discoverArgs struct {
	URL     string `json:"url"`
	Refresh bool   `json:"refresh"`
}

func (t *Toolset) discover(ctx context.Context, ci *callInfo) *result {
	var a discoverArgs
	if err := decodeArgs(ToolDiscover, ci.args, &a, "url", "refresh"); err != nil {
		return errorResult("%v", err)
	}
	target, err := t.peers.resolve(ctx, &ci.rec, a.URL, "url")
	if err != nil {
		return errorResult("a2a_discover: %v", err)
	}
	var info *client.CardInfo
	if a.Refresh {
		info, err = t.out.fetchCard(ctx, target)
	} else {
		info, err = t.out.card(ctx, target)
	}
	if err != nil {
		return errorResult("a2a_discover: %s", voiceOf(target).errText(err))
	}
	var b strings.Builder
	writeCard(&b, target, info)
	return textResult(b.String())
}

// writeCard summarises a card for a model. What the card says of the
// agent (name, description, provider, skills) is the peer's text: framed or
// defanged by its trust (untrusted.go).
func writeCard(b *strings.Builder, target *resolved, info *client.CardInfo) {
	c := info.Card
	if target.conf != nil {
		fmt.Fprintf(b, "Card of configured peer %q (trust: %s):\n", target.conf.Name, target.conf.Trust)
	} else {
		fmt.Fprintf(b, "Card of the agent at %s (an unconfigured URL, untrusted):\n", target.name)
	}
	var said strings.Builder
	fmt.Fprintf(&said, "Agent %q", c.Name)
	if c.Version != "" {
		fmt.Fprintf(&said, " (version %s)", c.Version)
	}
	said.WriteString("\n")
	if d := strings.TrimSpace(c.Description); d != "" {
		fmt.Fprintf(&said, "Description: %s\n", d)
	}
	if c.Provider != nil && c.Provider.Organization != "" {
		fmt.Fprintf(&said, "Provider: %s\n", c.Provider.Organization)
	}
	writeSkills(&said, c)
	b.WriteString(voiceOf(target).block(clip(said.String())))
	b.WriteString("\n")
	in := info.Interface
	fmt.Fprintf(b, "Interface used: %s, protocol %s, %s", in.ProtocolBinding, in.ProtocolVersion, in.URL)
	if in.ProtocolVersion == a2a.ProtocolVersionV03 {
		b.WriteString(" (a protocol 0.3 agent: calls use the 0.3 compatibility path)")
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "Capabilities: streaming %s, push notifications %s\n", yesNo(c.Capabilities.SupportsStreaming()), yesNo(c.Capabilities.SupportsPushNotifications()))
	fmt.Fprintf(b, "Authentication: %s\n", peerLine(authSummary(c), 500))
	if target.conf == nil || (target.conf.Token == "" && target.conf.tokens == nil && target.conf.Header == "") {
		if h := oauthHint(target, c); h != "" {
			b.WriteString(h + "\n")
		}
	}
	fmt.Fprintf(b, "Card signature: %s\n", signatureSummary(target, info))
	if target.conf != nil {
		cred := "none"
		switch {
		case target.conf.Token != "":
			cred = "bearer token"
		case target.conf.tokens != nil:
			cred = "bearer token from " + target.conf.tokens.what() + " (renewed when the peer refuses it or asks for credentials)"
		case target.conf.Header != "":
			h, _ := target.conf.HeaderField()
			cred = "header " + h
		}
		fmt.Fprintf(b, "Credential configured for it: %s\n", cred)
	}
	if len(c.DefaultInputModes) > 0 || len(c.DefaultOutputModes) > 0 {
		fmt.Fprintf(b, "Accepts: %s; produces: %s\n", strings.Join(c.DefaultInputModes, ", "), strings.Join(c.DefaultOutputModes, ", "))
	}
	src := "fetched now"
	switch {
	case info.Revalidated:
		src = "cached, revalidated now (304 Not Modified)"
	case info.FromCache:
		src = "from cache"
	}
	fmt.Fprintf(b, "Card: %s (%s; fresh until %s)\n", info.CardURL, src, info.Expires.UTC().Format("2006-01-02 15:04:05Z"))
	fmt.Fprintf(b, "To delegate: a2a_call agent=%q message=\"…\"\n", target.name)
	j, _ := json.Marshal(map[string]any{"name": peerLine(c.Name, 200), "agent": target.name, "protocol": in.ProtocolVersion,
		"streaming": c.Capabilities.SupportsStreaming(), "skills": skillIDs(c),
		"signed": len(c.Signatures) > 0, "signature_verified": info.Verified != nil})
	b.Write(j)
}

// writeSkills lists a card's skills.
func writeSkills(b *strings.Builder, c *a2a.AgentCard) {
	fmt.Fprintf(b, "Skills (%d):\n", len(c.Skills))
	for _, s := range c.Skills {
		fmt.Fprintf(b, "- %s", s.ID)
		if s.Name != "" && s.Name != s.ID {
			fmt.Fprintf(b, " (%s)", s.Name)
		}
		if s.Description != "" {
			fmt.Fprintf(b, ": %s", s.Description)
		}
		if len(s.Tags) > 0 {
			fmt.Fprintf(b, " [tags: %s]", strings.Join(s.Tags, ", "))
		}
		if len(s.Examples) > 0 {
			fmt.Fprintf(b, " e.g. %q", s.Examples[0])
		}
		b.WriteString("\n")
	}
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func skillIDs(c *a2a.AgentCard) []string {
	out := make([]string, 0, len(c.Skills))
	for _, s := range c.Skills {
		out = append(out, s.ID)
	}
	return out
}

// authSummary says what authentication a card requires.
func authSummary(c *a2a.AgentCard) string {
	if len(c.SecurityRequirements) == 0 && len(c.SecuritySchemes) == 0 {
		return "none required"
	}
	describe := func(name string) string {
		s, ok := c.SecuritySchemes[name]
		if !ok {
			return name
		}
		switch {
		case s.HTTPAuth != nil:
			d := "HTTP " + s.HTTPAuth.Scheme
			if s.HTTPAuth.BearerFormat != "" {
				d += " (" + s.HTTPAuth.BearerFormat + ")"
			}
			return d
		case s.APIKey != nil:
			return fmt.Sprintf("API key in %s %q", s.APIKey.Location, s.APIKey.Name)
		case s.OAuth2 != nil && s.OAuth2.Flows.ClientCredentials != nil:
			return "OAuth 2.0 client credentials (token URL " + peerID(s.OAuth2.Flows.ClientCredentials.TokenURL) + ")"
		case s.OAuth2 != nil:
			return "OAuth 2.0"
		case s.OpenIDConnect != nil:
			return "OpenID Connect (discovery " + peerID(s.OpenIDConnect.OpenIDConnectURL) + ")"
		case s.MTLS != nil:
			return "mutual TLS"
		}
		return name
	}
	var alts []string
	for _, req := range c.SecurityRequirements {
		var names []string
		for n := range req.Schemes {
			names = append(names, n)
		}
		sort.Strings(names)
		var all []string
		for _, n := range names {
			all = append(all, describe(n))
		}
		if len(all) > 0 {
			alts = append(alts, strings.Join(all, " and "))
		}
	}
	if len(alts) == 0 {
		var names []string
		for n := range c.SecuritySchemes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			alts = append(alts, describe(n))
		}
		return "schemes declared (not required by the card): " + strings.Join(alts, ", ")
	}
	return strings.Join(alts, " or ")
}

// signatureSummary says whether the card is signed and whether a
// configured key verified it.
func signatureSummary(target *resolved, info *client.CardInfo) string {
	if v := info.Verified; v != nil {
		return fmt.Sprintf("signed and verified with the configured key kid=%s (%s): the card is the one its key holder published", v.KeyID, v.Algorithm)
	}
	n := len(info.Card.Signatures)
	if n == 0 {
		return "unsigned"
	}
	var kids []string
	for _, s := range info.Card.Signatures {
		if kid := peerLine(protectedKid(s.Protected), 64); kid != "" && !slices.Contains(kids, "kid="+kid) {
			kids = append(kids, "kid="+kid)
		}
	}
	what := fmt.Sprintf("signed (%d signature(s)", n)
	if len(kids) > 0 {
		what += ", " + strings.Join(kids, ", ")
	}
	what += "), not verified"
	if target.conf != nil {
		return what + ": this peer is not configured as signed (set signed: true and card_keys in a2a_agents to require a verified card)"
	}
	return what + ": only configured peers with card_keys are verified"
}

// protectedKid reads the kid of a JWS protected header, for display only.
func protectedKid(protected string) string {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(protected, "="))
	if err != nil {
		return ""
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if json.Unmarshal(raw, &h) != nil || len(h.Kid) > 128 {
		return ""
	}
	for _, r := range h.Kid {
		if r < 0x21 || r > 0x7e {
			return "" // shown to a model: printable ASCII only
		}
	}
	return h.Kid
}
