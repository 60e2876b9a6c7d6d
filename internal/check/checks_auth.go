package check

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2abridge/a2abridge/internal/schema"
)

func init() {
	register(
		&Check{ID: "auth.unauthenticated", Category: "auth", Section: "§4.4", Level: Must,
			Title:          "Requests without credentials are rejected",
			Requirement:    "The server MUST authenticate every incoming request based on its declared authentication requirements (§4.4); it SHOULD answer 401 Unauthorized or 403 Forbidden.",
			Recommendation: "Reject requests without valid credentials (HTTP 401 with a JSON-RPC error body) before any method runs.",
			Run:            checkAuthUnauthenticated},
		&Check{ID: "auth.challenge", Category: "auth", Section: "§4.4", Level: Should,
			Title:          "401 answers carry WWW-Authenticate",
			Requirement:    "The server SHOULD include relevant HTTP headers (e.g. WWW-Authenticate) with 401 Unauthorized responses to indicate the required scheme(s) (§4.4).",
			Recommendation: "Add a WWW-Authenticate challenge per scheme (e.g. Bearer realm=\"a2a\") to every 401.",
			Run:            checkAuthChallenge},
		&Check{ID: "auth.extended-card", Category: "auth", Section: "§7.10", Level: Must,
			Title:          "The authenticated extended card is served",
			Requirement:    "When the card declares supportsAuthenticatedExtendedCard, agent/getAuthenticatedExtendedCard returns a complete AgentCard to authenticated clients (§7.10).",
			Recommendation: "Answer agent/getAuthenticatedExtendedCard with the extended AgentCard for authenticated callers.",
			Run:            checkAuthExtendedCard},
		&Check{ID: "auth.extended-card-unauth", Category: "auth", Section: "§7.10", Level: Must,
			Title:          "The extended card needs authentication",
			Requirement:    "The client MUST authenticate agent/getAuthenticatedExtendedCard with a scheme of the public card (§7.10); without credentials the answer is 401 Unauthorized (SHOULD with WWW-Authenticate).",
			Recommendation: "Reject unauthenticated agent/getAuthenticatedExtendedCard calls with 401.",
			Run:            checkAuthExtendedCardUnauth},
	)
}

// rejected reports whether an answer refuses the request for lack of
// credentials (401/403, or a JSON-RPC error that is not about the method's
// own work).
func rejected(r *rpcResp) (bool, string) {
	e := r.ex
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return true, fmt.Sprintf("HTTP %d", e.Status)
	case r.Err != nil:
		return true, fmt.Sprintf("a JSON-RPC error (%s) with HTTP %d; 401 is recommended", r.describe(), e.Status)
	}
	return false, ""
}

func checkAuthUnauthenticated(ctx context.Context, p *Probe) Result {
	if r := needSecured(p); r != nil {
		return *r
	}
	r := p.callOpt(ctx, "message/send", sendParams(message("", "", textPart(p.opts.Text)), map[string]any{"blocking": false}), reqOpt{noAuth: true})
	if r.ex.Status == 0 {
		return fail("message/send without credentials: %s", r.ex.Err).with(r.ex)
	}
	if t, ok := asTask(r); ok {
		return fail("message/send without credentials created task %s (%s)", t.ID, t.State).with(r.ex)
	}
	if ok, how := rejected(r); ok {
		return pass("message/send without credentials was rejected: %s", how).with(r.ex)
	}
	return fail("message/send without credentials answered %s", r.describe()).with(r.ex)
}

func checkAuthChallenge(ctx context.Context, p *Probe) Result {
	if r := needSecured(p); r != nil {
		return *r
	}
	r := p.callOpt(ctx, "tasks/get", map[string]any{"id": "a2a-check-unknown-" + newUUID()}, reqOpt{noAuth: true})
	if r.ex.Status != http.StatusUnauthorized {
		return notApplicable("the unauthenticated request was answered %s, not 401", statusText(r.ex))
	}
	if c := r.ex.RespHeader.Values("Www-Authenticate"); len(c) > 0 {
		return pass("401 with WWW-Authenticate: %s", strings.Join(c, ", ")).with(r.ex)
	}
	return fail("the 401 answer has no WWW-Authenticate header").with(r.ex)
}

func needExtendedCard(p *Probe) *Result {
	if r := p.needReachable(); r != nil {
		return r
	}
	if r := needCard(p); r != nil {
		return r
	}
	if b, _ := p.card["supportsAuthenticatedExtendedCard"].(bool); !b {
		r := notApplicable("the card does not declare supportsAuthenticatedExtendedCard")
		return &r
	}
	return nil
}

func checkAuthExtendedCard(ctx context.Context, p *Probe) Result {
	if r := needExtendedCard(p); r != nil {
		return *r
	}
	if p.securityDeclared() && !p.hasCredentials() {
		return skip("no credentials given (use --token, --api-key or --header)")
	}
	if p.authNo != "" {
		return skip("%s", p.authNo)
	}
	r := p.call(ctx, "agent/getAuthenticatedExtendedCard", nil)
	if r.Err != nil || !r.HasResult {
		return fail("agent/getAuthenticatedExtendedCard (authenticated) answered %s", r.describe()).with(r.ex)
	}
	if err := schema.Validate("AgentCard", r.Result); err != nil {
		return fail("the extended card is %v", err).with(r.ex)
	}
	return pass("the extended card %q is a valid AgentCard", str(r.resultObj(), "name")).with(r.ex)
}

func checkAuthExtendedCardUnauth(ctx context.Context, p *Probe) Result {
	if r := needExtendedCard(p); r != nil {
		return *r
	}
	if !p.securityDeclared() {
		return notApplicable("the card declares no security requirements, so any caller is authenticated")
	}
	r := p.callOpt(ctx, "agent/getAuthenticatedExtendedCard", nil, reqOpt{noAuth: true})
	if r.ex.Status == 0 {
		return fail("agent/getAuthenticatedExtendedCard: %s", r.ex.Err).with(r.ex)
	}
	if r.Err == nil && r.HasResult {
		return fail("agent/getAuthenticatedExtendedCard without credentials returned the extended card").with(r.ex)
	}
	if ok, how := rejected(r); ok {
		return pass("agent/getAuthenticatedExtendedCard without credentials was rejected: %s", how).with(r.ex)
	}
	return fail("agent/getAuthenticatedExtendedCard without credentials answered %s", r.describe()).with(r.ex)
}

// needSecured is the result of a check that needs a reachable agent whose
// card declares security requirements, or nil when it has both.
func needSecured(p *Probe) *Result {
	if r := p.needReachable(); r != nil {
		return r
	}
	if r := needCard(p); r != nil {
		return r
	}
	if !p.securityDeclared() {
		r := notApplicable("the card declares no security requirements")
		return &r
	}
	return nil
}
