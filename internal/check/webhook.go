package check

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// webhook is the push notification receiver the checker runs itself, on
// loopback only (127.0.0.1, a port chosen by the system).
type webhook struct {
	ln   net.Listener
	srv  *http.Server
	base string

	mu      sync.Mutex
	got     []notification
	changed chan struct{} // closed and replaced on every notification
}

// maxNotifications bounds the notifications kept.
const maxNotifications = 1000

// notification is one request the webhook received.
type notification struct {
	At     time.Time
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

func startWebhook() (*webhook, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &webhook{ln: ln, base: "http://" + ln.Addr().String(), changed: make(chan struct{})}
	w.srv = &http.Server{Handler: http.HandlerFunc(w.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = w.srv.Serve(ln) }()
	return w, nil
}

func (w *webhook) serve(rw http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	n := notification{At: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: b}
	w.mu.Lock()
	if len(w.got) < maxNotifications {
		w.got = append(w.got, n)
	}
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	rw.WriteHeader(http.StatusOK)
}

// wait returns the first notification (received before or during the
// wait) for which match is true, or false after timeout.
func (w *webhook) wait(ctx context.Context, timeout time.Duration, match func(notification) bool) (notification, bool) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		w.mu.Lock()
		for _, n := range w.got {
			if match(n) {
				w.mu.Unlock()
				return n, true
			}
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return notification{}, false
		case <-ctx.Done():
			return notification{}, false
		}
	}
}

func (w *webhook) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = w.srv.Close()
	}
}

// webhook starts the receiver on first use.
func (p *Probe) webhook() (*webhook, error) {
	if p.hook != nil {
		return p.hook, nil
	}
	w, err := startWebhook()
	if err != nil {
		return nil, err
	}
	p.hook = w
	return w, nil
}
