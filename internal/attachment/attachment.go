// Package attachment names and serves the files a server keeps for the
// file parts clients send by value (server.AttachmentOptions): their ids
// (128 random bits, base64url), their URLs ({base}/api/attachments/{id}/content)
// and the HTTP answer that serves one. Who may read an attachment, and
// when one is stored, is the handler's decision.
package attachment

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"mime"
	"net/http"
	"strings"

	"github.com/a2abridge/a2abridge/store"
)

// Path is the path, below a server's base URL, under which attachments
// are served: GET {base}/api/attachments/{id}/content.
const Path = "/api/attachments"

// NewID returns 128 random bits, base64url without padding.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IDOf returns the id of an attachment URL of ours, or "".
func IDOf(uri string) string {
	i := strings.LastIndex(uri, Path+"/")
	if i < 0 {
		return ""
	}
	id, ok := strings.CutSuffix(uri[i+len(Path)+1:], "/content")
	if !ok || !ValidID(id) {
		return ""
	}
	return id
}

// ValidID accepts what NewID makes (and nothing
// long or outside base64url).
func ValidID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// Serve answers a request for attachment a: its bytes, with its media
// type (application/octet-stream when not a valid one), nosniff, a
// sandbox Content-Security-Policy, Content-Disposition: attachment with
// its file name, a strong ETag, and conditional and range requests
// honoured (http.ServeContent).
func Serve(w http.ResponseWriter, r *http.Request, a *store.Attachment) {
	ct := "application/octet-stream"
	if mt, params, err := mime.ParseMediaType(a.MediaType); err == nil && strings.Contains(mt, "/") {
		ct = mime.FormatMediaType(mt, params)
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	hd := w.Header()
	hd.Set("Content-Type", ct)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	disp := "attachment"
	if a.Filename != "" {
		if d := mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename}); d != "" {
			disp = d
		}
	}
	hd.Set("Content-Disposition", disp)
	sum := sha256.Sum256(a.Bytes)
	hd.Set("ETag", `"`+base64.RawURLEncoding.EncodeToString(sum[:])+`"`)
	http.ServeContent(w, r, "", a.Created, bytes.NewReader(a.Bytes))
}
