package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/schema"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// checkCardCaching checks the HTTP caching of the card at url (A2A 1.0
// §8.6.1): validators and Cache-Control on 200, and 304 for each form of
// a conditional request whose validators match. hdr are the request's
// other headers (credentials, A2A-Version).
func checkCardCaching(t *testing.T, url, cacheControl string, hdr ...string) {
	t.Helper()
	resp, body := testutil.Get(t, url, hdr...)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Fatalf("GET %s: ETag %q, want a strong entity tag", url, etag)
	}
	if got := resp.Header.Get("Cache-Control"); got != cacheControl {
		t.Fatalf("GET %s: Cache-Control %q, want %q", url, got, cacheControl)
	}
	mod, err := http.ParseTime(lm)
	if err != nil || mod.After(time.Now()) {
		t.Fatalf("GET %s: Last-Modified %q (%v)", url, lm, err)
	}
	if v := resp.Header.Get("Vary"); !strings.Contains(v, "Host") || !strings.Contains(v, "X-Forwarded-Host") {
		t.Fatalf("GET %s: Vary %q, want the base URL's headers", url, v)
	}
	// The same card again: the same validators.
	resp2, body2 := testutil.Get(t, url, hdr...)
	if resp2.Header.Get("ETag") != etag || resp2.Header.Get("Last-Modified") != lm || string(body2) != string(body) {
		t.Fatalf("GET %s twice: ETag %q then %q, Last-Modified %q then %q", url, etag, resp2.Header.Get("ETag"), lm, resp2.Header.Get("Last-Modified"))
	}
	earlier := mod.Add(-time.Hour).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"If-None-Match the tag", []string{"If-None-Match", etag}, 304},
		{"If-None-Match in a list", []string{"If-None-Match", `"other", ` + etag}, 304},
		{"If-None-Match on two lines", []string{"If-None-Match", `"other"`, "If-None-Match", etag}, 304},
		{"If-None-Match weak", []string{"If-None-Match", "W/" + etag}, 304},
		{"If-None-Match *", []string{"If-None-Match", "*"}, 304},
		{"If-None-Match another tag", []string{"If-None-Match", `"other"`}, 200},
		{"If-Modified-Since Last-Modified", []string{"If-Modified-Since", lm}, 304},
		{"If-Modified-Since earlier", []string{"If-Modified-Since", earlier}, 200},
		{"If-Modified-Since invalid", []string{"If-Modified-Since", "yesterday"}, 200},
		// If-None-Match present: If-Modified-Since is ignored (RFC 9110 §13.2.2).
		{"If-None-Match wins", []string{"If-None-Match", `"other"`, "If-Modified-Since", lm}, 200},
	} {
		resp, b := testutil.Get(t, url, append(append([]string{}, hdr...), c.hdr...)...)
		if resp.StatusCode != c.status {
			t.Fatalf("GET %s, %s: %d %s, want %d", url, c.name, resp.StatusCode, b, c.status)
		}
		if c.status == 304 && (len(b) != 0 || resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") != cacheControl || resp.Header.Get("Last-Modified") != lm) {
			t.Fatalf("GET %s, %s: 304 with body %q, ETag %q, Cache-Control %q, Last-Modified %q", url, c.name, b, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"), resp.Header.Get("Last-Modified"))
		}
		if c.status == 200 && string(b) != string(body) {
			t.Fatalf("GET %s, %s: another body", url, c.name)
		}
	}
	// The card names the URL the client reached: another Host header gets
	// another card, and the first one's tag does not match it.
	host := strings.TrimPrefix(strings.SplitN(url, "/", 4)[2], "127.0.0.1")
	other, b := testutil.Get(t, strings.Replace(url, "127.0.0.1", "localhost", 1), append(append([]string{}, hdr...), "If-None-Match", etag)...)
	if other.StatusCode != 200 || !strings.Contains(string(b), "localhost"+host) || other.Header.Get("ETag") == etag {
		t.Fatalf("GET %s as localhost with the 127.0.0.1 card's tag: %d, ETag %q: %s", url, other.StatusCode, other.Header.Get("ETag"), b)
	}
}

