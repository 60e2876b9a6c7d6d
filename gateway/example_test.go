package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2abridge/a2abridge/gateway"
)

// A gateway built in code: the built-in agents with tasks in memory, on a
// free port of 127.0.0.1, called through its simple HTTP endpoint.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := "127.0.0.1:0"
	g, err := gateway.New(ctx, &gateway.Config{Memory: true}, gateway.Options{Overrides: &gateway.Overrides{Addr: &addr}})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()

	fmt.Println("agents:", strings.Join(g.Agents(), ", "), "default:", g.DefaultAgent())
	resp, err := http.Post(g.URL()+"/simple/echo", "application/json", strings.NewReader(`{"input":"hello"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, strings.Contains(string(body), `"status":"success"`))

	cancel() // Run shuts the gateway down
	fmt.Println("stopped:", <-done)
	// Output:
	// agents: echo, chat, slow default: echo
	// 200 OK true
	// stopped: <nil>
}
