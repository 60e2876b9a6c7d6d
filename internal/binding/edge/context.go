package edge

import (
	"context"
	"net/http"
)

// CardURLKey carries the agent's reachable URL in a request's context
// (a string), for the extended card, which the bindings put there and
// the handler reads.
type CardURLKey struct{}

// ServedKey carries, beside CardURLKey, the protocol versions the binding
// serves ([]string), which the extended card's interfaces list.
type ServedKey struct{}

// GRPCKey carries, beside CardURLKey, the agent's GRPC interface
// (a2a.AgentInterface) when the agent is served over gRPC too.
type GRPCKey struct{}

// CardPlace returns ctx carrying where the agent of r is reachable:
// CardURLKey, ServedKey and, when it is, GRPCKey. The bindings call it
// for the extended card only, whose interfaces it gives.
type CardPlace func(ctx context.Context, r *http.Request) context.Context

// PushConfigIDField is the field an unknown push notification config id
// is reported on (-32602 in A2A 0.3; the 1.0 bindings turn it into
// TaskNotFoundError).
const PushConfigIDField = "/params/pushNotificationConfigId"
