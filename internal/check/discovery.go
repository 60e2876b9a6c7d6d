package check

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// cardCandidate is one place an Agent Card may be.
type cardCandidate struct{ source, url string }

// cardCandidates lists where to look for the card of u: u itself when it
// names a .json document, else the well-known path under u, at the root of
// its origin, then the legacy agent.json names.
func cardCandidates(u *url.URL) []cardCandidate {
	if strings.HasSuffix(u.Path, ".json") {
		return []cardCandidate{{"given", u.String()}}
	}
	c := *u
	c.RawQuery, c.Fragment = "", ""
	base := strings.TrimRight(c.String(), "/")
	origin := u.Scheme + "://" + u.Host
	out := []cardCandidate{{"well-known", base + "/.well-known/agent-card.json"}}
	if base != origin {
		out = append(out, cardCandidate{"root", origin + "/.well-known/agent-card.json"})
	}
	out = append(out, cardCandidate{"legacy", base + "/.well-known/agent.json"})
	if base != origin {
		out = append(out, cardCandidate{"legacy", origin + "/.well-known/agent.json"})
	}
	return out
}

// discover fetches the card and chooses the JSON-RPC endpoint.
func (p *Probe) discover(ctx context.Context) {
	p.begin("setup")
	u, err := url.Parse(p.opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.cardErr = fmt.Sprintf("%q is not an http(s) URL", p.opts.URL)
		p.endpointNo = p.cardErr
		return
	}
	var last *Exchange
	for _, c := range cardCandidates(u) {
		e := p.getCard(ctx, c.url)
		last = e
		if e.Status == http.StatusOK {
			if m, ok := decode(e.RespBody).(map[string]any); ok {
				p.card, p.cardBody, p.cardEx, p.cardURL, p.cardSource = m, e.RespBody, e, c.url, c.source
				break
			}
		}
		if e.Status == 0 && c.source != "legacy" {
			// The host does not answer at all: no use trying the others.
			break
		}
	}
	if p.card != nil {
		p.readInterfaces()
	}
	if p.card == nil {
		switch {
		case last == nil:
			p.cardErr = "no Agent Card found"
		case last.Status == 0:
			p.cardErr = fmt.Sprintf("no Agent Card: %s: %s", last.URL, last.Err)
		default:
			p.cardErr = fmt.Sprintf("no Agent Card: the last candidate, %s, answered HTTP %d %s", last.URL, last.Status, last.RespContentType())
		}
	}
	given := ""
	if !strings.HasSuffix(u.Path, ".json") {
		given = u.String()
	}
	switch {
	case p.card == nil && given == "":
		p.endpointNo = "no Agent Card, so no JSON-RPC endpoint is known"
		return
	case p.card == nil:
		p.endpoint = given
	default:
		ep, why := jsonrpcInterface(p.card)
		if ep == "" {
			p.endpointNo, p.endpointNA = why, true
			return
		}
		if eu, err := url.Parse(ep); err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" {
			if given == "" {
				p.endpointNo = fmt.Sprintf("the card's JSON-RPC url %q is not an absolute http(s) URL", ep)
				return
			}
			ep = given
		}
		p.endpoint = ep
	}
	r := p.call(ctx, "tasks/get", map[string]any{"id": "a2a-check-ping-" + newUUID()})
	p.endpointEx = r.ex
	if r.ex.Status == http.StatusUnauthorized || r.ex.Status == http.StatusForbidden {
		with := "without credentials; give them with --token, --api-key or --header"
		if p.hasCredentials() {
			with = "with the credentials given"
		}
		p.authNo = fmt.Sprintf("the endpoint answers HTTP %d (%s) %s", r.ex.Status, r.describe(), with)
	}
	if r.ex.Status != 0 {
		return
	}
	// The endpoint does not answer; the URL given may (a card whose url is
	// an address this machine cannot reach).
	if given != "" && given != p.endpoint {
		first := r.ex
		old := p.endpoint
		p.endpoint = given
		r2 := p.call(ctx, "tasks/get", map[string]any{"id": "a2a-check-ping-" + newUUID()})
		if r2.ex.Status != 0 && r2.obj != nil {
			p.endpointEx = first
			return
		}
		p.endpoint = old
	}
	p.endpointNo = fmt.Sprintf("the JSON-RPC endpoint %s is unreachable: %s", p.endpoint, r.ex.Err)
}

