package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// newTestGateway runs a gateway of cfg (tasks in memory) on a free
// loopback port; it is closed when the test ends.
func newTestGateway(t *testing.T, cfg *Config) *Gateway {
	t.Helper()
	addr := "127.0.0.1:0"
	cfg.Memory = true
	g, err := New(context.Background(), cfg, Options{Logger: testutil.Logger(), Overrides: &Overrides{Addr: &addr}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(context.Background()) }()
	t.Cleanup(func() {
		_ = g.Close()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return g
}

// Errors of a configuration made in code name the key, as a file's do,
// and are *ConfigError; nothing is left listening.
func TestNewConfigErrors(t *testing.T) {
	for _, c := range []struct {
		agent AgentConfig
		want  string
	}{
		{AgentConfig{AgentKeys: AgentKeys{Kind: "nope"}}, `agents.x.kind: unknown kind "nope"`},
		{AgentConfig{AgentKeys: AgentKeys{Kind: "http"}, KindKeys: map[string]any{"ur": "http://127.0.0.1:1/"}}, `unknown key "ur" in agents.x: did you mean "url"?`},
		{AgentConfig{AgentKeys: AgentKeys{Kind: "exec"}, KindKeys: map[string]any{"command": "id", "max_output": "lots"}}, "agents.x.command: want a list of strings"},
		{AgentConfig{AgentKeys: AgentKeys{Kind: "http"}}, "agents.x.url"},
	} {
		addr := "127.0.0.1:0"
		_, err := New(context.Background(), &Config{Memory: true, Agents: map[string]AgentConfig{"x": c.agent}}, Options{Overrides: &Overrides{Addr: &addr}})
		var ce *ConfigError
		if !errors.As(err, &ce) || strings.HasPrefix(err.Error(), "--") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a *ConfigError naming %s", c.agent, err, c.want)
		}
	}
	_, err := New(context.Background(), &Config{Builtins: new(bool)}, Options{ConfigName: "--config"})
	if err == nil || err.Error() != "--config: no agents: builtins is false and agents is empty" {
		t.Errorf("no agents, ConfigName --config: %v", err)
	}
	addr, mem := "127.0.0.1:0", true
	pg := "postgres://a2a@127.0.0.1:1/db"
	_, err = New(context.Background(), nil, Options{Overrides: &Overrides{Addr: &addr, Memory: &mem, Postgres: &pg}})
	if err == nil || err.Error() != "--postgres and --memory are mutually exclusive: tasks are kept in PostgreSQL or in memory" {
		t.Errorf("--postgres with --memory: %v", err)
	}
}

// An agent configured in code is served under its name, its card keys
// applied; Shutdown is done once and Close after it returns its result.
func TestGatewayInCode(t *testing.T) {
	g := newTestGateway(t, &Config{Agents: map[string]AgentConfig{
		"upper": {AgentKeys: AgentKeys{Kind: "exec", Description: "Upper-cases."}, KindKeys: map[string]any{"command": []string{"tr", "a-z", "A-Z"}, "env": []string{"PATH"}}},
	}})
	if got := strings.Join(g.Agents(), " "); got != "echo chat slow upper" {
		t.Fatalf("agents %q", got)
	}
	resp, card := testutil.Get(t, g.URL()+"/a2a/upper/.well-known/agent-card.json")
	if resp.StatusCode != 200 || !strings.Contains(string(card), `"description":"Upper-cases."`) {
		t.Fatalf("card: %d %s", resp.StatusCode, card)
	}
	if _, out := testutil.Post(t, g.URL()+"/simple/upper", `{"input":"abc"}`); !strings.Contains(string(out), "ABC") {
		t.Fatalf("simple call: %s", out)
	}
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close after Shutdown: %v", err)
	}
	if _, err := http.Get(g.URL() + "/healthz"); err == nil {
		t.Fatal("the gateway still answers after Shutdown")
	}
}

// greeterConfig is the configuration of the kind a program registers in
// TestRegisterKind.
type greeterConfig struct {
	Greeting string `yaml:"greeting"`
}

// greeter is a Kind registered from outside the package's own: its key
// is checked like a bridge's, and its agent served like any other.
type greeter struct{}

func (greeter) Name() string { return "greeter" }
func (greeter) Config() any  { return new(greeterConfig) }
func (greeter) Build(ctx context.Context, b *Build) (*Built, error) {
	var c greeterConfig
	if err := b.Decode(&c); err != nil {
		return nil, err
	}
	if c.Greeting == "" {
		return nil, errors.New("greeting: required")
	}
	agent := server.AgentFunc(func(ctx context.Context, _ *server.Request, t *server.TaskUpdater) error {
		return t.SetStatus(ctx, a2a.TaskStateCompleted, t.TextMessage(c.Greeting))
	})
	return &Built{Agent: agent, Card: a2a.AgentCard{Description: "Greets."}}, nil
}

func TestRegisterKind(t *testing.T) {
	RegisterKind(greeter{})
	t.Cleanup(func() { delete(kinds, "greeter") })
	addr := "127.0.0.1:0"
	for agent, want := range map[string]string{
		"greetin: hi": `unknown key "greetin" in agents.g: did you mean "greeting"?`,
		"":            "agents.g.greeting: required",
	} {
		k, v, _ := strings.Cut(agent, ": ")
		keys := map[string]any{}
		if k != "" {
			keys[k] = v
		}
		_, err := New(context.Background(), &Config{Memory: true, Agents: map[string]AgentConfig{"g": {AgentKeys: AgentKeys{Kind: "greeter"}, KindKeys: keys}}}, Options{Overrides: &Overrides{Addr: &addr}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", agent, err, want)
		}
	}
	g := newTestGateway(t, &Config{Agents: map[string]AgentConfig{"g": {AgentKeys: AgentKeys{Kind: "greeter"}, KindKeys: map[string]any{"greeting": "hello there"}}}})
	if _, out := testutil.Post(t, g.URL()+"/simple/g", `{"input":"hi"}`); !strings.Contains(string(out), "hello there") {
		t.Fatalf("the greeter answered %s", out)
	}
}

// A gateway given a listener serves on it (its cards name it) and closes
// it when it stops; a New that fails closes it too.
func TestListenerOption(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(context.Background(), &Config{Memory: true}, Options{Logger: testutil.Logger(), Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	if g.Addr().String() != ln.Addr().String() || g.URL() != "http://"+ln.Addr().String() {
		t.Fatalf("Addr %s, URL %s; want the listener's %s", g.Addr(), g.URL(), ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(context.Background()) }()
	if resp, _ := testutil.Get(t, g.URL()+"/healthz"); resp.StatusCode != 200 {
		t.Fatalf("/healthz on the given listener: %d", resp.StatusCode)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !listenerClosed(ln) {
		t.Fatal("the listener is still open after Close")
	}

	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), &Config{Builtins: new(bool)}, Options{Listener: ln2}); err == nil {
		t.Fatal("New without agents succeeded")
	}
	if !listenerClosed(ln2) {
		t.Fatal("the listener is still open after New failed")
	}
}

// listenerClosed reports whether ln was closed: its Accept fails with
// net.ErrClosed (an open one times out after a second).
func listenerClosed(ln net.Listener) bool {
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Second))
	_, err := ln.Accept()
	return errors.Is(err, net.ErrClosed)
}

// An entry of a loaded config whose kind keys a program changes is built
// from the changed keys; an unchanged one from the file.
func TestLoadedConfigChangedInCode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.yaml")
	yml := "agents:\n  upper:\n    kind: exec\n    command: [cat]\n    env: [PATH]\n  same:\n    kind: exec\n    command: [cat]\n"
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	up := cfg.Agents["upper"]
	up.KindKeys["command"] = []string{"tr", "a-z", "A-Z"}
	cfg.Agents["upper"] = up
	g := newTestGateway(t, cfg)
	if _, out := testutil.Post(t, g.URL()+"/simple/upper", `{"input":"abc"}`); !strings.Contains(string(out), "ABC") {
		t.Fatalf("changed entry: %s", out)
	}
	if _, out := testutil.Post(t, g.URL()+"/simple/same", `{"input":"abc"}`); !strings.Contains(string(out), "abc") {
		t.Fatalf("unchanged entry: %s", out)
	}
}
