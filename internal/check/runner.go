package check

import (
	"context"
	"fmt"
	"net/url"
	"runtime/debug"
	"time"
)

// maxEvidence bounds the exchanges attached by default to a result.
const maxEvidence = 3

// Run checks the endpoint o.URL and returns the report. It fails only on
// bad options; everything the endpoint does (including not answering) is
// reported as check results. ctx cancellation stops the run: the check in
// progress and the remaining ones are skipped, and the tasks started so
// far are still canceled.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.validateSuiteOptions(); err != nil {
		return nil, err
	}
	selected, err := Select(o.Categories, o.Only)
	if err != nil {
		return nil, err
	}
	if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", o.URL)
	}
	p := newProbe(o)
	started := p.now()
	t0 := time.Now()
	p.discover(ctx)

	// Only the suites of the interfaces the card offers run (and those
	// --protocol and --binding keep).
	var checks []*Check
	for _, c := range selected {
		if o.selected(c) && p.runsSuite(c.Version, c.Binding) {
			checks = append(checks, c)
		}
	}
	var normal, final []*Check
	for _, c := range checks {
		if c.Final {
			final = append(final, c)
		} else {
			normal = append(normal, c)
		}
	}
	results := map[string]CheckResult{}
	done := 0
	runOne := func(c *Check) {
		if o.Progress != nil {
			o.Progress(done, len(checks), c, nil, 0)
		}
		start := time.Now()
		var r Result
		if ctx.Err() != nil {
			r = skip("the run was interrupted")
		} else if r = p.runCheck(ctx, c); ctx.Err() != nil {
			r = skip("the run was interrupted")
		}
		took := time.Since(start)
		done++
		if o.Progress != nil {
			o.Progress(done, len(checks), c, &r, took)
		}
		results[c.ID] = newCheckResult(c, r, took)
	}
	for _, c := range normal {
		runOne(c)
	}
	for _, c := range final {
		runOne(c)
	}

	p.begin("cleanup")
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*p.timeout)
	p.cleanup(cctx)
	for _, s := range p.suites {
		s.cleanup(cctx)
	}
	cancel()
	if p.hook != nil {
		p.hook.close()
	}

	rep := &Report{
		Target:   o.URL,
		CardURL:  p.cardURL,
		Endpoint: p.endpoint,
		Checker:  "a2abridge check",
		Protocol: protocolsOf(checks),
		Started:  started,
		Duration: time.Since(t0),
	}
	if p.card != nil {
		rep.Agent = str(p.card, "name")
		rep.AgentVersion = str(p.card, "version")
		rep.DeclaredProtocol = str(p.card, "protocolVersion")
	}
	for _, c := range checks {
		rep.Results = append(rep.Results, results[c.ID])
	}
	rep.Interfaces = p.interfaceReports(o)
	rep.summarize()
	return rep, nil
}

// protocolsOf names the protocol versions of the checks run: "0.3.0",
// "1.0", "0.3.0 and 1.0" (the A2A 0.3.0 report's "0.3.0" when no check
// ran).
func protocolsOf(checks []*Check) string {
	has := map[string]bool{}
	for _, c := range checks {
		has[c.Version] = true
	}
	switch {
	case has["0.3"] && has["1.0"]:
		return "0.3.0 and 1.0"
	case has["1.0"]:
		return "1.0"
	}
	return "0.3.0"
}

// interfaceReports lists the card's interfaces, and whether each was
// checked. Without interfaces (no card), none.
func (p *Probe) interfaceReports(o Options) []InterfaceReport {
	var out []InterfaceReport
	seen := map[string]bool{}
	for _, i := range p.ifaces {
		ir := InterfaceReport{Interface: i, Name: i.Name()}
		switch {
		case seen[i.Suite()]:
			ir.NotChecked = "another interface of the same version and binding was checked"
		case i.Binding != BindingJSONRPC && i.Binding != BindingREST && i.Binding != BindingGRPC, i.Version != "0.3" && i.Version != "1.0",
			i.Binding == BindingGRPC && i.Version != "1.0":
			ir.NotChecked = "the checker does not speak this interface"
		case !o.selected(&Check{Version: i.Version, Binding: i.Binding}):
			ir.NotChecked = "left out by --protocol or --binding"
		default:
			ir.Checked = true
		}
		seen[i.Suite()] = true
		out = append(out, ir)
	}
	return out
}

// runCheck runs one check with its own time budget, never panicking.
func (p *Probe) runCheck(ctx context.Context, c *Check) (r Result) {
	p.begin(c.ID)
	ctx, cancel := context.WithTimeout(ctx, 3*p.timeout+10*time.Second)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			r = skip("checker error (please report it): %v\n%s", v, debug.Stack())
		}
		if len(r.Evidence) == 0 {
			cur := p.current()
			if len(cur) > maxEvidence {
				cur = cur[len(cur)-maxEvidence:]
			}
			r.Evidence = cur
		}
	}()
	return c.Run(ctx, p)
}
