package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestEmbed runs the example on a free port and calls its "upper" agent
// through the gateway's simple endpoint.
func TestEmbed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, "", "127.0.0.1:0", slog.New(slog.DiscardHandler), pw)
		pw.Close()
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	var upper string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if u, ok := strings.CutSuffix(sc.Text(), "/a2a/upper"); ok {
			upper = u + "/simple/upper"
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if upper == "" {
		t.Fatal("the gateway did not list the agent upper")
	}
	resp, err := http.Post(upper, "application/json", strings.NewReader(`{"input":"hello, gateway"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Status string `json:"status"`
		Output any    `json:"output"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	if answer.Status != "success" || !strings.Contains(toText(answer.Output), "HELLO, GATEWAY") {
		t.Fatalf("upper answered %+v, want HELLO, GATEWAY", answer)
	}
}

// toText is the text of a simple endpoint's output: a string, or the
// text field of an object.
func toText(v any) string {
	switch o := v.(type) {
	case string:
		return o
	case map[string]any:
		s, _ := o["text"].(string)
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
