package cardsign

// The AgentCard message of the A2A v1.0 proto (lf.a2a.v1), as far as
// presence rules need it: for every field its JSON and proto names, its
// shape, whether it is REQUIRED (google.api.field_behavior) and, for
// message fields, the message type. Fields inside google.protobuf.Struct
// values (extension params) are opaque.

// fieldKind is the shape of a field for presence rules.
type fieldKind uint8

const (
	// kindScalar is a string or bool without presence: dropped at its
	// default unless REQUIRED.
	kindScalar fieldKind = iota
	// kindOptional is a proto3 `optional` scalar: kept when present.
	kindOptional
	// kindMessage is a singular message field: kept when present.
	kindMessage
	// kindRepeatedScalar and kindMapScalar are dropped when empty unless
	// REQUIRED.
	kindRepeatedScalar
	kindMapScalar
	// kindRepeatedMessage and kindMapMessage are dropped when empty unless
	// REQUIRED; their elements are messages.
	kindRepeatedMessage
	kindMapMessage
	// kindOpaque is a google.protobuf.Struct: kept verbatim.
	kindOpaque
)

// fieldDesc describes one field.
type fieldDesc struct {
	json, proto string
	kind        fieldKind
	required    bool
	msg         *msgDesc
}

// msgDesc describes one message.
type msgDesc struct {
	fields []*fieldDesc
	byName map[string]*fieldDesc
}

// lookup finds a field by its JSON or its proto name.
func (m *msgDesc) lookup(name string) *fieldDesc { return m.byName[name] }

func message(fields ...*fieldDesc) *msgDesc {
	m := &msgDesc{fields: fields, byName: make(map[string]*fieldDesc, 2*len(fields))}
	for _, f := range fields {
		m.byName[f.json] = f
		m.byName[f.proto] = f
	}
	return m
}

// fd builds a field; proto "" means the proto name equals the JSON name.
func fd(json, proto string, kind fieldKind, required bool, msg *msgDesc) *fieldDesc {
	if proto == "" {
		proto = json
	}
	return &fieldDesc{json: json, proto: proto, kind: kind, required: required, msg: msg}
}

const (
	req = true
	opt = false
)

