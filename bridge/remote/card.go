package remote

import (
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
//
// What it keeps is clipped, so that the card served stays small (at most
// about 160 KiB) whatever the remote's (up to Config.MaxCardBytes): a
// name, version or skill id or name of at most 200 bytes, a description
// of at most 4000 (a skill's 1000), URLs of at most 2048, at most 32
// skills, each with at most 16 tags (64 bytes each), 4 examples (300
// bytes each) and 8 input and output modes (100 bytes each), and at most 8
// default input and output modes. A clipped text ends in "…".
func DeriveCard(remote a2a.AgentCard) a2a.AgentCard {
	out := a2a.AgentCard{
		Name:               clip(remote.Name, 200),
		Description:        clip(remote.Description, 4000),
		Version:            clip(remote.Version, 200),
		IconURL:            dropLong(remote.IconURL, 2048),
		DocumentationURL:   dropLong(remote.DocumentationURL, 2048),
		Capabilities:       a2a.AgentCapabilities{Streaming: remote.Capabilities.Streaming},
		DefaultInputModes:  clipList(remote.DefaultInputModes, 8, 100),
		DefaultOutputModes: clipList(remote.DefaultOutputModes, 8, 100),
	}
	if remote.Provider != nil {
		out.Provider = &a2a.AgentProvider{Organization: clip(remote.Provider.Organization, 200), URL: dropLong(remote.Provider.URL, 2048)}
	}
	if remote.Skills != nil {
		out.Skills = make([]a2a.AgentSkill, min(len(remote.Skills), 32))
		for i, s := range remote.Skills[:len(out.Skills)] {
			out.Skills[i] = a2a.AgentSkill{
				ID: clip(s.ID, 200), Name: clip(s.Name, 200), Description: clip(s.Description, 1000),
				Tags: clipList(s.Tags, 16, 64), Examples: clipList(s.Examples, 4, 300),
				InputModes: clipList(s.InputModes, 8, 100), OutputModes: clipList(s.OutputModes, 8, 100),
			}
		}
	}
	return out
}

// clip returns s cut to at most n bytes on a UTF-8 boundary, ending in
// "…" when it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// dropLong returns s, or "" when it is longer than n (a cut URL is
// another URL).
func dropLong(s string, n int) string {
	if len(s) > n {
		return ""
	}
	return s
}

// clipList returns a copy of at most n entries of l, each clipped to
// size bytes (nil for nil).
func clipList(l []string, n, size int) []string {
	if l == nil {
		return nil
	}
	out := make([]string, min(len(l), n))
	for i := range out {
		out[i] = clip(l[i], size)
	}
	return out
}
