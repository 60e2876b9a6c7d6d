package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

// counted is a test server that counts the connections it accepted.
func counted(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

func newTransport(t *testing.T) *Transport {
	t.Helper()
	fb := &http.Transport{}
	tr := New(fb, 4)
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func post(t *testing.T, c *http.Client, u, body string, h ...string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestRoundTripsReuseOneConnection(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
	})
	c := &http.Client{Transport: newTransport(t)}
	for i := range 5 {
		code, body, err := post(t, c, srv.URL+"/p", fmt.Sprint(i))
		if err != nil || code != 200 || body != fmt.Sprintf("POST /p %d", i) {
			t.Fatalf("call %d: %d %q %v", i, code, body, err)
		}
	}
	resp, err := c.Get(srv.URL + "/g")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "GET /g " {
		t.Errorf("GET: %q", b)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 6 sequential calls, want 1 (kept alive)", n)
	}
}

func TestChunkedBodyStreamsAsItArrives(t *testing.T) {
	next := make(chan struct{})
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/again" {
			w.Write([]byte("ok"))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			if i < 2 {
				<-next
			}
		}
	})
	c := &http.Client{Transport: newTransport(t)}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("transfer encoding %v, want chunked", resp.TransferEncoding)
	}
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("data: %d\n", i) {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		br.ReadString('\n')
		if i < 2 {
			next <- struct{}{} // the next event is written only now
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the last event: %v, want EOF", err)
	}
	resp.Body.Close()
	if _, _, err := post(t, c, srv.URL+"/again", ""); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want the streamed one reused", n)
	}
}

func TestBodyClosedEarlyClosesTheConnection(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 64<<10)))
	})
	c := &http.Client{Transport: newTransport(t)}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	io.ReadFull(resp.Body, buf)
	resp.Body.Close()
	if _, err := resp.Body.Read(buf); err == nil {
		t.Error("a read after Close succeeded")
	}
	code, body, err := post(t, c, srv.URL, "")
	if err != nil || code != 200 || len(body) != 64<<10 {
		t.Fatalf("%d %d %v", code, len(body), err)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the half-read one is not reused)", n)
	}
}

func TestEmptyBodyClosedUnreadIsReused(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	c := &http.Client{Transport: newTransport(t)}
	for range 3 {
		resp, err := c.Get(srv.URL)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatal(resp, err)
		}
		resp.Body.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestConnectionCloseIsNotReused(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Write([]byte("bye"))
	})
	c := &http.Client{Transport: newTransport(t)}
	for range 3 {
		if _, body, err := post(t, c, srv.URL, ""); err != nil || body != "bye" {
			t.Fatal(body, err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

func TestContextCancelInterruptsTheWait(t *testing.T) {
	release := make(chan struct{})
	srv, _ := counted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Write([]byte("ok"))
	})
	defer close(release)
	c := &http.Client{Transport: newTransport(t)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/hang", strings.NewReader("x"))
		_, err := c.Do(req)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end when its context was cancelled")
	}
	// The transport still works.
	if _, body, err := post(t, c, srv.URL+"/ok", ""); err != nil || body != "ok" {
		t.Fatal(body, err)
	}
}

func TestCancelWhileReadingTheBody(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c := &http.Client{Transport: newTransport(t)}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the body read on after its context was cancelled")
	}
	resp.Body.Close()
	before := conns.Load()
	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if resp, err := c.Do(req.WithContext(ctx2)); err == nil {
		resp.Body.Close()
	}
	if conns.Load() != before+1 {
		t.Errorf("the interrupted connection was reused")
	}
}

// flaky is a raw HTTP/1.1 server that answers each connection's first
// request and closes the connection on the second without answering, as
// a server does that times an idle connection out just as it is reused.
func flaky(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	addr := testutil.ServeTCP(t, func(nc net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(nc)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		if req, err := http.ReadRequest(br); err == nil {
			io.Copy(io.Discard, req.Body)
		}
	})
	return "http://" + addr, &conns
}

