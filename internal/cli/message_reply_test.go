package cli

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// TestSendMessageReply: send and stream print an agent's direct Message
// answer (A2A 1.0 §3.1.1, §3.1.2) as an agent message, in JSON and for
// humans, over every protocol version and binding, and exit 0.
func TestSendMessageReply(t *testing.T) {
	t.Parallel()
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	agent := server.MessageFunc(func(ctx context.Context, req *server.Request) (*a2a.Message, error) {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart{Text: "pong"})
		m.MessageID = "reply-1"
		return &m, nil
	})
	card := a2a.AgentCard{Name: "ping", Description: "answers pong", Version: "1.0.0",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "ping", Name: "ping", Description: "pong", Tags: []string{"ping"}}}}
	host := server.NewHost(server.HostOptions{Default: "ping", Transport: server.TransportOptions{Logger: quietLog()}})
	host.Add(server.NewHandler(eng, "ping", agent, card, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Close(ctx)
	})
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
		if evs, ids := streamLines2(t, out); code != ExitOK || len(evs) != 1 || evs[0].Kind != "message" || ids[0] != "" || !strings.Contains(out, "pong") {
			t.Errorf("%s: stream --json: %d %q %s", name, code, out, errs)
		}
		out, errs, code = run(t, "", args("stream", "--human")...)
		if code != ExitOK || !strings.HasSuffix(out, "  message from agent: pong\n") || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: stream: %d %q %s", name, code, out, errs)
		}
	}
}

// streamLines2 parses stream --json lines, {"eventId":…,"result":…} or
// {"result":…} (no SSE id).
func streamLines2(t *testing.T, out string) ([]wireTask, []string) {
	t.Helper()
	var evs []wireTask
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var top struct {
			EventID string         `json:"eventId"`
			Result  jsontext.Value `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &top); err != nil || top.Result == nil {
			t.Fatalf("not a stream line: %q (%v)", l, err)
		}
		ev, err := parseWire(top.Result)
		if err != nil {
			t.Fatal(err)
		}
		evs, ids = append(evs, ev), append(ids, top.EventID)
	}
	return evs, ids
}
