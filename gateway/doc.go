// Package gateway is what `a2abridge serve` is, for a Go program to embed:
// agents of every kind (Go code built in, an HTTP service, a command, an
// OpenAI-compatible endpoint, a remote A2A agent of either protocol
// version, a conversation of several of them) behind one A2A endpoint
// serving A2A 1.0 and 0.3 over JSON-RPC and HTTP+JSON, on SQLite,
// PostgreSQL or memory.
//
// A Config says what to host: built in code, or read from the YAML of
// `a2abridge serve --config` by LoadConfig (ConfigKeys lists its keys).
// Overrides replace settings as serve's flags do. New checks the whole
// configuration (errors are a *ConfigError naming the key or flag),
// builds every agent, opens the store and listens; Run serves until its
// context ends and then shuts down gracefully, or Handler can be served
// by a server of your own. Shutdown lets running tasks finish for the
// configured grace period; Close stops at once.
//
// The main routes of a Gateway's Handler (docs/reference/serve.md lists them all,
// with the HTTP+JSON paths, the event log and the legacy card path):
//
//	POST /a2a/{name}                                   an agent (JSON-RPC; HTTP+JSON below it), A2A 1.0 §9 and §11
//	GET  /a2a/{name}/.well-known/agent-card.json       its card (A2A 1.0 §8.2)
//	POST /, GET /.well-known/agent-card.json           the default agent
//	POST /simple/{agent}                               any agent in the simple HTTP dialect (bridge/simple)
//	GET  /healthz, GET /readyz                         liveness (200 while serving) and readiness (503 draining or store unreachable); server.HealthHandler
//	GET  /.well-known/jwks.json                        push and card signing keys (with push or card_signing)
//	GET  /api/bridge, /api/bridge/{config64}/a2a…      conversation scenarios (conversations)
//	/api/pairs…                                        paired participants (pairs)
//	/api/v1/agents…                                    the admin API (admin)
//	GET  /api/attachments/{id}/content                 files passed on by URL (attachments)
//	GET  /metrics                                      Prometheus metrics (telemetry.metrics)
//	GET  /console/…                                    the web console (console.enabled; docs/guides/console.md)
//
// Kinds of agents are registered with RegisterKind: each declares its
// configuration keys (a struct with yaml tags), which the gateway checks
// key by key before the kind validates and builds its agent. The kinds
// http, exec, openai, a2a and conversation and the built-in agents echo,
// chat and slow are registered by the package.
package gateway
