package server

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
)

// Limiter admits or refuses the requests of an agent's callers
// (HandlerOptions.Limiter): a2abridge's rate limits. Allow is called once
// for each HTTP request or gRPC call to the agent, on every binding and
// version (a JSON-RPC batch and a stream count once, when they arrive;
// a stream already open is never cut), after authentication and before
// the request's body is read (over gRPC, once the message is decoded: its
// tenant names the agent); p is the authenticated caller, nil without
// authentication or when the credentials failed (a refused request is
// counted too, by whatever p-less key the Limiter uses). It returns true to let the request go on, or false
// and how long the caller should wait before trying again (rounded up to
// whole seconds, at least 1, in Retry-After). Implementations are safe for
// concurrent use and must not block.
type Limiter interface {
	Allow(r *http.Request, p *auth.Principal) (retryAfter time.Duration, ok bool)
}

// RateLimited returns the error of a request that a Limiter refused,
// with retryAfter rounded up to whole seconds (at least 1) in Data
// {"retryAfterSeconds"} (in the ErrorInfo metadata of A2A 1.0), and
// those seconds.
func RateLimited(retryAfter time.Duration) (*a2a.Error, int) {
	secs := retryAfterSeconds(retryAfter)
	e := a2a.ErrRateLimited.WithMessage("Rate limit exceeded: try again in %d s", secs).
		WithData(map[string]any{"retryAfterSeconds": strconv.Itoa(secs)})
	return e, secs
}

// retryAfterSeconds rounds d up to whole seconds, within [1, 86400].
func retryAfterSeconds(d time.Duration) int {
	s := math.Ceil(d.Seconds())
	switch {
	case !(s >= 1): // also NaN
		return 1
	case s > 86400:
		return 86400
	}
	return int(s)
}
