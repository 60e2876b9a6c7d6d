package sse

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// TestHTTPIncremental runs a real http.Server and checks that the headers
// and each event reach the client before the handler writes the next one.
func TestHTTPIncremental(t *testing.T) {
	const n = 5
	next := make(chan struct{})
	handlerDone := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		w, err := NewWriter(rw)
		if err != nil {
			handlerDone <- err
			return
		}
		defer close(handlerDone)
		for i := range n {
			select {
			case <-next:
			case <-req.Context().Done():
				handlerDone <- req.Context().Err()
				return
			}
			if err := w.Comment("keep-alive"); err != nil {
				handlerDone <- err
				return
			}
			if err := w.Event(strconv.Itoa(i), "tick", fmt.Appendf(nil, "line %d\nsecond", i)); err != nil {
				handlerDone <- err
				return
			}
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	// The handler has not written anything yet: headers arrive on the first
	// flush, so send the first event concurrently with the request.
	go func() { next <- struct{}{} }()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for k, v := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if resp.ContentLength != -1 {
		t.Errorf("ContentLength = %d, want -1 (streamed)", resp.ContentLength)
	}
	r := NewReader(resp.Body)
	for i := range n {
		if i > 0 {
			// The handler is blocked until we ask for the next event, so
			// receiving it proves the previous write was flushed.
			next <- struct{}{}
		}
		e, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		want := Event{ID: strconv.Itoa(i), Event: "tick", Data: fmt.Appendf(nil, "line %d\nsecond", i)}
		if e.ID != want.ID || e.Event != want.Event || string(e.Data) != string(want.Data) {
			t.Fatalf("event %d = %+v, want %+v", i, e, want)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after last event: %v, want io.EOF", err)
	}
	if err := <-handlerDone; err != nil {
		t.Errorf("handler: %v", err)
	}
}

// TestHTTPWriteTimeoutCleared checks that a stream outlives the server's
// WriteTimeout because NewWriter clears the write deadline.
func TestHTTPWriteTimeoutCleared(t *testing.T) {
	const timeout = 100 * time.Millisecond
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		w, err := NewWriter(rw)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		for i := range 4 {
			if err := w.Event("", "", []byte(strconv.Itoa(i))); err != nil {
				return
			}
			select {
			case <-time.After(timeout):
			case <-req.Context().Done():
				return
			}
		}
	}))
	srv.Config.WriteTimeout = timeout
	srv.Start()
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	r := NewReader(resp.Body)
	for i := range 4 {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("event %d after %v: %v", i, time.Since(start), err)
		}
		if string(e.Data) != strconv.Itoa(i) {
			t.Fatalf("event %d data = %q", i, e.Data)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("end of stream: %v, want io.EOF", err)
	}
	if d := time.Since(start); d < 2*timeout {
		t.Errorf("stream took only %v; test does not exceed WriteTimeout", d)
	}
}

// TestHTTPRawWire checks the exact bytes on the wire of a chunked response.
func TestHTTPRawWire(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		w, err := NewWriter(rw)
		if err != nil {
			return
		}
		_ = w.Event("1", "", []byte("a\nb"))
		_ = w.Comment("ka")
	}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	if want := "id: 1\ndata: a\ndata: b\n\n: ka\n\n"; string(body) != want {
		t.Errorf("body = %q, want %q", body, want)
	}
}