var (
	stringListDesc          = message(fd("list", "", kindRepeatedScalar, opt, nil))
	securityRequirementDesc = message(fd("schemes", "", kindMapMessage, opt, stringListDesc))

	apiKeySchemeDesc = message(
		fd("description", "", kindScalar, opt, nil),
		fd("location", "", kindScalar, req, nil),
		fd("name", "", kindScalar, req, nil),
	)
	httpAuthSchemeDesc = message(
		fd("description", "", kindScalar, opt, nil),
		fd("scheme", "", kindScalar, req, nil),
		fd("bearerFormat", "bearer_format", kindScalar, opt, nil),
	)
	authorizationCodeFlowDesc = message(
		fd("authorizationUrl", "authorization_url", kindScalar, req, nil),
		fd("tokenUrl", "token_url", kindScalar, req, nil),
		fd("refreshUrl", "refresh_url", kindScalar, opt, nil),
		fd("scopes", "", kindMapScalar, req, nil),
		fd("pkceRequired", "pkce_required", kindScalar, opt, nil),
	)
	clientCredentialsFlowDesc = message(
		fd("tokenUrl", "token_url", kindScalar, req, nil),
		fd("refreshUrl", "refresh_url", kindScalar, opt, nil),
		fd("scopes", "", kindMapScalar, req, nil),
	)
	deviceCodeFlowDesc = message(
		fd("deviceAuthorizationUrl", "device_authorization_url", kindScalar, req, nil),
		fd("tokenUrl", "token_url", kindScalar, req, nil),
		fd("refreshUrl", "refresh_url", kindScalar, opt, nil),
		fd("scopes", "", kindMapScalar, req, nil),
	)
	implicitFlowDesc = message(
		fd("authorizationUrl", "authorization_url", kindScalar, req, nil),
		fd("refreshUrl", "refresh_url", kindScalar, opt, nil),
		fd("scopes", "", kindMapScalar, req, nil),
	)
	passwordFlowDesc = message(
		fd("tokenUrl", "token_url", kindScalar, req, nil),
		fd("refreshUrl", "refresh_url", kindScalar, opt, nil),
		fd("scopes", "", kindMapScalar, req, nil),
	)
	oauthFlowsDesc = message(
		fd("authorizationCode", "authorization_code", kindMessage, opt, authorizationCodeFlowDesc),
		fd("clientCredentials", "client_credentials", kindMessage, opt, clientCredentialsFlowDesc),
		fd("implicit", "", kindMessage, opt, implicitFlowDesc),
		fd("password", "", kindMessage, opt, passwordFlowDesc),
		fd("deviceCode", "device_code", kindMessage, opt, deviceCodeFlowDesc),
	)
	oauth2SchemeDesc = message(
		fd("description", "", kindScalar, opt, nil),
		fd("flows", "", kindMessage, req, oauthFlowsDesc),
		fd("oauth2MetadataUrl", "oauth2_metadata_url", kindScalar, opt, nil),
	)
	openIDConnectSchemeDesc = message(
		fd("description", "", kindScalar, opt, nil),
		fd("openIdConnectUrl", "open_id_connect_url", kindScalar, req, nil),
	)
	mtlsSchemeDesc = message(fd("description", "", kindScalar, opt, nil))

	// securitySchemeDesc is a oneof: each member is a message field, which
	// has presence.
	securitySchemeDesc = message(
		fd("apiKeySecurityScheme", "api_key_security_scheme", kindMessage, opt, apiKeySchemeDesc),
		fd("httpAuthSecurityScheme", "http_auth_security_scheme", kindMessage, opt, httpAuthSchemeDesc),
		fd("oauth2SecurityScheme", "oauth2_security_scheme", kindMessage, opt, oauth2SchemeDesc),
		fd("openIdConnectSecurityScheme", "open_id_connect_security_scheme", kindMessage, opt, openIDConnectSchemeDesc),
		fd("mtlsSecurityScheme", "mtls_security_scheme", kindMessage, opt, mtlsSchemeDesc),
	)

	agentInterfaceDesc = message(
		fd("url", "", kindScalar, req, nil),
		fd("protocolBinding", "protocol_binding", kindScalar, req, nil),
		fd("tenant", "", kindScalar, opt, nil),
		fd("protocolVersion", "protocol_version", kindScalar, req, nil),
	)
	agentProviderDesc = message(
		fd("url", "", kindScalar, req, nil),
		fd("organization", "", kindScalar, req, nil),
	)
	agentExtensionDesc = message(
		fd("uri", "", kindScalar, opt, nil),
		fd("description", "", kindScalar, opt, nil),
		fd("required", "", kindScalar, opt, nil),
		fd("params", "", kindOpaque, opt, nil),
	)
	agentCapabilitiesDesc = message(
		fd("streaming", "", kindOptional, opt, nil),
		fd("pushNotifications", "push_notifications", kindOptional, opt, nil),
		fd("extensions", "", kindRepeatedMessage, opt, agentExtensionDesc),
		fd("extendedAgentCard", "extended_agent_card", kindOptional, opt, nil),
	)
	agentSkillDesc = message(
		fd("id", "", kindScalar, req, nil),
		fd("name", "", kindScalar, req, nil),
		fd("description", "", kindScalar, req, nil),
		fd("tags", "", kindRepeatedScalar, req, nil),
		fd("examples", "", kindRepeatedScalar, opt, nil),
		fd("inputModes", "input_modes", kindRepeatedScalar, opt, nil),
		fd("outputModes", "output_modes", kindRepeatedScalar, opt, nil),
		fd("securityRequirements", "security_requirements", kindRepeatedMessage, opt, securityRequirementDesc),
	)

	// agentCardDesc is the AgentCard message. `signatures` is not listed:
	// it is never part of a payload.
	agentCardDesc = message(
		fd("name", "", kindScalar, req, nil),
		fd("description", "", kindScalar, req, nil),
		fd("supportedInterfaces", "supported_interfaces", kindRepeatedMessage, req, agentInterfaceDesc),
		fd("provider", "", kindMessage, opt, agentProviderDesc),
		fd("version", "", kindScalar, req, nil),
		fd("documentationUrl", "documentation_url", kindOptional, opt, nil),
		fd("capabilities", "", kindMessage, req, agentCapabilitiesDesc),
		fd("securitySchemes", "security_schemes", kindMapMessage, opt, securitySchemeDesc),
		fd("securityRequirements", "security_requirements", kindRepeatedMessage, opt, securityRequirementDesc),
		fd("defaultInputModes", "default_input_modes", kindRepeatedScalar, req, nil),
		fd("defaultOutputModes", "default_output_modes", kindRepeatedScalar, req, nil),
		fd("skills", "", kindRepeatedMessage, req, agentSkillDesc),
		fd("iconUrl", "icon_url", kindOptional, opt, nil),
	)
)
