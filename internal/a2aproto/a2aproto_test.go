package a2aproto_test

import (
	"testing"

	"github.com/a2abridge/a2abridge/internal/a2aproto"
)

func TestLookup(t *testing.T) {
	card := a2aproto.Lookup("AgentCard")
	if card != a2aproto.Lookup(a2aproto.Package+".AgentCard") {
		t.Fatal("short and full names differ")
	}
	var ifaces *a2aproto.Field
	for i := range card.Fields {
		if card.Fields[i].Proto == "supported_interfaces" {
			ifaces = &card.Fields[i]
		}
	}
	if ifaces == nil || ifaces.JSON != "supportedInterfaces" || !ifaces.Repeated || ifaces.Kind != a2aproto.KindMessage || ifaces.Type != "lf.a2a.v1.AgentInterface" {
		t.Fatalf("AgentCard.supported_interfaces: %+v", ifaces)
	}
	caps := a2aproto.Lookup("AgentCapabilities").Fields
	if caps[0].JSON != "streaming" || caps[0].Kind != a2aproto.KindBool || !caps[0].Optional {
		t.Fatalf("AgentCapabilities.streaming: %+v", caps[0])
	}
	if f := a2aproto.Lookup("SecurityRequirement").Fields[0]; !f.Map || f.Type != "lf.a2a.v1.StringList" {
		t.Fatalf("SecurityRequirement.schemes: %+v", f)
	}
	if f := a2aproto.Lookup("Part").Fields[3]; f.JSON != "data" || f.Oneof != "content" || f.Type != "google.protobuf.Value" {
		t.Fatalf("Part.data: %+v", f)
	}
	if v := a2aproto.LookupEnum("TaskState").Values[5]; v.Name != "TASK_STATE_CANCELED" || v.Number != 5 {
		t.Fatalf("TaskState 5: %+v", v)
	}
	svc := a2aproto.Services()
	if len(svc) != 1 || svc[0].Name != "lf.a2a.v1.A2AService" || len(svc[0].Methods) != 11 {
		t.Fatalf("services: %+v", svc)
	}
	if m := svc[0].Methods[1]; m.Name != "SendStreamingMessage" || !m.ServerStreaming || m.Output != "lf.a2a.v1.StreamResponse" {
		t.Fatalf("SendStreamingMessage: %+v", m)
	}
	if f := a2aproto.Lookup("Message").Fields[4]; f.JSON != "parts" || f.Number != 5 {
		t.Fatalf("Message.parts: %+v", f)
	}
	if n := len(a2aproto.Messages()); n < 40 {
		t.Fatalf("%d messages", n)
	}
}

func TestLookupUnknown(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	a2aproto.Lookup("NoSuchMessage")
}
