package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
)

// withRetry runs fn, repeating it per the retry policy when retryable.
func (c *Client) withRetry(ctx context.Context, method string, retryable bool, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		wait, refused := refusedUnread(err)
		if !(retryable || refused) || c.opts.MaxRetries < 0 || attempt > c.opts.MaxRetries || ctx.Err() != nil {
			return err
		}
		var retry bool
		if c.opts.ShouldRetry != nil {
			retry = c.opts.ShouldRetry(method, attempt, err)
		} else {
			retry = refused || DefaultShouldRetry(err)
		}
		if !retry {
			return err
		}
		d := c.backoff(attempt)
		if wait > d {
			d = min(wait, time.Minute)
		}
		if werr := sleep(ctx, d); werr != nil {
			return err
		}
	}
}

// refusedUnread reports whether err says that the server refused the
// request before reading it, so that repeating it is safe whatever the
// method (a message is not sent twice): HTTP 429 Too Many Requests (RFC
// 6585 §4), or a2a.ErrRateLimited on any binding; and how long the
// server asked to wait (Retry-After, or the error's retryAfterSeconds),
// 0 when it did not say.
func refusedUnread(err error) (time.Duration, bool) {
	var wait time.Duration
	refused := false
	var he *HTTPError
	if errors.As(err, &he) && he.StatusCode == http.StatusTooManyRequests {
		refused, wait = true, he.RetryAfter
	}
	var ae *a2a.Error
	if errors.As(err, &ae) && ae.Code == a2a.CodeRateLimited {
		refused = true
		if d, ok := ae.Data.(map[string]any); ok && wait == 0 {
			if s, ok := d["retryAfterSeconds"].(string); ok {
				wait = retryAfter(s)
			}
		}
	}
	return wait, refused
}

// DefaultShouldRetry is the default retry rule: network errors (refused or
// reset connections, timeouts, a connection closed mid-answer) and HTTP
// 429/5xx are retried; A2A/JSON-RPC errors, other HTTP errors, malformed
// answers, TLS certificate errors, bad URLs and context cancellation are not.
func DefaultShouldRetry(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Temporary()
	}
	var ge *GRPCError
	if errors.As(err, &ge) {
		return ge.Temporary()
	}
	var ae *a2a.Error
	var pe *ProtocolError
	var ce *tls.CertificateVerificationError
	var ue x509.UnknownAuthorityError
	var he2 x509.HostnameError
	if errors.As(err, &ae) || errors.As(err, &pe) || errors.As(err, &ce) || errors.As(err, &ue) || errors.As(err, &he2) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// backoff is exponential with "equal jitter": uniform in [d/2, d] where
// d = min(RetryMaxDelay, RetryBaseDelay·2^(attempt-1)).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.RetryBaseDelay << min(attempt-1, 20)
	if d <= 0 || d > c.opts.RetryMaxDelay {
		d = c.opts.RetryMaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
