package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/egress"
	"github.com/a2abridge/a2abridge/server"

	"github.com/a2abridge/a2abridge/bridge/command"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/bridge/simple"
)

// The bridge kinds: agents that are adapters to what people already run.
// Each is a public package under bridge/; here the config
// is decoded into its Config and its agent built.
func init() {
	registerKind(kindFunc[command.Config]{name: "exec", build: buildExec}, false)
	registerKind(kindFunc[simple.Config]{name: "http", build: buildHTTP}, false)
	registerKind(kindFunc[openai.Config]{name: "openai", build: buildOpenAI}, false)
	registerKind(kindFunc[remote.Config]{name: "a2a", build: buildA2A}, false)
}

// egressResolveTimeout bounds the lookup of a bridge's host when it is
// registered.
const egressResolveTimeout = 2 * time.Second

// checkEgress refuses, when a bridge is registered, a configured URL
// (under key) whose host is or resolves to a link-local or cloud metadata
// address that allow_hosts does not list (internal/egress); each
// connection is checked again when it is made. At startup only a literal
// address is checked (the gateway does not wait on DNS before it
// serves); through the admin API the host is resolved too. A URL that
// does not parse, and a host that does not resolve, are left to the
// kind's own checks and to the dial.
func checkEgress(ctx context.Context, b *Build, key, rawURL string, allow []string) error {
	p, err := egress.New(rawURL, allow, "allow_hosts")
	if err != nil {
		if strings.HasPrefix(err.Error(), "allow_hosts") {
			return err
		}
		return nil
	}
	timeout := egressResolveTimeout
	if b.startup {
		timeout = 0
	}
	if err := p.CheckResolved(ctx, timeout); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// buildA2A builds an a2a agent, its card derived from the remote's (name,
// description, skills, modes, streaming; our URL and security). A remote
// that cannot be reached at startup does not stop the server: its card is
// then the entry's card keys over a generic one (a warning says so) until
// the remote's card can be fetched (watchCard tries again in the
// background), and executions dial the remote when they run.
func buildA2A(ctx context.Context, b *Build) (*Built, error) {
	var c remote.Config
	if err := b.Decode(&c); err != nil {
		return nil, err
	}
	c.CheckURL = b.CheckURL
	if err := checkEgress(ctx, b, "url", c.URL, c.AllowHosts); err != nil {
		return nil, err
	}
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
	built := &Built{Agent: a, Close: a.Close}
	if b.startup {
		// The gateway starts serving without waiting for this remote: the
		// fetch runs meanwhile (bounded by card_timeout), and the gateway
		// takes its card if it came in time (startupCardWait), else serves
		// the stand-in until watchCard gets it.
		built.Card = baseCard(b.Name, "A remote A2A agent (its Agent Card has not been fetched yet).", a.Skill())
		built.LateCard = derive
		built.fetched = make(chan struct{})
		go func() {
			defer close(built.fetched)
			_, built.fetchErr = a.RemoteCard(context.WithoutCancel(ctx))
		}()
		return built, nil
	}
	card, err := derive(ctx)
	if err != nil {
		b.Logger.Warn("the remote agent's card could not be fetched; serving a generic card until it can be", "agent", b.Name, "err", err)
		card = baseCard(b.Name, "A remote A2A agent (its Agent Card could not be fetched yet).", a.Skill())
		built.LateCard = derive
	}
	built.Card = card
	return built, nil
}

// watchCard fetches in the background the card of an agent built with a
// stand-in card (Built.LateCard; a remote A2A agent unreachable when
// it was built): after 1 s, then after twice as long each time, up to one
// minute between tries, until it succeeds or ctx ends. Then the agent is
// hosted again under that card (its extended card made by extend, when
// set), through host (given the new handler, its card and options),
// which reports false when the agent is no longer the one hosted under
// that name (removed meanwhile): then nothing changes. Executions are not
// affected: each dials the remote itself.
func watchCard(ctx context.Context, log *slog.Logger, name string, b *Built, opts server.HandlerOptions, extend func(a2a.AgentCard) *a2a.AgentCard,
	eng *server.Engine, host func(*server.AgentHandler, a2a.AgentCard, server.HandlerOptions) bool) {
	if b.LateCard == nil {
		return
	}
	go func() {
		for wait := time.Second; ; wait = min(2*wait, time.Minute) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			card, err := b.LateCard(ctx)
			if err != nil {
				log.Debug("the remote agent's card is still unavailable", "agent", name, "err", err, "next_try", min(2*wait, time.Minute))
				continue
			}
			o := opts
			if extend != nil {
				o.ExtendedCard = extend(card)
			}
			if host(server.NewHandler(eng, name, b.Agent, card, o), card, o) {
				log.Info("the remote agent's card was fetched: the agent is served under it now", "agent", name, "card_name", card.Name)
			}
			return
		}
	}()
}

func buildOpenAI(ctx context.Context, b *Build) (*Built, error) {
	var c openai.Config
	if err := b.Decode(&c); err != nil {
		return nil, err
	}
	c.CheckURL = b.CheckURL
	if err := checkEgress(ctx, b, "base_url", c.BaseURL, c.AllowHosts); err != nil {
		return nil, err
	}
	a, err := openai.New(c)
	if err != nil {
		return nil, err
	}
	built := &Built{Agent: a, Card: baseCard(b.Name, "The model "+c.Model+" of an OpenAI-compatible endpoint.", a.Skill()), Close: a.Close}
	if m := a.Methods(); m != nil { // ai/chat, ai/embeddings, ai/rerank
		built.Methods = m
		built.Card.Capabilities.Extensions = append(built.Card.Capabilities.Extensions, a.CardExtension())
	}
	return built, nil
}

func buildHTTP(ctx context.Context, b *Build) (*Built, error) {
	var c simple.Config
	if err := b.Decode(&c); err != nil {
		return nil, err
	}
	if err := checkEgress(ctx, b, "url", c.URL, c.AllowHosts); err != nil {
		return nil, err
	}
	a, err := simple.New(c)
	if err != nil {
		return nil, err
	}
	return &Built{Agent: a, Card: baseCard(b.Name, "An HTTP service, answering in the simple dialect.", a.Skill()), Close: a.Close}, nil
}

func buildExec(ctx context.Context, b *Build) (*Built, error) {
	var c command.Config
	if err := b.Decode(&c); err != nil {
		return nil, err
	}
	c.Logger = b.Logger.With("agent", b.Name)
	a, err := command.New(c)
	if err != nil {
		return nil, err
	}
	return &Built{Agent: a, Card: baseCard(b.Name, "Runs "+a.Skill().Name+" for each message.", a.Skill()), Close: a.Close}, nil
}
