//go:build linux

package main

import (
	"fmt"
	"strings"

	"github.com/a2abridge/a2abridge/internal/bench"
)

// replicaCPUMargin is how much more a2abridge CPU per request three
// replicas may use than one before "must not grow with the number of
// replicas" counts as missed: the noise of the figure. On
// the 2-core machines of these runs, the server CPU per request of one
// target at 32 clients varies by 3–10 % from round to round (the rounds'
// range is shown in the row; up to 20 % at one client, where fixed costs
// weigh more, hence the goal row is the 32-client send), more when other
// processes load the machine; 15 % is above that noise and well below
// what a cost per replica would add (work repeated on every replica for
// each append adds 50 % or more with three).
const replicaCPUMargin = 0.15

// crossGoal is the cross-replica delay goal, ms at p50: an event
// appended on one replica reaches a stream on another within it.
const crossGoal = 5.0

// isPostgresSection tells whether a target has a row in the PostgreSQL
// section: the PostgreSQL targets and, to compare, the baseline and
// SQLite.
func isPostgresSection(t *target) bool {
	switch t.srv.key {
	case "baseline", "sqlite", "postgres", "postgres-replica", "postgres-3":
		return true
	}
	return false
}

func renderPostgres(b *strings.Builder, scenarios []scenario, live []*target, f figures, cross *crossReport) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	hasPG := false
	for _, t := range live {
		hasPG = hasPG || t.srv.reset != nil
	}
	if !hasPG && cross == nil {
		return
	}
	p("## PostgreSQL: one replica, and three behind nginx\n\n")
	if hasPG {
		p("The scenarios above again, for the PostgreSQL targets with SQLite and the baseline beside them, and the CPU time that went to each process per request: " +
			"a2abridge (for three replicas, the three processes summed), the PostgreSQL backends serving a2abridge's sessions (found by their application_name in pg_stat_activity, their CPU time read from /proc), and nginx (master and worker). " +
			"Server-side total is their sum. On two cores, the replicas, nginx, PostgreSQL and the load generator share the same cores: three replicas cannot add throughput here, and what is measured is what the extra processes and the extra hop cost.\n\n")
		p("| scenario | target | protocol | req/s [range] | p50 | p99 | × baseline | a2abridge CPU/req [rounds] | PostgreSQL CPU/req | nginx CPU/req | server-side total | client CPU/req | other load | errors |\n")
		p("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range scenarios {
			for _, t := range live {
				if !isPostgresSection(t) {
					continue
				}
				a, ok := f.aggs[s.key][t.key]
				if !ok {
					continue
				}
				xb := "–"
				if base, ok := f.baseline(s.key, t); ok && t.srv.key != "baseline" {
					xb = ratio(a.rps, base.rps)
				}
				db, nginx := "–", "–"
				total := a.srvPerReq + a.proxyPerReq
				if t.srv.reset != nil {
					if a.dbKnown {
						db = fmt.Sprintf("%.0f µs", a.dbPerReq)
						total += a.dbPerReq
					} else {
						db = "unknown"
					}
				}
				if len(t.srv.replicas) > 0 {
					nginx = fmt.Sprintf("%.0f µs", a.proxyPerReq)
				}
				p("| %s | %s | %s | %.0f [%.0f–%.0f] | %s | %s | %s | %.0f µs [%.0f–%.0f] | %s | %s | %.0f µs | %.0f µs | %.0f%% | %d |\n",
					s.key, t.srv.name, t.proto(), a.rps, a.minRPS, a.maxRPS, bench.FormatMS(a.p50), bench.FormatMS(a.p99), xb,
					a.srvPerReq, a.minSrv, a.maxSrv, db, nginx, total, a.cliPerReq, 100*a.other, a.errors)
			}
		}
		p("\n(Scenarios: send = message/send at %d clients, stream = message/stream round trips at %d clients, send1 = message/send at 1 client; the 1.0 bindings' equivalents on the 1.0 rows.)\n\n", scenarioConc(scenarios, "send"), scenarioConc(scenarios, "stream"))
	}
	if cross != nil {
		renderCross(b, cross)
	}
}

func scenarioConc(scenarios []scenario, key string) int {
	for _, s := range scenarios {
		if s.key == key {
			return s.conc
		}
	}
	return 0
}

func renderCross(b *strings.Builder, r *crossReport) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### A stream on replica B for a task running on replica A\n\n")
	if r.err != "" {
		p("Not measured: %s\n\n", r.err)
		return
	}
	p("Three `a2abridge serve --replica` on a fresh schema, addressed directly (not through nginx); %d tasks of an exec agent writing %d lines, one every %s (one artifact-update event, one commit, each), each started with message/stream on replica A and followed with tasks/resubscribe on replica B (A and B: replicas 1→2, 2→3, 3→1), nothing else running. "+
		"Method: each event's delay is the time it arrived on B's stream minus the time it arrived on A's own stream, both read by one client process; A delivers an event to its own stream once it is committed, so its arrival there is a proxy for (a little after) the commit.\n\n",
		r.tasks, r.perTask, r.every)
	p("| events measured | delay p50 | p90 | p99 | max | min (mean) | on B before A | replayed, not measured | missing on B | B streams ended by the final event |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	p("| %d (of %d on A, %d on B) | **%s** | %s | %s | %s | %s (%s) | %d | %d | %d | %d of %d |\n\n",
		len(r.delays), r.onA, r.onB, bench.FormatMS(r.lat.P50), bench.FormatMS(r.lat.P90), bench.FormatMS(r.lat.P99), bench.FormatMS(r.lat.Max),
		signedMS(r.lat.Min), bench.FormatMS(r.lat.Mean), r.negatives, r.replayed, r.missing, r.finalOnB, r.tasks)
}

