package gateway

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/bridge/pair"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// PairsConfig is the pairs block: paired participants (bridge/pair).
type PairsConfig struct {
	// Enabled turns the pairs API on.
	Enabled bool `yaml:"enabled"`
	// MaxOpen bounds the open pairs; 0: pair.DefaultMaxOpen.
	MaxOpen int `yaml:"max_open"`
	// IdleTTL ends a pair idle that long; unset: pair.DefaultIdleTTL.
	IdleTTL *Duration `yaml:"idle_ttl"`
	// MaxMessageBytes bounds one message passed on; 0: the default.
	MaxMessageBytes ByteSize `yaml:"max_message_bytes"`
	// MaxTurns ends a pair after that many turns; 0: the default.
	MaxTurns int `yaml:"max_turns"`
	// MaxBackchannelBytes bounds the backchannel events a pair keeps;
	// 0: the default (pair.DefaultMaxBackchannelBytes).
	MaxBackchannelBytes ByteSize `yaml:"max_backchannel_bytes"`
	// MaxTotalBackchannelBytes bounds them across pairs; 0: the default
	// (pair.DefaultMaxTotalBackchannelBytes).
	MaxTotalBackchannelBytes ByteSize `yaml:"max_total_backchannel_bytes"`
}

// options checks the block and returns the pairs' options, nil when
// pairs are off.
func (p *PairsConfig) options() (*pair.Options, error) {
	if p == nil || !p.Enabled {
		return nil, nil
	}
	switch {
	case p.MaxOpen < 0:
		return nil, errors.New("pairs.max_open: want 0 (the default) or more")
	case p.MaxTurns < 0:
		return nil, errors.New("pairs.max_turns: want 0 (the default) or more")
	case p.IdleTTL != nil && *p.IdleTTL <= 0:
		return nil, errors.New("pairs.idle_ttl: want a positive duration (e.g. 10m)")
	case p.MaxMessageBytes > 64<<20:
		return nil, errors.New("pairs.max_message_bytes: at most 64MiB")
	case p.MaxBackchannelBytes > 1<<30:
		return nil, errors.New("pairs.max_backchannel_bytes: at most 1GiB")
	case p.MaxTotalBackchannelBytes > 1<<30:
		return nil, errors.New("pairs.max_total_backchannel_bytes: at most 1GiB")
	}
	o := &pair.Options{MaxOpen: p.MaxOpen, MaxMessageBytes: int(p.MaxMessageBytes), MaxTurns: p.MaxTurns,
		MaxBackchannelBytes: int(p.MaxBackchannelBytes), MaxTotalBackchannelBytes: int(p.MaxTotalBackchannelBytes)}
	if p.IdleTTL != nil {
		o.IdleTTL = time.Duration(*p.IdleTTL)
	}
	return o, nil
}

// startPairs mounts the pairs API (/api/pairs) when the pairs block
// enables it: behind the admin bearer tokens when the admin API is
// configured, otherwise behind the server's default authentication (auth:,
// or --auth-token: the one agents without an auth block of their own
// require); open only when neither is configured, like the agents. The
// side endpoints are not wrapped: their URLs, with 128 random bits, are
// the capability (pair.Options.Protect). The sides pass files on as
// attachment URLs when the store keeps attachments. It returns the
// function that ends the open pairs (before the engine shuts down); it
// may be called more than once.
func startPairs(log *slog.Logger, st store.Store, eng *server.Engine, host *server.Host, cfg serveConfig) (func(), error) {
	if cfg.pairs == nil {
		return func() {}, nil
	}
	o := *cfg.pairs
	o.Logger = log
	if _, ok := st.(store.AttachmentStore); ok {
		o.Attachments = &server.AttachmentOptions{}
	}
	protect, protection, err := apiProtection(cfg, "pairs", "the pairs API")
	if err != nil {
		return nil, err
	}
	o.Protect = protect
	m := pair.NewManager(eng, host, o)
	h := m.Handler(host.BaseURL)
	host.Handle("/api/pairs", h)
	host.Handle("/api/pairs/", h)
	log.Info("pairs API enabled", "path", "/api/pairs", "auth", protection)
	return m.Close, nil
}

// apiProtection is what guards an API of the gateway's own (the pairs
// API, the console's reading of other servers' cards), named name: the
// admin bearer tokens when the admin API is configured, otherwise the
// server's default authentication (auth:, or --auth-token); nil (and
// protection "none") when neither is configured, like the agents.
// protection is "admin", "auth" or "none".
// api names it in the 401's message ("the pairs API").
func apiProtection(cfg serveConfig, name, api string) (protect func(http.Handler) http.Handler, protection string, err error) {
	switch {
	case len(cfg.admin) > 0:
		return protectWith(cfg.admin, api, "an admin bearer token (admin.bearer_tokens)"), "admin", nil
	case cfg.authFor != nil:
		ho, err := cfg.authFor(name, nil)
		if err != nil {
			return nil, "", err
		}
		if len(ho.Auth) > 0 {
			return protectWith(ho.Auth, api, "the server's authentication (auth:)"), "auth", nil
		}
	}
	return nil, "none", nil
}

// protectWith requires a credential set accepts (401 with its
// challenges and a message naming what, 503 when the authenticator is
// unavailable).
func protectWith(set auth.Set, api, what string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := set.Authenticate(r); err != nil {
				for _, c := range set.ChallengesFor(err) {
					w.Header().Add("WWW-Authenticate", c)
				}
				if errors.Is(err, auth.ErrUnavailable) {
					adminFail(w, http.StatusServiceUnavailable, "", "authentication is unavailable")
					return
				}
				adminFail(w, http.StatusUnauthorized, "", "%s", authFailure(err, api, what))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// authFailure is the message of an API's 401: api "requires" what when
// the request carried no credentials, and "refused" them when it carried
// wrong ones (so that a mistyped token is not mistaken for a missing one).
func authFailure(err error, api, what string) string {
	if errors.Is(err, auth.ErrNoCredentials) {
		return api + " requires " + what
	}
	return api + " refused the credentials sent: they are not " + what
}
