package check

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/internal/schema"
)

func init() {
	register(
		&Check{ID: "card.fetch", Category: "card", Section: "§5.1", Level: Must,
			Title:          "The Agent Card is served",
			Requirement:    "A2A Servers MUST make an Agent Card available (§5.1, §11.1.1): a JSON document describing the agent.",
			Recommendation: "Serve the card with GET at https://{host}/.well-known/agent-card.json (or the agent's base URL + /.well-known/agent-card.json), HTTP 200, a JSON object.",
			Run:            checkCardFetch},
		&Check{ID: "card.well-known", Category: "card", Section: "§5.3", Level: Should,
			Title:          "The card is at the well-known path",
			Requirement:    "The recommended location of the Agent Card is https://{server_domain}/.well-known/agent-card.json (RFC 8615); agent.json is the pre-0.2.5 name.",
			Recommendation: "Serve the card at /.well-known/agent-card.json (keep agent.json as an alias if older clients need it).",
			Run:            checkCardWellKnown},
		&Check{ID: "card.content-type", Category: "card", Section: "§5.3", Level: Should,
			Title:          "The card is served as application/json",
			Requirement:    "The Agent Card is a JSON document; it is served with Content-Type application/json.",
			Recommendation: "Set Content-Type: application/json on the card response.",
			Run:            checkCardContentType},
		&Check{ID: "card.schema", Category: "card", Section: "§5.5", Level: Must,
			Title:          "The card is valid against the A2A 0.3.0 JSON Schema",
			Requirement:    "Agents MUST provide a valid AgentCard document as defined in Section 5 (§11.1.1); the normative shape is #/definitions/AgentCard of the A2A 0.3.0 JSON Schema.",
			Recommendation: "Fix the fields listed so that the card validates against the A2A 0.3.0 schema (specification/json/a2a.json).",
			Run:            checkCardSchema},
		&Check{ID: "card.required-fields", Category: "card", Section: "§5.5", Level: Must,
			Title:          "The card has every required field",
			Requirement:    "An AgentCard has name, description, url, version, protocolVersion, capabilities, defaultInputModes, defaultOutputModes and skills; strings are not empty.",
			Recommendation: "Add the missing fields to the card.",
			Run:            checkCardRequired},
		&Check{ID: "card.protocol-version", Category: "card", Section: "§5.5", Level: Should,
			Title:          "The card declares protocolVersion 0.3.0",
			Requirement:    "protocolVersion is the A2A version the agent implements; this report checks A2A 0.3.0 behaviour.",
			Recommendation: "Declare \"protocolVersion\": \"0.3.0\" once the agent implements A2A 0.3.0.",
			Run:            checkCardProtocolVersion},
		&Check{ID: "card.preferred-transport", Category: "card", Section: "§5.6.1", Level: Must,
			Title:          "preferredTransport is declared",
			Requirement:    "The preferredTransport field is REQUIRED and MUST be present in every AgentCard (§5.6.1); it SHOULD be one of JSONRPC, GRPC, HTTP+JSON (§5.5.5).",
			Recommendation: "Add \"preferredTransport\": \"JSONRPC\" (or the transport served at url).",
			Run:            checkCardPreferredTransport},
		&Check{ID: "card.url", Category: "card", Section: "§5.6.1", Level: Must,
			Title:          "The card's url answers the preferred transport",
			Requirement:    "The main url MUST support the transport protocol declared in preferredTransport (§5.6.1, §5.6.4); clients send every call there.",
			Recommendation: "Publish in url an absolute address that clients can reach and that answers JSON-RPC (derive it from the request's Host or configure the public URL).",
			Run:            checkCardURL},
		&Check{ID: "card.interfaces", Category: "card", Section: "§5.6.4", Level: Must,
			Title:          "additionalInterfaces are well-formed and do not conflict",
			Requirement:    "Each AgentInterface MUST accurately declare the transport available at its url (§5.6.2); the same URL MUST NOT declare conflicting transports (§5.6.4).",
			Recommendation: "Give every additionalInterfaces entry a url and a transport, and declare the main url with its preferredTransport.",
			Run:            checkCardInterfaces},
		&Check{ID: "card.interfaces-complete", Category: "card", Section: "§5.6.2", Level: Should,
			Title:          "additionalInterfaces include the main url",
			Requirement:    "If additionalInterfaces is provided, it SHOULD include an entry for the main url and preferredTransport (§5.6.2, §5.6.4).",
			Recommendation: "Add {\"url\": <url>, \"transport\": <preferredTransport>} to additionalInterfaces.",
			Run:            checkCardInterfacesComplete},
		&Check{ID: "card.cap-streaming", Category: "card", Section: "§7.2", Level: Should,
			Title:          "Undeclared streaming fails cleanly",
			Requirement:    "message/stream requires capabilities.streaming: true (§7.2); an agent that does not declare it answers message/stream with a JSON-RPC error (e.g. -32004 UnsupportedOperationError, §8.2).",
			Recommendation: "Either declare capabilities.streaming: true (it works) or answer message/stream with a JSON-RPC error such as -32004.",
			Run:            checkCapStreaming},
		&Check{ID: "card.cap-push", Category: "card", Section: "§8.2", Level: Should,
			Title:          "Undeclared push notifications fail with -32003",
			Requirement:    "tasks/pushNotificationConfig/* require capabilities.pushNotifications: true (§7.5); without it the server answers -32003 PushNotificationNotSupportedError (§8.2).",
			Recommendation: "Answer tasks/pushNotificationConfig/set with -32003 when push notifications are not supported (or declare the capability if they are).",
			Run:            checkCapPush},
		&Check{ID: "card.cap-extended-card", Category: "card", Section: "§7.10", Level: Should,
			Title:          "Undeclared extended card fails cleanly",
			Requirement:    "agent/getAuthenticatedExtendedCard is available only if supportsAuthenticatedExtendedCard is true (§7.10); otherwise it answers an error such as -32007 AuthenticatedExtendedCardNotConfiguredError (§8.2).",
			Recommendation: "Answer agent/getAuthenticatedExtendedCard with -32007 unless the card declares supportsAuthenticatedExtendedCard.",
			Run:            checkCapExtendedCard},
	)
}

