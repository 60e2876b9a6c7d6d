package cardsig

import (
	"fmt"
	"sync"

	"github.com/a2abridge/a2abridge/internal/a2aproto"
	"google.golang.org/protobuf/reflect/protoreflect"
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
	return messageOf(a2aproto.Message("AgentCard"), map[protoreflect.FullName]*message{})
})

// messageOf reads md and the messages its fields hold (seen breaks cycles
// and shares each message's table). It panics on a field of a kind the
// card does not use, so that a proto which adds one fails the tests
// instead of being canonicalized wrongly.
func messageOf(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*message) *message {
	if m, ok := seen[md.FullName()]; ok {
		return m
	}
	m := &message{name: string(md.Name())}
	seen[md.FullName()] = m
	fields := md.Fields()
	oneofs := 0
	for i := range fields.Len() {
		fd := fields.Get(i)
		if md.FullName() == "lf.a2a.v1.AgentCard" && fd.Name() == "signatures" {
			continue
		}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			oneofs++
		}
		f := field{json: fd.JSONName(), proto: string(fd.Name()), kind: kindOf(fd)}
		switch f.kind {
		case kMessage, kMessages, kMessageMap:
			msg := fd.Message()
			if fd.IsMap() {
				msg = fd.MapValue().Message()
			}
			f.msg = messageOf(msg, seen)
		}
		m.fields = append(m.fields, f)
	}
	switch oneofs {
	case 0:
	case len(m.fields):
		m.oneof = md.Oneofs().Len() == 1
	default:
		panic(fmt.Sprintf("cardsig: %s: fields in and out of a oneof", md.FullName()))
	}
	return m
}

// kindOf is the kind of field fd.
func kindOf(fd protoreflect.FieldDescriptor) kind {
	switch {
	case fd.IsMap():
		if fd.MapKey().Kind() == protoreflect.StringKind {
			switch v := fd.MapValue(); {
			case v.Kind() == protoreflect.StringKind:
				return kStringMap
			case v.Kind() == protoreflect.MessageKind && v.Message().FullName() == a2aproto.Package+".StringList":
				return kScopeMap
			case v.Kind() == protoreflect.MessageKind:
				return kMessageMap
			}
		}
	case fd.IsList():
		switch fd.Kind() {
		case protoreflect.StringKind:
			return kStrings
		case protoreflect.MessageKind:
			return kMessages
		}
	case fd.Kind() == protoreflect.StringKind:
		return kString
	case fd.Kind() == protoreflect.BoolKind && fd.HasPresence():
		return kOptBool
	case fd.Kind() == protoreflect.BoolKind:
		return kBool
	case fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() == "google.protobuf.Struct":
		return kStruct
	case fd.Kind() == protoreflect.MessageKind:
		return kMessage
	}
	panic(fmt.Sprintf("cardsig: %s: a field of a kind canonicalization does not read", fd.FullName()))
}
