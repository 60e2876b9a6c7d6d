package v03

import (
	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
)

type agentCardJSON struct {
	ProtocolVersion                   string                        `json:"protocolVersion"`
	Name                              string                        `json:"name"`
	Description                       string                        `json:"description"`
	URL                               string                        `json:"url"`
	PreferredTransport                string                        `json:"preferredTransport,omitempty"`
	AdditionalInterfaces              []agentInterfaceJSON          `json:"additionalInterfaces,omitempty"`
	IconURL                           string                        `json:"iconUrl,omitempty"`
	Provider                          *agentProviderJSON            `json:"provider,omitzero"`
	Version                           string                        `json:"version"`
	DocumentationURL                  string                        `json:"documentationUrl,omitempty"`
	Capabilities                      agentCapabilitiesJSON         `json:"capabilities"`
	SecuritySchemes                   map[string]securitySchemeJSON `json:"securitySchemes,omitempty"`
	Security                          []map[string][]string         `json:"security,omitempty"`
	DefaultInputModes                 []string                      `json:"defaultInputModes"`
	DefaultOutputModes                []string                      `json:"defaultOutputModes"`
	Skills                            []agentSkillJSON              `json:"skills"`
	SupportsAuthenticatedExtendedCard bool                          `json:"supportsAuthenticatedExtendedCard,omitzero"`
	Signatures                        []agentCardSignatureJSON      `json:"signatures,omitempty"`
}

type agentInterfaceJSON struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

type agentProviderJSON struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

type agentCapabilitiesJSON struct {
	Streaming              *bool                `json:"streaming,omitzero"`
	PushNotifications      *bool                `json:"pushNotifications,omitzero"`
	StateTransitionHistory *bool                `json:"stateTransitionHistory,omitzero"`
	Extensions             []agentExtensionJSON `json:"extensions,omitempty"`
}

type agentExtensionJSON struct {
	URI         string         `json:"uri"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required,omitzero"`
	Params      map[string]any `json:"params,omitempty"`
}

type agentSkillJSON struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Tags        []string              `json:"tags"`
	Examples    []string              `json:"examples,omitempty"`
	InputModes  []string              `json:"inputModes,omitempty"`
	OutputModes []string              `json:"outputModes,omitempty"`
	Security    []map[string][]string `json:"security,omitempty"`
}

type agentCardSignatureJSON struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// securitySchemeJSON is the flat union of the five scheme types.
type securitySchemeJSON struct {
	Type              string          `json:"type"`
	Description       string          `json:"description,omitempty"`
	In                string          `json:"in,omitempty"`
	Name              string          `json:"name,omitempty"`
	Scheme            string          `json:"scheme,omitempty"`
	BearerFormat      string          `json:"bearerFormat,omitempty"`
	Flows             *oauthFlowsJSON `json:"flows,omitzero"`
	OAuth2MetadataURL string          `json:"oauth2MetadataUrl,omitempty"`
	OpenIDConnectURL  string          `json:"openIdConnectUrl,omitempty"`
}

type oauthFlowsJSON struct {
	AuthorizationCode *oauthFlowJSON `json:"authorizationCode,omitzero"`
	ClientCredentials *oauthFlowJSON `json:"clientCredentials,omitzero"`
	Implicit          *oauthFlowJSON `json:"implicit,omitzero"`
	Password          *oauthFlowJSON `json:"password,omitzero"`
}