func needCard(p *Probe) *Result {
	if p.card == nil {
		r := skip("no Agent Card: %s", p.cardErr)
		return &r
	}
	return nil
}

func checkCardFetch(_ context.Context, p *Probe) Result {
	if p.card == nil {
		ev := p.cardTried
		if len(ev) > maxEvidence {
			ev = ev[:maxEvidence]
		}
		return fail("%s", p.cardErr).with(ev...)
	}
	return pass("served at %s (HTTP %d, %d bytes)", p.cardURL, p.cardEx.Status, len(p.cardBody)).with(p.cardEx)
}

func checkCardWellKnown(ctx context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	switch p.cardSource {
	case "well-known", "root":
		return pass("the card is at %s", p.cardURL).with(p.cardEx)
	case "legacy":
		return fail("the card is only at the legacy path %s; A2A 0.3.0 names it /.well-known/agent-card.json", p.cardURL).with(p.cardTried...)
	}
	u, err := url.Parse(p.cardURL)
	if err == nil && strings.HasSuffix(u.Path, "/.well-known/agent-card.json") {
		return pass("the card is at %s", p.cardURL).with(p.cardEx)
	}
	// A card URL was given that is not a well-known path: is the card
	// also at the well-known path of its origin?
	wk := u.Scheme + "://" + u.Host + "/.well-known/agent-card.json"
	e := p.do(ctx, nil, reqOpt{method: http.MethodGet, url: wk})
	if e.Status == http.StatusOK {
		if _, ok := decode(e.RespBody).(map[string]any); ok {
			return pass("the card is also at %s", wk).with(e)
		}
	}
	return fail("the card is at %s; %s answers %s", p.cardURL, wk, statusText(e)).with(p.cardEx, e)
}

func statusText(e *Exchange) string {
	if e.Status == 0 {
		return e.Err
	}
	s := fmt.Sprintf("HTTP %d", e.Status)
	if ct := e.RespContentType(); ct != "" {
		s += " " + ct
	}
	return s
}

func isJSONType(ct string) bool {
	mt := mediaType(ct)
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func checkCardContentType(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	ct := p.cardEx.RespContentType()
	if isJSONType(ct) {
		return pass("Content-Type: %s", ct).with(p.cardEx)
	}
	if ct == "" {
		return fail("the card response has no Content-Type").with(p.cardEx)
	}
	return fail("the card is served with Content-Type: %s", ct).with(p.cardEx)
}

func checkCardSchema(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	if err := schema.Validate("AgentCard", p.cardBody); err != nil {
		return fail("%v", err).with(p.cardEx)
	}
	return pass("the card is a valid A2A 0.3.0 AgentCard").with(p.cardEx)
}

func checkCardRequired(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	var missing, empty []string
	for _, f := range []string{"name", "description", "url", "version", "protocolVersion", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		v, ok := p.card[f]
		switch {
		case !ok || v == nil:
			missing = append(missing, f)
		case f != "capabilities" && f != "defaultInputModes" && f != "defaultOutputModes" && f != "skills":
			if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
				empty = append(empty, f)
			}
		}
	}
	if skills, ok := p.card["skills"].([]any); ok {
		for i, s := range skills {
			m, _ := s.(map[string]any)
			for _, f := range []string{"id", "name", "description", "tags"} {
				if _, ok := m[f]; !ok {
					missing = append(missing, fmt.Sprintf("skills[%d].%s", i, f))
				}
			}
		}
	}
	if len(missing)+len(empty) == 0 {
		return pass("every required field is present").with(p.cardEx)
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing: "+strings.Join(missing, ", "))
	}
	if len(empty) > 0 {
		parts = append(parts, "empty or not a string: "+strings.Join(empty, ", "))
	}
	return fail("%s", strings.Join(parts, "; ")).with(p.cardEx)
}

