package cli

import (
	"context"
	"reflect"

	"github.com/a2abridge/a2abridge/bridge/command"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/bridge/simple"
)

// The bridge kinds: agents that are adapters to what people already run
// (issue 13 §1). Each is a public package under bridge/; here the config
// is decoded into its Config and its agent built.
func init() {
	registerKind(&agentKind{name: "exec", config: reflect.TypeFor[command.Config](), build: buildExec})
	registerKind(&agentKind{name: "http", config: reflect.TypeFor[simple.Config](), build: buildHTTP})
	registerKind(&agentKind{name: "openai", config: reflect.TypeFor[openai.Config](), build: buildOpenAI})
}

func buildOpenAI(ctx context.Context, b *agentBuild) (*builtAgent, error) {
	var c openai.Config
	if err := b.decode(&c); err != nil {
		return nil, err
	}
	a, err := openai.New(c)
	if err != nil {
		return nil, err
	}
	return &builtAgent{agent: a, card: baseCard(b.name, "The model "+c.Model+" of an OpenAI-compatible endpoint.", a.Skill()), close: a.Close}, nil
}

func buildHTTP(ctx context.Context, b *agentBuild) (*builtAgent, error) {
	var c simple.Config
	if err := b.decode(&c); err != nil {
		return nil, err
	}
	a, err := simple.New(c)
	if err != nil {
		return nil, err
	}
	return &builtAgent{agent: a, card: baseCard(b.name, "An HTTP service, answering in the simple dialect.", a.Skill()), close: a.Close}, nil
}

func buildExec(ctx context.Context, b *agentBuild) (*builtAgent, error) {
	var c command.Config
	if err := b.decode(&c); err != nil {
		return nil, err
	}
	c.Logger = b.log.With("agent", b.name)
	a, err := command.New(c)
	if err != nil {
		return nil, err
	}
	return &builtAgent{agent: a, card: baseCard(b.name, "Runs "+a.Skill().Name+" for each message.", a.Skill()), close: a.Close}, nil
}
