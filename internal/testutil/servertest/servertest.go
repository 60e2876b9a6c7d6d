// Package servertest holds the test helpers that build on package server:
// an engine on a memory store and a host, both logging nowhere. It
// imports server, so server's own internal tests cannot use it; its
// black-box tests and every other package's can.
package servertest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// Engine is an engine on a new memory store, made with o; a nil o.Logger
// becomes testutil.Logger(). A failure to make it fails t. The caller
// closes it (testutil.Serve does when given its Close).
func Engine(t testing.TB, o server.EngineOptions) *server.Engine {
	t.Helper()
	if o.Logger == nil {
		o.Logger = testutil.Logger()
	}
	eng, err := server.NewEngine(context.Background(), memory.New(), o)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// Host is a host that logs nowhere, serves def as its default agent
// (none when empty) and hosts the handlers hs.
func Host(def string, hs ...*server.AgentHandler) *server.Host {
	host := server.NewHost(server.HostOptions{Default: def, Transport: server.TransportOptions{Logger: testutil.Logger()}})
	for _, h := range hs {
		host.Add(h)
	}
	return host
}

// ServeGRPC serves host over HTTP/1.1 and cleartext gRPC on one loopback
// port (Host.EnableGRPC, server.SplitListener) until t ends, and returns
// its host:port.
func ServeGRPC(t testing.TB, host *server.Host) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := host.EnableGRPC(server.GRPCOptions{})
	gln, hln := server.SplitListener(ln, 5*time.Second)
	hs := &http.Server{Handler: host}
	go func() { _ = hs.Serve(hln) }()
	go func() { _ = g.Serve(gln) }()
	t.Cleanup(func() {
		g.Stop()
		hs.Close()
	})
	return ln.Addr().String()
}
