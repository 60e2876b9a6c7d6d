package check

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/a2abridge/a2abridge/internal/schema"
)

func init() {
	register(
		&Check{ID: "schema.responses", Category: "schema", Section: "§11.1.5", Level: Must, Final: true,
			Title:          "Every response is valid against the A2A 0.3.0 JSON Schema",
			Requirement:    "Agents MUST use valid JSON-RPC 2.0 objects and the data structures of Section 6 for all protocol entities (§11.1.5); each method's response is #/definitions/<Method>Response of the A2A 0.3.0 schema, each stream event a SendStreamingMessageResponse. (Answers to the checker's deliberately invalid requests are judged by their own checks.)",
			Recommendation: "Fix the fields listed so that every response validates against the A2A 0.3.0 schema (specification/json/a2a.json).",
			Run:            checkSchemaResponses},
	)
}

func checkSchemaResponses(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	ensureTraffic(ctx, p)
	var bad []*Exchange
	var msgs []string
	n := 0
	for _, e := range p.exchanges() {
		if e.Schema == "" || e.Status == 0 || e.Check == "cleanup" || e.Invalid {
			continue
		}
		docs := [][]byte{e.RespBody}
		if e.Stream && isSSE(e) {
			docs = docs[:0]
			for _, ev := range e.Events {
				docs = append(docs, ev.Data)
			}
		}
		badHere := false
		for _, d := range docs {
			if parseRPC(d).obj == nil {
				continue // not JSON: judged by rpc.response-shape and stream.frames
			}
			n++
			err := schema.Validate(e.Schema, d)
			if err == nil {
				continue
			}
			badHere = true
			if len(msgs) < 4 {
				var se *schema.Error
				detail := err.Error()
				if errors.As(err, &se) {
					detail = strings.Join(firstStrings(se.Violations, 2), "; ")
				}
				msgs = append(msgs, fmt.Sprintf("%s #%d is not a valid %s: %s", e.RPCMethod, e.Seq, e.Schema, detail))
			}
		}
		if badHere {
			bad = append(bad, e)
		}
	}
	if n == 0 {
		return skip("no JSON-RPC response was received")
	}
	if len(bad) == 0 {
		return pass("all %d responses and stream events are valid", n)
	}
	return fail("%d exchange(s) have invalid responses: %s", len(bad), strings.Join(msgs, "; ")).with(firstN(bad, 3)...)
}

func firstStrings(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
