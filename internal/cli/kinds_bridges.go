package cli

import (
	"context"

	"github.com/a2abridge/a2abridge/a2a"
	"reflect"

	"github.com/a2abridge/a2abridge/bridge/command"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/bridge/simple"
)

// The bridge kinds: agents that are adapters to what people already run
// (issue 13 §1). Each is a public package under bridge/; here the config
// is decoded into its Config and its agent built.
func init() {
	registerKind(&agentKind{name: "exec", config: reflect.TypeFor[command.Config](), build: buildExec})
	registerKind(&agentKind{name: "http", config: reflect.TypeFor[simple.Config](), build: buildHTTP})
	registerKind(&agentKind{name: "openai", config: reflect.TypeFor[openai.Config](), build: buildOpenAI})
	registerKind(&agentKind{name: "a2a", config: reflect.TypeFor[remote.Config](), build: buildA2A})
}

// buildA2A builds an a2a agent, its card derived from the remote's (name,
// description, skills, modes, streaming; our URL and security). A remote
// that cannot be reached at startup does not stop the server: its card is
// then the entry's card keys over a generic one (a warning says so), and
// executions dial the remote when they run.
func buildA2A(ctx context.Context, b *agentBuild) (*builtAgent, error) {
	var c remote.Config
	if err := b.decode(&c); err != nil {
		return nil, err
	}
	c.CheckURL = b.checkURL
	a, err := remote.New(c)
	if err != nil {
		return nil, err
	}
	card := baseCard(b.name, "A remote A2A agent.", a.Skill())
	rc, err := a.RemoteCard(ctx)
	if err != nil {
		b.log.Warn("the remote agent's card could not be fetched; serving a generic card until the next start", "agent", b.name, "err", err)
	} else {
		card = remote.DeriveCard(rc)
		if card.Provider == nil {
			card.Provider = baseCard("", "", a2a.AgentSkill{}).Provider
		}
	}
	return &builtAgent{agent: a, card: card, close: a.Close}, nil
}

func buildOpenAI(ctx context.Context, b *agentBuild) (*builtAgent, error) {
	var c openai.Config
	if err := b.decode(&c); err != nil {
		return nil, err
	}
	c.CheckURL = b.checkURL
	a, err := openai.New(c)
	if err != nil {
		return nil, err
	}
	built := &builtAgent{agent: a, card: baseCard(b.name, "The model "+c.Model+" of an OpenAI-compatible endpoint.", a.Skill()), close: a.Close}
	if m := a.Methods(); m != nil { // ai/chat, ai/embeddings, ai/rerank (issue 13 §4)
		built.methods = m
		built.card.Capabilities.Extensions = append(built.card.Capabilities.Extensions, a.CardExtension())
	}
	return built, nil
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
