package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The relay forwards method, path, query, headers and body, and returns
// the backend's status, headers and body; hop-by-hop headers stay behind.
func TestForward(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("A2A-Version")+" "+r.Header.Get("Connection")+" "+string(b))
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "answer")
	}))
	t.Cleanup(backend.Close)
	rl := httptest.NewServer(newRelay(backend.URL + "/"))
	t.Cleanup(rl.Close)
	req, _ := http.NewRequest(http.MethodPost, rl.URL+"/a2a/echo?x=1", strings.NewReader("body"))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Connection", "keep-alive")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTeapot || string(b) != "answer" || resp.Header.Get("X-Seen") != "POST /a2a/echo?x=1 1.0  body" {
		t.Errorf("%d %q, X-Seen %q", resp.StatusCode, b, resp.Header.Get("X-Seen"))
	}
}

// An SSE answer is passed on event by event: the first event reaches the
// client while the backend still holds the stream open.
func TestStreamFlushed(t *testing.T) {
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: two\n\n")
	}))
	t.Cleanup(backend.Close)
	rl := httptest.NewServer(newRelay(backend.URL))
	t.Cleanup(rl.Close)
	resp, err := http.Post(rl.URL+"/s", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "data: one\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if string(rest) != "\ndata: two\n\n" {
		t.Errorf("rest %q", rest)
	}
}

// A backend that cannot be reached is answered 502.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rl := httptest.NewServer(newRelay("http://" + addr))
	t.Cleanup(rl.Close)
	resp, err := http.Post(rl.URL+"/a2a/echo", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("HTTP %d, want 502", resp.StatusCode)
	}
}
