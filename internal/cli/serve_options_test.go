package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/schema"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// --card-max-age and --protocols (card_max_age, protocols) are checked
// at startup: a bad value is a usage error naming the flag or the key.
func TestServeCardOptionErrors(t *testing.T) {
	wantServeUsageErrors(t, []serveUsage{
		{[]string{"--card-max-age", "-1s"}, "--card-max-age -1s (card_max_age): want a duration of 0"},
		{[]string{"--config", "card_max_age: soon\n"}, "not a duration"},
		{[]string{"--protocols", "2.0"}, `--protocols: protocol version "2.0": want 0.3 or 1.0`},
		{[]string{"--protocols", "1.0,v3"}, `--protocols: protocol version "v3"`},
		{[]string{"--config", "protocols: [1.0, 0.4]\n"}, `--config: protocols: protocol version "0.4": want 0.3 or 1.0`},
		{[]string{"--config", "protocols: []\n"}, "--config: protocols: empty"},
		{[]string{"--config", "protocol: [1.0]\n"}, `unknown key "protocol": did you mean "protocols"?`},
	})
}

// The card options reach the server, from flags and from the config
// file: the card's max-age, and with 1.0 alone a strict A2A 1.0 card and
// VersionNotSupported for 0.3 requests.
func TestServeCardOptions(t *testing.T) {
	cfg := writeConfig(t, "card_max_age: 1m\nprotocols: [1.0]\n")
	for name, args := range map[string][]string{
		"flags":  {"--card-max-age", "60s", "--protocols", "1.0"},
		"config": {"--config", cfg},
	} {
		t.Run(name, func(t *testing.T) {
			base := startServe(t, args...)
			resp, b := testutil.Get(t, base+"/a2a/echo/.well-known/agent-card.json")
			if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=60" || resp.Header.Get("ETag") == "" {
				t.Fatalf("Cache-Control %q, ETag %q", cc, resp.Header.Get("ETag"))
			}
			if err := schema.Validate10("AgentCard", b); err != nil {
				t.Fatalf("1.0-only card: %v: %s", err, b)
			}
			_, b = testutil.RPC(t, base+"/a2a/echo", "message/send", testutil.SendParams03("hi", "p-"+name, ""))
			if !strings.Contains(string(b), `"code":-32009`) || !strings.Contains(string(b), "serves A2A 1.0") {
				t.Fatalf("0.3 message/send: %s", b)
			}
		})
	}
	// The default: both versions, max-age 300.
	base := startServe(t)
	resp, b := testutil.Get(t, base+"/.well-known/agent-card.json")
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=300" || !strings.Contains(string(b), `"protocolVersion":"0.3.0"`) || !strings.Contains(string(b), `"protocolVersion":"1.0"`) {
		t.Fatalf("default: Cache-Control %q: %s", cc, b)
	}
}

// The new serve options are validated at startup: a bad value is a usage
// error that names the flag or the config key.
func TestServeLimitOptionErrors(t *testing.T) {
	wantServeUsageErrors(t, []serveUsage{
		{[]string{"--trusted-proxy", "10.0.0.0/33"}, `--trusted-proxy "10.0.0.0/33": not a CIDR prefix or an IP address`},
		{[]string{"--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "proxy.example"}, `--trusted-proxy "proxy.example"`},
		{[]string{"--config", "trusted_proxies: [10.0.0.0/8, nope]\n"}, `--config: trusted_proxies "nope": not a CIDR prefix`},
		{[]string{"--allowed-host", "a b"}, `--allowed-host: allowed host "a b"`},
		{[]string{"--config", "allowed_hosts:\n  - http://agents.example.com\n"}, `--config: allowed_hosts: allowed host "http://agents.example.com"`},
		{[]string{"--max-batch", "0"}, "--max-batch 0 (max_batch): want 1 or more"},
		{[]string{"--config", "max_batch: -5\n"}, "--max-batch -5 (max_batch)"},
		{[]string{"--config", "max_batch: many\n"}, "line 1: cannot unmarshal"},
		{[]string{"--body-read-timeout", "-1s"}, "--body-read-timeout -1s (body_read_timeout)"},
		{[]string{"--config", "body_read_timeout: soon\n"}, "not a duration"},
		{[]string{"--config", "trusted_proxie: [10.0.0.0/8]\n"}, `unknown key "trusted_proxie": did you mean "trusted_proxies"?`},
	})
}

type cardDoc struct {
	URL string `json:"url"`
}

// getCard fetches the default agent's card as a client reaching the server
// with Host header hostHdr and headers hdr (name, value, …).
func getCard(t *testing.T, base, hostHdr string, hdr ...string) (cardDoc, *http.Response) {
	t.Helper()
	req := testutil.NewRequest(t, context.Background(), http.MethodGet, base+"/.well-known/agent-card.json", "", hdr...)
	if hostHdr != "" {
		req.Host = hostHdr
	}
	resp, b := testutil.Do(t, req)
	var c cardDoc
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("card: %v: %s", err, b)
	}
	return c, resp
}

// The options reach the server, from flags and from the config file.
func TestServeLimitOptions(t *testing.T) {
	cfg := writeConfig(t, "max_batch: 2\nbody_read_timeout: 20s\ntrusted_proxies: [127.0.0.1]\nallowed_hosts: [agents.example.com]\n")
	for name, args := range map[string][]string{
		"flags":  {"--max-batch", "2", "--trusted-proxy", "127.0.0.0/8", "--allowed-host", "agents.example.com", "--body-read-timeout", "20s"},
		"config": {"--config", cfg},
	} {
		t.Run(name, func(t *testing.T) {
			base := startServe(t, args...)
			m := func(i int) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"message/send","params":%s}`, i, testutil.SendParams03("hi", fmt.Sprintf("lim-%s-%d", name, i), ""))
			}
			_, b := testutil.Post(t, base+"/a2a/echo", "["+m(1)+","+m(2)+","+m(3)+"]")
			if !strings.HasPrefix(string(b), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600`) || !strings.Contains(string(b), "batch of 3 requests exceeds the limit of 2") {
				t.Fatalf("batch of 3 with a limit of 2: %s", b)
			}
			// An allowed Host is used; another is not.
			if c, resp := getCard(t, base, "agents.example.com:8080"); c.URL != "http://agents.example.com:8080/a2a/echo" || resp.Header.Get("Vary") == "" {
				t.Fatalf("card for an allowed host: %+v, Vary %q", c, resp.Header.Get("Vary"))
			}
			if c, _ := getCard(t, base, "evil.example"); c.URL != base+"/a2a/echo" {
				t.Fatalf("card for Host: evil.example: %+v", c)
			}
			// Forwarding headers from 127.0.0.1, a trusted proxy here.
			if c, _ := getCard(t, base, "internal:8080", "X-Forwarded-Host", "agents.example.com", "X-Forwarded-Proto", "https"); c.URL != "https://agents.example.com/a2a/echo" {
				t.Fatalf("card through a trusted proxy: %+v", c)
			}
		})
	}
	// Without options: loopback names are kept, forwarding headers ignored.
	base := startServe(t)
	port := base[strings.LastIndexByte(base, ':'):]
	if c, _ := getCard(t, base, "localhost"+port, "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"); c.URL != "http://localhost"+port+"/a2a/echo" {
		t.Fatalf("default card for localhost: %+v", c)
	}
}
