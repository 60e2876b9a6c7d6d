package server

import (
	"context"
	"strings"

	"github.com/a2abridge/a2abridge/internal/binding/edge"
)

// bound returns what a binding needs of h (edge.Agent): its operations,
// through its interceptors, its name, whether it authenticates and
// whether it is retired, the start of a request's trace (nil without
// telemetry) and the signing of its extended card (nil without
// opts.CardSigner).
func (h *AgentHandler) bound(opts TransportOptions) *edge.Agent {
	a := &edge.Agent{Handler: h, Name: h.name, Auth: len(h.opts.Auth) > 0, Retired: h.opts.Retired}
	if h.e.Telemetry() != nil {
		a.Begin = h.beginCall
	}
	if s := opts.CardSigner; s != nil {
		a.SignCard = func(ctx context.Context, card []byte) ([]byte, error) {
			// The base URL of the signer's key is the agent's URL (the
			// Host put it in ctx) less the agent's path.
			base, _ := ctx.Value(edge.CardURLKey{}).(string)
			return s.sign(card, strings.TrimSuffix(base, "/a2a/"+h.name))
		}
	}
	return a
}
