package gateway

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/forwarded"
	"github.com/a2abridge/a2abridge/internal/ratelimit"
	"github.com/a2abridge/a2abridge/server"
)

// maxRate bounds a limit's rate and burst (requests per second, and
// requests), far above what one server answers.
const maxRate = ratelimit.MaxBurst

// buckets checks c (where names the key, as "limits" or
// "agents.echo.limits") and returns its buckets; nil for a nil c.
func (c *LimitsConfig) buckets(where string) (*ratelimit.Buckets, error) {
	if c == nil {
		return nil, nil
	}
	switch {
	case !(c.Rate >= ratelimit.MinRate) || c.Rate > maxRate: // NaN too
		return nil, fmt.Errorf("%s.rate: want requests per second, from %g to %d (got %v)", where, ratelimit.MinRate, maxRate, c.Rate)
	case c.Burst < 0 || c.Burst > maxRate:
		return nil, fmt.Errorf("%s.burst: want 0 (the rate, rounded up) to %d (got %d)", where, maxRate, c.Burst)
	}
	burst := c.Burst
	if burst == 0 {
		burst = max(1, int(math.Ceil(c.Rate)))
	}
	return ratelimit.New(c.Rate, burst), nil
}

// rateLimiter is an agent's server.Limiter: the top-level limit of the
// caller (shared by every agent), the agent's limit of the caller, and
// the agent's total, each a token bucket; a request takes a token of
// each, or none.
type rateLimiter struct {
	global, perCaller, total *ratelimit.Buckets
	origin                   *forwarded.Origin // the client's address
	now                      func() time.Time
}

// limiterFor returns the server.Limiter of an agent whose own limits
// block is own (nil: none) under the top-level buckets global (nil:
// none); nil when neither limits it.
func limiterFor(name string, global *ratelimit.Buckets, own *AgentLimitsConfig, origin *forwarded.Origin) (server.Limiter, error) {
	l := &rateLimiter{global: global, origin: origin, now: time.Now}
	if own != nil {
		var err error
		if own.Rate != 0 || own.Burst != 0 || own.Total == nil {
			if l.perCaller, err = own.LimitsConfig.buckets("agents." + name + ".limits"); err != nil {
				return nil, err
			}
		}
		if l.total, err = own.Total.buckets("agents." + name + ".limits.total"); err != nil {
			return nil, err
		}
	}
	if l.global == nil && l.perCaller == nil && l.total == nil {
		return nil, nil
	}
	return l, nil
}

// Allow implements server.Limiter.
func (l *rateLimiter) Allow(r *http.Request, p *auth.Principal) (time.Duration, bool) {
	now := l.now()
	var key string
	if p != nil && p.Subject != "" {
		key = "s:" + p.Subject
	} else {
		// An IPv6 client is keyed by its /64: one host commonly holds
		// all of it, and would otherwise get a bucket per address.
		a := l.origin.ClientAddr(r)
		if a.Is6() {
			p, _ := a.Prefix(64)
			key = "a:" + p.String()
		} else {
			key = "a:" + a.String()
		}
	}
	type taken struct {
		b   *ratelimit.Buckets
		key string
	}
	var got [3]taken
	n := 0
	for _, t := range [...]taken{{l.global, key}, {l.perCaller, key}, {l.total, ""}} {
		if t.b == nil {
			continue
		}
		if wait, ok := t.b.Take(t.key, now); !ok {
			for _, g := range got[:n] {
				g.b.Refund(g.key, now)
			}
			return wait, false
		}
		got[n] = t
		n++
	}
	return 0, true
}