type oauthFlowJSON struct {
	AuthorizationURL string            `json:"authorizationUrl,omitempty"`
	TokenURL         string            `json:"tokenUrl,omitempty"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
}

func boolPtr(b bool) *bool { return &b }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MarshalAgentCard encodes an Agent Card as A2A 0.3.0 JSON (§5.5). Required
// fields are always emitted; capability flags are emitted explicitly.
func MarshalAgentCard(c *a2a.AgentCard) ([]byte, error) {
	w := agentCardJSON{
		ProtocolVersion: c.ProtocolVersion, Name: c.Name, Description: c.Description, URL: c.URL,
		PreferredTransport: c.PreferredTransport, IconURL: c.IconURL, Version: c.Version,
		DocumentationURL: c.DocumentationURL, Security: c.Security,
		DefaultInputModes: nonNil(c.DefaultInputModes), DefaultOutputModes: nonNil(c.DefaultOutputModes),
		SupportsAuthenticatedExtendedCard: c.SupportsAuthenticatedExtendedCard,
		Capabilities: agentCapabilitiesJSON{
			Streaming: boolPtr(c.Capabilities.Streaming), PushNotifications: boolPtr(c.Capabilities.PushNotifications),
			StateTransitionHistory: boolPtr(c.Capabilities.StateTransitionHistory),
		},
		Skills: make([]agentSkillJSON, len(c.Skills)),
	}
	for _, i := range c.AdditionalInterfaces {
		w.AdditionalInterfaces = append(w.AdditionalInterfaces, agentInterfaceJSON{URL: i.URL, Transport: i.Transport})
	}
	if c.Provider != nil {
		w.Provider = &agentProviderJSON{Organization: c.Provider.Organization, URL: c.Provider.URL}
	}
	for _, e := range c.Capabilities.Extensions {
		w.Capabilities.Extensions = append(w.Capabilities.Extensions, agentExtensionJSON(e))
	}
	for i, s := range c.Skills {
		w.Skills[i] = agentSkillJSON{ID: s.ID, Name: s.Name, Description: s.Description, Tags: nonNil(s.Tags),
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes, Security: s.Security}
	}
	for _, s := range c.Signatures {
		w.Signatures = append(w.Signatures, agentCardSignatureJSON(s))
	}
	if len(c.SecuritySchemes) > 0 {
		w.SecuritySchemes = make(map[string]securitySchemeJSON, len(c.SecuritySchemes))
		for k, s := range c.SecuritySchemes {
			w.SecuritySchemes[k] = fromScheme(s)
		}
	}
	return json.Marshal(&w, encodeOpts)
}

func fromScheme(s a2a.SecurityScheme) securitySchemeJSON {
	switch s := s.(type) {
	case a2a.APIKeySecurityScheme:
		return securitySchemeJSON{Type: "apiKey", Description: s.Description, In: s.In, Name: s.Name}
	case a2a.HTTPAuthSecurityScheme:
		return securitySchemeJSON{Type: "http", Description: s.Description, Scheme: s.Scheme, BearerFormat: s.BearerFormat}
	case a2a.OAuth2SecurityScheme:
		f := &oauthFlowsJSON{
			AuthorizationCode: fromFlow(s.Flows.AuthorizationCode), ClientCredentials: fromFlow(s.Flows.ClientCredentials),
			Implicit: fromFlow(s.Flows.Implicit), Password: fromFlow(s.Flows.Password),
		}
		return securitySchemeJSON{Type: "oauth2", Description: s.Description, Flows: f, OAuth2MetadataURL: s.OAuth2MetadataURL}
	case a2a.OpenIDConnectSecurityScheme:
		return securitySchemeJSON{Type: "openIdConnect", Description: s.Description, OpenIDConnectURL: s.OpenIDConnectURL}
	case a2a.MutualTLSSecurityScheme:
		return securitySchemeJSON{Type: "mutualTLS", Description: s.Description}
	}
	return securitySchemeJSON{Type: "mutualTLS"}
}

func fromFlow(f *a2a.OAuthFlow) *oauthFlowJSON {
	if f == nil {
		return nil
	}
	sc := f.Scopes
	if sc == nil {
		sc = map[string]string{}
	}
	return &oauthFlowJSON{AuthorizationURL: f.AuthorizationURL, TokenURL: f.TokenURL, RefreshURL: f.RefreshURL, Scopes: sc}
}

// UnmarshalAgentCard decodes an A2A 0.3.0 Agent Card. Unknown fields are
// ignored; a security scheme with an unknown type is an error. Errors are
// *a2a.Error (-32602) naming the field.
func UnmarshalAgentCard(b []byte) (a2a.AgentCard, error) {
	var w agentCardJSON
	if err := json.Unmarshal(b, &w, decodeOpts); err != nil {
		return a2a.AgentCard{}, decodeErr("", err)
	}
	for _, f := range []struct{ name, v string }{{"name", w.Name}, {"url", w.URL}, {"version", w.Version}, {"protocolVersion", w.ProtocolVersion}} {
		if f.v == "" {
			return a2a.AgentCard{}, a2a.InvalidParams("/"+f.name, "required field missing")
		}
	}
	c := a2a.AgentCard{
		ProtocolVersion: w.ProtocolVersion, Name: w.Name, Description: w.Description, URL: w.URL,
		PreferredTransport: w.PreferredTransport, IconURL: w.IconURL, Version: w.Version,
		DocumentationURL: w.DocumentationURL, Security: w.Security, DefaultInputModes: w.DefaultInputModes,
		DefaultOutputModes: w.DefaultOutputModes, SupportsAuthenticatedExtendedCard: w.SupportsAuthenticatedExtendedCard,
	}
	for _, i := range w.AdditionalInterfaces {
		c.AdditionalInterfaces = append(c.AdditionalInterfaces, a2a.AgentInterface{URL: i.URL, Transport: i.Transport})
	}
	if w.Provider != nil {
		c.Provider = &a2a.AgentProvider{Organization: w.Provider.Organization, URL: w.Provider.URL}
	}
	cp := w.Capabilities
	c.Capabilities.Streaming = cp.Streaming != nil && *cp.Streaming
	c.Capabilities.PushNotifications = cp.PushNotifications != nil && *cp.PushNotifications
	c.Capabilities.StateTransitionHistory = cp.StateTransitionHistory != nil && *cp.StateTransitionHistory
	for _, e := range cp.Extensions {
		c.Capabilities.Extensions = append(c.Capabilities.Extensions, a2a.AgentExtension(e))
	}
	for _, s := range w.Skills {
		c.Skills = append(c.Skills, a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags,
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes, Security: s.Security})
	}
	for _, s := range w.Signatures {
		c.Signatures = append(c.Signatures, a2a.AgentCardSignature(s))
	}
	if len(w.SecuritySchemes) > 0 {
		c.SecuritySchemes = make(map[string]a2a.SecurityScheme, len(w.SecuritySchemes))
		for k, s := range w.SecuritySchemes {
			var out a2a.SecurityScheme
			switch s.Type {
			case "apiKey":
				out = a2a.APIKeySecurityScheme{Description: s.Description, In: s.In, Name: s.Name}
			case "http":
				out = a2a.HTTPAuthSecurityScheme{Description: s.Description, Scheme: s.Scheme, BearerFormat: s.BearerFormat}
			case "oauth2":
				o := a2a.OAuth2SecurityScheme{Description: s.Description, OAuth2MetadataURL: s.OAuth2MetadataURL}
				if s.Flows != nil {
					o.Flows = a2a.OAuthFlows{AuthorizationCode: toFlow(s.Flows.AuthorizationCode), ClientCredentials: toFlow(s.Flows.ClientCredentials),
						Implicit: toFlow(s.Flows.Implicit), Password: toFlow(s.Flows.Password)}
				}
				out = o
			case "openIdConnect":
				out = a2a.OpenIDConnectSecurityScheme{Description: s.Description, OpenIDConnectURL: s.OpenIDConnectURL}
			case "mutualTLS":
				out = a2a.MutualTLSSecurityScheme{Description: s.Description}
			default:
				return a2a.AgentCard{}, a2a.InvalidParams("/securitySchemes/"+k+"/type", "unknown security scheme type")
			}
			c.SecuritySchemes[k] = out
		}
	}
	return c, nil
}

func toFlow(f *oauthFlowJSON) *a2a.OAuthFlow {
	if f == nil {
		return nil
	}
	return &a2a.OAuthFlow{AuthorizationURL: f.AuthorizationURL, TokenURL: f.TokenURL, RefreshURL: f.RefreshURL, Scopes: f.Scopes}
}
