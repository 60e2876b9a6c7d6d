package cli

import (
	"strings"
	"testing"

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
			_, b = testutil.RPC(t, base+"/a2a/echo", "message/send", msg("hi", "p-"+name, ""))
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
