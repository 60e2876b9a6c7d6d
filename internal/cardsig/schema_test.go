package cardsig

import (
	"testing"

	"github.com/a2abridge/a2abridge/internal/a2aproto"
)

// TestSchemaFromProto checks the table read from the proto where the
// canonical form depends on it: signatures left out, optional bools kept,
// the two oneofs, the scope lists.
func TestSchemaFromProto(t *testing.T) {
	card := agentCard()
	byName := func(m *message, json string) field {
		t.Helper()
		for _, f := range m.fields {
			if f.json == json {
				return f
			}
		}
		t.Fatalf("%s has no %s", m.name, json)
		return field{}
	}
	for _, f := range card.fields {
		if f.json == "signatures" {
			t.Fatal("AgentCard.signatures is canonicalized")
		}
	}
	if k := byName(byName(card, "capabilities").msg, "streaming").kind; k != kOptBool {
		t.Errorf("capabilities.streaming: kind %d", k)
	}
	if k := byName(byName(byName(card, "capabilities").msg, "extensions").msg, "required").kind; k != kBool {
		t.Errorf("extensions.required: kind %d", k)
	}
	schemes := byName(card, "securitySchemes")
	if schemes.kind != kMessageMap || !schemes.msg.oneof || schemes.msg.name != "SecurityScheme" {
		t.Errorf("securitySchemes: %+v", schemes)
	}
	flows := byName(byName(schemes.msg, "oauth2SecurityScheme").msg, "flows")
	if !flows.msg.oneof || byName(flows.msg, "deviceCode").proto != "device_code" {
		t.Errorf("flows: %+v", flows.msg)
	}
	if k := byName(byName(card, "securityRequirements").msg, "schemes").kind; k != kScopeMap {
		t.Errorf("securityRequirements.schemes: kind %d", k)
	}
	if card.oneof || byName(card, "iconUrl").proto != "icon_url" {
		t.Errorf("AgentCard: %+v", card)
	}
}

// TestSchemaUnknownKind: a message with a field canonicalization cannot
// read (Task's enum state, its Timestamp) is refused, not guessed.
func TestSchemaUnknownKind(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	messageOf(a2aproto.Lookup("TaskStatus"), map[string]*message{})
}
