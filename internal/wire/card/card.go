// Package card reads and writes Agent Cards whatever the protocol version:
// the union card, one document that A2A 0.3 and A2A 1.x clients both read,
// and a decoder for cards of either version or the union.
//
// The union card is the A2A 0.3 card (internal/wire/v03) and the A2A 1.0
// card (internal/wire/v10) merged member by member, as a2a-go v2's
// a2acompat/a2av0 serves it: the 0.3 members (protocolVersion "0.3.0",
// url, preferredTransport, additionalInterfaces, security,
// supportsAuthenticatedExtendedCard, capabilities.stateTransitionHistory,
// skills[].security, and each security scheme's flat 0.3 members {"type":
// "http", "scheme": …}) plus the 1.0 members (supportedInterfaces,
// capabilities.extendedAgentCard, securityRequirements,
// skills[].securityRequirements, and inside each security scheme its 1.0
// wrapper, {"httpAuthSecurityScheme": {…}}). Each version's parser reads
// its own members and ignores the other's; the shared members (name,
// skills, capabilities, …) are the same in both.
//
//	b, err := card.MarshalUnion(&c, card.Options{})
package card

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// Options tune the union card. The zero value writes both versions' members
// exactly as their specifications have them.
type Options struct {
	// ScopeArrays writes the 1.0 securityRequirements scopes as bare
	// arrays, the form a2a-go v2 up to v2.4.0 needs to read the card at
	// all (see v10.CardOptions).
	ScopeArrays bool
}

// MarshalUnion encodes c as a union card. The 0.3 members come from c's
// 0.3 fields; when c has no URL they are taken from its
// SupportedInterfaces: the first interface of protocol version 0.3 gives
// url and preferredTransport, the other 0.3 interfaces additionalInterfaces
// (an error when there is none: a 0.3 client could not talk to the agent).
// protocolVersion is c.ProtocolVersion, or "0.3.0". The 1.0 members come
// from c as v10.AppendAgentCard writes them (supportedInterfaces derived
// from the 0.3 fields when c has none).
func MarshalUnion(c *a2a.AgentCard, opts Options) ([]byte, error) {
	c03 := *c
	if c03.ProtocolVersion == "" {
		c03.ProtocolVersion = a2a.ProtocolVersion
	}
	if c03.URL == "" {
		var pref *a2a.AgentInterface
		var rest []a2a.AgentInterface
		for _, it := range c.SupportedInterfaces {
			if !is03(it.ProtocolVersion) {
				continue
			}
			if pref == nil {
				pref = &it
				continue
			}
			rest = append(rest, a2a.AgentInterface{URL: it.URL, Transport: it.Transport})
		}
		if pref == nil {
			return nil, errors.New("card: the card lists no interface of protocol version 0.3, which a union card needs for its url")
		}
		c03.URL, c03.PreferredTransport, c03.AdditionalInterfaces = pref.URL, pref.Transport, rest
	}
	c03.SupportsAuthenticatedExtendedCard = c.SupportsAuthenticatedExtendedCard || c.Capabilities.ExtendedAgentCard
	b03, err := v03.MarshalAgentCard(&c03)
	if err != nil {
		return nil, err
	}
	b10, err := v10.MarshalAgentCard(c, v10.CardOptions{ScopeArrays: opts.ScopeArrays})
	if err != nil {
		return nil, err
	}
	return merge(b03, b10)
}

// is03 reports whether a protocol version is 0.3 (0.3, 0.3.0, …).
func is03(v string) bool { return v == "0.3" || len(v) > 4 && v[:4] == "0.3." }

// Unmarshal decodes an Agent Card of A2A 0.3, of A2A 1.0, or a union card,
// into one a2a.AgentCard holding what the document says in either
// version. A card with supportedInterfaces is read as 1.0 (v10), and its
// 0.3 members, when it also has them, fill the 0.3 fields; any other card
// is read as 0.3 (v03) and gets SupportedInterfaces from its url,
// preferredTransport and additionalInterfaces (v10.SupportedInterfaces).
// The security schemes of a union card that has them only in the 0.3 form
// (as a2a-go v2's) are read from there. version is "1.0", "0.3" or
// "union". Errors are those of the version's decoder.
func Unmarshal(b []byte) (c a2a.AgentCard, version string, err error) {
	if !has10(b) {
		c, err = v03.UnmarshalAgentCard(b)
		if err != nil {
			return a2a.AgentCard{}, "", err
		}
		c.SupportedInterfaces = v10.SupportedInterfaces(&c)
		c.Capabilities.ExtendedAgentCard = c.SupportsAuthenticatedExtendedCard
		return c, a2a.Version03, nil
	}
	c, err = v10.UnmarshalAgentCard(b)
	c03, err03 := v03.UnmarshalAgentCard(b)
	if err != nil {
		// a2a-go v2's union card (a2acompat/a2av0) writes its security
		// schemes in the 0.3 form only: take them from there.
		if err03 != nil {
			return a2a.AgentCard{}, "", err
		}
		var err10 error
		if c, err10 = v10.UnmarshalAgentCard(withoutMember(b, "securitySchemes")); err10 != nil {
			return a2a.AgentCard{}, "", err
		}
		c.SecuritySchemes = c03.SecuritySchemes
	}
	if err03 != nil {
		return c, a2a.Version10, nil
	}
	c.ProtocolVersion, c.URL, c.PreferredTransport = c03.ProtocolVersion, c03.URL, c03.PreferredTransport
	c.AdditionalInterfaces = c03.AdditionalInterfaces
	c.Capabilities.StateTransitionHistory = c03.Capabilities.StateTransitionHistory
	if c03.SupportsAuthenticatedExtendedCard {
		c.SupportsAuthenticatedExtendedCard, c.Capabilities.ExtendedAgentCard = true, true
	}
	return c, "union", nil
}

