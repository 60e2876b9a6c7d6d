package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/a2abridge/a2abridge/store"
)

// testAgentRegistry checks store.AgentRegistry, for stores that have it:
// put, replace, list in name order, delete, and ErrNotFound.
func testAgentRegistry(t *testing.T, s store.Store) {
	r, ok := s.(store.AgentRegistry)
	if !ok {
		t.Skip("the store has no agent registry")
	}
	ctx := context.Background()
	if got, err := r.Agents(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty registry: %v, %v", got, err)
	}
	for _, n := range []string{"zeta", "alpha"} {
		if err := r.PutAgent(ctx, n, []byte(`{"kind":"http","url":"http://`+n+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.PutAgent(ctx, "zeta", []byte(`{"kind":"a2a"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := r.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "alpha" || got[1].Name != "zeta" || string(got[1].Spec) != `{"kind":"a2a"}` {
		t.Fatalf("Agents() = %+v", got)
	}
	if got[1].Created.IsZero() || got[1].Updated.Before(got[1].Created) {
		t.Fatalf("times: %+v", got[1])
	}
	got[0].Spec[0] = 'X' // the caller's copy
	if again, _ := r.Agents(ctx); string(again[0].Spec[0]) != "{" {
		t.Fatal("Agents returned the store's own bytes")
	}
	if err := r.DeleteAgent(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteAgent(ctx, "alpha"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if got, _ := r.Agents(ctx); len(got) != 1 || got[0].Name != "zeta" {
		t.Fatalf("after delete: %+v", got)
	}
}
