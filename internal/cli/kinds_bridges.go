package cli

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"

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
// then the entry's card keys over a generic one (a warning says so) until
// the remote's card can be fetched (watchCard tries again in the
// background), and executions dial the remote when they run.
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
	derive := func(ctx context.Context) (a2a.AgentCard, error) {
		rc, err := a.RemoteCard(ctx)
		if err != nil {
			return a2a.AgentCard{}, err
		}
		card := remote.DeriveCard(rc)
		if card.Provider == nil {
			card.Provider = baseCard("", "", a2a.AgentSkill{}).Provider
		}
		return card, nil
	}
	built := &builtAgent{agent: a, close: a.Close}
	card, err := derive(ctx)
	if err != nil {
		b.log.Warn("the remote agent's card could not be fetched; serving a generic card until it can be", "agent", b.name, "err", err)
		card = baseCard(b.name, "A remote A2A agent.", a.Skill())
		built.lateCard = derive
	}
	built.card = card
	return built, nil
}

// watchCard fetches in the background the card of an agent built with a
// stand-in card (builtAgent.lateCard; a remote A2A agent unreachable when
// it was built): after 1 s, then after twice as long each time, up to one
// minute between tries, until it succeeds or ctx ends. Then the agent is
// hosted again under that card (its extended card made by extend, when
// set), through host (given the new handler, its card and options),
// which reports false when the agent is no longer the one hosted under
// that name (removed meanwhile): then nothing changes. Executions are not
// affected: each dials the remote itself.
func watchCard(ctx context.Context, log *slog.Logger, name string, b *builtAgent, opts server.HandlerOptions, extend func(a2a.AgentCard) *a2a.AgentCard,
	eng *server.Engine, host func(*server.Handler, a2a.AgentCard, server.HandlerOptions) bool) {
	if b.lateCard == nil {
		return
	}
	go func() {
		for wait := time.Second; ; wait = min(2*wait, time.Minute) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			card, err := b.lateCard(ctx)
			if err != nil {
				log.Debug("the remote agent's card is still unavailable", "agent", name, "err", err, "next_try", min(2*wait, time.Minute))
				continue
			}
			o := opts
			if extend != nil {
				o.ExtendedCard = extend(card)
			}
			if host(server.NewHandler(eng, name, b.agent, card, o), card, o) {
				log.Info("the remote agent's card was fetched: the agent is served under it now", "agent", name, "card_name", card.Name)
			}
			return
		}
	}()
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
