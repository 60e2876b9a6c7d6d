package cli

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// TestRateLimits runs serve with rate limits: a caller past its limit of
// an agent is refused on every binding (JSON-RPC, HTTP+JSON, the card,
// gRPC) with HTTP 429 and Retry-After, -32029 RATE_LIMITED, gRPC
// RESOURCE_EXHAUSTED, while another caller, and the same caller on an
// agent without that limit, go on; our client waits as asked and gets
// through.
func TestRateLimits(t *testing.T) {
	base := startServe(t, "--config", writeConfig(t, `
auth: {bearer_tokens: {alice: tok-a, bob: tok-b}}
limits: {rate: 1000, burst: 1000}
agents:
  echo:
    limits: {rate: 0.5, burst: 2}
  chat:
    limits: {total: {rate: 0.5, burst: 1}}
`))
	send := func(agent, token string) (int, string, http.Header) {
		t.Helper()
		req := testutil.NewRequest(t, context.Background(), http.MethodPost, base+"/a2a/"+agent,
			`{"jsonrpc":"2.0","id":1,"method":"message/send","params":`+testutil.SendParams03("hi", a2a.NewID(), "")+`}`,
			"Authorization", "Bearer "+token, "Content-Type", "application/json")
		resp, b := testutil.Do(t, req)
		return resp.StatusCode, string(b), resp.Header
	}
	for i := range 2 {
		if st, body, _ := send("echo", "tok-a"); st != http.StatusOK || strings.Contains(body, `"error"`) {
			t.Fatalf("send %d within the burst: %d %s", i, st, body)
		}
	}
	st, body, h := send("echo", "tok-a")
	if st != http.StatusTooManyRequests || h.Get("Retry-After") != "2" || !strings.Contains(body, `"code":-32029`) || !strings.Contains(body, `"retryAfterSeconds":"2"`) {
		t.Fatalf("past the limit (JSON-RPC 0.3): %d Retry-After %q %s", st, h.Get("Retry-After"), body)
	}
	// HTTP+JSON 1.0 and the card: refused before anything is looked up.
	st, body = call(t, http.MethodGet, base+"/a2a/echo/tasks/no-such-task", "", "Authorization", "Bearer tok-a", "A2A-Version", "1.0")
	if st != http.StatusTooManyRequests || !strings.Contains(body, `"RESOURCE_EXHAUSTED"`) || !strings.Contains(body, `"RATE_LIMITED"`) {
		t.Fatalf("past the limit (HTTP+JSON 1.0): %d %s", st, body)
	}
	// Another caller of the agent, and the caller on another agent.
	if st, body, _ := send("echo", "tok-b"); st != http.StatusOK {
		t.Fatalf("bob, limited by alice's requests: %d %s", st, body)
	}
	// Alice on another agent (not limited by echo's limit), whose
	// agent-wide total her request uses up for bob.
	if st, body, _ := send("chat", "tok-a"); st != http.StatusOK {
		t.Fatalf("alice on chat, limited by echo's limit: %d %s", st, body)
	}
	if st, body, _ := send("chat", "tok-b"); st != http.StatusTooManyRequests {
		t.Fatalf("past chat's total: %d %s", st, body)
	}

	ctx := context.Background()
	// gRPC, without retries: RESOURCE_EXHAUSTED with reason RATE_LIMITED.
	g, err := client.Dial(ctx, base+"/a2a/echo", client.Options{Binding: a2a.TransportGRPC, MaxRetries: -1, NoCardCache: true,
		Token: "tok-b"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var refused error
	for range 5 {
		if _, refused = g.SendMessage(ctx, testutil.UserMessage("hi", "")); refused != nil {
			break
		}
	}
	if !errors.Is(refused, a2a.ErrRateLimited) {
		t.Fatalf("gRPC past the limit: %v, want a2a.ErrRateLimited", refused)
	}
	// Our client with its defaults waits as Retry-After asks and gets
	// through: the message is sent once.
	c, err := client.Dial(ctx, base+"/a2a/chat", client.Options{NoCardCache: true, Token: "tok-a"})
	if err != nil && !errors.Is(err, a2a.ErrRateLimited) {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("the card, with retries: %v", err)
	}
	defer c.Close()
	if _, err := c.SendMessage(ctx, testutil.UserMessage("hi", "")); err != nil {
		t.Fatalf("a message past the limit, with the client's retries: %v", err)
	}
	// The public card is limited too, by the caller's address (it is
	// not authenticated): two fetches above, by the clients' Dial.
	for i := 0; ; i++ {
		st, body = call(t, http.MethodGet, base+"/a2a/echo/.well-known/agent-card.json", "")
		if st == http.StatusTooManyRequests {
			break
		}
		if st != http.StatusOK || i == 2 {
			t.Fatalf("card fetch %d: %d %s", i, st, body)
		}
	}
	// A request whose credentials fail counts by address too: guessing
	// tokens is limited.
	if st, body, h := send("echo", "wrong"); st != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("a wrong token past the address's limit: %d %s", st, body)
	}
}

// TestRateLimitsConfig: a limit that cannot be is a startup error naming
// its key.
func TestRateLimitsConfig(t *testing.T) {
	wantServeUsageErrors(t, []serveUsage{
		{[]string{"--config", "limits: {rate: 0}\n"}, "limits.rate: want requests per second, from 0.001 to 1000000 (got 0)"},
		{[]string{"--config", "limits: {rate: -1, burst: 3}\n"}, "limits.rate: want requests per second"},
		{[]string{"--config", "limits: {rate: 1, burst: -1}\n"}, "limits.burst: want 0 (the rate, rounded up) to 1000000 (got -1)"},
		{[]string{"--config", "agents:\n  echo:\n    limits: {burst: 2}\n"}, "agents.echo.limits.rate: want requests per second"},
		{[]string{"--config", "agents:\n  echo:\n    limits: {total: {rate: .inf}}\n"}, "agents.echo.limits.total.rate: want requests per second"},
		{[]string{"--config", "agents:\n  echo:\n    limits: {total: {rate: .nan}}\n"}, "agents.echo.limits.total.rate: want requests per second"},
		{[]string{"--config", "agents:\n  echo:\n    limits: {rate: 1, concurent: 2}\n"}, "concurent"},
	})
}

// TestRateLimitedHint: a refusal that outlasted the client's retries
// says what to do next.
func TestRateLimitedHint(t *testing.T) {
	for _, err := range []error{a2a.ErrRateLimited, &client.HTTPError{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests"}} {
		if h := hintsFor(err, false); len(h) != 1 || !strings.Contains(h[0], "limits how often a caller may call it") {
			t.Errorf("%v: hints %q", err, h)
		}
	}
}