func TestStaleConnectionRetriedOnlyWhenReplayable(t *testing.T) {
	u, conns := flaky(t)
	tr := newTransport(t)
	c := &http.Client{Transport: tr}
	if _, body, err := post(t, c, u, "a"); err != nil || body != "ok" {
		t.Fatal(body, err)
	}
	// The pooled connection is open (the server waits for a second
	// request on it), so the liveness check passes and the request goes
	// out on it; the server closes it unanswered.
	code, body, err := post(t, c, u, "b", "Idempotency-Key", "k1")
	if err != nil || code != 200 || body != "ok" {
		t.Fatalf("replayable request: %d %q %v, want retried on a new connection", code, body, err)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	_, _, err = post(t, c, u, "c")
	if err == nil {
		t.Fatal("a POST without an Idempotency-Key was sent again")
	}
	if !errors.Is(err, errStale) {
		t.Errorf("err %v, want it to say the idle connection was closed", err)
	}
}

func TestIdleConnectionClosedByServerIsNotUsed(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	c := &http.Client{Transport: newTransport(t)}
	if _, _, err := post(t, c, srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections()
	time.Sleep(20 * time.Millisecond) // the FIN arrives
	// Not replayable: it succeeds only because the closed connection is
	// seen as closed before it is used.
	if _, body, err := post(t, c, srv.URL, ""); err != nil || body != "ok" {
		t.Fatal(body, err)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestInformationalAnswersAreSkipped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		req, err := http.ReadRequest(bufio.NewReader(nc))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(nc, "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
	}()
	c := &http.Client{Transport: newTransport(t)}
	code, body, err := post(t, c, "http://"+ln.Addr().String(), "x")
	if err != nil || code != 200 || body != "done" {
		t.Fatalf("%d %q %v", code, body, err)
	}
}

func TestFallbackCarriesHTTPSAndProxies(t *testing.T) {
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("tls " + r.Proto))
	}))
	defer tls.Close()
	fb := tls.Client().Transport.(*http.Transport)
	tr := New(fb, 4)
	resp, err := (&http.Client{Transport: tr}).Get(tls.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(b), "tls ") {
		t.Errorf("https: %q", b)
	}

	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		w.Write([]byte("via proxy " + r.URL.String()))
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	tr = New(&http.Transport{Proxy: http.ProxyURL(pu)}, 4)
	c := &http.Client{Transport: tr}
	_, body, err := post(t, c, "http://backend.invalid/x", "")
	if err != nil || proxied.Load() != 1 || body != "via proxy http://backend.invalid/x" {
		t.Errorf("proxied: %q %v (proxy saw %d)", body, err, proxied.Load())
	}
}

func TestPoolKeepsAtMostMaxIdle(t *testing.T) {
	gate := make(chan struct{})
	srv, _ := counted(t, func(w http.ResponseWriter, r *http.Request) {
		<-gate
		w.Write([]byte("ok"))
	})
	tr := New(&http.Transport{}, 2)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(t, c, srv.URL, "")
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(gate)
	wg.Wait()
	tr.mu.Lock()
	n := 0
	for _, cs := range tr.idle {
		n += len(cs)
	}
	tr.mu.Unlock()
	if n != 2 {
		t.Errorf("%d idle connections kept, want 2", n)
	}
}

// rawServer answers each connection's first request (head and body
// read) with write(conn).
func rawServer(t *testing.T, readBody bool, write func(net.Conn)) string {
	t.Helper()
	addr := testutil.ServeTCP(t, func(nc net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(nc))
		if err != nil {
			return
		}
		if readBody {
			io.Copy(io.Discard, req.Body)
		}
		write(nc)
	})
	return "http://" + addr + "/"
}

func TestAnswerHeadIsBounded(t *testing.T) {
	u := rawServer(t, true, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: ")
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 16 {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(c, "\r\nContent-Length: 0\r\n\r\n")
	})
	_, err := newTransport(t).RoundTrip(mustReq(t, http.MethodGet, u, ""))
	if err == nil || !strings.Contains(err.Error(), "head is over") {
		t.Fatalf("err %v, want the head refused at 10 MiB", err)
	}
}

func TestInformationalAnswersAreBounded(t *testing.T) {
	u := rawServer(t, true, func(c net.Conn) {
		io.WriteString(c, strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", 1000)+"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	})
	_, err := newTransport(t).RoundTrip(mustReq(t, http.MethodGet, u, ""))
	if err == nil || !strings.Contains(err.Error(), "informational") {
		t.Fatalf("err %v, want the 1xx answers refused", err)
	}
}

func TestCancelDuringBodyReportsTheContext(t *testing.T) {
	u := rawServer(t, true, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
		time.Sleep(time.Second)
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := newTransport(t).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestReadAfterEOFIsEOF(t *testing.T) {
	srv, _ := counted(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	resp, err := newTransport(t).RoundTrip(mustReq(t, http.MethodGet, srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	if _, err := resp.Body.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a read after EOF: %v, want EOF", err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a read after EOF and Close: %v, want EOF", err)
	}
}

func TestEarlyAnswerToAnUnreadBody(t *testing.T) {
	u := rawServer(t, false, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big!")
	})
	resp, err := newTransport(t).RoundTrip(mustReq(t, http.MethodPost, u, strings.Repeat("x", 32<<20)))
	if err != nil {
		t.Fatalf("err %v, want the server's 413", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || string(b) != "too big!" {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
}

func mustReq(t *testing.T, method, u, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
