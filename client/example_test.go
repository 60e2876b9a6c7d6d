package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// Discover an agent from its base URL, send a message, then stream one.
func Example() {
	// An agent to talk to: a2abridge's echo agent on a local test server.
	url, stop, err := echoServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	ctx := context.Background()
	c, err := client.Dial(ctx, url, client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hello"))})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := res.(*a2a.Task)
	fmt.Println(task.Status.State, task.Artifacts[0].Parts[0].Text())

	for ev, err := range c.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("#%s %T\n", ev.ID, ev.Event)
	}
	// Output:
	// completed hello
	// #1 *a2a.Task
	// #2 *a2a.TaskArtifactUpdateEvent
	// #3 *a2a.TaskStatusUpdateEvent
}

// Choose the binding, see which interface the client calls, and list the
// caller's tasks one page at a time (ListTasks is an A2A 1.0 operation).
func ExampleClient_ListTasks() {
	url, stop, err := echoServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	ctx := context.Background()
	c, err := client.Dial(ctx, url, client.Options{Binding: a2a.TransportHTTPJSON})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := c.Interface()
	fmt.Println(in.ProtocolVersion, in.Binding)
	for _, text := range []string{"one", "two", "three"} {
		if _, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text))}); err != nil {
			fmt.Println(err)
			return
		}
	}
	size := 2
	p := a2a.ListTasksRequest{PageSize: &size}
	for page := 1; ; page++ {
		r, err := c.ListTasks(ctx, p)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("page %d: %d of %d tasks, last page %v\n", page, len(r.Tasks), r.TotalSize, r.NextPageToken == "")
		if r.NextPageToken == "" {
			break
		}
		p.PageToken = r.NextPageToken
	}
	// Output:
	// 1.0 HTTP+JSON
	// page 1: 2 of 3 tasks, last page false
	// page 2: 1 of 3 tasks, last page true
}

// echoServer serves a2abridge's echo agent on a local test server, the
// agent the examples talk to; stop ends the server and its engine.
func echoServer() (url string, stop func(), err error) {
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return "", nil, err
	}
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: slog.New(slog.DiscardHandler)}})
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	return ts.URL, func() { ts.Close(); eng.Close(context.Background()) }, nil
}
