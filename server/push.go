package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/push"

	"github.com/a2abridge/a2abridge/internal/binding/edge"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// PushSigner signs the body of a push notification for a webhook; the
// token is sent as "Authorization: Bearer <token>". push.Signer implements it.
type PushSigner interface {
	Sign(audience, taskID string, body []byte) (string, error)
}

// PushOptions enable push notifications (A2A 0.3.0 §9.5) on an Engine.
// Deliveries come from a durable outbox: each config has a cursor in its
// task's event log, so every state change and artifact is delivered in
// order per task and config, at least once, also across restarts.
type PushOptions struct {
	// Signer authenticates the server to webhooks whose config asks for
	// the "Bearer" scheme (and to all webhooks when set); nil sends no JWT.
	Signer PushSigner
	// Client performs deliveries; nil means http.DefaultClient. Use an
	// SSRF-guarded client (push.NewGuardedClient) in production.
	Client *http.Client
	// CheckURL validates a webhook URL when a config is set, by
	// tasks/pushNotificationConfig/set or by message/send's
	// configuration.pushNotificationConfig (A2A 0.3.0 §7.5, §9.5, §10.2),
	// before anything is stored; ctx is the request's. An error is
	// answered -32602 Invalid params naming the url field, with the
	// error's text as the reason. Use push.CheckURLContext with the
	// delivery client's allowlist: it also resolves the host and refuses
	// a name that resolves to a forbidden address or does not resolve
	// (within push.ResolveTimeout); nil accepts every URL.
	CheckURL func(ctx context.Context, rawURL string) error
	// GiveUpAfter is how long an event's notification is retried before
	// it is skipped (logged); 0 means 24 h.
	GiveUpAfter time.Duration
	// RetryBase and RetryMax bound the exponential backoff between
	// attempts; 0 means 1 s and 5 min.
	RetryBase, RetryMax time.Duration
}

// HeaderNotificationToken, "X-A2A-Notification-Token", carries a
// config's token on each notification (push.HeaderNotificationToken).
const HeaderNotificationToken = push.HeaderNotificationToken

// MaxPushConfigsPerTask bounds a task's webhooks.
const MaxPushConfigsPerTask = 10

// ---- the tasks/pushNotificationConfig methods ----

var errPushConfigNotFound = func(id string) error {
	return a2a.InvalidParams(edge.PushConfigIDField, fmt.Sprintf("no push notification config %q for this task", id))
}

// checkPushURL validates a webhook URL with PushOptions.CheckURL (which
// may resolve its host): -32602 naming field (the url's JSON pointer in
// the params) when it is refused, -32003 when push is disabled.
func (h *AgentHandler) checkPushURL(ctx context.Context, field, rawURL string) error {
	if h.e.Push() == nil {
		return a2a.ErrPushNotificationNotSupported
	}
	if err := h.e.CheckPushURL(ctx, rawURL); err != nil {
		return a2a.InvalidParams(field, "webhook URL not allowed: "+err.Error())
	}
	return nil
}

// checkPushHeaders refuses (-32602, naming the field below prefix) a
// config whose token or authentication could not be sent as HTTP header
// values: the scheme must be an RFC 9110 token, the token and credentials
// visible ASCII and spaces (no CR, LF or other control characters).
func checkPushHeaders(prefix string, cfg a2a.PushNotificationConfig) error {
	if !headerValueOK(cfg.Token) {
		return a2a.InvalidParams(prefix+"/token", "token must be visible ASCII characters and spaces")
	}
	if a := cfg.Authentication; a != nil {
		for i, sc := range a.Schemes {
			if sc == "" || strings.Trim(sc, "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
				return a2a.InvalidParams(fmt.Sprintf("%s/authentication/schemes/%d", prefix, i), "an authentication scheme is a token such as Bearer or Basic")
			}
		}
		if !headerValueOK(a.Credentials) {
			return a2a.InvalidParams(prefix+"/authentication/credentials", "credentials must be visible ASCII characters and spaces")
		}
	}
	return nil
}

func headerValueOK(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// setPushConfig stores a config whose URL checkPushURL accepted; cursor
// is where its deliveries start in the task's log.
func (h *AgentHandler) setPushConfig(ctx context.Context, taskID string, cfg a2a.PushNotificationConfig, cursor int64) (a2a.PushNotificationConfig, error) {
	p := h.e.Push()
	if p == nil {
		return cfg, a2a.ErrPushNotificationNotSupported
	}
	if cfg.ID == "" {
		cfg.ID = a2a.NewID()
	}
	if err := h.pushConfigRoom(ctx, taskID, cfg.ID, "/params/pushNotificationConfig"); err != nil {
		return cfg, err
	}
	if err := h.e.Store().SetPushConfig(ctx, taskID, cfg, cursor); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return cfg, a2a.ErrTaskNotFound
		}
		return cfg, err
	}
	p.Configured(taskID)
	p.KickConfig(taskID, cfg.ID)
	return cfg, nil
}

// pushConfigRoom refuses (-32602, naming field) a config that would be
// the task's MaxPushConfigsPerTask+1th; replacing one of its configs (by
// id) is always allowed.
func (h *AgentHandler) pushConfigRoom(ctx context.Context, taskID, configID, field string) error {
	existing, err := h.e.Store().PushConfigs(ctx, taskID)
	if err != nil {
		return err
	}
	if len(existing) >= MaxPushConfigsPerTask && (configID == "" || !slices.ContainsFunc(existing, func(c store.PushConfig) bool { return c.Config.ID == configID })) {
		return a2a.InvalidParams(field, fmt.Sprintf("a task has at most %d push notification configs", MaxPushConfigsPerTask))
	}
	return nil
}
