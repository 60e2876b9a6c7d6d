// Package testutil holds the helpers the tests of several packages share:
// quiet loggers, HTTP requests with their bodies read, JSON-RPC calls,
// Server-Sent Events frames, test Agent Cards, A2A 0.3 message params and
// the text of tasks, free loopback ports and addresses, a loopback TCP
// proxy that can cut its connections, child processes started until they
// print their listening line, and polling waits with deadlines.
//
// It imports only the standard library, package a2a and the JSON package
// a2a uses, so that any test, internal or black-box, can import it without
// an import cycle. Its subpackage servertest, which imports server, is for
// the tests outside server's own package.
package testutil
