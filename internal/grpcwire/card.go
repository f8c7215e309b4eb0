package grpcwire

import (
	"maps"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// AgentCardToProto converts an agent card (GetExtendedAgentCard's answer).
func AgentCardToProto(card *a2a.AgentCard) (*a2apb.AgentCard, error) {
	var c conv
	out := &a2apb.AgentCard{
		Name:                 card.Name,
		Description:          card.Description,
		Version:              card.Version,
		DocumentationUrl:     optString(card.DocumentationURL),
		IconUrl:              optString(card.IconURL),
		DefaultInputModes:    cloneStrings(card.DefaultInputModes),
		DefaultOutputModes:   cloneStrings(card.DefaultOutputModes),
		SecurityRequirements: requirementsToProto(card.SecurityRequirements),
		Capabilities: &a2apb.AgentCapabilities{
			Streaming:         cloneBool(card.Capabilities.Streaming),
			PushNotifications: cloneBool(card.Capabilities.PushNotifications),
			ExtendedAgentCard: cloneBool(card.Capabilities.ExtendedAgentCard),
		},
	}
	for _, in := range card.SupportedInterfaces {
		out.SupportedInterfaces = append(out.SupportedInterfaces, &a2apb.AgentInterface{
			Url: in.URL, ProtocolBinding: in.ProtocolBinding, Tenant: in.Tenant, ProtocolVersion: in.ProtocolVersion,
		})
	}
	if p := card.Provider; p != nil {
		out.Provider = &a2apb.AgentProvider{Url: p.URL, Organization: p.Organization}
	}
	for i, e := range card.Capabilities.Extensions {
		out.Capabilities.Extensions = append(out.Capabilities.Extensions, &a2apb.AgentExtension{
			Uri: e.URI, Description: e.Description, Required: e.Required,
			Params: c.structToProto(index("capabilities.extensions", i)+".params", e.Params),
		})
	}
	if len(card.SecuritySchemes) > 0 {
		out.SecuritySchemes = make(map[string]*a2apb.SecurityScheme, len(card.SecuritySchemes))
		for name, s := range card.SecuritySchemes {
			out.SecuritySchemes[name] = schemeToProto(&s)
		}
	}
	for _, s := range card.Skills {
		out.Skills = append(out.Skills, &a2apb.AgentSkill{
			Id: s.ID, Name: s.Name, Description: s.Description,
			Tags: cloneStrings(s.Tags), Examples: cloneStrings(s.Examples),
			InputModes: cloneStrings(s.InputModes), OutputModes: cloneStrings(s.OutputModes),
			SecurityRequirements: requirementsToProto(s.SecurityRequirements),
		})
	}
	for i, s := range card.Signatures {
		out.Signatures = append(out.Signatures, &a2apb.AgentCardSignature{
			Protected: s.Protected, Signature: s.Signature,
			Header: c.structToProto(index("signatures", i)+".header", s.Header),
		})
	}
	return out, c.err
}

// AgentCardFromProto converts an agent card.
func AgentCardFromProto(card *a2apb.AgentCard) (*a2a.AgentCard, error) {
	caps := card.GetCapabilities()
	out := &a2a.AgentCard{
		Name:                 card.GetName(),
		Description:          card.GetDescription(),
		Version:              card.GetVersion(),
		DocumentationURL:     card.GetDocumentationUrl(),
		IconURL:              card.GetIconUrl(),
		DefaultInputModes:    cloneStrings(card.GetDefaultInputModes()),
		DefaultOutputModes:   cloneStrings(card.GetDefaultOutputModes()),
		SecurityRequirements: requirementsFromProto(card.GetSecurityRequirements()),
	}
	if caps != nil {
		out.Capabilities = a2a.AgentCapabilities{
			Streaming:         cloneBool(caps.Streaming),
			PushNotifications: cloneBool(caps.PushNotifications),
			ExtendedAgentCard: cloneBool(caps.ExtendedAgentCard),
		}
	}
	for _, in := range card.GetSupportedInterfaces() {
		out.SupportedInterfaces = append(out.SupportedInterfaces, a2a.AgentInterface{
			URL: in.GetUrl(), ProtocolBinding: in.GetProtocolBinding(), Tenant: in.GetTenant(), ProtocolVersion: in.GetProtocolVersion(),
		})
	}
	if p := card.GetProvider(); p != nil {
		out.Provider = &a2a.AgentProvider{URL: p.GetUrl(), Organization: p.GetOrganization()}
	}
	for _, e := range caps.GetExtensions() {
		out.Capabilities.Extensions = append(out.Capabilities.Extensions, a2a.AgentExtension{
			URI: e.GetUri(), Description: e.GetDescription(), Required: e.GetRequired(), Params: structFromProto(e.GetParams()),
		})
	}
	if ss := card.GetSecuritySchemes(); len(ss) > 0 {
		out.SecuritySchemes = make(map[string]a2a.SecurityScheme, len(ss))
		for name, s := range ss {
			out.SecuritySchemes[name] = schemeFromProto(s)
		}
	}
	for _, s := range card.GetSkills() {
		out.Skills = append(out.Skills, a2a.AgentSkill{
			ID: s.GetId(), Name: s.GetName(), Description: s.GetDescription(),
			Tags: cloneStrings(s.GetTags()), Examples: cloneStrings(s.GetExamples()),
			InputModes: cloneStrings(s.GetInputModes()), OutputModes: cloneStrings(s.GetOutputModes()),
			SecurityRequirements: requirementsFromProto(s.GetSecurityRequirements()),
		})
	}
	for _, s := range card.GetSignatures() {
		out.Signatures = append(out.Signatures, a2a.AgentCardSignature{
			Protected: s.GetProtected(), Signature: s.GetSignature(), Header: structFromProto(s.GetHeader()),
		})
	}
	return out, nil
}

func requirementsToProto(reqs []a2a.SecurityRequirement) []*a2apb.SecurityRequirement {
	var out []*a2apb.SecurityRequirement
	for _, r := range reqs {
		pr := &a2apb.SecurityRequirement{}
		if len(r.Schemes) > 0 {
			pr.Schemes = make(map[string]*a2apb.StringList, len(r.Schemes))
			for name, l := range r.Schemes {
				pr.Schemes[name] = &a2apb.StringList{List: cloneStrings(l.List)}
			}
		}
		out = append(out, pr)
	}
	return out
}

func requirementsFromProto(reqs []*a2apb.SecurityRequirement) []a2a.SecurityRequirement {
	var out []a2a.SecurityRequirement
	for _, r := range reqs {
		var ar a2a.SecurityRequirement
		if s := r.GetSchemes(); len(s) > 0 {
			ar.Schemes = make(map[string]a2a.StringList, len(s))
			for name, l := range s {
				ar.Schemes[name] = a2a.StringList{List: cloneStrings(l.GetList())}
			}
		}
		out = append(out, ar)
	}
	return out
}

func scopesCopy(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

func schemeToProto(s *a2a.SecurityScheme) *a2apb.SecurityScheme {
	out := &a2apb.SecurityScheme{}
	switch {
	case s.APIKey != nil:
		out.Scheme = &a2apb.SecurityScheme_ApiKeySecurityScheme{ApiKeySecurityScheme: &a2apb.APIKeySecurityScheme{
			Description: s.APIKey.Description, Location: s.APIKey.Location, Name: s.APIKey.Name}}
	case s.HTTPAuth != nil:
		out.Scheme = &a2apb.SecurityScheme_HttpAuthSecurityScheme{HttpAuthSecurityScheme: &a2apb.HTTPAuthSecurityScheme{
			Description: s.HTTPAuth.Description, Scheme: s.HTTPAuth.Scheme, BearerFormat: s.HTTPAuth.BearerFormat}}
	case s.OAuth2 != nil:
		out.Scheme = &a2apb.SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &a2apb.OAuth2SecurityScheme{
			Description: s.OAuth2.Description, Oauth2MetadataUrl: s.OAuth2.OAuth2MetadataURL, Flows: flowsToProto(&s.OAuth2.Flows)}}
	case s.OpenIDConnect != nil:
		out.Scheme = &a2apb.SecurityScheme_OpenIdConnectSecurityScheme{OpenIdConnectSecurityScheme: &a2apb.OpenIdConnectSecurityScheme{
			Description: s.OpenIDConnect.Description, OpenIdConnectUrl: s.OpenIDConnect.OpenIDConnectURL}}
	case s.MTLS != nil:
		out.Scheme = &a2apb.SecurityScheme_MtlsSecurityScheme{MtlsSecurityScheme: &a2apb.MutualTlsSecurityScheme{
			Description: s.MTLS.Description}}
	}
	return out
}

func schemeFromProto(s *a2apb.SecurityScheme) a2a.SecurityScheme {
	var out a2a.SecurityScheme
	switch v := s.GetScheme().(type) {
	case *a2apb.SecurityScheme_ApiKeySecurityScheme:
		k := v.ApiKeySecurityScheme
		out.APIKey = &a2a.APIKeySecurityScheme{Description: k.GetDescription(), Location: k.GetLocation(), Name: k.GetName()}
	case *a2apb.SecurityScheme_HttpAuthSecurityScheme:
		h := v.HttpAuthSecurityScheme
		out.HTTPAuth = &a2a.HTTPAuthSecurityScheme{Description: h.GetDescription(), Scheme: h.GetScheme(), BearerFormat: h.GetBearerFormat()}
	case *a2apb.SecurityScheme_Oauth2SecurityScheme:
		o := v.Oauth2SecurityScheme
		out.OAuth2 = &a2a.OAuth2SecurityScheme{Description: o.GetDescription(), OAuth2MetadataURL: o.GetOauth2MetadataUrl(), Flows: flowsFromProto(o.GetFlows())}
	case *a2apb.SecurityScheme_OpenIdConnectSecurityScheme:
		o := v.OpenIdConnectSecurityScheme
		out.OpenIDConnect = &a2a.OpenIDConnectSecurityScheme{Description: o.GetDescription(), OpenIDConnectURL: o.GetOpenIdConnectUrl()}
	case *a2apb.SecurityScheme_MtlsSecurityScheme:
		out.MTLS = &a2a.MutualTLSSecurityScheme{Description: v.MtlsSecurityScheme.GetDescription()}
	}
	return out
}

// flowsToProto converts the OAuth flow. The proto's flows are a oneof; a
// card read from 0.3 may carry several, and the first (in the order
// below) is kept.
func flowsToProto(f *a2a.OAuthFlows) *a2apb.OAuthFlows {
	out := &a2apb.OAuthFlows{}
	switch {
	case f.AuthorizationCode != nil:
		a := f.AuthorizationCode
		out.Flow = &a2apb.OAuthFlows_AuthorizationCode{AuthorizationCode: &a2apb.AuthorizationCodeOAuthFlow{
			AuthorizationUrl: a.AuthorizationURL, TokenUrl: a.TokenURL, RefreshUrl: a.RefreshURL, Scopes: scopesCopy(a.Scopes), PkceRequired: a.PKCERequired}}
	case f.ClientCredentials != nil:
		a := f.ClientCredentials
		out.Flow = &a2apb.OAuthFlows_ClientCredentials{ClientCredentials: &a2apb.ClientCredentialsOAuthFlow{
			TokenUrl: a.TokenURL, RefreshUrl: a.RefreshURL, Scopes: scopesCopy(a.Scopes)}}
	case f.DeviceCode != nil:
		a := f.DeviceCode
		out.Flow = &a2apb.OAuthFlows_DeviceCode{DeviceCode: &a2apb.DeviceCodeOAuthFlow{
			DeviceAuthorizationUrl: a.DeviceAuthorizationURL, TokenUrl: a.TokenURL, RefreshUrl: a.RefreshURL, Scopes: scopesCopy(a.Scopes)}}
	case f.Implicit != nil:
		a := f.Implicit
		//lint:ignore SA1019 the deprecated flows are still v1.0 fields: a card that declares one keeps it
		out.Flow = &a2apb.OAuthFlows_Implicit{Implicit: &a2apb.ImplicitOAuthFlow{
			AuthorizationUrl: a.AuthorizationURL, RefreshUrl: a.RefreshURL, Scopes: scopesCopy(a.Scopes)}}
	case f.Password != nil:
		a := f.Password
		//lint:ignore SA1019 the deprecated flows are still v1.0 fields: a card that declares one keeps it
		out.Flow = &a2apb.OAuthFlows_Password{Password: &a2apb.PasswordOAuthFlow{
			TokenUrl: a.TokenURL, RefreshUrl: a.RefreshURL, Scopes: scopesCopy(a.Scopes)}}
	}
	return out
}

func flowsFromProto(f *a2apb.OAuthFlows) a2a.OAuthFlows {
	var out a2a.OAuthFlows
	switch v := f.GetFlow().(type) {
	case *a2apb.OAuthFlows_AuthorizationCode:
		a := v.AuthorizationCode
		out.AuthorizationCode = &a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: a.GetAuthorizationUrl(), TokenURL: a.GetTokenUrl(),
			RefreshURL: a.GetRefreshUrl(), Scopes: scopesCopy(a.GetScopes()), PKCERequired: a.GetPkceRequired()}
	case *a2apb.OAuthFlows_ClientCredentials:
		a := v.ClientCredentials
		out.ClientCredentials = &a2a.ClientCredentialsOAuthFlow{TokenURL: a.GetTokenUrl(), RefreshURL: a.GetRefreshUrl(), Scopes: scopesCopy(a.GetScopes())}
	case *a2apb.OAuthFlows_DeviceCode:
		a := v.DeviceCode
		out.DeviceCode = &a2a.DeviceCodeOAuthFlow{DeviceAuthorizationURL: a.GetDeviceAuthorizationUrl(), TokenURL: a.GetTokenUrl(),
			RefreshURL: a.GetRefreshUrl(), Scopes: scopesCopy(a.GetScopes())}
	case *a2apb.OAuthFlows_Implicit:
		//lint:ignore SA1019 the deprecated flows are still v1.0 fields: a card that declares one keeps it
		a := v.Implicit
		out.Implicit = &a2a.ImplicitOAuthFlow{AuthorizationURL: a.GetAuthorizationUrl(), RefreshURL: a.GetRefreshUrl(), Scopes: scopesCopy(a.GetScopes())}
	case *a2apb.OAuthFlows_Password:
		//lint:ignore SA1019 the deprecated flows are still v1.0 fields: a card that declares one keeps it
		a := v.Password
		out.Password = &a2a.PasswordOAuthFlow{TokenURL: a.GetTokenUrl(), RefreshURL: a.GetRefreshUrl(), Scopes: scopesCopy(a.GetScopes())}
	}
	return out
}
