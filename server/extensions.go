package server

import (
	"context"
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/a2abridge/a2abridge/a2a"
)

// HeaderA2AExtensions, "A2A-Extensions", names the A2A 1.0 service
// parameter that carries the extensions a request activates (A2A 1.0
// §3.2.6, §14.2.2): a comma-separated list of extension URIs. A response carries it too,
// listing the extensions the agent applied to the request.
const HeaderA2AExtensions = extension.Header

// HeaderA2AExtensions03, "X-A2A-Extensions", is the header of A2A 0.3
// clients for the same list (the 0.3 extensions topic, "Extension
// Activation"). A request may
// use either name (or both: the lists are joined), whatever its version;
// a response to an A2A 0.3 request names the applied extensions here, one
// to an A2A 1.0 request in HeaderA2AExtensions.
const HeaderA2AExtensions03 = extension.Header03

// MaxExtensionURIs is the most extension URIs one request may list in
// its A2A-Extensions and X-A2A-Extensions headers together (repeats
// counted): 64. A request that lists more is refused with -32602 naming
// the header (HTTP 400 over HTTP+JSON), before its method runs.
const MaxExtensionURIs = extension.MaxURIs

// WithExtensions returns ctx carrying the extension URIs a caller
// activates (A2A 1.0 §3.2.6, the A2A-Extensions service parameter), for
// code that calls AgentHandler methods itself instead of through a binding:
// AgentHandler.SendMessage and SendStreamingMessage refuse a message whose
// context does not activate every extension the card declares
// required: true (ExtensionSupportRequiredError, A2A 1.0 §3.3.4). The
// transports put the request's header list there themselves. Empty URIs
// and repeats are dropped; ctx is returned as it is when none is left.
func WithExtensions(ctx context.Context, uris ...string) context.Context {
	return extension.With(ctx, uris...)
}

// RequestedExtensions returns the extension URIs the request whose
// context is ctx activated (its A2A-Extensions or X-A2A-Extensions
// header, or WithExtensions), in the order sent, whether the agent
// declares them or not; nil when it activated none. HandlerOptions.Methods
// read it here; an Agent finds the ones its card declares in
// Request.Extensions. The slice is shared: do not modify it.
func RequestedExtensions(ctx context.Context) []string {
	return extension.From(ctx).Requested()
}

// ApplyExtension records that the extension uri was applied to the
// request whose context is ctx (a Method of HandlerOptions.Methods, say),
// so that the response's A2A-Extensions header lists it (A2A 1.0 §4.6;
// see Request.ApplyExtension for when the header is written). It reports
// whether uri was recorded: only an extension the request activated can
// be.
func ApplyExtension(ctx context.Context, uri string) bool {
	return extension.From(ctx).Apply(uri)
}

// activated returns the extensions ctx activates that the card declares
// (the ones an agent may apply; A2A 1.0 §4.6: an extension the agent does
// not support is ignored), nil when none.
func (h *AgentHandler) activated(ec *extension.Call) []string {
	var out []string
	for _, u := range ec.Requested() {
		if slices.ContainsFunc(h.card.Capabilities.Extensions, func(x a2a.AgentExtension) bool { return x.URI == u }) {
			out = append(out, u)
		}
	}
	return out
}

// checkExtensions returns ExtensionSupportRequiredError (-32008, A2A 1.0
// §3.3.4) naming every extension the card declares required that ctx
// does not activate (its data, the ErrorInfo metadata in A2A 1.0, has
// "extensions": the missing URIs, comma-separated); nil when there is
// none (at no cost for a card without required extensions).
func (h *AgentHandler) checkExtensions(ctx context.Context) error {
	if len(h.required) == 0 {
		return nil
	}
	requested := extension.From(ctx).Requested()
	var missing []string
	for _, u := range h.required {
		if !slices.Contains(requested, u) {
			missing = append(missing, u)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return a2a.ErrExtensionSupportRequired.WithMessage("Extension support required: activate %s in the %s header",
		strings.Join(missing, ", "), HeaderA2AExtensions).WithData(map[string]any{"extensions": strings.Join(missing, ",")})
}

// requiredExtensions lists the URIs of the extensions card declares
// required, nil when none.
func requiredExtensions(card a2a.AgentCard) []string {
	var out []string
	for _, x := range card.Capabilities.Extensions {
		if x.Required && !slices.Contains(out, x.URI) {
			out = append(out, x.URI)
		}
	}
	return out
}
