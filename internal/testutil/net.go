package testutil

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// ClosedURL is an http URL on a loopback port nothing listens on (one
// that was free a moment ago).
func ClosedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	return port
}

// FreeAddr returns "127.0.0.1:PORT" with a loopback port that was free a
// moment ago, for a server's listen address.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t))
}

// Proxy is a loopback TCP proxy to one upstream address that can cut
// every connection it forwards and refuse new ones, as a network
// partition would. It records what each connection sent upstream.
type Proxy struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup // the copying goroutines
	// accepting is closed when the accept loop has ended.
	accepting chan struct{}

	mu      sync.Mutex
	conns   []*proxyConn // open, in accept order
	all     []*proxyConn // every connection since the start
	refused bool
}

type proxyConn struct {
	down, up net.Conn
	sent     Buffer
}

func (pc *proxyConn) close() {
	pc.down.Close()
	pc.up.Close()
}

// StartProxy listens on 127.0.0.1 and forwards each connection to
// upstream (host:port) until t ends, when it cuts everything.
func StartProxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, upstream: upstream, accepting: make(chan struct{})}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		<-p.accepting // no connection is added after this
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is "http://" and the proxy's host:port.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

func (p *Proxy) serve() {
	defer close(p.accepting)
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.refused {
			p.mu.Unlock()
			down.Close()
			continue
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			p.mu.Unlock()
			down.Close()
			continue
		}
		pc := &proxyConn{down: down, up: up}
		p.conns = append(p.conns, pc)
		p.all = append(p.all, pc)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			// Recorded before it is forwarded: once the upstream has
			// answered, Sent holds what it answered to.
			_, _ = io.Copy(io.MultiWriter(&pc.sent, up), down)
			pc.close()
		}()
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(down, up)
			pc.close()
		}()
	}
}

// Cut closes every open connection and returns how many there were.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.conns)
	for _, pc := range p.conns {
		pc.close()
	}
	p.conns = nil
	return n
}

// Refuse cuts every open connection and accepts and closes new ones
// (refuse true), or forwards new connections again (refuse false).
func (p *Proxy) Refuse(refuse bool) {
	p.mu.Lock()
	p.refused = refuse
	p.mu.Unlock()
	if refuse {
		p.Cut()
	}
}

// Sent returns what each connection sent to be forwarded upstream so
// far (recorded before it is forwarded), in accept order.
func (p *Proxy) Sent() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, len(p.all))
	for i, pc := range p.all {
		out[i] = pc.sent.String()
	}
	return out
}

// ServeTCP listens on 127.0.0.1 and runs handle on each connection in a
// goroutine of its own, closing the connection when handle returns; when
// t ends it stops listening, closes the connections still open (so a
// handler blocked reading returns) and waits for the handlers. It returns
// the listener's host:port. For servers that must misbehave below HTTP.
func ServeTCP(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
		ended bool
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		ended = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if ended {
				mu.Unlock()
				c.Close()
				return
			}
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					mu.Lock()
					delete(conns, c)
					mu.Unlock()
					c.Close()
				}()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}
