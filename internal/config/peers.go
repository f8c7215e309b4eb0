package config

// The one rule set for configured peers (a2a_agents): Validate applies it,
// and internal/tools takes the peers as they passed it.

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Trust tiers of a configured peer (Peer.Trust, any case).
const (
	// TrustTrusted marks a peer whose answers the operator vouches for.
	TrustTrusted = "trusted"
	// TrustPublic (the default) marks a peer whose answers are untrusted
	// input.
	TrustPublic = "public"
)

// peerNameRe is what a peer's name may be: tools name peers by it, and
// resolve it case-insensitively.
var peerNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// TrustTier is the peer's trust in lower case: TrustTrusted or
// TrustPublic (the default).
func (p Peer) TrustTier() string {
	if t := strings.ToLower(p.Trust); t != "" {
		return t
	}
	return TrustPublic
}

// HeaderField is the peer's header credential split into name and value
// ("" when it has none). Validate has checked it.
func (p Peer) HeaderField() (name, value string) {
	if p.Header == "" {
		return "", ""
	}
	name, value, _ = ParseHeader(p.Header)
	return name, value
}

// validatePeers checks every a2a_agents entry.
func (c *Config) validatePeers(bad func(string, ...any)) {
	seen := map[string]int{}
	for i, p := range c.Agents {
		where := fmt.Sprintf("a2a_agents[%d]", i)
		if p.Name != "" {
			where = fmt.Sprintf("a2a_agents[%d] (%q)", i, p.Name)
		}
		switch key := strings.ToLower(p.Name); {
		case p.Name == "":
			bad("%s has no name; give every peer a short unique name such as \"research\"", where)
		case !peerNameRe.MatchString(p.Name):
			bad("%s: the name %q may only use letters, digits, '-', '_' and '.' (at most 64, starting with a letter or digit)", where, p.Name)
		default:
			if j, dup := seen[key]; dup {
				bad("%s: the name %q is already used by a2a_agents[%d]; peer names must be unique (case-insensitive)", where, p.Name, j)
			} else {
				seen[key] = i
			}
		}
		if err := CheckPeerURL(p.URL); err != nil {
			bad("%s.url: %v", where, err)
		}
		switch strings.ToLower(p.Trust) {
		case "", TrustTrusted, TrustPublic:
		default:
			bad("%s.trust %q must be trusted or public", where, p.Trust)
		}
		if p.Timeout < 0 {
			bad("%s.timeout must not be negative", where)
		}
		var creds []string
		for _, c := range []struct{ key, value string }{{"token", p.Token}, {"token_file", p.TokenFile}, {"token_command", p.TokenCommand}, {"header", p.Header}} {
			if strings.TrimSpace(c.value) != "" {
				creds = append(creds, c.key)
			}
		}
		if p.OAuth2 != nil {
			creds = append(creds, "oauth2")
		}
		if len(creds) > 1 {
			bad("%s sets %s; use one credential", where, strings.Join(creds, " and "))
		}
		if strings.ContainsAny(p.Token, " \t\r\n") {
			bad("%s.token must not contain spaces or line breaks (give the bare token, without \"Bearer \")", where)
		}
		if p.Header != "" {
			if _, _, err := ParseHeader(p.Header); err != nil {
				bad("%s.header: %v", where, err)
			}
		}
		if p.Signed && len(p.CardKeys) == 0 && len(c.CardTrustedKeys) == 0 {
			bad("%s is signed but no key can verify its card: set its card_keys or card_trusted_keys (A2A_CARD_TRUSTED_KEYS) to the peer's public key file", where)
		}
		if p.OAuth2 != nil {
			c.validatePeerOAuth(where+".oauth2", p.OAuth2, bad)
		}
	}
}

// validatePeerOAuth checks a peer's OAuth 2.0 client credentials.
func (c *Config) validatePeerOAuth(where string, o *PeerOAuth, bad func(string, ...any)) {
	if strings.TrimSpace(o.TokenURL) == "" {
		bad("%s.token_url is missing: give the token endpoint of the peer's issuer (its card's clientCredentials tokenUrl, once you trust it)", where)
	} else if err := checkIdPURL(o.TokenURL, c.OAuthAllowLoopbackHTTP); err != nil {
		bad("%s.token_url: %v", where, err)
	}
	if strings.TrimSpace(o.ClientID) == "" {
		bad("%s.client_id is missing", where)
	}
	var secrets []string
	for _, s := range []struct{ key, value string }{{"client_secret_file", o.ClientSecretFile}, {"client_secret_env", o.ClientSecretEnv}, {"client_secret_command", o.ClientSecretCommand}} {
		if strings.TrimSpace(s.value) != "" {
			secrets = append(secrets, s.key)
		}
	}
	switch {
	case len(secrets) == 0:
		bad("%s needs the client secret: set client_secret_file, client_secret_env or client_secret_command", where)
	case len(secrets) > 1:
		bad("%s sets %s; use one", where, strings.Join(secrets, " and "))
	}
	for _, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\"\\") {
			bad("%s.scopes: %q is not a scope (no spaces, quotes or backslashes)", where, s)
		}
	}
}

// CheckPeerURL accepts the URL of an agent: absolute http(s) with a host
// and no credentials in it. It checks configured peers and the URLs a
// model passes to the tools alike.
func CheckPeerURL(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return errors.New("missing; give the agent's base URL, e.g. https://agent.example.com")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("%q is not a valid URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q must start with http:// or https://", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q must not carry credentials; use token or header instead", u.Redacted())
	}
	return nil
}

// ParseHeader parses a header credential "Name: value". It refuses a
// name that is not an HTTP token and a value with line breaks; an error
// names the header, never its value.
func ParseHeader(s string) (name, value string, err error) {
	n, v, ok := strings.Cut(s, ":")
	n, v = strings.TrimSpace(n), strings.TrimSpace(v)
	if !ok || n == "" {
		return "", "", fmt.Errorf("header %q must have the form \"Name: value\"", redactHeader(s))
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return "", "", fmt.Errorf("header name %q contains an invalid character %q", n, c)
		}
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return "", "", fmt.Errorf("header %q: value must not contain line breaks", n)
	}
	return n, v, nil
}

// redactHeader keeps a header's name for an error message, never its value.
func redactHeader(s string) string {
	if n, _, ok := strings.Cut(s, ":"); ok {
		return n + ": …"
	}
	if len(s) > 8 {
		return s[:4] + "…"
	}
	return "…"
}
