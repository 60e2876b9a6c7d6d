package a2a

// ProtocolVersion is the A2A protocol version this package models first.
const ProtocolVersion = "0.3.0"

// ExtensionEventLog is the URI of a2abridge's event-log extension (declared,
// not required, in capabilities.extensions, A2A 0.3.0 §5.5.2.1 and 1.0
// §4.4.4): SSE event ids are the task's event sequence numbers;
// tasks/resubscribe (0.3) and SubscribeToTask (1.0, both bindings) replay
// every event after the Last-Event-ID header, on a terminal task too; a
// repeated messageId is not processed twice. Clients use it to know that resuming a stream and
// retrying message/send are safe.
const ExtensionEventLog = "urn:a2abridge:ext:event-log:v1"

// Protocol versions served and understood (A2A 1.0 §3.6; "0.3" covers 0.3.0).
const (
	Version03 = "0.3"
	Version10 = "1.0"
)

// Transport names (A2A 0.3.0 §5.5.5), the protocol bindings of A2A 1.0
// §5 ("JSONRPC", "GRPC", "HTTP+JSON").
const (
	TransportJSONRPC  = "JSONRPC"
	TransportGRPC     = "GRPC"
	TransportHTTPJSON = "HTTP+JSON"
)

// AgentCard describes an agent: identity, endpoint, capabilities, skills and
// security requirements (A2A 0.3.0 §5.5). Required on the wire: Name,
// Description, URL, Version, ProtocolVersion, Capabilities,
// DefaultInputModes, DefaultOutputModes, Skills.
type AgentCard struct {
	ProtocolVersion                   string
	Name                              string
	Description                       string
	URL                               string
	PreferredTransport                string
	AdditionalInterfaces              []AgentInterface
	IconURL                           string
	Provider                          *AgentProvider
	Version                           string
	DocumentationURL                  string
	Capabilities                      AgentCapabilities
	SecuritySchemes                   map[string]SecurityScheme
	Security                          []map[string][]string
	DefaultInputModes                 []string
	DefaultOutputModes                []string
	Skills                            []AgentSkill
	SupportsAuthenticatedExtendedCard bool
	Signatures                        []AgentCardSignature
	// SupportedInterfaces (A2A 1.0 §4.4.1) lists every endpoint with its
	// protocol binding and version, preferred first. Security holds the
	// card's security requirements for both versions (1.0
	// securityRequirements).
	SupportedInterfaces []AgentInterface
}

// AgentInterface is a URL and the transport spoken there (A2A 0.3.0
// §5.5.5; A2A 1.0 §4.4.2, where Transport is the protocolBinding and
// ProtocolVersion and Tenant are added).
type AgentInterface struct {
	URL             string
	Transport       string
	ProtocolVersion string
	Tenant          string
}

// AgentProvider is the organisation behind an agent (A2A 0.3.0 §5.5.1).
type AgentProvider struct {
	Organization string
	URL          string
}

// AgentCapabilities lists optional features (A2A 0.3.0 §5.5.2).
type AgentCapabilities struct {
	Streaming              bool
	PushNotifications      bool
	StateTransitionHistory bool
	Extensions             []AgentExtension
	// ExtendedAgentCard (A2A 1.0 §4.4.3) is the 1.0 name of the card's
	// supportsAuthenticatedExtendedCard; both are written from either.
	ExtendedAgentCard bool
}

// AgentExtension declares a protocol extension (A2A 0.3.0 §5.5.2.1).
type AgentExtension struct {
	URI         string
	Description string
	Required    bool
	Params      map[string]any
}

// AgentSkill is one capability the agent offers (A2A 0.3.0 §5.5.4).
type AgentSkill struct {
	ID          string
	Name        string
	Description string
	Tags        []string
	Examples    []string
	InputModes  []string
	OutputModes []string
	Security    []map[string][]string
}

// AgentCardSignature is a JWS over the card (A2A 0.3.0 §5.5.6).
type AgentCardSignature struct {
	Protected string
	Signature string
	Header    map[string]any
}

// SecurityScheme is one authentication scheme of an Agent Card
// (A2A 0.3.0 §5.5.3, OpenAPI 3 security schemes): exactly one of
// APIKeySecurityScheme, HTTPAuthSecurityScheme, OAuth2SecurityScheme,
// OpenIDConnectSecurityScheme, MutualTLSSecurityScheme.
type SecurityScheme interface {
	// SchemeType is the wire "type": apiKey, http, oauth2, openIdConnect or mutualTLS.
	SchemeType() string
}

// APIKeySecurityScheme is an API key in a header, query parameter or cookie.
type APIKeySecurityScheme struct {
	Description string
	In          string // "header", "query" or "cookie"
	Name        string
}

// HTTPAuthSecurityScheme is HTTP authentication such as Bearer or Basic.
type HTTPAuthSecurityScheme struct {
	Description  string
	Scheme       string
	BearerFormat string
}

// OAuth2SecurityScheme is OAuth 2.0 with its flows.
type OAuth2SecurityScheme struct {
	Description       string
	Flows             OAuthFlows
	OAuth2MetadataURL string
}

// OpenIDConnectSecurityScheme is OpenID Connect discovery.
type OpenIDConnectSecurityScheme struct {
	Description      string
	OpenIDConnectURL string
}

// MutualTLSSecurityScheme is mutual TLS.
type MutualTLSSecurityScheme struct {
	Description string
}

// SchemeType implements SecurityScheme.
func (APIKeySecurityScheme) SchemeType() string { return "apiKey" }

// SchemeType implements SecurityScheme.
func (HTTPAuthSecurityScheme) SchemeType() string { return "http" }

// SchemeType implements SecurityScheme.
func (OAuth2SecurityScheme) SchemeType() string { return "oauth2" }

// SchemeType implements SecurityScheme.
func (OpenIDConnectSecurityScheme) SchemeType() string { return "openIdConnect" }

// SchemeType implements SecurityScheme.
func (MutualTLSSecurityScheme) SchemeType() string { return "mutualTLS" }

// OAuthFlows are the OAuth 2.0 flows a scheme supports; nil flows are absent.
type OAuthFlows struct {
	AuthorizationCode *OAuthFlow
	ClientCredentials *OAuthFlow
	Implicit          *OAuthFlow
	Password          *OAuthFlow
}

// OAuthFlow is one OAuth 2.0 flow. Which URLs are required depends on the flow.
type OAuthFlow struct {
	AuthorizationURL string
	TokenURL         string
	RefreshURL       string
	Scopes           map[string]string
}
