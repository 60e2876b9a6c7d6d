package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
)

// Well-known Agent Card paths (A2A 0.3.0 §5.3; agent.json is the pre-0.3 name).
const (
	WellKnownCardPath       = "/.well-known/agent-card.json"
	LegacyWellKnownCardPath = "/.well-known/agent.json"
)

// Resolve fetches and validates an Agent Card (A2A 0.3.0 §5.3). u is either
// a card URL (its path ends in ".json") or a base URL, under which
// /.well-known/agent-card.json is tried, then the legacy
// /.well-known/agent.json on 404. Requests are retried like other safe
// calls and carry opts' headers and credentials. A card missing required
// fields is an error.
func Resolve(ctx context.Context, u string, opts Options) (a2a.AgentCard, error) {
	base, err := url.Parse(u)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return a2a.AgentCard{}, fmt.Errorf("a2a client: %q is not an http(s) URL", u)
	}
	// A throwaway client carries the options (retries, headers) for the fetch.
	c, _ := New(a2a.AgentCard{URL: u}, opts)
	var candidates []string
	if strings.HasSuffix(base.Path, ".json") {
		candidates = []string{base.String()}
	} else {
		p := strings.TrimRight(base.Path, "/")
		for _, wk := range []string{WellKnownCardPath, LegacyWellKnownCardPath} {
			v := *base
			v.Path = p + wk
			candidates = append(candidates, v.String())
		}
	}
	var lastErr error
	for _, cu := range candidates {
		card, err := c.fetchCard(ctx, cu)
		if err == nil {
			return card, nil
		}
		lastErr = err
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != http.StatusNotFound {
			break
		}
	}
	return a2a.AgentCard{}, lastErr
}

func (c *Client) fetchCard(ctx context.Context, u string) (a2a.AgentCard, error) {
	var card a2a.AgentCard
	err := c.withRetry(ctx, "agent-card", true, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		if err := c.authorize(ctx, req, "agent-card"); err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := checkResponse(resp, "application/json"); err != nil {
			return err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		if err != nil {
			return err
		}
		if v := c.opts.CardVerifier; v != nil {
			if _, err := v.Verify(ctx, u, b); err != nil {
				return err
			}
		}
		card, err = v03.UnmarshalAgentCard(b)
		if err != nil {
			return &ProtocolError{Method: "agent-card", Reason: "invalid Agent Card at " + u, Err: err}
		}
		return validateCard(&card)
	})
	return card, err
}

// validateCard checks what a client relies on beyond the decoder's checks.
func validateCard(c *a2a.AgentCard) error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ProtocolError{Method: "agent-card", Reason: fmt.Sprintf("card url %q is not an absolute http(s) URL", c.URL)}
	}
	return nil
}
