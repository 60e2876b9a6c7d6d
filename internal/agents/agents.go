// Package agents holds the built-in agents of `a2abridge serve`: echo,
// chat and slow. They are small, complete examples of the server.Agent API.
package agents

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/server"
)

// card is a built-in agent's card. Its input modes take any part: echo
// returns what it is sent, chat and slow read its text and pass over the
// rest.
func card(name, desc string, skill a2a.AgentSkill) a2a.AgentCard {
	return a2a.AgentCard{
		Name: name, Description: desc, Version: "1.0.0",
		Provider:           &a2a.AgentProvider{Organization: "a2abridge", URL: "https://github.com/a2abridge/a2abridge"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, StateTransitionHistory: true},
		DefaultInputModes:  []string{"text/plain", "application/json", "*/*"},
		DefaultOutputModes: []string{"text/plain", "application/json", "application/octet-stream"},
		Skills:             []a2a.AgentSkill{skill},
	}
}

// EchoChunk is the number of parts (and, for one long text, the text
// length in bytes) the echo agent puts in each streamed artifact chunk.
const EchoChunk = 64

// Echo answers every message with a completed task whose artifact "echo"
// repeats the message's parts. The artifact is streamed in chunks: one
// artifact-update per part, and long texts split into EchoChunk-byte
// pieces. The task's artifact holds the message's parts as they were
// sent: a text part that follows another is sent in the update of the
// part before it (the first part of an appended update continues the
// artifact's last text part, internal/fold.Joins).
type Echo struct{}

// Card returns the echo agent's card.
func (Echo) Card() a2a.AgentCard {
	return card("echo", "Echoes each message back as an artifact, streamed in chunks.",
		a2a.AgentSkill{ID: "echo", Name: "Echo", Description: "Returns the parts it is sent.", Tags: []string{"echo", "test"},
			Examples: []string{"hello"}})
}

// Inline implements server.InlineAgent: Execute returns once the task is
// completed.
func (Echo) Inline() bool { return true }

// Execute implements server.Agent.
func (Echo) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	chunks := chunkParts(req.Message.Parts)
	artID := a2a.NewID()
	for i, c := range chunks {
		a := a2a.Artifact{ArtifactID: artID, Name: "echo", Parts: c}
		if err := t.AddArtifact(ctx, a, i > 0, i == len(chunks)-1); err != nil {
			return err
		}
	}
	if len(chunks) == 0 {
		if err := t.AddArtifact(ctx, a2a.Artifact{ArtifactID: artID, Name: "echo", Parts: []a2a.Part{}}, false, true); err != nil {
			return err
		}
	}
	return t.Complete(ctx, "")
}

// chunkParts returns the parts of each artifact update that echoes
// parts: one part each, long text parts split so that streams show
// several chunks, except that a part the fold would join to the chunk
// before it (fold.Joins), though it is a part of its own, is sent in that
// chunk's update, where it stays apart.
func chunkParts(parts []a2a.Part) [][]a2a.Part {
	var out [][]a2a.Part
	add := func(p a2a.Part, first bool) {
		if n := len(out); first && n > 0 && fold.Joins(out[n-1][len(out[n-1])-1], p) {
			out[n-1] = append(out[n-1], p)
			return
		}
		out = append(out, []a2a.Part{p})
	}
	for _, p := range parts {
		tp, ok := p.Content.(a2a.Text)
		if !ok || len(string(tp)) <= EchoChunk {
			add(p, true)
			continue
		}
		s := string(tp)
		for len(s) > 0 {
			n := min(EchoChunk, len(s))
			// Do not split a UTF-8 sequence.
			for n < len(s) && n > 0 && s[n]&0xC0 == 0x80 {
				n--
			}
			if n == 0 {
				n = min(EchoChunk, len(s))
			}
			add(a2a.Part{Content: a2a.Text(s[:n]), MediaType: p.MediaType, Filename: p.Filename, Metadata: p.Metadata}, s == string(tp))
			s = s[n:]
		}
	}
	return out
}

// Chat is a multi-turn agent: it echoes each turn and waits in
// input-required; a message "bye" completes the task.
type Chat struct{}

// Card returns the chat agent's card.
func (Chat) Card() a2a.AgentCard {
	return card("chat", "A multi-turn conversation: echoes each turn and asks for more; say \"bye\" to finish.",
		a2a.AgentSkill{ID: "chat", Name: "Chat", Description: "Multi-turn echo that waits for input.", Tags: []string{"chat", "multi-turn"},
			Examples: []string{"hello", "bye"}})
}

// Inline implements server.InlineAgent: each turn's Execute returns
// once the task is input-required or completed.
func (Chat) Inline() bool { return true }

// Execute implements server.Agent.
func (Chat) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	text := textOf(req.Message)
	turn := 0
	for _, m := range req.Task.History {
		if m.Role == a2a.RoleUser {
			turn++
		}
	}
	if strings.EqualFold(strings.TrimSpace(text), "bye") {
		return t.Complete(ctx, fmt.Sprintf("Goodbye! (%d turns)", turn))
	}
	return t.RequireInput(ctx, fmt.Sprintf("turn %d: you said %q. Say more, or \"bye\" to finish.", turn, text))
}

// textOf returns the text of m's text parts, one line each (a newline
// between two parts).
func textOf(m a2a.Message) string {
	var b strings.Builder
	n := 0
	for _, p := range m.Parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			if n > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(string(tp))
			n++
		}
	}
	return b.String()
}

// Slow works for a number of seconds (the message text if it is a number,
// else Seconds), sending a progress status every Step; it honours
// cancellation.
type Slow struct {
	Seconds int           // default duration; 0 means 10
	Step    time.Duration // progress interval; 0 means 1 s
}

// Card returns the slow agent's card.
func (s Slow) Card() a2a.AgentCard {
	return card("slow", "Works for N seconds (send a number; default 10) with progress updates; cancellable.",
		a2a.AgentSkill{ID: "slow", Name: "Slow", Description: "A long-running, cancellable task.", Tags: []string{"slow", "cancel", "test"},
			Examples: []string{"5"}})
}

// Execute implements server.Agent.
func (s Slow) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	secs := s.Seconds
	if secs <= 0 {
		secs = 10
	}
	if n, err := strconv.Atoi(strings.TrimSpace(textOf(req.Message))); err == nil && n >= 0 && n <= 3600 {
		secs = n
	}
	step := s.Step
	if step <= 0 {
		step = time.Second
	}
	total := time.Duration(secs) * time.Second
	if err := t.Working(ctx, fmt.Sprintf("working for %s", total)); err != nil {
		return err
	}
	start := time.Now()
	tk := time.NewTicker(step)
	defer tk.Stop()
	for time.Since(start) < total {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tk.C:
			done := min(time.Since(start), total)
			if err := t.Working(ctx, fmt.Sprintf("progress: %d%%", int(100*done/total))); err != nil {
				return err
			}
		}
	}
	a := a2a.Artifact{ArtifactID: a2a.NewID(), Name: "result", Parts: []a2a.Part{a2a.NewTextPart(fmt.Sprintf("done after %s", total))}}
	if err := t.AddArtifact(ctx, a, false, true); err != nil {
		return err
	}
	return t.Complete(ctx, "")
}
