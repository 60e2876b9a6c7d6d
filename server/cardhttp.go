package server

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/internal/forwarded"
)

// DefaultCardMaxAge is how long clients and caches may reuse a served
// Agent Card without asking again (HostOptions.CardMaxAge; A2A 1.0
// §8.6.1): 5 minutes.
const DefaultCardMaxAge = 5 * time.Minute

// cardCaching is how a Host's Agent Card responses are cached (A2A 1.0
// §8.6.1, RFC 9111).
type cardCaching struct {
	maxAge time.Duration // > 0: max-age; < 0: no-cache
	vary   bool          // the card varies with the request's Host and forwarding headers (no PublicURL)
}

// cacheControl is the Cache-Control of a card response: "public" for a
// card anyone may fetch, "private" for one behind authentication (the
// extended card, or a card with CardRequiresAuth), which a shared cache
// must not store.
func (cc cardCaching) cacheControl(private bool) string {
	scope := "public, "
	if private {
		scope = "private, "
	}
	if cc.maxAge < 0 {
		return scope + "no-cache"
	}
	return scope + "max-age=" + strconv.FormatInt(int64(cc.maxAge/time.Second), 10)
}

// cardETag is the strong entity tag (RFC 9110 §8.8.3) of the card bytes
// served: a hash of exactly those bytes, signature included, so that two
// responses have the same tag only when their bodies are identical.
func cardETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// writeCard answers a GET (or HEAD) for an Agent Card whose encoded form
// is b, last changed at modified (zero: unknown, no Last-Modified), with
// the validators ETag and Last-Modified and the Cache-Control of cc; a
// conditional request whose validators match gets 304 Not Modified with
// those headers and no body (RFC 9110 §13.1.2, §13.1.3, §15.4.5).
func writeCard(w http.ResponseWriter, r *http.Request, b []byte, modified time.Time, private bool, cc cardCaching) {
	h := w.Header()
	if cc.vary {
		forwarded.SetVary(h)
	}
	etag := cardETag(b)
	h.Set("ETag", etag)
	h.Set("Cache-Control", cc.cacheControl(private))
	if !modified.IsZero() {
		h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && notModified(r, etag, modified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// notModified evaluates a request's If-None-Match, or, only when it has
// none, its If-Modified-Since (RFC 9110 §13.2.2) against the
// representation's entity tag and modification time: true when the
// client's copy is current. If-None-Match compares entity tags weakly, as
// RFC 9110 §13.1.2 requires (a W/ tag a proxy made of ours matches it),
// takes a list, and "*" matches any current representation.
func notModified(r *http.Request, etag string, modified time.Time) bool {
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
