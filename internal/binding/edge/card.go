package edge

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	wirecard "github.com/a2abridge/a2abridge/internal/wire/card"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/forwarded"
)

// CardCaching is how a Host's Agent Card responses are cached (A2A 1.0
// §8.6.1, RFC 9111).
type CardCaching struct {
	MaxAge time.Duration // > 0: max-age; < 0: no-cache
	Vary   bool          // the card varies with the request's Host and forwarding headers (no PublicURL)
}

// cacheControl is the Cache-Control of a card response: "public" for a
// card anyone may fetch, "private" for one behind authentication (the
// extended card, or a card with CardRequiresAuth), which a shared cache
// must not store.
func (cc CardCaching) cacheControl(private bool) string {
	scope := "public, "
	if private {
		scope = "private, "
	}
	if cc.MaxAge < 0 {
		return scope + "no-cache"
	}
	return scope + "max-age=" + strconv.FormatInt(int64(cc.MaxAge/time.Second), 10)
}

// cardETag is the strong entity tag (RFC 9110 §8.8.3) of the card bytes
// served: a hash of exactly those bytes, signature included, so that two
// responses have the same tag only when their bodies are identical.
func cardETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// WriteCard answers a GET (or HEAD) for an Agent Card whose encoded form
// is b, last changed at modified (zero: unknown, no Last-Modified), with
// the validators ETag and Last-Modified and the Cache-Control of cc; a
// conditional request whose validators match gets 304 Not Modified with
// those headers and no body (RFC 9110 §13.1.2, §13.1.3, §15.4.5).
func WriteCard(w http.ResponseWriter, r *http.Request, b []byte, modified time.Time, private bool, cc CardCaching) {
	h := w.Header()
	if cc.Vary {
		forwarded.SetVary(h)
	}
	etag := cardETag(b)
	h.Set("ETag", etag)
	h.Set("Cache-Control", cc.cacheControl(private))
	if !modified.IsZero() {
		h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && NotModified(r, etag, modified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	WriteJSON(w, http.StatusOK, b)
}

// NotModified evaluates a request's If-None-Match, or, only when it has
// none, its If-Modified-Since (RFC 9110 §13.2.2) against the
// representation's entity tag and modification time: true when the
// client's copy is current. If-None-Match compares entity tags weakly, as
// RFC 9110 §13.1.2 requires (a W/ tag a proxy made of ours matches it),
// takes a list, and "*" matches any current representation.
func NotModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Values("If-None-Match"); len(inm) > 0 {
		for _, line := range inm {
			if etagListMatches(line, etag) {
				return true
			}
		}
		return false
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || modified.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	if err != nil {
		return false // an invalid date is ignored (RFC 9110 §13.1.3)
	}
	return !modified.Truncate(time.Second).After(t)
}

// etagListMatches reports whether the If-None-Match value list ("*", or
// entity tags separated by commas) holds etag, compared weakly.
func etagListMatches(list, etag string) bool {
	list = strings.TrimSpace(list)
	if list == "*" {
		return true
	}
	for list != "" {
		list = strings.TrimLeft(list, " \t,")
		tag := list
		weak := strings.HasPrefix(tag, "W/")
		if weak {
			tag = tag[2:]
		}
		if !strings.HasPrefix(tag, `"`) {
			return false // not an entity tag: the rest cannot be read
		}
		end := strings.IndexByte(tag[1:], '"')
		if end < 0 {
			return false
		}
		if tag[:end+2] == etag {
			return true
		}
		list = tag[end+2:]
	}
	return false
}

// CardOptions shape the served card: security requirement scopes are
// written as bare arrays, the only form a2a-go v2 (up to v2.4.0) can read
// (https://github.com/a2aproject/a2a-go/issues/430); ProtoJSON's
// {"list": […]} makes it reject the card.
var CardOptions = wirecard.Options{ScopeArrays: true}

// MarshalCard03 encodes the extended card of A2A 0.3 (agent/
// getAuthenticatedExtendedCard): the 0.3 card, or, when cards are signed,
// the union card, whose signed supportedInterfaces cover its 0.3 url (a
// signature covers the A2A 1.0 members only: a bare 0.3 card's url and
// security schemes would be unsigned, and verifiers refuse it).
func MarshalCard03(c *a2a.AgentCard, signed bool) ([]byte, error) {
	if !signed {
		return v03.MarshalAgentCard(c)
	}
	return wirecard.MarshalUnion(c, CardOptions)
}
