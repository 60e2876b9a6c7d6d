// Package console serves the web console of `a2abridge serve`: a page
// below /console/ that lists the hosted agents, shows their Agent Cards,
// talks to them over A2A 1.0 (JSON-RPC or HTTP+JSON, streamed, with every
// exchange shown raw), lists their tasks and follows or cancels a task.
//
// The page is static (HTML, CSS and JavaScript modules embedded in the
// binary: no build step, nothing from another origin) and calls the same
// endpoints any A2A client calls, on the origin it was loaded from. The
// one endpoint of its own is read-only: GET /console/api/agents, the
// agents Options.Agents lists (the gateway lists those that the 404 of an
// unknown agent names to anyone).
//
// Every path below /console/ that is not an asset answers the page, so
// that a link to a view (/console/agents/echo/tasks/ID) survives a reload;
// the page reads the path and shows that view.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path the console is served below.
const Prefix = "/console/"

//go:embed assets
var assets embed.FS

// Agent is one hosted agent as the console lists it.
type Agent struct {
	// Name is the agent's name: its path segment below /a2a/.
	Name string `json:"name"`
	// Path is where its A2A endpoints are, on the console's origin
	// (/a2a/NAME): JSON-RPC at Path, HTTP+JSON below it, the card at
	// Path + "/.well-known/agent-card.json".
	Path string `json:"path"`
	// Default reports whether it is the agent that also answers at /.
	Default bool `json:"default,omitempty"`
}

// CardReport is the answer of GET /console/api/card: an Agent Card as
// read by the server, and what its signature (A2A 1.0 §8.4) proves.
type CardReport struct {
	// URL is where the card was read.
	URL string `json:"url"`
	// Card is the card as served to A2A 1.0 clients (A2A-Version: 1.0).
	Card json.RawMessage `json:"card"`
	// Signature says whether the card is signed and verifies.
	Signature Signature `json:"signature"`
}

// Signature is the outcome of verifying a card's signatures.
type Signature struct {
	// Signed reports whether the card has signatures.
	Signed bool `json:"signed"`
	// Verified reports whether one verified.
	Verified bool `json:"verified"`
	// KeyID is the kid of the key that verified it.
	KeyID string `json:"kid,omitempty"`
	// Detail is where the key came from, or why none verified.
	Detail string `json:"detail,omitempty"`
}

// Options configures the console.
type Options struct {
	// Agents lists the hosted agents, in the order to show them. It is
	// called on every GET /console/api/agents, which needs no
	// credentials: list only agents that may be named to anyone.
	Agents func() []Agent
	// Card reads and verifies a card for GET /console/api/card: the
	// hosted agent named agent (with r's credentials), or the card at (or
	// below) the absolute URL url; exactly one is set. An error is
	// answered with status (400 for a bad request, 502 when the card
	// cannot be read) as {"error": …}. nil: 404.
	Card func(r *http.Request, agent, url string) (rep CardReport, status int, err error)
	// Check runs `a2abridge check` against the hosted agent named agent
	// for POST /console/api/check, with r's credentials, text and long
	// the probe messages ("" for the defaults), and returns the report as
	// JSON (the check's --json report). An error is answered with status.
	// nil: 404.
	Check func(r *http.Request, agent, text, long string) (report json.RawMessage, status int, err error)
}

// New returns the handler of every path below Prefix (and of Prefix
// without its slash, which it redirects). Only GET and HEAD are served
// (405 otherwise). Answers carry a Content-Security-Policy that allows
// nothing from another origin, and no framing.
func New(opts Options) http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	c := &console{opts: opts, files: map[string]*asset{}}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		c.files[p] = &asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: contentType(p)}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return c
}

type asset struct {
	body  []byte
	etag  string
	ctype string
}

type console struct {
	opts  Options
	files map[string]*asset
}

// csp allows the page's own scripts, styles, images and requests, and
// nothing else (no inline script, no other origin, no framing).
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (c *console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.URL.Path == Prefix+"api/check" {
		if c.opts.Check == nil {
			http.NotFound(w, r)
			return
		}
		c.serveCheck(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the console serves GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case rest == "api/agents":
		c.serveAgents(w)
	case rest == "api/card" && c.opts.Card != nil:
		c.serveCard(w, r)
	case strings.HasPrefix(rest, "assets/"):
		a := c.files[path.Clean(strings.TrimPrefix(rest, "assets/"))]
		if a == nil || strings.HasPrefix(rest, "assets/index.html") {
			http.NotFound(w, r)
			return
		}
		c.serveAsset(w, r, a)
	case strings.HasPrefix(rest, "api/"):
		http.NotFound(w, r)
	default:
		// A view of the page: the page reads the path.
		c.serveAsset(w, r, c.files["index.html"])
	}
}

func (c *console) serveAsset(w http.ResponseWriter, r *http.Request, a *asset) {
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	// The assets change with the binary: revalidate each time (the ETag
	// makes that a 304).
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

func (c *console) serveAgents(w http.ResponseWriter) {
	var agents []Agent
	if c.opts.Agents != nil {
		agents = c.opts.Agents()
	}
	if agents == nil {
		agents = []Agent{}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(struct {
		Agents []Agent `json:"agents"`
	}{agents})
}

func (c *console) serveCard(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	agent, u := q.Get("agent"), q.Get("url")
	var rep CardReport
	status, err := http.StatusBadRequest, error(nil)
	if (agent == "") == (u == "") {
		err = errors.New("give one of agent (a hosted agent's name) or url (an agent's URL or its card's)")
	} else {
		rep, status, err = c.opts.Card(r, agent, u)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(rep)
}

// serveCheck answers POST /console/api/check with a JSON body
// {"agent", "text", "longText"}. It must be a POST of application/json,
// which a page of another origin cannot send without a CORS preflight
// that the console never grants: no other site can make a browser start
// a check.
func (c *console) serveCheck(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodPost {
		h.Set("Allow", "POST")
		http.Error(w, "POST the check to run", http.StatusMethodNotAllowed)
		return
	}
	fail := func(status int, err error) {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
	}
	if mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(mt) != "application/json" {
		fail(http.StatusUnsupportedMediaType, errors.New("send the check as application/json"))
		return
	}
	var req struct {
		Agent    string `json:"agent"`
		Text     string `json:"text"`
		LongText string `json:"longText"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Agent == "" {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			fail(http.StatusRequestEntityTooLarge, errors.New("the check's request is over 64 KiB"))
			return
		}
		fail(http.StatusBadRequest, errors.New(`want {"agent": NAME, "text": …, "longText": …}`))
		return
	}
	rep, status, err := c.opts.Check(r, req.Agent, req.Text, req.LongText)
	if err != nil {
		fail(status, err)
		return
	}
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(rep)
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}
