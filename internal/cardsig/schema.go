package cardsig

// The A2A 1.0 AgentCard message and the messages it holds
// (a2a-v1.0.1.proto), as far as canonicalization needs them: each field's
// JSON name (lowerCamelCase), its proto name (accepted as ProtoJSON
// parsers accept it, when the JSON name is absent) and its kind.

// kind is how a field's value is read and whether its default is kept.
type kind uint8

const (
	kString     kind = iota // string; "" is dropped
	kBool                   // bool without presence; false is dropped
	kOptBool                // optional bool; false is kept (A2A 1.0 §5.7)
	kStrings                // repeated string
	kMessage                // a message
	kMessages               // repeated message
	kMessageMap             // map<string, message>
	kStringMap              // map<string, string>
	kStruct                 // google.protobuf.Struct: any JSON object, kept as is
	kScopeMap               // map<string, StringList>: each value {"list": […]}; a bare array reads as an empty list
)

// field is one member of a message.
type field struct {
	json, proto string
	kind        kind
	msg         *message // for kMessage, kMessages, kMessageMap
}

// message is a proto message; oneof: its fields form one oneof, of which
// at most one may be set.
type message struct {
	name   string
	fields []field
	oneof  bool
}

func f(json, proto string, k kind) field { return field{json: json, proto: proto, kind: k} }

func m(json, proto string, k kind, msg *message) field {
	return field{json: json, proto: proto, kind: k, msg: msg}
}

var (
	agentInterface = &message{name: "AgentInterface", fields: []field{
		f("url", "url", kString),
		f("protocolBinding", "protocol_binding", kString),
		f("tenant", "tenant", kString),
		f("protocolVersion", "protocol_version", kString),
	}}
	agentProvider = &message{name: "AgentProvider", fields: []field{
		f("url", "url", kString),
		f("organization", "organization", kString),
	}}
	agentExtension = &message{name: "AgentExtension", fields: []field{
		f("uri", "uri", kString),
		f("description", "description", kString),
		f("required", "required", kBool),
		f("params", "params", kStruct),
	}}
	agentCapabilities = &message{name: "AgentCapabilities", fields: []field{
		f("streaming", "streaming", kOptBool),
		f("pushNotifications", "push_notifications", kOptBool),
		m("extensions", "extensions", kMessages, agentExtension),
		f("extendedAgentCard", "extended_agent_card", kOptBool),
	}}
	securityRequirement = &message{name: "SecurityRequirement", fields: []field{
		f("schemes", "schemes", kScopeMap),
	}}
	agentSkill = &message{name: "AgentSkill", fields: []field{
		f("id", "id", kString),
		f("name", "name", kString),
		f("description", "description", kString),
		f("tags", "tags", kStrings),
		f("examples", "examples", kStrings),
		f("inputModes", "input_modes", kStrings),
		f("outputModes", "output_modes", kStrings),
		m("securityRequirements", "security_requirements", kMessages, securityRequirement),
	}}

	apiKeyScheme = &message{name: "APIKeySecurityScheme", fields: []field{
		f("description", "description", kString),
		f("location", "location", kString),
		f("name", "name", kString),
	}}
	httpAuthScheme = &message{name: "HTTPAuthSecurityScheme", fields: []field{
		f("description", "description", kString),
		f("scheme", "scheme", kString),
		f("bearerFormat", "bearer_format", kString),
	}}
	authorizationCodeFlow = &message{name: "AuthorizationCodeOAuthFlow", fields: []field{
		f("authorizationUrl", "authorization_url", kString),
		f("tokenUrl", "token_url", kString),
		f("refreshUrl", "refresh_url", kString),
		f("scopes", "scopes", kStringMap),
		f("pkceRequired", "pkce_required", kBool),
	}}
	clientCredentialsFlow = &message{name: "ClientCredentialsOAuthFlow", fields: []field{
		f("tokenUrl", "token_url", kString),
		f("refreshUrl", "refresh_url", kString),
		f("scopes", "scopes", kStringMap),
	}}
	implicitFlow = &message{name: "ImplicitOAuthFlow", fields: []field{
		f("authorizationUrl", "authorization_url", kString),
		f("refreshUrl", "refresh_url", kString),
		f("scopes", "scopes", kStringMap),
	}}
	passwordFlow = &message{name: "PasswordOAuthFlow", fields: []field{
		f("tokenUrl", "token_url", kString),
		f("refreshUrl", "refresh_url", kString),
		f("scopes", "scopes", kStringMap),
	}}
	deviceCodeFlow = &message{name: "DeviceCodeOAuthFlow", fields: []field{
		f("deviceAuthorizationUrl", "device_authorization_url", kString),
		f("tokenUrl", "token_url", kString),
		f("refreshUrl", "refresh_url", kString),
		f("scopes", "scopes", kStringMap),
	}}
	oauthFlows = &message{name: "OAuthFlows", oneof: true, fields: []field{
		m("authorizationCode", "authorization_code", kMessage, authorizationCodeFlow),
		m("clientCredentials", "client_credentials", kMessage, clientCredentialsFlow),
		m("implicit", "implicit", kMessage, implicitFlow),
		m("password", "password", kMessage, passwordFlow),
		m("deviceCode", "device_code", kMessage, deviceCodeFlow),
	}}
	oauth2Scheme = &message{name: "OAuth2SecurityScheme", fields: []field{
		f("description", "description", kString),
		m("flows", "flows", kMessage, oauthFlows),
		f("oauth2MetadataUrl", "oauth2_metadata_url", kString),
	}}
	openIDConnectScheme = &message{name: "OpenIdConnectSecurityScheme", fields: []field{
		f("description", "description", kString),
		f("openIdConnectUrl", "open_id_connect_url", kString),
	}}
	mtlsScheme = &message{name: "MutualTlsSecurityScheme", fields: []field{
		f("description", "description", kString),
	}}
	securityScheme = &message{name: "SecurityScheme", oneof: true, fields: []field{
		m("apiKeySecurityScheme", "api_key_security_scheme", kMessage, apiKeyScheme),
		m("httpAuthSecurityScheme", "http_auth_security_scheme", kMessage, httpAuthScheme),
		m("oauth2SecurityScheme", "oauth2_security_scheme", kMessage, oauth2Scheme),
		m("openIdConnectSecurityScheme", "open_id_connect_security_scheme", kMessage, openIDConnectScheme),
		m("mtlsSecurityScheme", "mtls_security_scheme", kMessage, mtlsScheme),
	}}

	// agentCard is AgentCard without signatures, which canonicalization
	// excludes (A2A 1.0 §8.4.1 rule 3).
	agentCard = &message{name: "AgentCard", fields: []field{
		f("name", "name", kString),
		f("description", "description", kString),
		m("supportedInterfaces", "supported_interfaces", kMessages, agentInterface),
		m("provider", "provider", kMessage, agentProvider),
		f("version", "version", kString),
		f("documentationUrl", "documentation_url", kString),
		m("capabilities", "capabilities", kMessage, agentCapabilities),
		m("securitySchemes", "security_schemes", kMessageMap, securityScheme),
		m("securityRequirements", "security_requirements", kMessages, securityRequirement),
		f("defaultInputModes", "default_input_modes", kStrings),
		f("defaultOutputModes", "default_output_modes", kStrings),
		m("skills", "skills", kMessages, agentSkill),
		f("iconUrl", "icon_url", kString),
	}}
)
