package server

import (
	"context"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
)

// The checks of a message cost no allocation when it passes: input modes
// against a list (wildcards, parameters, a skill's modes), required
// extensions of a card that has none, and a request without
// A2A-Extensions headers.
func TestMessageChecksDoNotAllocate(t *testing.T) {
	card := a2a.AgentCard{DefaultInputModes: []string{"text/plain", "image/*"}, Skills: []a2a.AgentSkill{{InputModes: []string{"application/json"}}}}
	im := newInputModes(card)
	if im.all || len(im.modes) != 3 {
		t.Fatalf("modes %+v", im)
	}
	msg := a2a.Message{Parts: []a2a.Part{a2a.NewTextPart("hi"), a2a.NewDataPart(1),
		a2a.Part{Content: a2a.URL("https://x"), MediaType: "image/png; q=1"}, a2a.NewURLPart("https://y")}}
	h := &AgentHandler{card: card, in: im}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		if err := h.in.check(&msg); err != nil {
			t.Fatal(err)
		}
		if err := h.checkExtensions(ctx); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per message", n)
	}
	if !newInputModes(a2a.AgentCard{}).all || !newInputModes(a2a.AgentCard{DefaultInputModes: []string{"text/plain"}, Skills: []a2a.AgentSkill{{InputModes: []string{"*/*"}}}}).all {
		t.Fatal("no defaultInputModes, or */* in a skill, must accept everything")
	}
}
