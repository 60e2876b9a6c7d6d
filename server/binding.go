package server

import (
	"context"

	"github.com/a2abridge/a2abridge/binding"
)

// boundAgent is what a binding needs of an agent: its operations (the
// binding.Handler, through the agent's interceptors) and, beside them, its name
// (the extended card's signature), whether it authenticates (a request a
// browser form could send is refused then), whether it is retired (a new
// message is answered as to an unknown agent), its JSON-RPC methods of its
// own, and the start of a request's trace. A binding reads nothing else
// of the AgentHandler.
type boundAgent struct {
	binding.Handler
	name    string
	auth    bool
	retired bool
	methods map[string]Method
	// begin joins or starts the trace of a request of method (see
	// AgentHandler.beginCall); nil when the engine has no telemetry.
	begin func(ctx context.Context, method, tenant, taskID string, params []byte) context.Context
}

// bound returns what a binding needs of h.
func (h *AgentHandler) bound() *boundAgent {
	a := &boundAgent{Handler: h, name: h.name, auth: len(h.opts.Auth) > 0, retired: h.opts.Retired, methods: h.opts.Methods}
	if h.e.tel != nil {
		a.begin = h.beginCall
	}
	return a
}

// ownMethod returns the Method of one's own named method, or nil. A2A
// method names are never keys (checkMethods).
func (a *boundAgent) ownMethod(method string) Method {
	if len(a.methods) == 0 {
		return nil
	}
	return a.methods[method]
}
