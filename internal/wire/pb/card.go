package pb

import (
	"slices"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// AppendAgentCard appends an AgentCard (A2A 1.0 §4.4.1), the result of
// GetExtendedAgentCard, with the members the 1.0 JSON codec writes
// (v10.AppendAgentCard): the supported interfaces of
// v10.SupportedInterfaces, extended_agent_card true when either
// Capabilities.ExtendedAgentCard or SupportsAuthenticatedExtendedCard is,
// each security scheme in its oneof, the first of an OAuth 2.0 scheme's
// flows. Fields: name = 1, description = 2, supported_interfaces = 3,
// provider = 4, version = 5, documentation_url = 6, capabilities = 7,
// security_schemes = 8, security_requirements = 9, default_input_modes =
// 10, default_output_modes = 11, skills = 12, signatures = 13, icon_url =
// 14.
func AppendAgentCard(dst []byte, c *a2a.AgentCard) ([]byte, error) {
	e := encoder{b: dst}
	e.card(c)
	return e.finish(dst, len(dst))
}

func (e *encoder) card(c *a2a.AgentCard) {
	e.str(1, c.Name)
	e.str(2, c.Description)
	for _, it := range v10.SupportedInterfaces(c) {
		at := e.begin(3)
		e.str(1, it.URL)
		e.str(2, it.Transport)
		e.str(3, it.Tenant)
		e.str(4, it.ProtocolVersion)
		e.end(at)
	}
	if p := c.Provider; p != nil {
		at := e.begin(4)
		e.str(1, p.URL)
		e.str(2, p.Organization)
		e.end(at)
	}
	e.str(5, c.Version)
	e.str(6, c.DocumentationURL)
	at := e.begin(7)
	// The capability flags have presence: written, true or false.
	e.boolAlways(1, c.Capabilities.Streaming)
	e.boolAlways(2, c.Capabilities.PushNotifications)
	for _, x := range c.Capabilities.Extensions {
		xat := e.begin(3)
		e.str(1, x.URI)
		e.str(2, x.Description)
		e.boolean(3, x.Required)
		e.structValue(4, x.Params)
		e.end(xat)
	}
	e.boolAlways(4, c.Capabilities.ExtendedAgentCard || c.SupportsAuthenticatedExtendedCard)
	e.end(at)
	names := make([]string, 0, len(c.SecuritySchemes))
	for name := range c.SecuritySchemes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		at := e.begin(8)
		e.strAlways(1, name)
		sat := e.begin(2)
		e.securityScheme(c.SecuritySchemes[name])
		e.end(sat)
		e.end(at)
	}
	e.securityRequirements(9, c.Security)
	e.strs(10, c.DefaultInputModes)
	e.strs(11, c.DefaultOutputModes)
	for _, s := range c.Skills {
		at := e.begin(12)
		e.str(1, s.ID)
		e.str(2, s.Name)
		e.str(3, s.Description)
		e.strs(4, s.Tags)
		e.strs(5, s.Examples)
		e.strs(6, s.InputModes)
		e.strs(7, s.OutputModes)
		e.securityRequirements(8, s.Security)
		e.end(at)
	}
	for _, s := range c.Signatures {
		at := e.begin(13)
		e.str(1, s.Protected)
		e.str(2, s.Signature)
		e.structValue(3, s.Header)
		e.end(at)
	}
	e.str(14, c.IconURL)
}

func (e *encoder) boolAlways(num int, v bool) {
	e.tag(num, wireVarint)
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// securityRequirements writes each requirement as a SecurityRequirement
// {schemes = 1: map<string, StringList {list = 1}>}.
func (e *encoder) securityRequirements(num int, reqs []map[string][]string) {
	for _, req := range reqs {
		at := e.begin(num)
		names := make([]string, 0, len(req))
		for name := range req {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			mat := e.begin(1)
			e.strAlways(1, name)
			lat := e.begin(2)
			e.strs(1, req[name])
			e.end(lat)
			e.end(mat)
		}
		e.end(at)
	}
}

// securityScheme writes the oneof of a SecurityScheme: api_key = 1,
// http_auth = 2, oauth2 = 3, open_id_connect = 4, mtls = 5. An unknown or
// nil scheme is mutual TLS, as the JSON codecs write it.
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
	switch s := s.(type) {
	case a2a.APIKeySecurityScheme:
		at := e.begin(1)
		e.str(1, s.Description)
		e.str(2, s.In)
		e.str(3, s.Name)
		e.end(at)
	case a2a.HTTPAuthSecurityScheme:
		at := e.begin(2)
		e.str(1, s.Description)
		e.str(2, s.Scheme)
		e.str(3, s.BearerFormat)
		e.end(at)
	case a2a.OAuth2SecurityScheme:
		at := e.begin(3)
		e.str(1, s.Description)
		fat := e.begin(2)
		f := s.Flows
		switch {
		case f.AuthorizationCode != nil:
			e.flow(1, f.AuthorizationCode, true, true)
		case f.ClientCredentials != nil:
			e.flow(2, f.ClientCredentials, false, true)
		case f.Implicit != nil:
			e.flow(3, f.Implicit, true, false)
		case f.Password != nil:
			e.flow(4, f.Password, false, true)
		}
		e.end(fat)
		e.str(3, s.OAuth2MetadataURL)
		e.end(at)
	case a2a.OpenIDConnectSecurityScheme:
		at := e.begin(4)
		e.str(1, s.Description)
		e.str(2, s.OpenIDConnectURL)
		e.end(at)
	default:
		at := e.begin(5)
		if m, ok := s.(a2a.MutualTLSSecurityScheme); ok {
			e.str(1, m.Description)
		}
		e.end(at)
	}
}

