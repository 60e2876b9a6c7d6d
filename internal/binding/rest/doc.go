// Package rest is the HTTP+JSON binding of A2A over a binding.Handler:
// A2A 1.0's (§11: message:send, tasks/{id}, google.rpc.Status errors)
// and A2A 0.3.0's below /v1 (its proto's JSON), one Binding per version
// with the same routes and a codec each (restCodec10, restCodec03).
//
// The caller routes a request first (Binding.Route: a path that names no
// operation is a 404 before authentication), authenticates it, then calls
// Binding.Serve, which checks the version, reads the body within limits,
// calls the Handler and encodes the result or streams it as Server-Sent
// Events.
package rest
