// Package a2aproto is the A2A 1.0.1 proto (a2a-v1.0.1.proto, package
// lf.a2a.v1) as plain Go tables: each message with its fields, their JSON
// and proto names, kinds and presence. Code that must know the schema
// member by member (the 1.0 JSON codec's member tables, card signing's
// canonical form) reads it here instead of restating it.
//
// The tables (messages_gen.go) are generated from the proto beside them by
// `go generate ./internal/a2aproto` and committed; the generator's test
// fails when they are not what the proto gives. They hold no protobuf
// types, so a program that uses the codecs does not link protobuf-go and
// builds nothing at start.
package a2aproto

//go:generate go run ./gen

import "fmt"

// Package is the proto package of A2A 1.0.
const Package = "lf.a2a.v1"

// Kind is the type of a field's value (of each element of a repeated
// field, of each value of a map).
type Kind uint8

// The kinds the A2A proto uses.
const (
	KindString Kind = iota + 1
	KindBool
	KindInt32
	KindInt64
	KindBytes
	KindEnum
	KindMessage
)

// Field is one field of a message.
type Field struct {
	JSON   string // its JSON name (lowerCamelCase)
	Proto  string // its proto name (snake_case)
	Number int32  // its field number, the key of the binary encoding
	Kind   Kind
	// Type is the full name of a message or enum value ("lf.a2a.v1.Part",
	// "google.protobuf.Struct"); "" for scalars.
	Type string
	// Repeated marks a repeated field, Map a map<string, …> whose values
	// are of Kind and Type.
	Repeated, Map bool
	// Optional marks a field with explicit presence: a proto3 `optional`
	// scalar, or a member of a oneof.
	Optional bool
	// Oneof names the oneof the field is a member of, if any.
	Oneof string
}

// Message is one message of the proto.
type Message struct {
	Name   string // its name in the package ("AgentCard")
	Fields []Field
}

// Enum is one enum of the proto.
type Enum struct {
	Name   string // its name in the package ("TaskState")
	Values []EnumValue
}

// EnumValue is one value of an enum: its name ("TASK_STATE_WORKING") and
// number.
type EnumValue struct {
	Name   string
	Number int32
}

// Method is one method of a service: its name, the full names of its
// request and response messages, and whether the server streams its
// responses.
type Method struct {
	Name            string
	Input, Output   string
	ServerStreaming bool
}

// Service is one service of the proto.
type Service struct {
	Name    string // its full name ("lf.a2a.v1.A2AService")
	Methods []Method
}

// Lookup returns the message named name, short ("Task") or full
// ("lf.a2a.v1.Task"). It panics if there is none: callers name messages
// of the proto, so a missing one is a programming error a test catches.
func Lookup(name string) *Message {
	if len(name) > len(Package)+1 && name[:len(Package)+1] == Package+"." {
		name = name[len(Package)+1:]
	}
	for i := range messages {
		if messages[i].Name == name {
			return &messages[i]
		}
	}
	panic(fmt.Sprintf("a2aproto: no message %s.%s", Package, name))
}

// LookupEnum returns the enum named name, short or full; it panics if
// there is none, as Lookup does.
func LookupEnum(name string) *Enum {
	if len(name) > len(Package)+1 && name[:len(Package)+1] == Package+"." {
		name = name[len(Package)+1:]
	}
	for i := range enums {
		if enums[i].Name == name {
			return &enums[i]
		}
	}
	panic(fmt.Sprintf("a2aproto: no enum %s.%s", Package, name))
}

// Services returns the services of the proto (A2A 1.0 has one,
// A2AService); the tables are shared and must not be modified.
func Services() []Service { return services }

// Messages returns every message of the proto, in the order it declares
// them; the tables are shared and must not be modified.
func Messages() []Message { return messages }
