package urlguard_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2abridge/a2abridge/internal/urlguard"
)

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestTransport(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, other.URL+"/x?secret=1", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer allowed.Close()
	errNo := errors.New("not allowed")
	check := func(u *url.URL) error {
		if "http://"+u.Host == allowed.URL {
			return nil
		}
		return errNo
	}
	hc := &http.Client{Transport: urlguard.Transport(http.DefaultTransport, check)}

	resp, err := hc.Get(allowed.URL + "/fine")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("allowed: %q", b)
	}
	// A redirect to another host is refused before it is sent.
	_, err = hc.Get(allowed.URL + "/redirect")
	var ue *url.Error
	if !errors.Is(err, urlguard.ErrRefused) || !errors.Is(err, errNo) || !errors.As(err, &ue) || strings.Contains(ue.Err.Error(), "secret") {
		t.Fatalf("redirect: %v", err)
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other host got %d requests", n)
	}
	// A refused request's body is closed.
	body := &closeRecorder{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPost, other.URL+"/y", body)
	if _, err := hc.Do(req); !errors.Is(err, urlguard.ErrRefused) || !body.closed {
		t.Fatalf("refused POST: %v, body closed %v", err, body.closed)
	}
	if urlguard.Transport(http.DefaultTransport, nil) != http.DefaultTransport {
		t.Fatal("a nil check wraps the transport")
	}
}
