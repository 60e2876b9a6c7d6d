package remote

import (
	"slices"

	"github.com/a2abridge/a2abridge/a2a"
)

// DeriveCard returns the card under which a2abridge serves a remote agent,
// from the remote's card (A2A 1.0 §4.4; A2A 0.3.0 §5.5): it keeps the
// name, description, version, provider, icon and documentation URLs,
// default input and output modes, skills (without their security
// requirements, which name the remote's schemes) and
// capabilities.streaming, and drops what describes the remote's own
// endpoint and trust: protocolVersion, url, preferredTransport,
// additionalInterfaces, supportedInterfaces, securitySchemes, security,
// signatures, the push-notification, state-history and extended-card
// capabilities, and extensions. The serving host adds its own. Slices
// and maps are copied: the result shares nothing with remote.
func DeriveCard(remote a2a.AgentCard) a2a.AgentCard {
	out := a2a.AgentCard{
		Name:               remote.Name,
		Description:        remote.Description,
		Version:            remote.Version,
		IconURL:            remote.IconURL,
		DocumentationURL:   remote.DocumentationURL,
		Capabilities:       a2a.AgentCapabilities{Streaming: remote.Capabilities.Streaming},
		DefaultInputModes:  slices.Clone(remote.DefaultInputModes),
		DefaultOutputModes: slices.Clone(remote.DefaultOutputModes),
	}
	if remote.Provider != nil {
		p := *remote.Provider
		out.Provider = &p
	}
	if remote.Skills != nil {
		out.Skills = make([]a2a.AgentSkill, len(remote.Skills))
		for i, s := range remote.Skills {
			out.Skills[i] = a2a.AgentSkill{
				ID: s.ID, Name: s.Name, Description: s.Description,
				Tags: slices.Clone(s.Tags), Examples: slices.Clone(s.Examples),
				InputModes: slices.Clone(s.InputModes), OutputModes: slices.Clone(s.OutputModes),
			}
		}
	}
	return out
}
