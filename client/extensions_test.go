package client_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// Options.Extensions activates extensions on every binding and version
// (A2A-Extensions for 1.0, X-A2A-Extensions for 0.3): an agent whose card
// requires one refuses a client without it (-32008) and sees it from a
// client with it.
func TestClientExtensions(t *testing.T) {
	const ext = "https://example.com/ext/required/v1"
	eng := servertest.Engine(t, server.EngineOptions{})
	var mu sync.Mutex
	var seen [][]string
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		mu.Lock()
		seen = append(seen, r.Extensions)
		mu.Unlock()
		return u.Complete(ctx, "ok")
	})
	card := a2a.AgentCard{Name: "x", Description: "d", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: true,
		Extensions: []a2a.AgentExtension{{URI: ext, Required: true}}}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	host := servertest.Host("", server.NewHandler(eng, "x", agent, card, server.HandlerOptions{}))
	ts := testutil.ServeDrained(t, host, eng.Close)
	for _, proto := range []string{a2a.Version03, a2a.Version10} {
		for _, binding := range []string{a2a.TransportJSONRPC, a2a.TransportHTTPJSON} {
			what := proto + " " + binding
			c := dial(t, ts.URL+"/a2a/x", client.Options{Protocol: proto, Binding: binding})
			_, err := c.SendMessage(context.Background(), text("hi"))
			if ae := (*a2a.Error)(nil); !errors.As(err, &ae) || ae.Code != a2a.CodeExtensionSupportRequired {
				t.Fatalf("%s without Extensions: %v", what, err)
			}
			c = dial(t, ts.URL+"/a2a/x", client.Options{Protocol: proto, Binding: binding, Extensions: []string{" " + ext, "", ext}})
			ev, err := c.SendMessage(context.Background(), text("hi"))
			if task, ok := ev.(*a2a.Task); err != nil || !ok || task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("%s with Extensions: %v %v", what, ev, err)
			}
			mu.Lock()
			last := seen[len(seen)-1]
			mu.Unlock()
			if !slices.Equal(last, []string{ext}) {
				t.Fatalf("%s: the agent saw %v", what, last)
			}
		}
	}
}
