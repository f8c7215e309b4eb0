package config

// OAuth 2.0 and OpenID Connect settings: the issuers whose JWT access
// tokens the agent accepts (oauth_issuers), and a peer's client
// credentials (a2a_agents[].oauth2).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strings"
)

// OAuthIssuer is one OpenID provider whose JWT access tokens the agent
// accepts (an entry of oauth_issuers).
type OAuthIssuer struct {
	// Name names the issuer in identities ("oauth:<name>:<subject>") and
	// in the card's scheme names (default: the issuer's host name).
	Name string `json:"name,omitempty"`
	// Issuer is the issuer identifier (the tokens' iss); its discovery
	// document is at Issuer + "/.well-known/openid-configuration".
	Issuer string `json:"issuer"`
	// Audience is the aud tokens for this agent carry.
	Audience string `json:"audience"`
	// IdentityClaim names the caller (default "sub").
	IdentityClaim string `json:"identity_claim,omitempty"`
	// ScopePrefix starts the operation scopes (default "a2a:").
	ScopePrefix string `json:"scope_prefix,omitempty"`
	// IgnoreScopes lets a token do what its tier allows whatever its
	// scopes.
	IgnoreScopes bool `json:"ignore_scopes,omitempty"`
	// TrustedClaim and TrustedValues: tokens whose claim holds one of the
	// values are of the trusted tier (default: the scope "a2a:trusted").
	TrustedClaim  string   `json:"trusted_claim,omitempty"`
	TrustedValues []string `json:"trusted_values,omitempty"`
	// TokenURL is the token endpoint the card advertises (default: the
	// discovery document's).
	TokenURL string `json:"token_url,omitempty"`
}

// PeerOAuth is a peer's OAuth 2.0 client credentials (a2a_agents[].oauth2):
// the plugin gets access tokens for the peer with the client-credentials
// grant.
type PeerOAuth struct {
	// TokenURL is the token endpoint (never taken from the peer's card:
	// the client secret goes only where the operator says).
	TokenURL string `json:"token_url"`
	// ClientID is the client's id.
	ClientID string `json:"client_id"`
	// The client secret comes from exactly one of a file (read at each
	// token request, so it can be rotated), an environment variable, or a
	// command (sh -c, 10 s at most, its standard output).
	ClientSecretFile    string `json:"client_secret_file,omitempty"`
	ClientSecretEnv     string `json:"client_secret_env,omitempty"`
	ClientSecretCommand string `json:"client_secret_command,omitempty"`
	// Scopes are asked for (e.g. ["a2a:send", "a2a:get"]).
	Scopes []string `json:"scopes,omitempty"`
	// Audience is sent as the token request's audience parameter.
	Audience string `json:"audience,omitempty"`
}

// decodeIssuers reads oauth_issuers strictly: an unknown key is an error
// naming the closest valid one.
func decodeIssuers(raw []byte) ([]OAuthIssuer, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New(`want a JSON list of issuers like [{"issuer":"https://idp.example","audience":"https://agent.example"}]`)
	}
	out := make([]OAuthIssuer, 0, len(items))
	for i, item := range items {
		if err := checkKeys(item, reflect.TypeOf(OAuthIssuer{}), "an issuer"); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		var is OAuthIssuer
		if err := json.Unmarshal(item, &is); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return nil, fmt.Errorf("[%d].%s: want %s, got %s", i, ute.Field, kindOf(ute.Type), jsonKind(nil, ute.Value))
			}
			return nil, fmt.Errorf("[%d]: %v", i, err)
		}
		out = append(out, is)
	}
	return out, nil
}

