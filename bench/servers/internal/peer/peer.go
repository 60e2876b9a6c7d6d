// Package peer is what every Go server of the benchmark does around its
// handler: listen on the --addr flag, announce `listening on http://ADDR`
// on stdout (runbench waits for that line), serve until SIGINT or SIGTERM,
// then shut down within 5 s.
package peer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Listen parses the command line (the --addr flag, default
// 127.0.0.1:0, and any flags the caller defined) and listens on it. It
// returns the listener and its base URL, http://ADDR; a failure ends the
// process with status 1.
func Listen(name string) (net.Listener, string) {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	Check(name, err)
	return ln, "http://" + ln.Addr().String()
}

// Check ends the process with status 1, printing "name: err" on stderr,
// when err is not nil.
func Check(name string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Serve announces ln's address and serves srv on it until SIGINT or
// SIGTERM (srv.ReadHeaderTimeout defaults to 10 s). A failure to serve
// ends the process with status 1.
func Serve(name string, ln net.Listener, srv *http.Server) {
	if srv.ReadHeaderTimeout == 0 {
		srv.ReadHeaderTimeout = 10 * time.Second
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		Check(name, err)
	}
}