// renderTargetsPostgres writes the targets of PostgreSQL and replicas.
func renderTargetsPostgres(b *strings.Builder, f figures, cross *crossReport) {
	c := checker{b}
	b.WriteString("## Targets: PostgreSQL and replicas\n\n| target | goal | measured | met |\n|---|---|---|---|\n")
	c.vsBaseline(f, "send", "postgres", "durable message/send, PostgreSQL, one replica", "≥ 0.20× baseline", 0.2)
	for _, k := range []string{"postgres-v1", "postgres-rest"} {
		if t := f.byKey[k]; t != nil {
			c.vsBaseline(f, "send", k, fmt.Sprintf("durable %s, PostgreSQL, one replica", sendName(t)), "≥ 0.20× baseline"+reference, 0.2)
		}
	}
	c.cpuVs(f, "send", "postgres-3", "postgres-replica", "a2abridge CPU per message/send (32 clients), three replicas vs one (both `--replica`, behind nginx)", fmt.Sprintf("≤ %.2f× one replica's", 1+replicaCPUMargin), 1+replicaCPUMargin)
	for _, x := range []struct{ s, key, other, what string }{
		{"send", "postgres-3-v1", "postgres-replica-v1", "1.0 JSON-RPC SendMessage (32 clients)"},
		{"send", "postgres-3-rest", "postgres-replica-rest", "1.0 REST message:send (32 clients)"},
		{"stream", "postgres-3", "postgres-replica", "message/stream round trip (32 clients)"},
		{"send1", "postgres-3", "postgres-replica", "message/send at 1 client"},
	} {
		if _, ok := f.aggs[x.s][x.key]; ok {
			c.cpuVs(f, x.s, x.key, x.other, "a2abridge CPU per "+x.what+", three replicas vs one (both `--replica`)", fmt.Sprintf("≤ %.2f× one replica's", 1+replicaCPUMargin)+reference, 1+replicaCPUMargin)
		}
	}
	if _, ok := f.aggs["send"]["postgres-3"]; ok {
		c.cpuVs(f, "send", "postgres-3", "postgres", "a2abridge CPU per message/send (32 clients), three replicas vs one `serve --postgres` (the schema to itself: appends queued, one statement per send)", "reported"+reference, 0)
	}
	a3, ok3 := f.aggs["send"]["postgres-3"]
	a1, ok1 := f.aggs["send"]["postgres"]
	got := "–"
	if ok3 && ok1 {
		got = fmt.Sprintf("%.0f vs %.0f req/s: %s (2 cores: no scaling expected)", a3.rps, a1.rps, ratio(a3.rps, a1.rps))
	}
	fmt.Fprintf(b, "| message/send throughput (32 clients), three replicas behind nginx vs one | reported, no goal | %s | – |\n", got)
	switch {
	case cross == nil:
		c.row("stream on replica B, task running on replica A: delay of each event", "p50 ≤ 5 ms", "", false, false)
	case cross.err != "":
		c.row("stream on replica B, task running on replica A: delay of each event", "p50 ≤ 5 ms", "", false, false)
	default:
		c.row("stream on replica B, task running on replica A: delay of each event", "p50 ≤ 5 ms",
			fmt.Sprintf("p50 %s, p99 %s (%d events%s)", bench.FormatMS(cross.lat.P50), bench.FormatMS(cross.lat.P99), len(cross.delays), missingNote(cross.missing)),
			cross.lat.P50 <= crossGoal && cross.missing == 0, true)
	}
	b.WriteString("\n")
}

// sendName is the send method of t's protocol and binding.
func sendName(t *target) string {
	switch {
	case t.binding == bench.BindingREST:
		return "1.0 REST message:send"
	case t.protocol == bench.Protocol10:
		return "1.0 JSON-RPC SendMessage"
	}
	return "message/send"
}

// cpuVs checks that target key's server CPU per request in scenario s is
// at most factor × that of target other, showing each one's rounds;
// factor 0 only reports the two.
func (c checker) cpuVs(f figures, s, key, other, name, goal string, factor float64) {
	a, ok := f.aggs[s][key]
	o, ook := f.aggs[s][other]
	got := fmt.Sprintf("%.0f vs %.0f µs/req: %s (rounds %.0f–%.0f vs %.0f–%.0f µs; %.0f vs %.0f req/s)",
		a.srvPerReq, o.srvPerReq, ratio(a.srvPerReq, o.srvPerReq), a.minSrv, a.maxSrv, o.minSrv, o.maxSrv, a.rps, o.rps)
	if factor <= 0 {
		if ok && ook {
			fmt.Fprintf(c.b, "| %s | %s | %s | – |\n", name, goal, got)
		}
		return
	}
	c.row(name, goal, got, ok && ook && a.srvPerReq <= factor*o.srvPerReq, ok && ook)
}

func missingNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d missing on B", n)
}

// signedMS is bench.FormatMS for a value that may be negative.
func signedMS(v float64) string {
	if v < 0 {
		return "−" + bench.FormatMS(-v)
	}
	return bench.FormatMS(v)
}
