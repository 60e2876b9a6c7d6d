package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

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
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"message/send","params":%s}`, i, msg("hi", fmt.Sprintf("lim-%s-%d", name, i), ""))
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
