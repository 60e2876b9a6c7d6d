// Package extension holds the extensions of one request (A2A 1.0 §3.2.6,
// §4.6): the URIs its caller activated, read by a binding from the
// A2A-Extensions and X-A2A-Extensions headers, and those the agent applied
// to it, which the binding writes back in the response's header. A binding
// puts a Call in the request's context; the handler and the agent read and
// apply through it.
package extension

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/a2abridge/a2abridge/a2a"
)

// Header names the A2A 1.0 service parameter that carries the extensions
// a request activates, and that a response's applied ones are listed in
// (A2A 1.0 §3.2.6, §14.2.2).
const Header = "A2A-Extensions"

// Header03 is the A2A 0.3 clients' header for the same list.
const Header03 = "X-A2A-Extensions"

// MaxURIs is the most extension URIs one request may list in its two
// headers together (repeats counted).
const MaxURIs = 64

// Call is the extensions of one request: those the caller activated and
// those applied to it so far. A nil *Call is a request that activated
// none. Safe for concurrent use.
type Call struct {
	requested []string // trimmed, no duplicates, in the order sent
	mu        sync.Mutex
	applied   []string
}

type key struct{}

// With returns ctx carrying uris as the activated extensions (empty URIs
// and repeats dropped); ctx itself when none is left.
func With(ctx context.Context, uris ...string) context.Context {
	var req []string
	for _, u := range uris {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(req, u) {
			req = append(req, u)
		}
	}
	if len(req) == 0 {
		return ctx
	}
	return context.WithValue(ctx, key{}, &Call{requested: req})
}

// From returns the Call in ctx, nil when the request activated none.
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(key{}).(*Call)
	return c
}

// Requested returns the activated URIs in the order sent (nil for a nil
// Call). The slice is shared: do not modify it.
func (c *Call) Requested() []string {
	if c == nil {
		return nil
	}
	return c.requested
}

// Apply records that uri was applied to the request and reports whether
// it was: only an activated extension can be.
func (c *Call) Apply(uri string) bool {
	if c == nil || !slices.Contains(c.requested, uri) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.applied, uri) {
		c.applied = append(c.applied, uri)
	}
	return true
}

// FromRequest returns ctx carrying the extensions r activates (both
// header names, each possibly repeated, comma-separated), with
// a2a.ExtensionEventLog applied when activated (the server gives its
// behaviour to every request); ctx and nil when r activates none. A
// request without the headers costs two map lookups. One listing more
// than MaxURIs gets an InvalidParams error naming the header, so that the
// work per request stays bounded whatever the headers hold.
func FromRequest(ctx context.Context, r *http.Request) (context.Context, *Call, *a2a.Error) {
	v1, v03 := r.Header["A2a-Extensions"], r.Header["X-A2a-Extensions"] // canonical keys
	if len(v1) == 0 && len(v03) == 0 {
		return ctx, nil, nil
	}
	return FromValues(ctx, v1, v03)
}

// FromValues is FromRequest of the values of the two headers (or of the
// gRPC metadata keys a2a-extensions and x-a2a-extensions).
func FromValues(ctx context.Context, v1, v03 []string) (context.Context, *Call, *a2a.Error) {
	c := &Call{}
	n := 0
	for _, vs := range [][]string{v1, v03} {
		for _, v := range vs {
			for u := range strings.SplitSeq(v, ",") {
				if u = strings.TrimSpace(u); u == "" {
					continue
				}
				if n++; n > MaxURIs {
					return ctx, nil, a2a.InvalidParams(Header,
						fmt.Sprintf("%s lists more than %d extension URIs", Header, MaxURIs))
				}
				if !slices.Contains(c.requested, u) {
					c.requested = append(c.requested, u)
				}
			}
		}
	}
	if len(c.requested) == 0 {
		return ctx, nil, nil
	}
	c.Apply(a2a.ExtensionEventLog)
	return context.WithValue(ctx, key{}, c), c, nil
}

// Applied is the comma-separated list of the extensions applied so far,
// "" when none was (or for a nil Call).
func (c *Call) Applied() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.applied, ",")
}

// WriteHeader sets the response header that lists the extensions applied
// so far (Header for an A2A 1.0 request, Header03 for 0.3), unless none
// was.
func (c *Call) WriteHeader(w http.ResponseWriter, version string) {
	v := c.Applied()
	if v == "" {
		return
	}
	name := Header
	if version != a2a.Version10 {
		name = Header03
	}
	w.Header().Set(name, v)
}