// checkKeys refuses an object with a key that typ has no field for.
func checkKeys(item json.RawMessage, typ reflect.Type, what string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(item, &m); err != nil {
		return fmt.Errorf("want an object, got %s", jsonKind(item, ""))
	}
	keys := fieldKeys(typ)
	for k := range m {
		if !contains(keys, k) {
			msg := fmt.Sprintf("unknown key %q", k)
			if near := Closest(k, keys); near != "" {
				return fmt.Errorf("%s; did you mean %q?", msg, near)
			}
			return fmt.Errorf("%s (%s has %s)", msg, what, strings.Join(keys, ", "))
		}
	}
	return nil
}

// checkPeerOAuthKeys refuses unknown keys in a peer's oauth2 object.
func checkPeerOAuthKeys(peer map[string]json.RawMessage) error {
	raw, ok := peer["oauth2"]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := checkKeys(raw, reflect.TypeOf(PeerOAuth{}), "oauth2"); err != nil {
		return fmt.Errorf(".oauth2: %w", err)
	}
	return nil
}

// validateOAuth checks oauth_issuers (a peer's oauth2 is checked with the
// peer, validatePeers).
func (c *Config) validateOAuth(bad func(string, ...any)) {
	names := map[string]int{}
	for i, is := range c.OAuthIssuers {
		where := fmt.Sprintf("oauth_issuers[%d]", i)
		if err := checkIdPURL(is.Issuer, c.OAuthAllowLoopbackHTTP); err != nil {
			bad("%s.issuer: %v (A2A_OAUTH_ISSUERS)", where, err)
			continue
		}
		name := is.IssuerName()
		if j, dup := names[name]; dup {
			bad("%s and oauth_issuers[%d] are both named %q; give each its own name (A2A_OAUTH_ISSUERS)", where, j, name)
		}
		names[name] = i
		if !validIssuerName(name) {
			bad("%s.name %q may only use letters, digits and .-_@ (A2A_OAUTH_ISSUERS)", where, name)
		}
		if strings.TrimSpace(is.Audience) == "" {
			bad("%s.audience is empty: set it to the aud the issuer puts into access tokens for this agent, e.g. its public URL (A2A_OAUTH_ISSUERS)", where)
		}
		if is.TokenURL != "" {
			if err := checkIdPURL(is.TokenURL, c.OAuthAllowLoopbackHTTP); err != nil {
				bad("%s.token_url: %v (A2A_OAUTH_ISSUERS)", where, err)
			}
		}
		if strings.ContainsAny(is.ScopePrefix, " \t\"\\") {
			bad("%s.scope_prefix %q must not contain spaces, quotes or backslashes (A2A_OAUTH_ISSUERS)", where, is.ScopePrefix)
		}
		if len(is.TrustedValues) > 0 && is.TrustedClaim == "" {
			bad("%s.trusted_values needs trusted_claim, the claim that holds them (A2A_OAUTH_ISSUERS)", where)
		}
	}
	if c.OAuthClockSkew < 0 || c.OAuthClockSkew > Duration(10*60e9) {
		bad("oauth_clock_skew must be between 0 and 10m (A2A_OAUTH_CLOCK_SKEW; default 30s)")
	}
}

// IssuerName is the issuer's name: Name, else its URL's host name.
func (is OAuthIssuer) IssuerName() string {
	if is.Name != "" {
		return is.Name
	}
	if u, err := url.Parse(is.Issuer); err == nil {
		return u.Hostname()
	}
	return ""
}

func validIssuerName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_@", r)) {
			return false
		}
	}
	return true
}

// checkIdPURL accepts an https URL, or http to a loopback host when the
// loopback allowance (oauth_allow_loopback_http) is on.
func checkIdPURL(raw string, allowLoopbackHTTP bool) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an absolute URL without credentials, query or fragment", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("%q must be https", raw)
		}
		if !allowLoopbackHTTP {
			return fmt.Errorf("%q is plain http: issuers and token endpoints must be https; for one on this machine (tests) turn on oauth_allow_loopback_http (A2A_OAUTH_ALLOW_LOOPBACK_HTTP)", raw)
		}
		return nil
	}
	return fmt.Errorf("%q must be an https URL", raw)
}
