package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// cardSecurity is what the card declares about authentication, exactly
// what the server accepts: the bearer scheme when static tokens are
// configured, and for every OAuth issuer OpenID Connect (its discovery
// URL) and, once its token endpoint is known, the OAuth 2.0
// client-credentials flow with the operation scopes. Each scheme alone
// satisfies the card (one requirement per scheme); which operations an
// OAuth token may use is its scopes' business, checked per request. Both
// the public and the extended card carry it.
func (h *cardHandler) cardSecurity() (map[string]a2a.SecurityScheme, []a2a.SecurityRequirement) {
	auth := h.opts.Auth
	if !auth.RequiresAuth() {
		return nil, nil
	}
	schemes := map[string]a2a.SecurityScheme{}
	var names []string
	if auth.HasStaticTokens() {
		schemes[bearerScheme] = a2a.SecurityScheme{HTTPAuth: &a2a.HTTPAuthSecurityScheme{
			Scheme:      "Bearer",
			Description: "A token issued by the agent's operator, sent as \"Authorization: Bearer <token>\"",
		}}
		names = append(names, bearerScheme)
	}
	var oauthNames []string
	if v := auth.OAuth(); v != nil {
		for _, sch := range v.Schemes() {
			audience := ""
			if a := v.Audience(sch.Issuer); a != "" {
				audience = fmt.Sprintf(" for the audience %q (aud; ask for it with the token request's audience parameter)", a)
			}
			scopes := make(map[string]string, len(sch.Scopes))
			var listed []string
			for _, sc := range sch.Scopes {
				scopes[sc.Name] = sc.Description
				listed = append(listed, sc.Name)
			}
			scopeText := "; each operation needs its scope: " + strings.Join(listed, ", ")
			if len(sch.Scopes) == 0 {
				scopeText = ""
			}
			if sch.TokenURL != "" {
				name := "oauth2-" + sch.Issuer
				schemes[name] = a2a.SecurityScheme{OAuth2: &a2a.OAuth2SecurityScheme{
					Flows:       a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: sch.TokenURL, Scopes: scopes}},
					Description: "JWT access tokens from the token endpoint (client-credentials grant)" + audience + ", sent as \"Authorization: Bearer <token>\"" + scopeText,
				}}
				oauthNames = append(oauthNames, name)
			}
			name := "oidc-" + sch.Issuer
			schemes[name] = a2a.SecurityScheme{OpenIDConnect: &a2a.OpenIDConnectSecurityScheme{
				OpenIDConnectURL: sch.DiscoveryURL,
				Description:      "JWT access tokens of this OpenID provider" + audience + ", sent as \"Authorization: Bearer <token>\"" + scopeText,
			}}
			oauthNames = append(oauthNames, name)
		}
	}
	// The bearer scheme first, the others in a stable order.
	slices.Sort(oauthNames)
	names = append(names, oauthNames...)
	reqs := make([]a2a.SecurityRequirement, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, a2a.SecurityRequirement{Schemes: map[string]a2a.StringList{n: {}}})
	}
	return schemes, reqs
}
