// Package testutil holds the helpers the tests of several packages share:
// quiet loggers, HTTP requests with their bodies read, JSON-RPC calls,
// Server-Sent Events frames, test Agent Cards and the text of tasks, a
// loopback TCP proxy that can cut its connections, child processes started
// until they print their listening line, and polling waits with deadlines.
//
// It imports only the standard library and package a2a, so that any test,
// internal or black-box, can import it without an import cycle.
package testutil
