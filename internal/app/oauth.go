package app

import (
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// oauthVerifier builds the verifier of inbound OAuth access tokens from
// oauth_issuers, or nil when none is configured. The caller starts it
// (background discovery) and closes it.
func oauthVerifier(cfg *config.Config) (*security.OAuthVerifier, error) {
	if len(cfg.OAuthIssuers) == 0 {
		return nil, nil
	}
	oc := security.OAuthConfig{ClockSkew: time.Duration(cfg.OAuthClockSkew), AllowLoopbackHTTP: cfg.OAuthAllowLoopbackHTTP}
	for _, is := range cfg.OAuthIssuers {
		oc.Issuers = append(oc.Issuers, security.OAuthIssuer{
			Name: is.IssuerName(), URL: is.Issuer, Audience: is.Audience, IdentityClaim: is.IdentityClaim,
			ScopePrefix: is.ScopePrefix, IgnoreScopes: is.IgnoreScopes, TrustedClaim: is.TrustedClaim,
			TrustedValues: is.TrustedValues, TokenURL: is.TokenURL,
		})
	}
	return security.NewOAuthVerifier(oc)
}
