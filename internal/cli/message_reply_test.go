package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// TestSendMessageReply: send and stream print an agent's direct Message
// answer (A2A 1.0 §3.1.1, §3.1.2) as an agent message, in JSON and for
// humans, over every protocol version and binding, and exit 0.
func TestSendMessageReply(t *testing.T) {
	t.Parallel()
	eng := servertest.Engine(t, server.EngineOptions{})
	agent := server.MessageFunc(func(ctx context.Context, req *server.Request) (*a2a.Message, error) {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("pong"))
		m.MessageID = "reply-1"
		return &m, nil
	})
	host := servertest.Host("ping", server.NewHandler(eng, "ping", agent, testutil.Card("ping"), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	for _, iface := range [][]string{{"--protocol", "1.0", "--binding", "jsonrpc"}, {"--protocol", "1.0", "--binding", "rest"},
		{"--protocol", "0.3", "--binding", "jsonrpc"}, {"--protocol", "0.3", "--binding", "rest"}} {
		name := strings.Join(iface, " ")
		args := func(cmd string, more ...string) []string {
			return append(append([]string{cmd, ts.URL, "ping", "--context", "ctx-1"}, iface...), more...)
		}
		out, errs, code := run(t, "", args("send", "--human")...)
		if code != ExitOK || out != "Message reply-1 from agent\n  pong\n" {
			t.Errorf("%s: send: %d %q %s", name, code, out, errs)
		}
		out, errs, code = run(t, "", args("send", "--json")...)
		if w := lines(t, out); code != ExitOK || len(w) != 1 || w[0].Kind != "message" || !strings.Contains(out, `"reply-1"`) || !strings.Contains(out, `"ctx-1"`) {
			t.Errorf("%s: send --json: %d %q %s", name, code, out, errs)
		}
		out, errs, code = run(t, "", args("stream", "--json")...)
		if evs, ids := streamLines(t, out, false); code != ExitOK || len(evs) != 1 || evs[0].Kind != "message" || ids[0] != "" || !strings.Contains(out, "pong") {
			t.Errorf("%s: stream --json: %d %q %s", name, code, out, errs)
		}
		out, errs, code = run(t, "", args("stream", "--human")...)
		if code != ExitOK || !strings.HasSuffix(out, "  message from agent: pong\n") || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: stream: %d %q %s", name, code, out, errs)
		}
	}
}
