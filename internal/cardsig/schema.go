package cardsig

import (
	"fmt"
	"sync"

	"github.com/a2abridge/a2abridge/internal/a2aproto"
)

// The A2A 1.0 AgentCard message and the messages it holds, as far as
// canonicalization needs them, read from the proto (package a2aproto):
// each field's JSON name (lowerCamelCase), its proto name (accepted as
// ProtoJSON parsers accept it, when the JSON name is absent) and its kind.

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

// agentCard is AgentCard without signatures, which canonicalization
// excludes (A2A 1.0 §8.4.1 rule 3).
var agentCard = sync.OnceValue(func() *message {
	return messageOf(a2aproto.Lookup("AgentCard"), map[string]*message{})
})

// messageOf reads md and the messages its fields hold (seen breaks cycles
// and shares each message's table). It panics on a field of a kind the
// card does not use, so that a proto which adds one fails the tests
// instead of being canonicalized wrongly.
func messageOf(md *a2aproto.Message, seen map[string]*message) *message {
	if m, ok := seen[md.Name]; ok {
		return m
	}
	m := &message{name: md.Name}
	seen[md.Name] = m
	oneofs := map[string]bool{}
	for _, fd := range md.Fields {
		if md.Name == "AgentCard" && fd.Proto == "signatures" {
			continue
		}
		if fd.Oneof != "" {
			oneofs[fd.Oneof] = true
		}
		f := field{json: fd.JSON, proto: fd.Proto, kind: kindOf(md.Name, fd)}
		switch f.kind {
		case kMessage, kMessages, kMessageMap:
			f.msg = messageOf(a2aproto.Lookup(fd.Type), seen)
		}
		m.fields = append(m.fields, f)
	}
	if len(oneofs) > 0 {
		// The oneofs of a card (a security scheme, OAuth flows) are the
		// whole message; a message with other fields beside one would
		// need a rule canonicalization does not have.
		for _, fd := range md.Fields {
			if fd.Oneof == "" || len(oneofs) > 1 {
				panic(fmt.Sprintf("cardsig: %s: fields in and out of a oneof", md.Name))
			}
		}
		m.oneof = true
	}
	return m
}

// kindOf is the kind of field fd of message msg.
func kindOf(msg string, fd a2aproto.Field) kind {
	switch {
	case fd.Map:
		switch {
		case fd.Kind == a2aproto.KindString:
			return kStringMap
		case fd.Type == a2aproto.Package+".StringList":
			return kScopeMap
		case fd.Kind == a2aproto.KindMessage:
			return kMessageMap
		}
	case fd.Repeated:
		switch fd.Kind {
		case a2aproto.KindString:
			return kStrings
		case a2aproto.KindMessage:
			return kMessages
		}
	case fd.Kind == a2aproto.KindString:
		return kString
	case fd.Kind == a2aproto.KindBool && fd.Optional:
		return kOptBool
	case fd.Kind == a2aproto.KindBool:
		return kBool
	case fd.Type == "google.protobuf.Struct":
		return kStruct
	case fd.Kind == a2aproto.KindMessage:
		return kMessage
	}
	panic(fmt.Sprintf("cardsig: %s.%s: a field of a kind canonicalization does not read", msg, fd.Proto))
}