func checkCardProtocolVersion(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	v, ok := p.card["protocolVersion"].(string)
	switch {
	case !ok:
		return fail("the card has no protocolVersion").with(p.cardEx)
	case v == "0.3.0":
		return pass("protocolVersion %q", v).with(p.cardEx)
	}
	return fail("the card declares protocolVersion %q; this report checks A2A 0.3.0 behaviour", v).with(p.cardEx)
}

var coreTransports = []string{"JSONRPC", "GRPC", "HTTP+JSON"}

func checkCardPreferredTransport(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	v, ok := p.card["preferredTransport"].(string)
	switch {
	case !ok || v == "":
		return fail("the card has no preferredTransport (clients assume JSONRPC)").with(p.cardEx)
	case slices.Contains(coreTransports, v):
		return pass("preferredTransport %q", v).with(p.cardEx)
	}
	return pass("preferredTransport %q is not a core transport (JSONRPC, GRPC, HTTP+JSON); allowed for extensions", v).with(p.cardEx)
}

func checkCardURL(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	u := str(p.card, "url")
	pt := str(p.card, "preferredTransport")
	if pt != "" && !strings.EqualFold(pt, "JSONRPC") {
		return skip("preferredTransport is %q; this checker speaks JSON-RPC only, so the transport at url is not verified", pt)
	}
	if r := p.needEndpoint(); r != nil && p.endpointEx == nil {
		return fail("%s", r.Message).with(p.cardEx)
	}
	e := p.endpointEx
	if p.endpoint != u {
		return fail("the card's url %s is unreachable (%s); the checker used %s instead", u, e.Err, p.endpoint).with(p.cardEx, e)
	}
	if e.Status == 0 {
		return fail("the card's url %s is unreachable: %s", u, e.Err).with(p.cardEx, e)
	}
	r := parseRPC(e.RespBody)
	if r.obj == nil || (!r.HasResult && r.Err == nil) {
		return fail("POST %s (tasks/get) did not answer JSON-RPC: %s, %s", u, statusText(e), r.describe()).with(p.cardEx, e)
	}
	return pass("POST %s answers JSON-RPC (tasks/get: %s)", u, r.describe()).with(e)
}

// interfaces returns the card's additionalInterfaces as (url, transport).
func (p *Probe) interfaces() ([][2]string, bool) {
	raw, ok := p.card["additionalInterfaces"].([]any)
	if !ok {
		return nil, false
	}
	var out [][2]string
	for _, i := range raw {
		m, _ := i.(map[string]any)
		out = append(out, [2]string{str(m, "url"), str(m, "transport")})
	}
	return out, true
}

func checkCardInterfaces(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	ifs, ok := p.interfaces()
	if !ok || len(ifs) == 0 {
		return notApplicable("the card has no additionalInterfaces")
	}
	var problems []string
	for i, f := range ifs {
		if f[0] == "" || f[1] == "" {
			problems = append(problems, fmt.Sprintf("additionalInterfaces[%d] lacks a url or a transport", i))
		}
	}
	main, pt := str(p.card, "url"), str(p.card, "preferredTransport")
	if pt == "" {
		pt = "JSONRPC"
	}
	var mainTransports []string
	for _, f := range ifs {
		if f[0] == main {
			mainTransports = append(mainTransports, f[1])
		}
	}
	if len(mainTransports) > 0 && !slices.ContainsFunc(mainTransports, func(t string) bool { return strings.EqualFold(t, pt) }) {
		problems = append(problems, fmt.Sprintf("the main url %s is declared with transport %s in additionalInterfaces but %s as preferredTransport", main, strings.Join(mainTransports, ", "), pt))
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; ")).with(p.cardEx)
	}
	return pass("%d interface(s), no conflicts", len(ifs)).with(p.cardEx)
}

