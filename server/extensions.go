package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/a2abridge/a2abridge/a2a"
)

// HeaderA2AExtensions names the A2A 1.0 service parameter that carries
// the extensions a request activates (A2A 1.0 §3.2.6, §14.2.2): a
// comma-separated list of extension URIs. A response carries it too,
// listing the extensions the agent applied to the request.
const HeaderA2AExtensions = "A2A-Extensions"

// HeaderA2AExtensions03 is the header of A2A 0.3 clients for the same
// list (the 0.3 extensions topic, "Extension Activation"). A request may
// use either name (or both: the lists are joined), whatever its version;
// a response to an A2A 0.3 request names the applied extensions here, one
// to an A2A 1.0 request in HeaderA2AExtensions.
const HeaderA2AExtensions03 = "X-A2A-Extensions"

// extCall is the extensions of one request: those the caller activated
// (from its headers, or WithExtensions) and those applied to it so far.
type extCall struct {
	requested []string // trimmed, no duplicates, in the order sent
	mu        sync.Mutex
	applied   []string
}

type extKey struct{}

// WithExtensions returns ctx carrying the extension URIs a caller
// activates (A2A 1.0 §3.2.6, the A2A-Extensions service parameter), for
// code that calls AgentHandler methods itself instead of through a binding:
// AgentHandler.SendMessage and SendStreamingMessage refuse a message whose
// context does not activate every extension the card declares
// required: true (ExtensionSupportRequiredError, A2A 1.0 §3.3.4). The
// transports put the request's header list there themselves. Empty URIs
// and repeats are dropped; ctx is returned as it is when none is left.
func WithExtensions(ctx context.Context, uris ...string) context.Context {
	var req []string
	for _, u := range uris {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(req, u) {
			req = append(req, u)
		}
	}
	if len(req) == 0 {
		return ctx
	}
	return context.WithValue(ctx, extKey{}, &extCall{requested: req})
}

// RequestedExtensions returns the extension URIs the request whose
// context is ctx activated (its A2A-Extensions or X-A2A-Extensions
// header, or WithExtensions), in the order sent, whether the agent
// declares them or not; nil when it activated none. HandlerOptions.Methods
// read it here; an Agent finds the ones its card declares in
// Request.Extensions. The slice is shared: do not modify it.
func RequestedExtensions(ctx context.Context) []string {
	if ec, _ := ctx.Value(extKey{}).(*extCall); ec != nil {
		return ec.requested
	}
	return nil
}

// ApplyExtension records that the extension uri was applied to the
// request whose context is ctx (a Method of HandlerOptions.Methods, say),
// so that the response's A2A-Extensions header lists it (A2A 1.0 §4.6;
// see Request.ApplyExtension for when the header is written). It reports
// whether uri was recorded: only an extension the request activated can
// be.
func ApplyExtension(ctx context.Context, uri string) bool {
	ec, _ := ctx.Value(extKey{}).(*extCall)
	return ec.apply(uri)
}

func (ec *extCall) apply(uri string) bool {
	if ec == nil || !slices.Contains(ec.requested, uri) {
		return false
	}
	ec.mu.Lock()
	defer ec.mu.Unlock()
	if !slices.Contains(ec.applied, uri) {
		ec.applied = append(ec.applied, uri)
	}
	return true
}

// MaxExtensionURIs is the most extension URIs one request may list in
// its A2A-Extensions and X-A2A-Extensions headers together (repeats
// counted): 64. A request that lists more is refused with -32602 naming
// the header (HTTP 400 over HTTP+JSON), before its method runs.
const MaxExtensionURIs = 64

// extContext returns ctx carrying the extensions r activates (both header
// names, each possibly repeated, comma-separated), with the ones the
// server applies itself already applied (a2a.ExtensionEventLog, whose
// behaviour every request gets); ctx and nil when r activates none. A
// request without the headers costs two map lookups. A request listing
// more than MaxExtensionURIs gets an error, so that the work per request
// stays bounded whatever the headers hold.
func extContext(ctx context.Context, r *http.Request) (context.Context, *extCall, *a2a.Error) {
	v1, v03 := r.Header["A2a-Extensions"], r.Header["X-A2a-Extensions"] // canonical keys
	if len(v1) == 0 && len(v03) == 0 {
		return ctx, nil, nil
	}
	ec := &extCall{}
	n := 0
	for _, vs := range [][]string{v1, v03} {
		for _, v := range vs {
			for u := range strings.SplitSeq(v, ",") {
				if u = strings.TrimSpace(u); u == "" {
					continue
				}
				if n++; n > MaxExtensionURIs {
					return ctx, nil, a2a.InvalidParams(HeaderA2AExtensions,
						fmt.Sprintf("%s lists more than %d extension URIs", HeaderA2AExtensions, MaxExtensionURIs))
				}
				if !slices.Contains(ec.requested, u) {
					ec.requested = append(ec.requested, u)
				}
			}
		}
	}
	if len(ec.requested) == 0 {
		return ctx, nil, nil
	}
	ec.apply(a2a.ExtensionEventLog)
	return context.WithValue(ctx, extKey{}, ec), ec, nil
}

// writeHeader sets the response header that lists the extensions applied
// to the request so far (HeaderA2AExtensions for an A2A 1.0 request,
// HeaderA2AExtensions03 for 0.3), unless none was.
func (ec *extCall) writeHeader(w http.ResponseWriter, version string) {
	if ec == nil {
		return
	}
	ec.mu.Lock()
	v := strings.Join(ec.applied, ",")
	ec.mu.Unlock()
	if v == "" {
		return
	}
	name := HeaderA2AExtensions
	if version != a2a.Version10 {
		name = HeaderA2AExtensions03
	}
	w.Header().Set(name, v)
}

// activated returns the extensions ctx activates that the card declares
// (the ones an agent may apply; A2A 1.0 §4.6: an extension the agent does
// not support is ignored), nil when none.
func (h *AgentHandler) activated(ec *extCall) []string {
	if ec == nil {
		return nil
	}
	var out []string
	for _, u := range ec.requested {
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
	ec, _ := ctx.Value(extKey{}).(*extCall)
	var missing []string
	for _, u := range h.required {
		if ec == nil || !slices.Contains(ec.requested, u) {
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
