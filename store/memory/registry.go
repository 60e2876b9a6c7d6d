package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

var _ store.AgentRegistry = (*Store)(nil)

// PutAgent implements store.AgentRegistry.
func (s *Store) PutAgent(ctx context.Context, name string, spec []byte) error {
	s.agentMu.Lock()
	defer s.agentMu.Unlock()
	if s.agents == nil {
		s.agents = map[string]store.AgentSpec{}
	}
	now := time.Now().UTC()
	a, ok := s.agents[name]
	if !ok {
		a = store.AgentSpec{Name: name, Created: now}
	}
	a.Spec, a.Updated = slices.Clone(spec), now
	s.agents[name] = a
	return nil
}

// DeleteAgent implements store.AgentRegistry.
func (s *Store) DeleteAgent(ctx context.Context, name string) error {
	s.agentMu.Lock()
	defer s.agentMu.Unlock()
	if _, ok := s.agents[name]; !ok {
		return store.ErrNotFound
	}
	delete(s.agents, name)
	return nil
}

// Agents implements store.AgentRegistry.
func (s *Store) Agents(ctx context.Context) ([]store.AgentSpec, error) {
	s.agentMu.Lock()
	defer s.agentMu.Unlock()
	out := make([]store.AgentSpec, 0, len(s.agents))
	for _, a := range s.agents {
		a.Spec = slices.Clone(a.Spec)
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b store.AgentSpec) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