func checkCardInterfacesComplete(_ context.Context, p *Probe) Result {
	if r := needCard(p); r != nil {
		return *r
	}
	ifs, ok := p.interfaces()
	if !ok || len(ifs) == 0 {
		return notApplicable("the card has no additionalInterfaces")
	}
	main, pt := str(p.card, "url"), str(p.card, "preferredTransport")
	for _, f := range ifs {
		if f[0] == main && strings.EqualFold(f[1], pt) {
			return pass("additionalInterfaces include %s (%s)", main, pt).with(p.cardEx)
		}
	}
	return fail("additionalInterfaces do not include the main url %s with %s", main, pt).with(p.cardEx)
}

func checkCapStreaming(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	if r := needCard(p); r != nil {
		return *r
	}
	if p.capability("streaming") {
		return notApplicable("the card declares capabilities.streaming; the stream checks verify that it works")
	}
	e := p.stream(ctx, "message/stream", sendParams(message("", "", textPart(p.opts.Text)), nil), streamOpt{})
	if !e.Stream || mediaType(e.RespContentType()) != "text/event-stream" {
		r := parseRPC(e.RespBody)
		if r.Err != nil {
			return pass("message/stream answered %s", r.describe()).with(e)
		}
		return fail("message/stream answered %s, %s: not a JSON-RPC error", statusText(e), r.describe()).with(e)
	}
	if len(e.Events) == 1 {
		if r := parseRPC(e.Events[0].Data); r.Err != nil {
			return pass("message/stream answered one SSE event with %s", r.describe()).with(e)
		}
	}
	if len(e.Events) > 0 {
		return fail("message/stream streams %d event(s) although the card does not declare capabilities.streaming: clients will not use it", len(e.Events)).with(e)
	}
	return fail("message/stream answered an event stream without events (%s)", statusText(e)).with(e)
}

// looksLikeURLRefusal reports whether an error answer to a push config
// is about the webhook URL (SSRF protection refusing loopback).
func looksLikeURLRefusal(r *rpcResp) bool {
	if r.Err == nil {
		return false
	}
	if r.Err.Code == -32602 {
		return true
	}
	m := strings.ToLower(r.Err.Message + " " + string(r.Err.Data))
	for _, w := range []string{"url", "webhook", "loopback", "private", "not allowed"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

func checkCapPush(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	if r := needCard(p); r != nil {
		return *r
	}
	if p.capability("pushNotifications") {
		return notApplicable("the card declares capabilities.pushNotifications; the push checks verify that it works")
	}
	t, res := p.terminalTask(ctx, false)
	if res != nil {
		t.ID = "a2a-check-unknown-" + newUUID()
	}
	r := p.call(ctx, "tasks/pushNotificationConfig/set", map[string]any{
		"taskId": t.ID, "pushNotificationConfig": map[string]any{"url": "https://a2a-check.invalid/webhook", "token": "a2a-check"}})
	switch {
	case r.code() == -32003:
		return pass("tasks/pushNotificationConfig/set answered %s", r.describe()).with(r.ex)
	case r.code() == -32601:
		return pass("tasks/pushNotificationConfig/set answered %s (method not found; -32003 is the specific code)", r.describe()).with(r.ex)
	case r.Err != nil:
		return fail("tasks/pushNotificationConfig/set answered %s instead of -32003", r.describe()).with(r.ex)
	case r.HasResult:
		return fail("tasks/pushNotificationConfig/set was accepted although the card does not declare capabilities.pushNotifications").with(r.ex)
	}
	return fail("tasks/pushNotificationConfig/set answered %s", r.describe()).with(r.ex)
}

func checkCapExtendedCard(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	if r := needCard(p); r != nil {
		return *r
	}
	if b, _ := p.card["supportsAuthenticatedExtendedCard"].(bool); b {
		return notApplicable("the card declares supportsAuthenticatedExtendedCard; the auth checks verify it")
	}
	r := p.call(ctx, "agent/getAuthenticatedExtendedCard", nil)
	switch {
	case r.code() == -32007:
		return pass("agent/getAuthenticatedExtendedCard answered %s", r.describe()).with(r.ex)
	case r.Err != nil:
		return pass("agent/getAuthenticatedExtendedCard answered %s (-32007 is the specific code)", r.describe()).with(r.ex)
	case r.HasResult:
		return fail("agent/getAuthenticatedExtendedCard returned a card although the public card does not declare supportsAuthenticatedExtendedCard").with(r.ex)
	}
	return fail("agent/getAuthenticatedExtendedCard answered %s, not a JSON-RPC error", r.describe()).with(r.ex)
}
