package v10

import (
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// CardOptions tune the Agent Card encoding. The zero value writes the card
// exactly as A2A 1.0 ProtoJSON has it.
type CardOptions struct {
	// ScopeArrays writes the scopes of each security requirement as a bare
	// array, {"schemes": {"oauth": ["read"]}}, instead of ProtoJSON's
	// StringList, {"schemes": {"oauth": {"list": ["read"]}}}. a2a-go v2 up
	// to v2.4.0 reads only the former and rejects the whole card otherwise
	// (https://github.com/a2aproject/a2a-go/issues/430); ProtoJSON parsers
	// (a2a-js 1.x, the Python and Java SDKs) need the latter (a2a-js reads
	// an array as no scopes).
	ScopeArrays bool
}

// SupportedInterfaces returns the supportedInterfaces of c (A2A 1.0
// §4.4.6), preferred first: c.SupportedInterfaces, an empty
// ProtocolVersion read as "1.0"; or, when c has none, the interfaces its
// A2A 0.3 fields declare (url with preferredTransport, JSONRPC when empty,
// then additionalInterfaces), at c.ProtocolVersion's major.minor ("0.3"
// when empty), as a2a-go v2 reads a 0.3 card.
func SupportedInterfaces(c *a2a.AgentCard) []a2a.AgentInterface {
	if len(c.SupportedInterfaces) > 0 {
		out := slices.Clone(c.SupportedInterfaces)
		for i := range out {
			if out[i].ProtocolVersion == "" {
				out[i].ProtocolVersion = a2a.Version10
			}
		}
		return out
	}
	if c.URL == "" {
		return nil
	}
	version := majorMinor(c.ProtocolVersion)
	transport := c.PreferredTransport
	if transport == "" {
		transport = a2a.TransportJSONRPC
	}
	out := []a2a.AgentInterface{{URL: c.URL, Transport: transport, ProtocolVersion: version}}
	for _, i := range c.AdditionalInterfaces {
		if i.URL == c.URL && i.Transport == transport {
			continue
		}
		out = append(out, a2a.AgentInterface{URL: i.URL, Transport: i.Transport, ProtocolVersion: version, Tenant: i.Tenant})
	}
	return out
}

// majorMinor reduces a version to Major.Minor (A2A 1.0 §3.6): "0.3.0" is
// "0.3"; "" is "0.3", the version of a card without one.
func majorMinor(v string) string {
	if v == "" {
		return a2a.Version03
	}
	if i := strings.IndexByte(v, '.'); i >= 0 {
		if j := strings.IndexByte(v[i+1:], '.'); j >= 0 {
			return v[:i+1+j]
		}
	}
	return v
}

// AppendAgentCard appends the A2A 1.0 Agent Card of c (A2A 1.0 §4.4.1,
// §8): name, description, supportedInterfaces (see SupportedInterfaces),
// provider, version, documentationUrl, capabilities {streaming,
// pushNotifications, extensions, extendedAgentCard (true when either
// Capabilities.ExtendedAgentCard or SupportsAuthenticatedExtendedCard
// is)}, securitySchemes (each in its 1.0 wrapper, {"httpAuthSecurityScheme":
// {…}}), securityRequirements (from c.Security), defaultInputModes,
// defaultOutputModes, skills (with securityRequirements), signatures,
// iconUrl. Required members are always written, the capability flags
// explicitly. An OAuth 2.0 scheme carries one flow in A2A 1.0: the first
// of authorizationCode, clientCredentials, implicit, password.
func AppendAgentCard(dst []byte, c *a2a.AgentCard, opts CardOptions) ([]byte, error) {
	e := encoder{b: dst}
	e.card(c, opts)
	return e.finish(dst, len(dst))
}

// MarshalAgentCard is AppendAgentCard into a new buffer.
func MarshalAgentCard(c *a2a.AgentCard, opts CardOptions) ([]byte, error) {
	return AppendAgentCard(make([]byte, 0, 1024), c, opts)
}

func (e *encoder) card(c *a2a.AgentCard, opts CardOptions) {
	e.b = append(e.b, `{"name":`...)
	e.str(c.Name)
	e.field("description", c.Description)
	e.member("supportedInterfaces")
	e.b = append(e.b, '[')
	for i, it := range SupportedInterfaces(c) {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, `{"url":`...)
		e.str(it.URL)
		e.field("protocolBinding", it.Transport)
		e.optional("tenant", it.Tenant)
		e.field("protocolVersion", it.ProtocolVersion)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ']')
	if p := c.Provider; p != nil {
		e.member("provider")
		e.b = append(e.b, `{"url":`...)
		e.str(p.URL)
		e.field("organization", p.Organization)
		e.b = append(e.b, '}')
	}
	e.field("version", c.Version)
	e.optional("documentationUrl", c.DocumentationURL)
	e.member("capabilities")
	e.b = append(e.b, '{')
	e.boolean("streaming", c.Capabilities.Streaming)
	e.boolean("pushNotifications", c.Capabilities.PushNotifications)
	if len(c.Capabilities.Extensions) > 0 {
		e.member("extensions")
		e.b = append(e.b, '[')
		for i, x := range c.Capabilities.Extensions {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, '{')
			e.optional("uri", x.URI)
			e.optional("description", x.Description)
			if x.Required {
				e.boolean("required", true)
			}
			if len(x.Params) > 0 {
				e.member("params")
				e.object(x.Params)
			}
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.boolean("extendedAgentCard", c.Capabilities.ExtendedAgentCard || c.SupportsAuthenticatedExtendedCard)
	e.b = append(e.b, '}')
	if len(c.SecuritySchemes) > 0 {
		e.member("securitySchemes")
		e.b = append(e.b, '{')
		for i, name := range sortedKeys(c.SecuritySchemes) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(name)
			e.b = append(e.b, ':')
			e.securityScheme(c.SecuritySchemes[name])
		}
		e.b = append(e.b, '}')
	}
	e.securityRequirements(c.Security, opts)
	e.member("defaultInputModes")
	e.strings(c.DefaultInputModes)
	e.member("defaultOutputModes")
	e.strings(c.DefaultOutputModes)
	e.member("skills")
	e.b = append(e.b, '[')
	for i, s := range c.Skills {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, `{"id":`...)
		e.str(s.ID)
		e.field("name", s.Name)
		e.field("description", s.Description)
		e.member("tags")
		e.strings(s.Tags)
		e.stringList("examples", s.Examples)
		e.stringList("inputModes", s.InputModes)
		e.stringList("outputModes", s.OutputModes)
		e.securityRequirements(s.Security, opts)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ']')
	if len(c.Signatures) > 0 {
		e.member("signatures")
		e.b = append(e.b, '[')
		for i, s := range c.Signatures {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"protected":`...)
			e.str(s.Protected)
			e.field("signature", s.Signature)
			if len(s.Header) > 0 {
				e.member("header")
				e.object(s.Header)
			}
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.optional("iconUrl", c.IconURL)
	e.b = append(e.b, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// securityRequirements appends a securityRequirements member unless reqs
// is empty: [{"schemes": {name: {"list": [scopes]}}}].
func (e *encoder) securityRequirements(reqs []map[string][]string, opts CardOptions) {
	if len(reqs) == 0 {
		return
	}
	e.member("securityRequirements")
	e.b = append(e.b, '[')
	for i, req := range reqs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if len(req) == 0 {
			e.b = append(e.b, '{', '}')
			continue
		}
		e.b = append(e.b, `{"schemes":{`...)
		for j, name := range sortedKeys(req) {
			if j > 0 {
				e.b = append(e.b, ',')
			}
			e.str(name)
			e.b = append(e.b, ':')
			scopes := req[name]
			switch {
			case opts.ScopeArrays:
				e.strings(scopes)
			case len(scopes) == 0:
				e.b = append(e.b, '{', '}')
			default:
				e.b = append(e.b, `{"list":`...)
				e.strings(scopes)
				e.b = append(e.b, '}')
			}
		}
		e.b = append(e.b, "}}"...)
	}
	e.b = append(e.b, ']')
}

// SchemeWrapper returns the A2A 1.0 member name that wraps s in a
// SecurityScheme (A2A 1.0 §4.5.1): "apiKeySecurityScheme",
// "httpAuthSecurityScheme", "oauth2SecurityScheme",
// "openIdConnectSecurityScheme" or "mtlsSecurityScheme".
func SchemeWrapper(s a2a.SecurityScheme) string {
	switch s.(type) {
	case a2a.APIKeySecurityScheme, *a2a.APIKeySecurityScheme:
		return "apiKeySecurityScheme"
	case a2a.HTTPAuthSecurityScheme, *a2a.HTTPAuthSecurityScheme:
		return "httpAuthSecurityScheme"
	case a2a.OAuth2SecurityScheme, *a2a.OAuth2SecurityScheme:
		return "oauth2SecurityScheme"
	case a2a.OpenIDConnectSecurityScheme, *a2a.OpenIDConnectSecurityScheme:
		return "openIdConnectSecurityScheme"
	}
	return "mtlsSecurityScheme"
}

// securityScheme appends a SecurityScheme: {"<wrapper>": {…}}. An unknown
// or nil scheme is written as mutual TLS, as v03 does.
func (e *encoder) securityScheme(s a2a.SecurityScheme) {
	switch q := s.(type) {
	case *a2a.APIKeySecurityScheme:
		s = *q
	case *a2a.HTTPAuthSecurityScheme:
		s = *q
	case *a2a.OAuth2SecurityScheme:
		s = *q
	case *a2a.OpenIDConnectSecurityScheme:
		s = *q
	case *a2a.MutualTLSSecurityScheme:
		s = *q
	}
	e.b = append(e.b, `{"`...)
	e.b = append(e.b, SchemeWrapper(s)...)
	e.b = append(e.b, `":{`...)
	switch s := s.(type) {
	case a2a.APIKeySecurityScheme:
		e.optional("description", s.Description)
		e.field("location", s.In)
		e.field("name", s.Name)
	case a2a.HTTPAuthSecurityScheme:
		e.optional("description", s.Description)
		e.field("scheme", s.Scheme)
		e.optional("bearerFormat", s.BearerFormat)
	case a2a.OAuth2SecurityScheme:
		e.optional("description", s.Description)
		e.member("flows")
		e.b = append(e.b, '{')
		f := s.Flows
		switch {
		case f.AuthorizationCode != nil:
			e.flow("authorizationCode", f.AuthorizationCode, true, true)
		case f.ClientCredentials != nil:
			e.flow("clientCredentials", f.ClientCredentials, false, true)
		case f.Implicit != nil:
			e.flow("implicit", f.Implicit, true, false)
		case f.Password != nil:
			e.flow("password", f.Password, false, true)
		}
		e.b = append(e.b, '}')
		e.optional("oauth2MetadataUrl", s.OAuth2MetadataURL)
	case a2a.OpenIDConnectSecurityScheme:
		e.optional("description", s.Description)
		e.field("openIdConnectUrl", s.OpenIDConnectURL)
	case a2a.MutualTLSSecurityScheme:
		e.optional("description", s.Description)
	}
	e.b = append(e.b, "}}"...)
}

// flow appends one OAuth flow member; hasAuth and hasToken say whether the
// flow has an authorizationUrl and a tokenUrl (written even when empty for
// the flows that require them).
func (e *encoder) flow(name string, f *a2a.OAuthFlow, hasAuth, hasToken bool) {
	e.member(name)
	e.b = append(e.b, '{')
	required := name == "authorizationCode" || name == "clientCredentials"
	if hasAuth {
		if required {
			e.field("authorizationUrl", f.AuthorizationURL)
		} else {
			e.optional("authorizationUrl", f.AuthorizationURL)
		}
	}
	if hasToken {
		if required {
			e.field("tokenUrl", f.TokenURL)
		} else {
			e.optional("tokenUrl", f.TokenURL)
		}
	}
	e.optional("refreshUrl", f.RefreshURL)
	e.member("scopes")
	var err error
	e.b, err = wirejson.AppendStringMap(e.b, f.Scopes)
	e.setErr(err)
	e.b = append(e.b, '}')
}

// ---- decoding ----

var (
	cardFields       = message("AgentCard")
	interfaceFields  = message("AgentInterface")
	providerFields   = message("AgentProvider")
	capFields        = message("AgentCapabilities")
	extensionFields  = message("AgentExtension")
	skillFields      = message("AgentSkill")
	signatureFields  = message("AgentCardSignature")
	requirementField = message("SecurityRequirement")
	stringListFields = message("StringList")
	schemeFields     = message("SecurityScheme")
	// The members of every scheme, and of every OAuth flow: each is read
	// as one object, its kind told by the member naming it.
	schemeBodyFields = protoFields([]string{"APIKeySecurityScheme", "HTTPAuthSecurityScheme",
		"OAuth2SecurityScheme", "OpenIdConnectSecurityScheme", "MutualTlsSecurityScheme"})
	flowsFields = message("OAuthFlows")
	flowFields  = protoFields([]string{"AuthorizationCodeOAuthFlow", "ClientCredentialsOAuthFlow",
		"ImplicitOAuthFlow", "PasswordOAuthFlow", "DeviceCodeOAuthFlow"})
)

// UnmarshalAgentCard decodes an A2A 1.0 Agent Card (A2A 1.0 §4.4.1). name,
// version and supportedInterfaces are required (a card without
// supportedInterfaces is an A2A 0.3 card). Unknown members are ignored, so
// a card that also carries the 0.3 members reads as its 1.0 part.
// securityRequirements scopes are read as a StringList or a bare array.
// The card's A2A 0.3 fields (ProtocolVersion, URL, PreferredTransport,
// AdditionalInterfaces) stay empty; SupportsAuthenticatedExtendedCard
// equals Capabilities.ExtendedAgentCard. A deviceCode OAuth flow and
// pkceRequired, which a2a.AgentCard cannot hold, are dropped. Errors are
// *a2a.Error InvalidParams naming the field.
func UnmarshalAgentCard(b []byte) (a2a.AgentCard, error) {
	var c a2a.AgentCard
	d := newDecoder(b, "", false)
	defer d.release()
	err := d.document(b, false, func() error {
		var hasIfaces bool
		_, err := d.object(cardFields, func(name string) error {
			var err error
			switch name {
			case "name":
				c.Name, err = d.str()
			case "description":
				c.Description, err = d.str()
			case "supportedInterfaces":
				hasIfaces, err = d.array(func() error {
					if err := d.element(); err != nil {
						return err
					}
					var it a2a.AgentInterface
					_, err := d.object(interfaceFields, func(name string) error {
						var err error
						switch name {
						case "url":
							it.URL, err = d.str()
						case "protocolBinding":
							it.Transport, err = d.str()
						case "tenant":
							it.Tenant, err = d.str()
						case "protocolVersion":
							it.ProtocolVersion, err = d.str()
						}
						return err
					})
					if err == nil && it.URL == "" {
						return d.missing("url")
					}
					c.SupportedInterfaces = append(c.SupportedInterfaces, it)
					return err
				})
			case "provider":
				p := &a2a.AgentProvider{}
				var ok bool
				if ok, err = d.object(providerFields, func(name string) error {
					var err error
					switch name {
					case "url":
						p.URL, err = d.str()
					case "organization":
						p.Organization, err = d.str()
					}
					return err
				}); ok {
					c.Provider = p
				}
			case "version":
				c.Version, err = d.str()
			case "documentationUrl":
				c.DocumentationURL, err = d.str()
			case "capabilities":
				err = d.capabilities(&c.Capabilities)
				c.SupportsAuthenticatedExtendedCard = c.Capabilities.ExtendedAgentCard
			case "securitySchemes":
				err = d.securitySchemes(&c)
			case "securityRequirements":
				c.Security, err = d.securityRequirements()
			case "defaultInputModes":
				c.DefaultInputModes, err = d.strs()
			case "defaultOutputModes":
				c.DefaultOutputModes, err = d.strs()
			case "skills":
				_, err = d.array(func() error {
					if err := d.element(); err != nil {
						return err
					}
					s, err := d.skill()
					c.Skills = append(c.Skills, s)
					return err
				})
			case "signatures":
				_, err = d.array(func() error {
					if err := d.element(); err != nil {
						return err
					}
					var s a2a.AgentCardSignature
					_, err := d.object(signatureFields, func(name string) error {
						var err error
						switch name {
						case "protected":
							s.Protected, err = d.str()
						case "signature":
							s.Signature, err = d.str()
						case "header":
							s.Header, err = d.structValue()
						}
						return err
					})
					c.Signatures = append(c.Signatures, s)
					return err
				})
			case "iconUrl":
				c.IconURL, err = d.str()
			}
			return err
		})
		switch {
		case err != nil:
			return err
		case c.Name == "":
			return d.missing("name")
		case c.Version == "":
			return d.missing("version")
		case !hasIfaces || len(c.SupportedInterfaces) == 0:
			return d.missing("supportedInterfaces")
		}
		return nil
	})
	return orZero(c, err)
}

func (d *decoder) capabilities(c *a2a.AgentCapabilities) error {
	_, err := d.object(capFields, func(name string) error {
		var err error
		switch name {
		case "streaming":
			c.Streaming, err = d.boolean()
		case "pushNotifications":
			c.PushNotifications, err = d.boolean()
		case "extendedAgentCard":
			c.ExtendedAgentCard, err = d.boolean()
		case "extensions":
			_, err = d.array(func() error {
				if err := d.element(); err != nil {
					return err
				}
				var x a2a.AgentExtension
				_, err := d.object(extensionFields, func(name string) error {
					var err error
					switch name {
					case "uri":
						x.URI, err = d.str()
					case "description":
						x.Description, err = d.str()
					case "required":
						x.Required, err = d.boolean()
					case "params":
						x.Params, err = d.structValue()
					}
					return err
				})
				c.Extensions = append(c.Extensions, x)
				return err
			})
		}
		return err
	})
	return err
}

func (d *decoder) skill() (a2a.AgentSkill, error) {
	var s a2a.AgentSkill
	_, err := d.object(skillFields, func(name string) error {
		var err error
		switch name {
		case "id":
			s.ID, err = d.str()
		case "name":
			s.Name, err = d.str()
		case "description":
			s.Description, err = d.str()
		case "tags":
			s.Tags, err = d.strs()
		case "examples":
			s.Examples, err = d.strs()
		case "inputModes":
			s.InputModes, err = d.strs()
		case "outputModes":
			s.OutputModes, err = d.strs()
		case "securityRequirements":
			s.Security, err = d.securityRequirements()
		}
		return err
	})
	return s, err
}

// mapObject reads an object with arbitrary keys, calling fn for each
// member (fn reads the value). null reads as absent.
func (d *decoder) mapObject(fn func(key string) error) error {
	switch d.dec.PeekKind() {
	case 'n':
		_, err := d.dec.ReadToken()
		return d.wrapNil(err)
	case '{':
	default:
		return d.mismatch("object")
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return d.wrap(err)
	}
	for d.dec.PeekKind() != '}' {
		tok, err := d.dec.ReadToken()
		if err != nil {
			return d.wrap(err)
		}
		if err := fn(tok.String()); err != nil {
			return err
		}
	}
	_, err := d.dec.ReadToken()
	return d.wrapNil(err)
}

// securityRequirements reads [{"schemes": {name: StringList}}]; a
// StringList may also be a bare array of scopes (a2a-go v2).
func (d *decoder) securityRequirements() ([]map[string][]string, error) {
	var out []map[string][]string
	_, err := d.array(func() error {
		if err := d.element(); err != nil {
			return err
		}
		req := map[string][]string{}
		_, err := d.object(requirementField, func(string) error {
			return d.mapObject(func(name string) error {
				scopes := []string{}
				switch d.dec.PeekKind() {
				case '[':
					s, err := d.strs()
					if err != nil {
						return err
					}
					scopes = append(scopes, s...)
				case 'n':
					if _, err := d.dec.ReadToken(); err != nil {
						return d.wrap(err)
					}
				default:
					if _, err := d.object(stringListFields, func(string) error {
						s, err := d.strs()
						scopes = append(scopes, s...)
						return err
					}); err != nil {
						return err
					}
				}
				req[name] = scopes
				return nil
			})
		})
		out = append(out, req)
		return err
	})
	return out, err
}

// securitySchemes reads the securitySchemes map: each value a
// SecurityScheme with exactly one of the five wrappers.
func (d *decoder) securitySchemes(c *a2a.AgentCard) error {
	c.SecuritySchemes = map[string]a2a.SecurityScheme{}
	return d.mapObject(func(key string) error {
		var (
			scheme a2a.SecurityScheme
			given  []string
		)
		_, err := d.object(schemeFields, func(name string) error {
			given = append(given, name)
			var b schemeBody
			if err := d.schemeBody(&b); err != nil {
				return err
			}
			switch name {
			case "apiKeySecurityScheme":
				scheme = a2a.APIKeySecurityScheme{Description: b.description, In: b.location, Name: b.name}
			case "httpAuthSecurityScheme":
				scheme = a2a.HTTPAuthSecurityScheme{Description: b.description, Scheme: b.scheme, BearerFormat: b.bearerFormat}
			case "oauth2SecurityScheme":
				scheme = a2a.OAuth2SecurityScheme{Description: b.description, Flows: b.flows, OAuth2MetadataURL: b.oauth2MetadataURL}
			case "openIdConnectSecurityScheme":
				scheme = a2a.OpenIDConnectSecurityScheme{Description: b.description, OpenIDConnectURL: b.openIDConnectURL}
			case "mtlsSecurityScheme":
				scheme = a2a.MutualTLSSecurityScheme{Description: b.description}
			}
			return nil
		})
		switch {
		case err != nil:
			return err
		case len(given) == 0:
			return d.fail("security scheme has none of apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme")
		case len(given) > 1:
			return d.fail("security scheme has both " + given[0] + " and " + given[1] + "; exactly one is allowed")
		}
		c.SecuritySchemes[key] = scheme
		return nil
	})
}

// schemeBody holds the members of any of the five scheme messages.
type schemeBody struct {
	description, location, name, scheme, bearerFormat string
	oauth2MetadataURL, openIDConnectURL               string
	flows                                             a2a.OAuthFlows
}

func (d *decoder) schemeBody(b *schemeBody) error {
	_, err := d.object(schemeBodyFields, func(name string) error {
		var err error
		switch name {
		case "description":
			b.description, err = d.str()
		case "location":
			b.location, err = d.str()
		case "name":
			b.name, err = d.str()
		case "scheme":
			b.scheme, err = d.str()
		case "bearerFormat":
			b.bearerFormat, err = d.str()
		case "oauth2MetadataUrl":
			b.oauth2MetadataURL, err = d.str()
		case "openIdConnectUrl":
			b.openIDConnectURL, err = d.str()
		case "flows":
			_, err = d.object(flowsFields, func(name string) error {
				f, err := d.flow()
				switch name {
				case "authorizationCode":
					b.flows.AuthorizationCode = f
				case "clientCredentials":
					b.flows.ClientCredentials = f
				case "implicit":
					b.flows.Implicit = f
				case "password":
					b.flows.Password = f
				}
				return err
			})
		}
		return err
	})
	return err
}

func (d *decoder) flow() (*a2a.OAuthFlow, error) {
	f := &a2a.OAuthFlow{}
	_, err := d.object(flowFields, func(name string) error {
		var err error
		switch name {
		case "authorizationUrl":
			f.AuthorizationURL, err = d.str()
		case "tokenUrl":
			f.TokenURL, err = d.str()
		case "refreshUrl":
			f.RefreshURL, err = d.str()
		case "scopes":
			f.Scopes = map[string]string{}
			err = d.mapObject(func(k string) error {
				v, err := d.str()
				f.Scopes[k] = v
				return err
			})
		case "pkceRequired":
			_, err = d.boolean()
		case "deviceAuthorizationUrl":
			_, err = d.str()
		}
		return err
	})
	return f, err
}