// TestCardCaching: every card route of a Host carries ETag,
// Cache-Control (public or private) and Last-Modified, and answers 304 to
// a conditional request whose card is unchanged (A2A 1.0 §8.6.1).
func TestCardCaching(t *testing.T) {
	t.Parallel()
	ts := secureHost(t)
	bearer := []string{"Authorization", "Bearer alice-token"}
	v10 := append([]string{"A2A-Version", "1.0"}, bearer...)
	for _, c := range []struct {
		path, cc string
		hdr      []string
	}{
		{"/.well-known/agent-card.json", "public, max-age=300", nil},
		{"/.well-known/agent.json", "public, max-age=300", nil},
		{"/a2a/secure/.well-known/agent-card.json", "public, max-age=300", nil},
		{"/a2a/secure/.well-known/agent.json", "public, max-age=300", nil},
		{"/a2a/locked/.well-known/agent-card.json", "private, max-age=300", bearer},
		{"/a2a/secure/extendedAgentCard", "private, max-age=300", v10},
		{"/a2a/secure/acme/extendedAgentCard", "private, max-age=300", v10},
		{"/a2a/secure/v1/card", "private, max-age=300", bearer},
		{"/v1/card", "private, max-age=300", bearer},
	} {
		t.Run(strings.ReplaceAll(c.path, "/", "_"), func(t *testing.T) {
			checkCardCaching(t, ts.URL+c.path, c.cc, c.hdr...)
		})
	}
	// Without credentials, the protected card is a 401 that no one stores.
	resp, _ := testutil.Get(t, ts.URL+"/a2a/locked/.well-known/agent-card.json")
	if resp.StatusCode != 401 || resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("ETag") != "" {
		t.Fatalf("locked card without credentials: %d, Cache-Control %q, ETag %q", resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"))
	}
}

// TestCardCachingSigned: a signed card's tag is that of the bytes served,
// signature included, and conditional requests work as for any card.
func TestCardCachingSigned(t *testing.T) {
	t.Parallel()
	ts := signingHost(t, server.CardSignerOptions{})
	checkCardCaching(t, ts.URL+"/.well-known/agent-card.json", "public, max-age=300")
	checkCardCaching(t, ts.URL+"/a2a/secure/extendedAgentCard", "private, max-age=300", "A2A-Version", "1.0", "Authorization", "Bearer alice-token")
	checkCardCaching(t, ts.URL+"/a2a/secure/v1/card", "private, max-age=300", "Authorization", "Bearer alice-token")
	_, b := testutil.Get(t, ts.URL+"/.well-known/agent-card.json")
	if !strings.Contains(string(b), `"signatures"`) {
		t.Fatalf("card not signed: %s", b)
	}
}

// versionsHost serves echo (and secure, bearer alice-token, with an extended
// card) on a Host with the options o.
func versionsHost(t *testing.T, o server.HostOptions) *httptest.Server {
	t.Helper()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	eng := servertest.Engine(t, server.EngineOptions{})
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token"})
	if err != nil {
		t.Fatal(err)
	}
	o.Transport.Logger = testutil.Logger()
	host := server.NewHost(o)
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	ext := testutil.Card("secure")
	host.Add(server.NewHandler(eng, "secure", whoAmI, testutil.Card("secure"), server.HandlerOptions{Auth: auth.Set{bearer}, ExtendedCard: &ext}))
	ts := testutil.ServeDrained(t, host, eng.Close)
	return ts
}

// TestCardMaxAge: HostOptions.CardMaxAge sets max-age; negative is no-cache.
func TestCardMaxAge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		age  time.Duration
		want string
	}{{90 * time.Second, "public, max-age=90"}, {-1, "public, no-cache"}} {
		ts := versionsHost(t, server.HostOptions{CardMaxAge: c.age, PublicURL: "https://agents.example.com"})
		resp, _ := testutil.Get(t, ts.URL+"/.well-known/agent-card.json")
		if got := resp.Header.Get("Cache-Control"); got != c.want || resp.Header.Get("Vary") != "" {
			t.Fatalf("CardMaxAge %v: Cache-Control %q, Vary %q; want %q and no Vary (PublicURL)", c.age, got, resp.Header.Get("Vary"), c.want)
		}
	}
}

