package gateway

import (
	"github.com/a2abridge/a2abridge/internal/console"
	"github.com/a2abridge/a2abridge/server"
)

// ConsoleConfig is the console block: the web console below /console/,
// a page that lists the hosted agents, shows their cards, chats with
// them over A2A 1.0 and lists, follows and cancels their tasks. It calls
// the same endpoints as any A2A client, with the same authentication.
type ConsoleConfig struct {
	// Enabled serves the console (--console); unset: true.
	Enabled *bool `yaml:"enabled"`
}

// mountConsole serves the console on host: the page below /console/ and
// its list of the hosted agents that may be named to anyone
// (Host.ListedAgents: not the sides of pairs, whose names are their
// capability, nor agents whose card requires authentication), def the
// default one.
func mountConsole(host *server.Host, def string) {
	h := console.New(console.Options{Agents: func() []console.Agent {
		names := host.ListedAgents()
		out := make([]console.Agent, 0, len(names))
		for _, n := range names {
			out = append(out, console.Agent{Name: n, Path: "/a2a/" + n, Default: n == def})
		}
		return out
	}})
	host.Handle("/console/", h)
	host.Handle("/console", h)
}
