package a2a

import "encoding/json"

// SecurityScheme describes one way to authenticate to an agent. It is a
// oneof on the wire: exactly one field is set, and its JSON key names the
// kind. The 0.3 OpenAPI-style form ({"type": "http", ...}) is accepted on
// input and converted.
type SecurityScheme struct {
	// APIKey is an API key in a header, query parameter or cookie.
	APIKey *APIKeySecurityScheme `json:"apiKeySecurityScheme,omitempty"`
	// HTTPAuth is HTTP authentication (Bearer, Basic, …).
	HTTPAuth *HTTPAuthSecurityScheme `json:"httpAuthSecurityScheme,omitempty"`
	// OAuth2 is OAuth 2.0.
	OAuth2 *OAuth2SecurityScheme `json:"oauth2SecurityScheme,omitempty"`
	// OpenIDConnect is OpenID Connect discovery.
	OpenIDConnect *OpenIDConnectSecurityScheme `json:"openIdConnectSecurityScheme,omitempty"`
	// MTLS is mutual TLS.
	MTLS *MutualTLSSecurityScheme `json:"mtlsSecurityScheme,omitempty"`
}

// APIKeySecurityScheme is an API key security scheme.
type APIKeySecurityScheme struct {
	// Location is "query", "header" or "cookie".
	Location string `json:"location"`
	// Name is the header, query parameter or cookie name.
	Name string `json:"name"`
	// Description says what the scheme is for.
	Description string `json:"description,omitempty"`
}

// HTTPAuthSecurityScheme is an HTTP authentication security scheme.
type HTTPAuthSecurityScheme struct {
	// Scheme is the IANA scheme name, e.g. "Bearer".
	Scheme string `json:"scheme"`
	// BearerFormat hints at the bearer token format, e.g. "JWT".
	BearerFormat string `json:"bearerFormat,omitempty"`
	// Description says what the scheme is for.
	Description string `json:"description,omitempty"`
}

// OAuth2SecurityScheme is an OAuth 2.0 security scheme.
type OAuth2SecurityScheme struct {
	// Flows is the OAuth flow. It is a oneof in v1.0; a card converted from
	// 0.3 may carry several flows.
	Flows OAuthFlows `json:"flows"`
	// OAuth2MetadataURL is the RFC 8414 authorization server metadata URL.
	OAuth2MetadataURL string `json:"oauth2MetadataUrl,omitempty"`
	// Description says what the scheme is for.
	Description string `json:"description,omitempty"`
}

// OAuthFlows holds the OAuth flow of an OAuth2SecurityScheme.
type OAuthFlows struct {
	// AuthorizationCode is the authorization code flow.
	AuthorizationCode *AuthorizationCodeOAuthFlow `json:"authorizationCode,omitempty"`
	// ClientCredentials is the client credentials flow.
	ClientCredentials *ClientCredentialsOAuthFlow `json:"clientCredentials,omitempty"`
	// DeviceCode is the device authorization flow (RFC 8628).
	DeviceCode *DeviceCodeOAuthFlow `json:"deviceCode,omitempty"`
	// Implicit is the deprecated implicit flow.
	Implicit *ImplicitOAuthFlow `json:"implicit,omitempty"`
	// Password is the deprecated resource owner password flow.
	Password *PasswordOAuthFlow `json:"password,omitempty"`
}

// AuthorizationCodeOAuthFlow is the OAuth authorization code flow.
type AuthorizationCodeOAuthFlow struct {
	// AuthorizationURL is the authorization endpoint.
	AuthorizationURL string `json:"authorizationUrl"`
	// TokenURL is the token endpoint.
	TokenURL string `json:"tokenUrl"`
	// RefreshURL is the refresh endpoint.
	RefreshURL string `json:"refreshUrl,omitempty"`
	// Scopes maps scope names to descriptions.
	Scopes map[string]string `json:"scopes,omitempty"`
	// PKCERequired says the flow requires PKCE.
	PKCERequired bool `json:"pkceRequired,omitempty"`
}

// ClientCredentialsOAuthFlow is the OAuth client credentials flow.
type ClientCredentialsOAuthFlow struct {
	// TokenURL is the token endpoint.
	TokenURL string `json:"tokenUrl"`
	// RefreshURL is the refresh endpoint.
	RefreshURL string `json:"refreshUrl,omitempty"`
	// Scopes maps scope names to descriptions.
	Scopes map[string]string `json:"scopes,omitempty"`
}

// DeviceCodeOAuthFlow is the OAuth device authorization flow.
type DeviceCodeOAuthFlow struct {
	// DeviceAuthorizationURL is the device authorization endpoint.
	DeviceAuthorizationURL string `json:"deviceAuthorizationUrl"`
	// TokenURL is the token endpoint.
	TokenURL string `json:"tokenUrl"`
	// RefreshURL is the refresh endpoint.
	RefreshURL string `json:"refreshUrl,omitempty"`
	// Scopes maps scope names to descriptions.
	Scopes map[string]string `json:"scopes,omitempty"`
}

