package remote_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// A remote A2A agent (here another a2abridge server on loopback) served
// under a card derived from its own.
func Example() {
	ctx := context.Background()
	eng, _ := server.NewEngine(ctx, memory.New(), server.EngineOptions{})
	defer eng.Close(ctx)

	// The remote: an agent that greets.
	greeter := server.AgentFunc(func(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
		return t.Complete(ctx, "Hello, "+req.Message.Parts[0].Text()+"!")
	})
	far := server.NewHost(server.HostOptions{})
	far.Add(server.NewHandler(eng, "greeter", greeter, a2a.AgentCard{Name: "greeter", Description: "Greets",
		Version: "1", DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}, server.HandlerOptions{}))
	farSrv := httptest.NewServer(far)
	defer farSrv.Close()

	// The bridge: the remote agent served by this host.
	ag, err := remote.New(remote.Config{URL: farSrv.URL + "/a2a/greeter"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ag.Close()
	rc, err := ag.RemoteCard(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	near := server.NewHost(server.HostOptions{})
	near.Add(server.NewHandler(eng, "greeter", ag, remote.DeriveCard(rc), server.HandlerOptions{}))
	nearSrv := httptest.NewServer(near)
	defer nearSrv.Close()

	c, err := client.Dial(ctx, nearSrv.URL+"/a2a/greeter", client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("Ada"))})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := res.(*a2a.Task)
	fmt.Println(c.Card().Name, task.Status.State, task.Status.Message.Parts[0].Text())
	// Output: greeter completed Hello, Ada!
}