// getCard GETs a card URL, following up to 3 redirects (each recorded).
func (p *Probe) getCard(ctx context.Context, u string) *Exchange {
	var e *Exchange
	for range 4 {
		e = p.do(ctx, nil, reqOpt{method: http.MethodGet, url: u, accept: "application/json"})
		p.cardTried = append(p.cardTried, e)
		if e.Status < 300 || e.Status >= 400 || e.RespHeader.Get("Location") == "" {
			return e
		}
		base, err := url.Parse(u)
		if err != nil {
			return e
		}
		next, err := base.Parse(e.RespHeader.Get("Location"))
		if err != nil {
			return e
		}
		u = next.String()
	}
	return e
}

// jsonrpcInterface returns the card's JSON-RPC URL: url when
// preferredTransport is JSONRPC (or absent), else an additionalInterfaces
// entry with transport JSONRPC.
func jsonrpcInterface(card map[string]any) (string, string) {
	pt := str(card, "preferredTransport")
	if pt == "" || strings.EqualFold(pt, "JSONRPC") {
		if u := str(card, "url"); u != "" {
			return u, ""
		}
	}
	if ifs, ok := card["additionalInterfaces"].([]any); ok {
		for _, i := range ifs {
			if m, ok := i.(map[string]any); ok && strings.EqualFold(str(m, "transport"), "JSONRPC") && str(m, "url") != "" {
				return str(m, "url"), ""
			}
		}
	}
	if pt == "" {
		return "", "the card has no url"
	}
	return "", fmt.Sprintf("the card declares no JSON-RPC interface (preferredTransport %q); this checker speaks JSON-RPC only", pt)
}

// needEndpoint returns a skip (or n/a) result when the JSON-RPC endpoint
// cannot be probed (or refuses the checker's credentials), else nil.
func (p *Probe) needEndpoint() *Result {
	if p.endpointNo == "" && p.authNo != "" {
		r := skip("%s", p.authNo)
		return &r
	}
	return p.needReachable()
}

// needReachable is needEndpoint for the checks of authentication itself.
func (p *Probe) needReachable() *Result {
	if p.endpointNo == "" {
		return nil
	}
	if p.endpointNA {
		r := notApplicable("%s", p.endpointNo)
		return &r
	}
	r := skip("%s", p.endpointNo)
	return &r
}

// capability reports a boolean of the card's capabilities object.
func (p *Probe) capability(name string) bool {
	b, _ := dig(p.card, "capabilities", name).(bool)
	return b
}

// declaresExtension reports whether the card lists the extension uri in
// capabilities.extensions.
func (p *Probe) declaresExtension(uri string) bool {
	exts, _ := dig(p.card, "capabilities", "extensions").([]any)
	for _, x := range exts {
		if m, _ := x.(map[string]any); str(m, "uri") == uri {
			return true
		}
	}
	return false
}

// needCapability returns n/a unless the card declares the capability.
func (p *Probe) needCapability(name string) *Result {
	if r := p.needEndpoint(); r != nil {
		return r
	}
	if p.card == nil {
		r := skip("no Agent Card, so capabilities.%s is unknown", name)
		return &r
	}
	if !p.capability(name) {
		r := notApplicable("the card does not declare capabilities.%s", name)
		return &r
	}
	return nil
}

// securityDeclared reports whether the card asks for authentication.
func (p *Probe) securityDeclared() bool {
	if s, ok := p.card["security"].([]any); ok && len(s) > 0 {
		return true
	}
	s, ok := p.card["securitySchemes"].(map[string]any)
	return ok && len(s) > 0
}

// hasCredentials reports whether credentials were given.
func (p *Probe) hasCredentials() bool {
	return p.opts.Token != "" || p.opts.APIKey != "" || len(p.opts.Header) > 0
}