// flow writes one OAuth flow of OAuthFlows' oneof: its URLs (which the
// flow has: hasAuth, an authorization_url; hasToken, a token_url), then
// refresh_url and scopes (map<string, string>), numbered from 1 in that
// order.
func (e *encoder) flow(num int, f *a2a.OAuthFlow, hasAuth, hasToken bool) {
	at := e.begin(num)
	n := 1
	if hasAuth {
		e.str(n, f.AuthorizationURL)
		n++
	}
	if hasToken {
		e.str(n, f.TokenURL)
		n++
	}
	e.str(n, f.RefreshURL)
	keys := make([]string, 0, len(f.Scopes))
	for k := range f.Scopes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		mat := e.begin(n + 1)
		e.strAlways(1, k)
		e.strAlways(2, f.Scopes[k])
		e.end(mat)
	}
	e.end(at)
}

// UnmarshalAgentCard decodes an AgentCard (A2A 1.0 §4.4.1), as the 1.0
// JSON codec reads one (v10.UnmarshalAgentCard): name, version and
// supported_interfaces are required; SupportsAuthenticatedExtendedCard
// equals Capabilities.ExtendedAgentCard; a device-code OAuth flow and
// pkce_required, which a2a.AgentCard cannot hold, are dropped.
func UnmarshalAgentCard(b []byte) (a2a.AgentCard, error) {
	var c a2a.AgentCard
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			c.Name, err = d.str("name", wt)
		case 2:
			c.Description, err = d.str("description", wt)
		case 3:
			err = d.sub("supportedInterfaces", len(c.SupportedInterfaces), wt, func(s *decoder) error {
				var it a2a.AgentInterface
				err := s.fields(func(num, wt int) error {
					var err error
					switch num {
					case 1:
						it.URL, err = s.str("url", wt)
					case 2:
						it.Transport, err = s.str("protocolBinding", wt)
					case 3:
						it.Tenant, err = s.str("tenant", wt)
					case 4:
						it.ProtocolVersion, err = s.str("protocolVersion", wt)
					default:
						err = s.skip(wt)
					}
					return err
				})
				c.SupportedInterfaces = append(c.SupportedInterfaces, it)
				return err
			})
		case 4:
			p := c.Provider
			if p == nil {
				p = &a2a.AgentProvider{}
			}
			err = d.sub("provider", -1, wt, func(s *decoder) error {
				return s.fields(func(num, wt int) error {
					var err error
					switch num {
					case 1:
						p.URL, err = s.str("url", wt)
					case 2:
						p.Organization, err = s.str("organization", wt)
					default:
						err = s.skip(wt)
					}
					return err
				})
			})
			c.Provider = p
		case 5:
			c.Version, err = d.str("version", wt)
		case 6:
			c.DocumentationURL, err = d.str("documentationUrl", wt)
		case 7:
			err = d.sub("capabilities", -1, wt, func(s *decoder) error { return s.capabilities(&c.Capabilities) })
			c.SupportsAuthenticatedExtendedCard = c.Capabilities.ExtendedAgentCard
		case 8:
			if c.SecuritySchemes == nil {
				c.SecuritySchemes = map[string]a2a.SecurityScheme{}
			}
			err = d.sub("securitySchemes", -1, wt, func(s *decoder) error {
				var name string
				var scheme a2a.SecurityScheme
				err := s.fields(func(num, wt int) error {
					var err error
					switch num {
					case 1:
						name, err = s.str("key", wt)
					case 2:
						err = s.sub("value", -1, wt, func(v *decoder) error {
							var err error
							scheme, err = v.securityScheme()
							return err
						})
					default:
						err = s.skip(wt)
					}
					return err
				})
				if err == nil && scheme == nil {
					return s.fail("value", "security scheme has none of apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme")
				}
				c.SecuritySchemes[name] = scheme
				return err
			})
		case 9:
			var req map[string][]string
			req, err = d.securityRequirement(len(c.Security), wt)
			c.Security = append(c.Security, req)
		case 10:
			var s string
			s, err = d.str("defaultInputModes", wt)
			c.DefaultInputModes = append(c.DefaultInputModes, s)
		case 11:
			var s string
			s, err = d.str("defaultOutputModes", wt)
			c.DefaultOutputModes = append(c.DefaultOutputModes, s)
		case 12:
			err = d.sub("skills", len(c.Skills), wt, func(s *decoder) error {
				sk, err := s.skill()
				c.Skills = append(c.Skills, sk)
				return err
			})
		case 13:
			err = d.sub("signatures", len(c.Signatures), wt, func(s *decoder) error {
				var sig a2a.AgentCardSignature
				err := s.fields(func(num, wt int) error {
					var err error
					switch num {
					case 1:
						sig.Protected, err = s.str("protected", wt)
					case 2:
						sig.Signature, err = s.str("signature", wt)
					case 3:
						err = s.structValue("header", wt, &sig.Header)
					default:
						err = s.skip(wt)
					}
					return err
				})
				c.Signatures = append(c.Signatures, sig)
				return err
			})
		case 14:
			c.IconURL, err = d.str("iconUrl", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
	switch {
	case err != nil:
	case c.Name == "":
		err = d.fail("name", "required field missing")
	case c.Version == "":
		err = d.fail("version", "required field missing")
	case len(c.SupportedInterfaces) == 0:
		err = d.fail("supportedInterfaces", "required field missing")
	}
	return orZero(c, err)
}

func (d *decoder) capabilities(c *a2a.AgentCapabilities) error {
	return d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			c.Streaming, err = d.boolean("streaming", wt)
		case 2:
			c.PushNotifications, err = d.boolean("pushNotifications", wt)
		case 3:
			err = d.sub("extensions", len(c.Extensions), wt, func(s *decoder) error {
				var x a2a.AgentExtension
				err := s.fields(func(num, wt int) error {
					var err error
					switch num {
					case 1:
						x.URI, err = s.str("uri", wt)
					case 2:
						x.Description, err = s.str("description", wt)
					case 3:
						x.Required, err = s.boolean("required", wt)
					case 4:
						err = s.structValue("params", wt, &x.Params)
					default:
						err = s.skip(wt)
					}
					return err
				})
				c.Extensions = append(c.Extensions, x)
				return err
			})
		case 4:
			c.ExtendedAgentCard, err = d.boolean("extendedAgentCard", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
}

func (d *decoder) skill() (a2a.AgentSkill, error) {
	var s a2a.AgentSkill
	err := d.fields(func(num, wt int) error {
		var err error
		var v string
		switch num {
		case 1:
			s.ID, err = d.str("id", wt)
		case 2:
			s.Name, err = d.str("name", wt)
		case 3:
			s.Description, err = d.str("description", wt)
		case 4:
			v, err = d.str("tags", wt)
			s.Tags = append(s.Tags, v)
		case 5:
			v, err = d.str("examples", wt)
			s.Examples = append(s.Examples, v)
		case 6:
			v, err = d.str("inputModes", wt)
			s.InputModes = append(s.InputModes, v)
		case 7:
			v, err = d.str("outputModes", wt)
			s.OutputModes = append(s.OutputModes, v)
		case 8:
			var req map[string][]string
			req, err = d.securityRequirement(len(s.Security), wt)
			s.Security = append(s.Security, req)
		default:
			err = d.skip(wt)
		}
		return err
	})
	return s, err
}

// securityRequirement reads one SecurityRequirement, the index-th of its
// field: scheme name → scopes.
func (d *decoder) securityRequirement(index, wt int) (map[string][]string, error) {
	req := map[string][]string{}
	err := d.sub("securityRequirements", index, wt, func(s *decoder) error {
		return s.fields(func(num, wt int) error {
			if num != 1 {
				return s.skip(wt)
			}
			var name string
			scopes := []string{}
			err := s.sub("schemes", -1, wt, func(m *decoder) error {
				return m.fields(func(num, wt int) error {
					switch num {
					case 1:
						var err error
						name, err = m.str("key", wt)
						return err
					case 2:
						return m.sub("value", -1, wt, func(l *decoder) error {
							return l.fields(func(num, wt int) error {
								if num != 1 {
									return l.skip(wt)
								}
								v, err := l.str("list", wt)
								scopes = append(scopes, v)
								return err
							})
						})
					}
					return m.skip(wt)
				})
			})
			req[name] = scopes
			return err
		})
	})
	return req, err
}

// securityScheme reads a SecurityScheme: exactly one member of its oneof
// (the last one given wins, as the encoding has it for a oneof).
func (d *decoder) securityScheme() (a2a.SecurityScheme, error) {
	// The string fields 2 and 3 of each scheme message, by oneof number.
	second := [...]string{1: "location", 2: "scheme", 4: "openIdConnectUrl", 5: ""}
	third := [...]string{1: "name", 2: "bearerFormat", 3: "oauth2MetadataUrl", 5: ""}
	var scheme a2a.SecurityScheme
	err := d.fields(func(num, wt int) error {
		var (
			desc, a, b string
			flows      a2a.OAuthFlows
		)
		body := func(s *decoder) error {
			return s.fields(func(n, wt int) error {
				var err error
				switch {
				case n == 1:
					desc, err = s.str("description", wt)
				case n == 2 && num == 3:
					err = s.sub("flows", -1, wt, func(f *decoder) error { return f.flows(&flows) })
				case n == 2 && second[num] != "":
					a, err = s.str(second[num], wt)
				case n == 3 && third[num] != "":
					b, err = s.str(third[num], wt)
				default:
					err = s.skip(wt)
				}
				return err
			})
		}
		names := [...]string{1: "apiKeySecurityScheme", 2: "httpAuthSecurityScheme", 3: "oauth2SecurityScheme", 4: "openIdConnectSecurityScheme", 5: "mtlsSecurityScheme"}
		if num < 1 || num > 5 {
			return d.skip(wt)
		}
		if err := d.sub(names[num], -1, wt, body); err != nil {
			return err
		}
		switch num {
		case 1:
			scheme = a2a.APIKeySecurityScheme{Description: desc, In: a, Name: b}
		case 2:
			scheme = a2a.HTTPAuthSecurityScheme{Description: desc, Scheme: a, BearerFormat: b}
		case 3:
			scheme = a2a.OAuth2SecurityScheme{Description: desc, Flows: flows, OAuth2MetadataURL: b}
		case 4:
			scheme = a2a.OpenIDConnectSecurityScheme{Description: desc, OpenIDConnectURL: a}
		case 5:
			scheme = a2a.MutualTLSSecurityScheme{Description: desc}
		}
		return nil
	})
	return scheme, err
}

// flows reads OAuthFlows: authorization_code = 1, client_credentials = 2,
// implicit = 3, password = 4 (device_code = 5 is dropped).
func (d *decoder) flows(f *a2a.OAuthFlows) error {
	return d.fields(func(num, wt int) error {
		// The URL fields each flow has, in field order before refresh_url.
		var urls []string
		var set **a2a.OAuthFlow
		switch num {
		case 1:
			urls, set = []string{"authorizationUrl", "tokenUrl"}, &f.AuthorizationCode
		case 2:
			urls, set = []string{"tokenUrl"}, &f.ClientCredentials
		case 3:
			urls, set = []string{"authorizationUrl"}, &f.Implicit
		case 4:
			urls, set = []string{"tokenUrl"}, &f.Password
		default:
			return d.skip(wt)
		}
		flow := &a2a.OAuthFlow{}
		names := [...]string{1: "authorizationCode", 2: "clientCredentials", 3: "implicit", 4: "password"}
		err := d.sub(names[num], -1, wt, func(s *decoder) error {
			return s.fields(func(n, wt int) error {
				var err error
				switch {
				case n <= len(urls):
					var v string
					if v, err = s.str(urls[n-1], wt); err == nil {
						if urls[n-1] == "authorizationUrl" {
							flow.AuthorizationURL = v
						} else {
							flow.TokenURL = v
						}
					}
				case n == len(urls)+1:
					flow.RefreshURL, err = s.str("refreshUrl", wt)
				case n == len(urls)+2:
					if flow.Scopes == nil {
						flow.Scopes = map[string]string{}
					}
					var k, v string
					err = s.sub("scopes", -1, wt, func(m *decoder) error {
						return m.fields(func(n, wt int) error {
							var err error
							switch n {
							case 1:
								k, err = m.str("key", wt)
							case 2:
								v, err = m.str("value", wt)
							default:
								err = m.skip(wt)
							}
							return err
						})
					})
					flow.Scopes[k] = v
				default:
					err = s.skip(wt) // pkce_required, or a field of a later proto
				}
				return err
			})
		})
		// A oneof: the last flow given is the one.
		*f = a2a.OAuthFlows{}
		*set = flow
		return err
	})
}
