// Package check is an A2A conformance checker: black-box probes of one
// A2A endpoint over the network, each tied to a section of the
// specification, with a level (MUST, SHOULD, MAY), a result and the
// evidence (the requests sent and the responses that decided the result).
//
// The Agent Card says which interfaces the endpoint offers, each a
// protocol version and a binding (A2A 1.0 §8.3: supportedInterfaces; A2A
// 0.3.0: url, preferredTransport, additionalInterfaces). Each check
// belongs to one (version, binding) suite and runs only when the card
// offers that interface: A2A 0.3.0 JSON-RPC (the categories card, rpc,
// message, …, schema), A2A 1.0 JSON-RPC (rpc10) and HTTP+JSON (rest10),
// whose checks are the same operations probed over each binding, the A2A
// 1.0 Agent Card (card10), which counts for both 1.0 bindings, and A2A 0.3
// HTTP+JSON (rest03, the /v1/… paths). The report scores each interface
// and the whole.
//
// A [Check] is small: an id such as "rpc.parse-error", a category, a
// section, a level and a function of a [Probe]. The Probe talks raw HTTP to
// the endpoint (so that exact bytes, statuses and headers can be judged),
// records every exchange, obtains the tasks the checks need (a finished
// task, a running task, an interrupted task, a recorded stream) and cancels
// what it started. [Run] runs the registry and returns a [Report], which is
// written as a terminal summary, Markdown or JSON.
//
//	rep, err := check.Run(ctx, check.Options{URL: "http://127.0.0.1:8080"})
//	rep.WriteMarkdown(os.Stdout)
package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Level is the strength of the requirement a check enforces (RFC 2119 as
// used by the A2A specification).
type Level string

// Levels.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	May    Level = "MAY"
)

// Weight is the level's weight in the score: MUST 3, SHOULD 2, MAY 1.
func (l Level) Weight() int {
	switch l {
	case Must:
		return 3
	case Should:
		return 2
	}
	return 1
}

// Status is the outcome of a check.
type Status string

// Outcomes. Skip means the check could not be carried out (for example no
// running task could be obtained); NotApplicable means the requirement does
// not apply to this endpoint (for example push checks when the card does
// not declare push notifications). Neither counts in the score.
const (
	Pass          Status = "pass"
	Fail          Status = "fail"
	Skip          Status = "skip"
	NotApplicable Status = "n/a"
)

// Category groups checks in reports and for --category.
type Category struct {
	Name  string // as used by --category
	Title string
}

// Categories in report order.
var Categories = []Category{
	{"card", "Discovery and capabilities"},
	{"rpc", "JSON-RPC envelope and errors"},
	{"message", "message/send"},
	{"parts", "Parts"},
	{"tasks", "tasks/get and tasks/cancel"},
	{"stream", "Streaming (SSE)"},
	{"state", "Task state machine"},
	{"push", "Push notifications"},
	{"auth", "Authentication and extended card"},
	{"schema", "JSON Schema"},
	{"card10", "A2A 1.0 Agent Card"},
	{"rpc10", "A2A 1.0 JSON-RPC"},
	{"rest10", "A2A 1.0 HTTP+JSON"},
	{"grpc10", "A2A 1.0 gRPC"},
	{"rest03", "A2A 0.3 HTTP+JSON"},
}

// CategoryTitle returns the title of the category name (or the name).
func CategoryTitle(name string) string {
	for _, c := range Categories {
		if c.Name == name {
			return c.Title
		}
	}
	return name
}

// Protocol bindings as the checker names them (--binding).
const (
	BindingJSONRPC = "jsonrpc" // JSON-RPC 2.0 (A2A 0.3.0 §3.2.1, A2A 1.0 §9)
	BindingREST    = "rest"    // HTTP+JSON (A2A 0.3.0 §3.2.3, A2A 1.0 §11)
	BindingGRPC    = "grpc"    // gRPC (A2A 1.0 §10)
)

