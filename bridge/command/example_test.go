//go:build unix

package command_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/command"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// Serve a command as an A2A agent: each message runs `tr a-z A-Z`, its
// text on stdin, and the answer is the command's stdout.
func Example() {
	quiet := slog.New(slog.DiscardHandler)
	upper, err := command.New(command.Config{Command: []string{"tr", "a-z", "A-Z"}, Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer upper.Close()
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close(context.Background())
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: quiet}})
	host.Add(server.NewHandler(eng, "upper", upper, a2a.AgentCard{
		Name: "upper", Description: "Upper-cases text", Version: "1",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{upper.Skill()},
	}, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	defer ts.Close()

	ctx := context.Background()
	c, err := client.Dial(ctx, ts.URL, client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hello, a2a"))})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := res.(*a2a.Task)
	fmt.Println(task.Status.State, task.Artifacts[0].Name, task.Artifacts[0].Parts[0].Text())
	fmt.Println("exit code:", task.Metadata[command.MetadataExitCode])
	// Output:
	// completed output HELLO, A2A
	// exit code: 0
}