// UnmarshalSigned decodes an Agent Card whose signature verified (A2A
// 1.0 §8.4.3) into what the signature covers, and nothing else. doc is
// the card document as received; signed is its canonical form, the
// payload the signature covers (cardsig.Verified.Payload). doc must be a
// valid A2A 1.0 AgentCard as it stands (v10.UnmarshalAgentCard, without
// Unmarshal's A2A 0.3 fallbacks): a security scheme with none of the five
// A2A 1.0 wrappers, which canonicalization drops, is an error rather than
// read from its unsigned 0.3 members. The card returned is then decoded
// from signed alone, so:
//   - the A2A 0.3 members (url, preferredTransport, additionalInterfaces,
//     protocolVersion, supportsAuthenticatedExtendedCard, security,
//     capabilities.stateTransitionHistory, the flat members of security
//     schemes) are ignored: ProtocolVersion, URL, PreferredTransport and
//     AdditionalInterfaces stay empty and the card's endpoints are its
//     SupportedInterfaces;
//   - securityRequirements scopes written as bare arrays (which a2abridge
//     serves for a2a-go v2 ≤ 2.4.0, and which canonicalize to an empty
//     StringList) are not covered, and read as no scopes; a requirement
//     or a security scheme with no content but its name (an mTLS scheme
//     without description, a requirement without scopes) canonicalizes
//     to nothing and is absent;
//   - empty values ("" and empty lists and objects, also inside
//     extension params) are absent, as canonicalization drops them.
//
// Signatures are doc's. Errors are those of v10.UnmarshalAgentCard, the
// ones about signed saying "signed content".
func UnmarshalSigned(doc, signed []byte) (a2a.AgentCard, error) {
	full, err := v10.UnmarshalAgentCard(doc)
	if err != nil {
		return a2a.AgentCard{}, fmt.Errorf("card: not a valid A2A 1.0 AgentCard: %w", err)
	}
	c, err := v10.UnmarshalAgentCard(signed)
	if err != nil {
		return a2a.AgentCard{}, fmt.Errorf("card: the signed content is not a valid A2A 1.0 AgentCard: %w", err)
	}
	c.Signatures = full.Signatures
	return c, nil
}

// has10 reports whether the card document has a supportedInterfaces
// member (by its JSON or proto name).
func has10(b []byte) bool {
	members, err := members(b)
	if err != nil {
		return false
	}
	for _, m := range members {
		if n := m.name(); n == "supportedInterfaces" || n == "supported_interfaces" {
			return true
		}
	}
	return false
}

// withoutMember returns the JSON object b without its member name.
func withoutMember(b []byte, name string) []byte {
	ms, err := members(b)
	if err != nil {
		return b
	}
	out := []byte{'{'}
	for _, m := range ms {
		if m.name() != name {
			out = appendMember(out, m.rawName, m.value)
		}
	}
	return append(out, '}')
}

// member is one name and value of a JSON object, raw.
type member struct {
	rawName jsontext.Value
	value   jsontext.Value
}

func (m member) name() string {
	var s string
	if b, err := jsontext.AppendUnquote(nil, m.rawName); err == nil {
		s = string(b)
	}
	return s
}

// members returns the members of a JSON object, in order.
func members(b []byte) ([]member, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("card: not a JSON object")
	}
	var out []member
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		name = bytes.Clone(name)
		val, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, member{name, bytes.Clone(val)})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	return out, nil
}

// merge merges two JSON objects: a's members in order, then b's members
// that a has not. A member both have is merged when both values are
// objects, or arrays of objects of the same length (element by element);
// otherwise a's value stays.
func merge(a, b []byte) ([]byte, error) {
	am, err := members(a)
	if err != nil {
		return nil, err
	}
	bm, err := members(b)
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(bm))
	for i, m := range bm {
		index[m.name()] = i
	}
	used := make([]bool, len(bm))
	out := []byte{'{'}
	for _, m := range am {
		v := m.value
		if i, ok := index[m.name()]; ok {
			used[i] = true
			if v, err = mergeValues(m.value, bm[i].value); err != nil {
				return nil, err
			}
		}
		out = appendMember(out, m.rawName, v)
	}
	for i, m := range bm {
		if !used[i] {
			out = appendMember(out, m.rawName, m.value)
		}
	}
	return append(out, '}'), nil
}

func appendMember(out []byte, name, value []byte) []byte {
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, name...)
	out = append(out, ':')
	return append(out, value...)
}

func mergeValues(a, b jsontext.Value) ([]byte, error) {
	switch {
	case a.Kind() == '{' && b.Kind() == '{':
		return merge(a, b)
	case a.Kind() == '[' && b.Kind() == '[':
		ae, err := elements(a)
		if err != nil {
			return nil, err
		}
		be, err := elements(b)
		if err != nil {
			return nil, err
		}
		if len(ae) != len(be) {
			return a, nil
		}
		for i := range ae {
			if ae[i].Kind() != '{' || be[i].Kind() != '{' {
				return a, nil
			}
		}
		out := []byte{'['}
		for i := range ae {
			if i > 0 {
				out = append(out, ',')
			}
			m, err := merge(ae[i], be[i])
			if err != nil {
				return nil, err
			}
			out = append(out, m...)
		}
		return append(out, ']'), nil
	}
	return a, nil
}

// elements returns the elements of a JSON array.
func elements(b []byte) ([]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	var out []jsontext.Value
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, bytes.Clone(v))
	}
	return out, nil
}
