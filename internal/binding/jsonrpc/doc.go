// Package jsonrpc is the JSON-RPC 2.0 binding of A2A (A2A 1.0 §9 and
// A2A 0.3.0 §3.2.1, §7) over a binding.Handler: one URL, a request object
// or a batch per POST, methods of both protocol versions dispatched from
// one table (table.go) whose entries name their version's codec, the
// streaming methods answered as Server-Sent Events (edge.WriteSSE), and
// the agent's JSON-RPC methods of its own beside them (methods.go).
//
// A request goes: body read within limits (edge.ReadBody) → parsed
// (internal/jsonrpc) → version checked against the method's and the
// A2A-Version named → one Handler call → encoded in that version's form.
// Authentication and telemetry wrap the binding (server.Host).
package jsonrpc
