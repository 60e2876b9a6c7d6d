package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	wirecard "github.com/a2abridge/a2abridge/internal/wire/card"
)

// Well-known Agent Card paths (A2A 0.3.0 §5.3; agent.json is the pre-0.3 name).
const (
	WellKnownCardPath       = "/.well-known/agent-card.json"
	LegacyWellKnownCardPath = "/.well-known/agent.json"
)

// Resolve fetches and validates an Agent Card (A2A 1.0 §8.2; A2A 0.3.0
// §5.3) of either protocol version, or a union card. u is either
// a card URL (its path ends in ".json") or a base URL, under which
// /.well-known/agent-card.json is tried, then the legacy
// /.well-known/agent.json on 404. Requests are retried like other safe
// calls and carry opts' headers and credentials. A card missing required
// fields, or without an interface at an absolute http(s) URL, is an error.
func Resolve(ctx context.Context, u string, opts Options) (a2a.AgentCard, error) {
	base, err := url.Parse(u)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return a2a.AgentCard{}, fmt.Errorf("a2a client: %q is not an http(s) URL", u)
	}
	// A throwaway client carries the options (retries, headers) for the fetch.
	c := newBare(a2a.AgentCard{}, Interface{URL: u}, opts, "")
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

// fetchCard fetches and decodes the card at u, through the client's
// CardCache (Options.CardCache, DefaultCardCache, none with
// NoCardCache). With a CardVerifier the card is verified and built from
// its signed content only (CardVerifier.VerifyCard); the fetch is
// retried, a verification failure is not.
func (c *Client) fetchCard(ctx context.Context, u string) (a2a.AgentCard, error) {
	doc, err := c.fetchCardDocument(ctx, u)
	if err != nil {
		return a2a.AgentCard{}, err
	}
	var card a2a.AgentCard
	v := c.opts.CardVerifier
	switch {
	case v != nil && doc.entry != nil && doc.entry.verifiedBy == v:
		// Verified before by this verifier: these are the bytes it verified.
		card, err = wirecard.UnmarshalSigned(doc.body, doc.entry.payload)
	case v != nil:
		var payload []byte
		card, payload, err = v.verify(ctx, u, doc.body)
		if err == nil && doc.entry != nil {
			c.cardCache().putVerified(doc.entry, v, payload)
		}
	default:
		card, _, err = wirecard.Unmarshal(doc.body)
		if err != nil {
			err = &ProtocolError{Method: "agent-card", Reason: "invalid Agent Card at " + u, Err: err}
		}
	}
	if err == nil {
		err = validateCard(&card)
	}
	if err != nil && doc.entry != nil {
		c.cardCache().remove(doc.entry.key) // fetched again next time
	}
	if err != nil {
		return a2a.AgentCard{}, err
	}
	return card, nil
}

// cardCache is the client's CardCache; nil with Options.NoCardCache.
func (c *Client) cardCache() *CardCache {
	switch {
	case c.opts.NoCardCache:
		return nil
	case c.opts.CardCache != nil:
		return c.opts.CardCache
	}
	return DefaultCardCache
}

// decodeCard decodes a card document fetched from u by method: verified
// and built from its signed content when there is a CardVerifier (errors
// *CardSignatureError), else any card Unmarshal reads (errors
// *ProtocolError).
func (c *Client) decodeCard(ctx context.Context, u, method string, b []byte) (a2a.AgentCard, error) {
	if limit := c.opts.maxCard(); int64(len(b)) > limit {
		return a2a.AgentCard{}, tooLarge(method, "the Agent Card from "+u, limit)
	}
	if v := c.opts.CardVerifier; v != nil {
		card, _, err := v.VerifyCard(ctx, u, b)
		return card, err
	}
	card, _, err := wirecard.Unmarshal(b)
	if err != nil {
		return a2a.AgentCard{}, &ProtocolError{Method: method, Reason: "invalid Agent Card at " + u, Err: err}
	}
	return card, nil
}

// cardDocument is a fetched card document: its bytes and, when the
// cache holds them, their cache entry.
type cardDocument struct {
	body  []byte
	entry *cardEntry
}

// fetchCardDocument GETs the card document at u, retried like other safe
// calls: from the cache when it holds a fresh copy, else with a
// conditional request when it holds a stale one (a 304 reuses it); a 200
// is stored as its caching headers allow.
func (c *Client) fetchCardDocument(ctx context.Context, u string) (cardDocument, error) {
	var doc cardDocument
	cache := c.cardCache()
	var jar http.CookieJar
	if c.http != nil {
		jar = c.http.Jar
	}
	err := c.withRetry(ctx, "agent-card", true, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		if err := c.authorize(ctx, req, "agent-card"); err != nil {
			return err
		}
		var key string
		var stale *cardEntry
		if cache != nil {
			key = cardCacheKey(u, req.Header, jar)
			e, fresh := cache.get(key)
			if fresh {
				doc = cardDocument{body: e.body, entry: e}
				return nil
			}
			if stale = e; stale != nil {
				if stale.etag != "" {
					req.Header.Set("If-None-Match", stale.etag)
				}
				if stale.lastModified != "" {
					req.Header.Set("If-Modified-Since", stale.lastModified)
				}
			}
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotModified && stale != nil {
			cache.refresh(stale, resp.Header)
			doc = cardDocument{body: stale.body, entry: stale}
			return nil
		}
		if err := c.checkResponse(resp, "application/json"); err != nil {
			return err
		}
		b, err := readLimited(resp.Body, c.opts.maxCard(), "agent-card", "the Agent Card at "+u)
		if err != nil {
			return err
		}
		doc = cardDocument{body: b}
		if cache == nil {
			return nil
		}
		expires, store := freshness(resp.Header, cache.now(), false)
		if !store || resp.StatusCode != http.StatusOK {
			cache.remove(key)
			return nil
		}
		doc.entry = &cardEntry{key: key, body: b, etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified"), expires: expires}
		cache.put(doc.entry)
		return nil
	})
	return doc, err
}

// validateCard checks what a client relies on beyond the decoder's
// checks: at least one interface at an absolute http(s) URL, or a GRPC
// one at a gRPC target (a gRPC-only agent).
func validateCard(c *a2a.AgentCard) error {
	all := cardInterfaces(c)
	for _, it := range all {
		if absoluteHTTP(it.URL) {
			return nil
		}
		if _, ok := grpcTarget(it.URL); ok && bindingOf(it.Transport) == a2a.TransportGRPC {
			return nil
		}
	}
	if len(all) == 0 {
		return &ProtocolError{Method: "agent-card", Reason: "the card declares no interface (neither supportedInterfaces nor url)"}
	}
	return &ProtocolError{Method: "agent-card", Reason: fmt.Sprintf("no interface of the card has an absolute http(s) URL or, for GRPC, a host:port (first: %q)", all[0].URL)}
}
