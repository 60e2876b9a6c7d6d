package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/go-json-experiment/json"
)

// The http.Server of serve bounds the reading of bodies that no handler
// reads (net/http drains up to 256 KiB of them after the handler, with no
// deadline of its own), and does not cut SSE streams or blocking calls
// that outlast that bound.
func TestServeHTTPServerBoundsBodiesNotStreams(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: testutil.Logger(), BodyReadTimeout: 300 * time.Millisecond}})
	host.Add(server.NewHandler(eng, "slow", agents.Slow{Step: 100 * time.Millisecond}, agents.Slow{}.Card(), server.HandlerOptions{}))
	srv := newHTTPServer(host, testutil.Logger(), 200*time.Millisecond, 300*time.Millisecond)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	testutil.CloseAtEnd(t, eng.Close)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	base := "http://" + addr

	// A GET with a body that trickles in: the card is answered at once,
	// then the server stops reading and closes.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /a2a/slow/.well-known/agent-card.json HTTP/1.1\r\nHost: %s\r\nContent-Length: 100000\r\n\r\nx", addr)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(conn)
	if _, err = rd.ReadString('\n'); err == nil {
		_, err = io.Copy(io.Discard, rd)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection of a trickling body that no handler reads was still open after 20s")
	}

	// Calls that outlast ReadTimeout (500 ms here): 2 s of work.
	_, b := testutil.RPC(t, base+"/a2a/slow", "message/send", testutil.SendParams03("2", "long-send", ""))
	var r testutil.RPCAnswer
	_ = json.Unmarshal(b, &r)
	if r.Result.Status.State != "completed" {
		t.Fatalf("blocking send outlasting ReadTimeout: %+v", r)
	}
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, base+"/a2a/slow",
		`{"jsonrpc":"2.0","id":2,"method":"message/stream","params":`+testutil.SendParams03("2", "long-stream", "")+`}`, "Content-Type", "application/json"))
	var last testutil.RPCAnswer
	sr := sse.NewReader(resp.Body)
	for {
		ev, err := sr.Next()
		if err != nil {
			break
		}
		_ = json.Unmarshal(ev.Data, &last)
	}
	if !last.Result.Final || last.Result.Status.State != "completed" {
		t.Fatalf("stream outlasting ReadTimeout ended with %+v", last.Result)
	}
}