// TestCardLastModifiedDefault: the default routes' card changes when
// another agent becomes the default one, and its Last-Modified says so.
func TestCardLastModifiedDefault(t *testing.T) {
	t.Parallel()
	eng := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	host := servertest.Host("",
		server.NewHandler(eng, "a", agents.Echo{}, testutil.Card("a"), server.HandlerOptions{}),
		server.NewHandler(eng, "b", agents.Echo{}, testutil.Card("b"), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(ts.Close)
	resp, _ := testutil.Get(t, ts.URL+"/.well-known/agent-card.json")
	lm := resp.Header.Get("Last-Modified")
	mod, _ := http.ParseTime(lm)
	// Wait (without a fixed sleep) until the clock's second has passed.
	for !time.Now().Truncate(time.Second).After(mod) {
		time.Sleep(10 * time.Millisecond)
	}
	host.Remove("a") // b becomes the default agent
	resp, b := testutil.Get(t, ts.URL+"/.well-known/agent-card.json", "If-Modified-Since", lm)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"name":"b"`) {
		t.Fatalf("after the default agent changed, If-Modified-Since its old Last-Modified: %d %s", resp.StatusCode, b)
	}
	if m2, _ := http.ParseTime(resp.Header.Get("Last-Modified")); !m2.After(mod) {
		t.Fatalf("Last-Modified %q after the default changed, was %q", resp.Header.Get("Last-Modified"), lm)
	}
}

// TestProtocols10Only: with 1.0 alone, the card is an A2A 1.0 AgentCard
// that the 1.0 schema, which rejects unknown members as a strict
// ProtoJSON parser does, accepts; 0.3 requests get VersionNotSupported
// over JSON-RPC and HTTP+JSON, 1.0 requests are served.
func TestProtocols10Only(t *testing.T) {
	t.Parallel()
	// The union card of both versions carries 0.3 members: not a strict 1.0 card.
	both := versionsHost(t, server.HostOptions{})
	if _, b := testutil.Get(t, both.URL+"/.well-known/agent-card.json"); schema.Validate10("AgentCard", b) == nil {
		t.Fatalf("the union card passes as a strict 1.0 card: %s", b)
	}
	ts := versionsHost(t, server.HostOptions{Transport: server.TransportOptions{ProtocolVersions: []string{"1.0"}}})
	_, b := testutil.Get(t, ts.URL+"/.well-known/agent-card.json")
	if err := schema.Validate10("AgentCard", b); err != nil {
		t.Fatalf("1.0-only card: %v: %s", err, b)
	}
	var card map[string]any
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "preferredTransport", "additionalInterfaces", "protocolVersion", "supportsAuthenticatedExtendedCard", "security"} {
		if _, ok := card[k]; ok {
			t.Errorf("1.0-only card has the 0.3 member %s", k)
		}
	}
	ifs, _ := card["supportedInterfaces"].([]any)
	if len(ifs) != 2 || strings.Contains(string(b), `"protocolVersion":"0.3"`) {
		t.Fatalf("1.0-only card's interfaces: %v", ifs)
	}
	// A card with security schemes and requirements too.
	_, b = testutil.Get(t, ts.URL+"/a2a/secure/.well-known/agent-card.json")
	if err := schema.Validate10("AgentCard", b); err != nil || !strings.Contains(string(b), `"securityRequirements"`) {
		t.Fatalf("1.0-only card with security: %v: %s", err, b)
	}
	// The extended card too, over both bindings.
	_, b = testutil.Get(t, ts.URL+"/a2a/secure/extendedAgentCard", "A2A-Version", "1.0", "Authorization", "Bearer alice-token")
	if err := schema.Validate10("AgentCard", b); err != nil || strings.Contains(string(b), `"0.3"`) {
		t.Fatalf("1.0-only extended card (HTTP+JSON): %v: %s", err, b)
	}
	_, b = testutil.Post(t, ts.URL+"/a2a/secure", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, "A2A-Version", "1.0", "Authorization", "Bearer alice-token")
	if !strings.Contains(string(b), `"result"`) || strings.Contains(string(b), `"0.3"`) {
		t.Fatalf("1.0-only extended card (JSON-RPC): %s", b)
	}

	url := ts.URL + "/a2a/echo"
	// 1.0 is served over both bindings.
	if r := rpc10(t, url, "SendMessage", v10SendParams("hi", "m1", "")); r.Error != nil {
		t.Fatalf("SendMessage: %+v", r.Error)
	}
	if code, b := restDo(t, http.MethodPost, url+"/message:send", v10SendParams("hi", "m2", "")); code != 200 {
		t.Fatalf("message:send: %d %s", code, b)
	}
	// 0.3 is not: its method names, a request naming no version, 0.3's paths.
	for _, c := range []struct{ name, body, version string }{
		{"message/send", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m3","parts":[{"kind":"text","text":"hi"}]}}}`, ""},
		{"message/send with A2A-Version 1.0", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m4","parts":[{"kind":"text","text":"hi"}]}}}`, "1.0"},
		{"SendMessage without A2A-Version", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + v10SendParams("hi", "m5", "") + `}`, ""},
		{"SendMessage with A2A-Version 0.3", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + v10SendParams("hi", "m6", "") + `}`, "0.3"},
	} {
		var hdr []string
		if c.version != "" {
			hdr = []string{"A2A-Version", c.version}
		}
		_, b := testutil.Post(t, url, c.body, hdr...)
		var r struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != -32009 || !strings.Contains(r.Error.Message, "serves A2A 1.0") {
			t.Fatalf("%s: %s, want -32009 naming 1.0", c.name, b)
		}
	}
	// A 0.3 streaming client reads the error as its stream's one event.
	_, sb := testutil.Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"m8","parts":[{"kind":"text","text":"hi"}]}}}`, "Accept", "text/event-stream")
	if !strings.HasPrefix(string(sb), "data: ") || !strings.Contains(string(sb), `"code":-32009`) {
		t.Fatalf("message/stream: %s", sb)
	}
	for _, c := range []struct{ path, version string }{{"/v1/message:send", ""}, {"/message:send", "0.3"}} {
		var hdr []string
		if c.version != "" {
			hdr = []string{"A2A-Version", c.version}
		}
		resp, b := testutil.Post(t, url+c.path, `{"message":{"role":"ROLE_USER","messageId":"m7","parts":[{"text":"hi"}]}}`, hdr...)
		if s := restError(t, b); resp.StatusCode != 400 || reasonOf(s.Error.Details) != "VERSION_NOT_SUPPORTED" || !strings.Contains(s.Error.Message, "serves A2A 1.0") {
			t.Fatalf("POST %s (A2A-Version %q): %d %s", c.path, c.version, resp.StatusCode, b)
		}
	}
}

// TestProtocols03Only: with 0.3 alone, the card is the 0.3 card (no
// supportedInterfaces) and 1.0 requests get VersionNotSupported.
func TestProtocols03Only(t *testing.T) {
	t.Parallel()
	ts := versionsHost(t, server.HostOptions{Transport: server.TransportOptions{ProtocolVersions: []string{"0.3.0"}}})
	_, b := testutil.Get(t, ts.URL+"/.well-known/agent-card.json")
	var card map[string]any
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	if _, ok := card["supportedInterfaces"]; ok || card["url"] != ts.URL+"/a2a/echo" || card["protocolVersion"] != "0.3.0" {
		t.Fatalf("0.3-only card: %s", b)
	}
	url := ts.URL + "/a2a/echo"
	_, b = testutil.Post(t, url, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`)
	if !strings.Contains(string(b), `"result"`) {
		t.Fatalf("message/send: %s", b)
	}
	r := rpc10(t, url, "SendMessage", v10SendParams("hi", "m2", ""))
	if r.Error == nil || r.Error.Code != -32009 || !strings.Contains(r.Error.Message, "serves A2A 0.3") {
		t.Fatalf("SendMessage: %+v", r.Error)
	}
	code, b := restDo(t, http.MethodPost, url+"/message:send", v10SendParams("hi", "m3", ""))
	if s := restError(t, b); code != 400 || reasonOf(s.Error.Details) != "VERSION_NOT_SUPPORTED" {
		t.Fatalf("1.0 message:send: %d %s", code, b)
	}
	resp, b := testutil.Post(t, url+"/v1/message:send", `{"message":{"role":"ROLE_USER","messageId":"m4","content":[{"text":"hi"}]}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("0.3 /v1/message:send: %d %s", resp.StatusCode, b)
	}
}

// TestProtocolVersionsValidate: an unknown version is an error naming it;
// card signing needs 1.0.
func TestProtocolVersionsValidate(t *testing.T) {
	t.Parallel()
	err := server.HostOptions{Transport: server.TransportOptions{ProtocolVersions: []string{"1.0", "2.0"}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), `"2.0"`) {
		t.Fatalf("2.0: %v", err)
	}
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	cs, err := server.NewCardSigner(server.CardSignerOptions{Key: key, Algorithm: "EdDSA"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (server.HostOptions{Transport: server.TransportOptions{ProtocolVersions: []string{a2a.Version03}, CardSigner: cs}}).Validate(); err == nil {
		t.Fatal("card signing with 0.3 alone: no error")
	}
}