// Check is one conformance check.
type Check struct {
	ID       string // "category.name"
	Category string
	// Version ("0.3" or "1.0") and Binding (BindingJSONRPC, BindingREST,
	// or "" for every binding of the version, as the card's checks) name
	// the suite of the check; it runs only when the card offers such an
	// interface. Empty in a registration: 0.3 JSON-RPC.
	Version string
	Binding string
	Section string // of the specification of Version, e.g. "§5.3"
	Level   Level
	Title   string
	// Requirement is what the specification requires, for the report.
	Requirement string
	// Recommendation is what to change when the check fails.
	Recommendation string
	// Final checks run after all others: they judge everything recorded
	// (all responses, all streams) as well as their own requests.
	Final bool
	Run   func(ctx context.Context, p *Probe) Result
}

// Result is the outcome of one check.
type Result struct {
	Status Status
	// Message describes the behaviour observed (for a failure: the current
	// behaviour; for a skip: why).
	Message string
	// Evidence are the exchanges that decided the result. When a check
	// leaves it empty, the runner attaches the last exchanges it made.
	Evidence []*Exchange
}

func pass(format string, args ...any) Result {
	return Result{Status: Pass, Message: fmt.Sprintf(format, args...)}
}

func fail(format string, args ...any) Result {
	return Result{Status: Fail, Message: fmt.Sprintf(format, args...)}
}

func skip(format string, args ...any) Result {
	return Result{Status: Skip, Message: fmt.Sprintf(format, args...)}
}

func notApplicable(format string, args ...any) Result {
	return Result{Status: NotApplicable, Message: fmt.Sprintf(format, args...)}
}

// with returns r with ev as its evidence (nil entries dropped).
func (r Result) with(ev ...*Exchange) Result {
	for _, e := range ev {
		if e != nil && !slices.Contains(r.Evidence, e) {
			r.Evidence = append(r.Evidence, e)
		}
	}
	return r
}

var registry []*Check

func register(cs ...*Check) {
	for _, c := range cs {
		if !strings.HasPrefix(c.ID, c.Category+".") {
			panic("check: id " + c.ID + " is not in category " + c.Category)
		}
		if Lookup(c.ID) != nil {
			panic("check: duplicate id " + c.ID)
		}
		if c.Version == "" {
			c.Version, c.Binding = "0.3", BindingJSONRPC
		}
		registry = append(registry, c)
	}
}

// All returns every check: by category (in [Categories] order), then in
// registration order.
func All() []*Check {
	out := make([]*Check, 0, len(registry))
	for _, cat := range Categories {
		for _, c := range registry {
			if c.Category == cat.Name {
				out = append(out, c)
			}
		}
	}
	return out
}

// Lookup returns the check with the given id, or nil.
func Lookup(id string) *Check {
	for _, c := range registry {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Select returns the checks in the given categories and with the given
// ids (both optional: empty means all). An id may also be a prefix ending
// in "*" ("rpc.id-*"). Unknown names are an error.
func Select(categories, ids []string) ([]*Check, error) {
	for _, name := range categories {
		if !slices.ContainsFunc(Categories, func(c Category) bool { return c.Name == name }) {
			names := make([]string, len(Categories))
			for i, c := range Categories {
				names[i] = c.Name
			}
			return nil, fmt.Errorf("unknown category %q (have %s)", name, strings.Join(names, ", "))
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(registry, func(c *Check) bool { return matchID(id, c.ID) }) {
			return nil, fmt.Errorf("unknown check %q (a2abridge check --list shows them)", id)
		}
	}
	var out []*Check
	for _, c := range All() {
		if len(categories) > 0 && !slices.Contains(categories, c.Category) {
			continue
		}
		if len(ids) > 0 && !slices.ContainsFunc(ids, func(id string) bool { return matchID(id, c.ID) }) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

func matchID(pattern, id string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(id, p)
	}
	return pattern == id
}