// ImplicitOAuthFlow is the deprecated OAuth implicit flow.
type ImplicitOAuthFlow struct {
	// AuthorizationURL is the authorization endpoint.
	AuthorizationURL string `json:"authorizationUrl"`
	// RefreshURL is the refresh endpoint.
	RefreshURL string `json:"refreshUrl,omitempty"`
	// Scopes maps scope names to descriptions.
	Scopes map[string]string `json:"scopes,omitempty"`
}

// PasswordOAuthFlow is the deprecated OAuth resource owner password flow.
type PasswordOAuthFlow struct {
	// TokenURL is the token endpoint.
	TokenURL string `json:"tokenUrl"`
	// RefreshURL is the refresh endpoint.
	RefreshURL string `json:"refreshUrl,omitempty"`
	// Scopes maps scope names to descriptions.
	Scopes map[string]string `json:"scopes,omitempty"`
}

// OpenIDConnectSecurityScheme is an OpenID Connect security scheme.
type OpenIDConnectSecurityScheme struct {
	// OpenIDConnectURL is the OpenID Connect discovery URL.
	OpenIDConnectURL string `json:"openIdConnectUrl"`
	// Description says what the scheme is for.
	Description string `json:"description,omitempty"`
}

// MutualTLSSecurityScheme is a mutual TLS security scheme.
type MutualTLSSecurityScheme struct {
	// Description says what the scheme is for.
	Description string `json:"description,omitempty"`
}

// securitySchemeWire is the lenient input form of a SecurityScheme: the
// v1.0 oneof keys plus the 0.3 `type`-discriminated fields.
type securitySchemeWire struct {
	APIKey        *APIKeySecurityScheme        `json:"apiKeySecurityScheme"`
	HTTPAuth      *HTTPAuthSecurityScheme      `json:"httpAuthSecurityScheme"`
	OAuth2        *OAuth2SecurityScheme        `json:"oauth2SecurityScheme"`
	OpenIDConnect *OpenIDConnectSecurityScheme `json:"openIdConnectSecurityScheme"`
	MTLS          *MutualTLSSecurityScheme     `json:"mtlsSecurityScheme"`

	Type              string     `json:"type"`
	Description       string     `json:"description"`
	In                string     `json:"in"`
	Name              string     `json:"name"`
	Scheme            string     `json:"scheme"`
	BearerFormat      string     `json:"bearerFormat"`
	Flows             OAuthFlows `json:"flows"`
	OAuth2MetadataURL string     `json:"oauth2MetadataUrl"`
	OpenIDConnectURL  string     `json:"openIdConnectUrl"`
}

// UnmarshalJSON accepts the v1.0 oneof form and the 0.3 form with a `type`
// of apiKey, http, oauth2, openIdConnect or mutualTLS.
func (s *SecurityScheme) UnmarshalJSON(b []byte) error {
	var w securitySchemeWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := SecurityScheme{
		APIKey:        w.APIKey,
		HTTPAuth:      w.HTTPAuth,
		OAuth2:        w.OAuth2,
		OpenIDConnect: w.OpenIDConnect,
		MTLS:          w.MTLS,
	}
	switch w.Type {
	case "apiKey":
		out.APIKey = &APIKeySecurityScheme{Location: w.In, Name: w.Name, Description: w.Description}
	case "http":
		out.HTTPAuth = &HTTPAuthSecurityScheme{Scheme: w.Scheme, BearerFormat: w.BearerFormat, Description: w.Description}
	case "oauth2":
		out.OAuth2 = &OAuth2SecurityScheme{Flows: w.Flows, OAuth2MetadataURL: w.OAuth2MetadataURL, Description: w.Description}
	case "openIdConnect":
		out.OpenIDConnect = &OpenIDConnectSecurityScheme{OpenIDConnectURL: w.OpenIDConnectURL, Description: w.Description}
	case "mutualTLS":
		out.MTLS = &MutualTLSSecurityScheme{Description: w.Description}
	}
	*s = out
	return nil
}

// SecurityRequirement is one acceptable combination of schemes: every
// scheme named in it must be satisfied (AND); a list of requirements is
// an OR.
type SecurityRequirement struct {
	// Schemes maps a scheme name (a key of AgentCard.SecuritySchemes) to
	// the scopes it needs.
	Schemes map[string]StringList `json:"schemes,omitempty"`
}

// StringList is a list of strings (proto StringList); an empty list is
// emitted as {}.
type StringList struct {
	// List holds the strings.
	List []string `json:"list,omitempty"`
}

// requirementsFromV03 converts 0.3 security requirements
// ([{"name": ["scope"]}]) to the v1.0 form.
func requirementsFromV03(in []map[string][]string) []SecurityRequirement {
	if len(in) == 0 {
		return nil
	}
	out := make([]SecurityRequirement, 0, len(in))
	for _, req := range in {
		r := SecurityRequirement{Schemes: make(map[string]StringList, len(req))}
		for name, scopes := range req {
			r.Schemes[name] = StringList{List: scopes}
		}
		out = append(out, r)
	}
	return out
}
