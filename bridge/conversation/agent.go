package conversation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/outsize"
	"github.com/a2abridge/a2abridge/server"
)

// ExtensionScenario is the URI of the Agent Card extension (A2A 1.0
// §4.6) that a scenario's card declares: the card is bound to the
// scenario in its URL (a config64, or a named scenario of the server),
// and the agent behind it is a conversation of several participants with
// one task per conversation. Its params: scenarioId, startingAgentId (who
// the client speaks as), participants (ids), turnPolicy, maxTurns.
const ExtensionScenario = "https://a2abridge.dev/ext/conversation-scenario/v1"

// Metadata keys of the messages and artifacts of a conversation.
const (
	// MetaParticipantID is the id of the participant whose turn a
	// message or artifact is (the external participant's own messages,
	// role user, carry none).
	MetaParticipantID = "participantId"
	// MetaDisplayName is that participant's display name.
	MetaDisplayName = "displayName"
	// MetaTurn is the turn's number, from 1 (the client's first message).
	MetaTurn = "turn"
	// MetaSkipped marks the record of a participant that failed and was
	// skipped (Rules.OnParticipantFailure "skip"); MetaReason says why.
	MetaSkipped = "skipped"
	// MetaReason is why a participant was skipped.
	MetaReason = "reason"
	// MetaSystem marks a message of the conversation itself (status
	// messages: whose turn it is, how it ended), not a turn.
	MetaSystem = "system"
	// MetaOutcome is how the conversation ended, on its last system
	// message: "completed", "failed" or "canceled".
	MetaOutcome = "outcome"
	// MetaClose, true in a message's metadata (or in a DataPart object),
	// closes the conversation after that turn.
	MetaClose = "close"
	// MetaNext, a participant id in a DataPart object of the moderator's
	// turn, names the next speaker.
	MetaNext = "next"
)

// Factory builds the agent of an internal participant. The a2abridge
// server passes one that builds the participant's Kind from its Config
// (any kind it hosts: openai, http, a2a, exec, the built-ins); a Go
// program can return agents of its own. An agent that implements
// io.Closer is closed by Agent.Close.
type Factory func(ctx context.Context, p Participant) (server.Agent, error)

// Options configure New.
type Options struct {
	// Factory builds the internal participants; required.
	Factory Factory
	// Logger logs participants' failures; nil: slog.Default().
	Logger *slog.Logger
	// Limits are ceilings over the scenario's rules (see Limits): a
	// server that hosts scenarios its callers wrote passes the ones of
	// its Allow.
	Limits Limits
}

// Agent is a conversation: a server.Agent whose task is the conversation
// of a Scenario's participants (see the package doc). It implements
// server.Canceler and server.CancelMessenger. Serve it with
// server.HandlerOptions.NoPush (push notifications are not offered on a
// conversation).
type Agent struct {
	s     *Scenario
	rules Rules                   // s.Rules with Options.Limits applied: the effective limits
	parts map[string]server.Agent // internal participants by id
	log   *slog.Logger
}

// New validates s and builds its internal participants with o.Factory.
// An error names the participant ("agents[1] (bob): …"); the participants
// already built are closed.
func New(ctx context.Context, s *Scenario, o Options) (*Agent, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if o.Factory == nil {
		return nil, errors.New("conversation: Options.Factory is required")
	}
	a := &Agent{s: s, rules: o.Limits.apply(s.Rules), parts: map[string]server.Agent{}, log: o.Logger}
	if a.log == nil {
		a.log = slog.Default()
	}
	for i, p := range s.Agents {
		if p.External {
			continue
		}
		ag, err := o.Factory(ctx, p)
		if err == nil && ag == nil {
			err = errors.New("the factory returned no agent")
		}
		if err != nil {
			a.Close()
			return nil, &FieldError{Field: fmt.Sprintf("agents[%d]", i), Reason: fmt.Sprintf("participant %q: %v", p.ID, err)}
		}
		a.parts[p.ID] = ag
	}
	return a, nil
}

// Scenario returns the agent's scenario (not to be modified).
func (a *Agent) Scenario() *Scenario { return a.s }

// Close closes the participants' agents that implement io.Closer and
// returns the first error.
func (a *Agent) Close() error {
	var first error
	for _, ag := range a.parts {
		if c, ok := ag.(io.Closer); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Card returns the scenario's Agent Card (without URL, which the server
// sets): the title as name, one skill describing the participants and who
// the client speaks as, streaming, no push notifications, and the
// ExtensionScenario extension.
func (a *Agent) Card() a2a.AgentCard {
	s := a.s
	ext := s.External()
	var b strings.Builder
	fmt.Fprintf(&b, "A conversation of %d participants in one task; you speak as %s (%q).", len(s.Agents), ext.Name(), ext.ID)
	for _, p := range s.Agents {
		fmt.Fprintf(&b, " %s (%q", p.Name(), p.ID)
		if p.Role != "" {
			fmt.Fprintf(&b, ", %s", p.Role)
		}
		if p.External {
			b.WriteString(", you)")
		} else {
			fmt.Fprintf(&b, ", %s)", p.Kind)
		}
		b.WriteString(";")
	}
	policy := s.Rules.TurnPolicy
	if policy == "" {
		policy = PolicyRoundRobin
	}
	fmt.Fprintf(&b, " Turns: %s", policy)
	if policy == PolicyModerator {
		fmt.Fprintf(&b, " (moderator %q names the next speaker with a line \"next: ID\")", s.Rules.ModeratorID)
	}
	fmt.Fprintf(&b, ", at most %d, each at most %d bytes, %d bytes in all. End it with a line \"/end\"; the task is input-required whenever it is your turn.",
		a.rules.MaxTurns, a.rules.MaxTurnBytes, a.rules.MaxTotalBytes)
	desc := s.Description
	if desc == "" {
		desc = "A multi-agent conversation: " + s.Title
	}
	ids := make([]any, len(s.Agents))
	for i, p := range s.Agents {
		ids[i] = p.ID
	}
	return a2a.AgentCard{
		Name: s.Title, Description: desc, Version: "1.0.0",
		Provider: &a2a.AgentProvider{Organization: "a2abridge", URL: "https://github.com/a2abridge/a2abridge"},
		Capabilities: a2a.AgentCapabilities{Streaming: true, StateTransitionHistory: true, Extensions: []a2a.AgentExtension{{
			URI:         ExtensionScenario,
			Description: "This card is bound to the conversation scenario in its URL: one task is one conversation of the participants below; each internal turn is an artifact-update and an agent message with participantId and displayName in metadata.",
			Params: map[string]any{"scenarioId": s.ScenarioID, "startingAgentId": s.StartingAgentID, "participants": ids,
				"turnPolicy": policy, "maxTurns": a.rules.MaxTurns, "maxTurnBytes": a.rules.MaxTurnBytes, "maxTotalBytes": a.rules.MaxTotalBytes},
		}}},
		DefaultInputModes:  []string{"text/plain", "application/json", "*/*"}, // files are passed on to the participants
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{ID: "conversation", Name: s.Title, Description: b.String(),
			Tags: []string{"conversation", "multi-agent"}, Examples: []string{"Hello everyone."}}},
	}
}

// turn is one turn of the conversation, read from the task's history.
type turn struct {
	speaker string // participant id
	msg     a2a.Message
	skipped bool
}

// turnsOf reads the turns from a conversation's history. Who sent an
// entry is decided by its place, never by what the entry says (a
// client's message may carry role agent and any metadata): the client can
// add a message to the task only when it is new or input-required
// (server: a message to a working task is refused), and this agent
// leaves it input-required only with awaitClient's status message, the
// last entry of that execution. So the first entry, and each entry right
// after an awaitClient message, is the client's: the external
// participant's turn, whatever its role and metadata. The entries in
// between are this agent's own: the internal turns (MetaParticipantID),
// skipped turns and system messages.
func (a *Agent) turnsOf(h []a2a.Message) []turn {
	var out []turn
	ext := a.s.External().ID
	client := true // the first entry is the message that created the task
	for _, m := range h {
		if client {
			out = append(out, turn{speaker: ext, msg: m})
			client = false
			continue
		}
		if awaits(m) {
			client = true
			continue
		}
		if m.Role != a2a.RoleAgent || m.Metadata == nil {
			continue
		}
		id, _ := m.Metadata[MetaParticipantID].(string)
		if _, ok := a.s.participant(id); ok && id != ext {
			sk, _ := m.Metadata[MetaSkipped].(bool)
			out = append(out, turn{speaker: id, msg: m, skipped: sk})
		}
	}
	return out
}

// metaExpected, on awaitClient's system message, is the id of the
// participant the conversation waits for (the external one).
const metaExpected = "expected"

// awaits reports whether m, one of this agent's own history entries, is
// awaitClient's status message (the client's message follows it).
func awaits(m a2a.Message) bool {
	if sys, _ := m.Metadata[MetaSystem].(bool); !sys {
		return false
	}
	_, ok := m.Metadata[metaExpected].(string)
	return ok
}

// Execute implements server.Agent: it records the client's message as
// the external participant's turn, then runs the internal participants'
// turns until it is the client's turn again (input-required) or the
// conversation ends.
func (a *Agent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	err := a.execute(ctx, req, t)
	if errors.Is(err, server.ErrTaskClosed) || errors.Is(err, errEnded) || ctx.Err() != nil {
		return nil // canceled (or shut down): the engine has settled the task
	}
	return err
}

func (a *Agent) execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	if req.Task.Status.State == a2a.TaskStateSubmitted {
		if err := t.Working(ctx, ""); err != nil {
			return err
		}
	}
	// With the server's attachments option, the client's
	// files by value are URLs already; the participants' go through
	// TaskUpdater.StoreFiles in runTurn.
	turns := a.turnsOf(req.Task.History)
	ext := a.s.External()
	var total int64
	for i, tn := range turns {
		if tn.skipped {
			continue
		}
		size := outsize.Message(&tn.msg)
		total += size
		if i != len(turns)-1 || tn.speaker != ext.ID {
			continue
		}
		// The client's new turn: the engine stored it, but it is not passed on
		// when it is over a limit.
		if size > a.rules.MaxTurnBytes {
			return a.end(ctx, t, a2a.TaskStateFailed, fmt.Sprintf("Your turn (turn %d) has %d bytes, over the conversation's limit of %d bytes per turn (maxTurnBytes).",
				len(turns), size, a.rules.MaxTurnBytes))
		}
		if total > a.rules.MaxTotalBytes {
			return a.end(ctx, t, a2a.TaskStateFailed, fmt.Sprintf("Your turn (turn %d, %d bytes) brings the conversation to %d bytes, over its limit of %d bytes (maxTotalBytes).",
				len(turns), size, total, a.rules.MaxTotalBytes))
		}
	}
	for {
		n := len(turns)
		if n > 0 {
			last := turns[n-1]
			if !last.skipped && closes(last.msg) {
				p, _ := a.s.participant(last.speaker)
				return a.end(ctx, t, a2a.TaskStateCompleted, fmt.Sprintf("%s closed the conversation after %s.", p.Name(), turnCount(n)))
			}
		}
		if n >= a.rules.MaxTurns {
			return a.end(ctx, t, a2a.TaskStateCompleted, fmt.Sprintf("The conversation reached its limit of %s.", turnCount(a.rules.MaxTurns)))
		}
		next, problem := a.next(turns)
		if next == ext.ID {
			return a.awaitClient(ctx, t, turns, problem)
		}
		if problem != "" {
			// The internal moderator named nobody: its failure.
			rec, err := a.failure(ctx, t, turns, a.s.Rules.ModeratorID, problem)
			if err != nil {
				return err
			}
			turns = append(turns, rec)
			continue
		}
		rec, err := a.runTurn(ctx, req, t, turns, next, total)
		if err != nil {
			return err
		}
		if !rec.skipped {
			total += outsize.Message(&rec.msg)
		}
		turns = append(turns, rec)
	}
}

// next returns who speaks after turns; problem is set when the moderator
// spoke last and named nobody valid (next is then the external
// participant when it is the moderator, the moderator otherwise).
func (a *Agent) next(turns []turn) (next, problem string) {
	s := a.s
	ext := s.External().ID
	if len(turns) == 0 {
		return ext, ""
	}
	last := turns[len(turns)-1]
	if s.Rules.TurnPolicy != PolicyModerator {
		for i, p := range s.Agents {
			if p.ID == last.speaker {
				return s.Agents[(i+1)%len(s.Agents)].ID, ""
			}
		}
		return ext, ""
	}
	mod := s.Rules.ModeratorID
	if last.speaker != mod {
		return mod, ""
	}
	if last.skipped {
		return ext, "" // the moderator failed and was skipped: the client decides
	}
	id, ok := nextDirective(last.msg)
	if !ok {
		return mod, fmt.Sprintf("the moderator's turn names no next speaker (a line \"next: ID\" with one of %s)", a.ids())
	}
	if _, found := s.participant(id); !found {
		return mod, fmt.Sprintf("the moderator named %q, who is not a participant (one of %s)", id, a.ids())
	}
	return id, ""
}

func (a *Agent) ids() string {
	ids := make([]string, len(a.s.Agents))
	for i, p := range a.s.Agents {
		ids[i] = p.ID
	}
	return strings.Join(ids, ", ")
}

// awaitClient leaves the task input-required with a status message that
// says who spoke last and that the client is expected.
func (a *Agent) awaitClient(ctx context.Context, t *server.TaskUpdater, turns []turn, problem string) error {
	ext := a.s.External()
	var text string
	if len(turns) == 0 {
		text = fmt.Sprintf("The conversation is waiting for %s (you).", ext.Name())
	} else {
		p, _ := a.s.participant(turns[len(turns)-1].speaker)
		text = fmt.Sprintf("%s spoke last (turn %d); it is the turn of %s (you).", p.Name(), len(turns), ext.Name())
	}
	if problem != "" {
		text += ` As the moderator, name who speaks next (a line "next: ID"): ` + problem + "."
	}
	m := t.TextMessage(text)
	m.Metadata = map[string]any{MetaSystem: true, metaExpected: ext.ID}
	return t.SetStatus(ctx, a2a.TaskStateInputRequired, m)
}

// turnCount is "1 turn", "N turns".
func turnCount(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

// end ends the conversation in state with a system message.
func (a *Agent) end(ctx context.Context, t *server.TaskUpdater, state a2a.TaskState, text string) error {
	m := t.TextMessage(text)
	m.Metadata = map[string]any{MetaSystem: true, MetaOutcome: state.String()}
	return t.SetStatus(ctx, state, m)
}

// failure handles a participant's failure per the rules: fail the
// conversation (the returned error is then that of ending it, and
// errFailed when it ended), or record the skip.
func (a *Agent) failure(ctx context.Context, t *server.TaskUpdater, turns []turn, id, reason string) (turn, error) {
	p, _ := a.s.participant(id)
	a.log.Warn("conversation participant failed", "participant", id, "reason", reason)
	if a.s.Rules.OnParticipantFailure != SkipParticipant {
		if err := a.end(ctx, t, a2a.TaskStateFailed, fmt.Sprintf("%s (%q) failed at turn %d: %s", p.Name(), id, len(turns)+1, reason)); err != nil {
			return turn{}, err
		}
		return turn{}, errEnded
	}
	m := t.TextMessage(fmt.Sprintf("%s could not take turn %d (%s) and was skipped.", p.Name(), len(turns)+1, reason))
	m.Metadata = map[string]any{MetaParticipantID: id, MetaDisplayName: p.Name(), MetaTurn: len(turns) + 1, MetaSkipped: true, MetaReason: reason}
	if err := t.SetStatus(ctx, a2a.TaskStateWorking, m); err != nil {
		return turn{}, err
	}
	return turn{speaker: id, msg: *m, skipped: true}, nil
}

// errEnded ends execute after the conversation was failed.
var errEnded = errors.New("conversation ended")

// runTurn runs participant id's turn: its agent gets the conversation so
// far, and its answer becomes an artifact and an agent message.
// total is the bytes of the turns so far: a turn that would take the
// conversation past MaxTotalBytes ends it failed, before it is stored.
func (a *Agent) runTurn(ctx context.Context, req *server.Request, t *server.TaskUpdater, turns []turn, id string, total int64) (turn, error) {
	p, _ := a.s.participant(id)
	msg, hist, ctxHist := a.transcriptFor(id, turns, t.ContextID())
	timeout := a.s.Rules.Timeout()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	task := a2a.Task{ID: a2a.NewID(), ContextID: t.ContextID() + "/" + id, History: append(hist, msg)}
	msg.TaskID, msg.ContextID = task.ID, task.ContextID
	task.History[len(task.History)-1] = msg
	res, err := server.RunAgent(tctx, a.parts[id], &server.Request{
		Message: msg, Task: task, Principal: req.Principal,
		Params: a2a.SendMessageRequest{Message: msg, Configuration: &a2a.SendMessageConfiguration{Blocking: new(true)}},
	}, server.RunOptions{ContextHistory: ctxHist, MaxOutputBytes: a.runLimit(t)})
	if ctx.Err() != nil {
		return turn{}, ctx.Err()
	}
	reason := ""
	parts := answerParts(res, msg.MessageID)
	var size int64
	switch st := res.Status.State; {
	case errors.Is(err, server.ErrOutputLimit):
		reason = fmt.Sprintf("its output passed %d bytes and it was stopped (the conversation's limit is %d bytes per turn, maxTurnBytes)",
			a.runLimit(t), a.rules.MaxTurnBytes)
	case tctx.Err() != nil:
		reason = fmt.Sprintf("no answer within the turn timeout of %s", timeout)
	case st == a2a.TaskStateFailed || st == a2a.TaskStateRejected || st == a2a.TaskStateCanceled || err != nil:
		reason = "its task ended " + st.String()
		if res.Status.Message != nil {
			if txt := textOf(*res.Status.Message); txt != "" {
				reason += ": " + clip(txt, 500)
			}
		}
	case len(parts) == 0:
		reason = "it answered nothing"
	default:
		// Files by value become attachment URLs of the conversation's
		// task (when the server stores attachments).
		stored, err := t.StoreFiles(ctx, parts)
		switch {
		case errors.Is(err, server.ErrAttachmentTooLarge):
			reason = "its answer has a file over the attachment size limit (" + strings.TrimPrefix(err.Error(), server.ErrAttachmentTooLarge.Error()+": ") + ")"
		case err != nil:
			return turn{}, err
		default:
			parts = stored
			if size = outsize.Parts(parts); size > a.rules.MaxTurnBytes {
				reason = fmt.Sprintf("its answer has %d bytes, over the conversation's limit of %d bytes per turn (maxTurnBytes)", size, a.rules.MaxTurnBytes)
			}
		}
	}
	if reason != "" {
		rec, err := a.failure(ctx, t, turns, id, reason)
		return rec, err
	}
	if total+size > a.rules.MaxTotalBytes {
		if err := a.end(ctx, t, a2a.TaskStateFailed, fmt.Sprintf("%s (%q) answered %d bytes at turn %d, which would bring the conversation to %d bytes, over its limit of %d bytes (maxTotalBytes); the answer was not kept.",
			p.Name(), id, size, len(turns)+1, total+size, a.rules.MaxTotalBytes)); err != nil {
			return turn{}, err
		}
		return turn{}, errEnded
	}
	n := len(turns) + 1
	meta := map[string]any{MetaParticipantID: id, MetaDisplayName: p.Name(), MetaTurn: n}
	if c, _ := res.Metadata[MetaClose].(bool); c {
		meta[MetaClose] = true
	}
	art := a2a.Artifact{ArtifactID: fmt.Sprintf("turn-%d", n), Name: p.Name(), Parts: parts, Metadata: meta}
	if err := t.AddArtifact(ctx, art, false, true); err != nil {
		return turn{}, err
	}
	m := t.Message(parts...)
	m.Metadata = meta
	if err := t.SetStatus(ctx, a2a.TaskStateWorking, m); err != nil {
		return turn{}, err
	}
	return turn{speaker: id, msg: *m}, nil
}

// runLimit is the output a participant may emit in one turn before it is
// stopped: twice the turn limit (an agent may send its answer both as
// artifacts and as messages) and room for one file that the server stores
// as an attachment (answered by value, it is passed on as a URL).
func (a *Agent) runLimit(t *server.TaskUpdater) int64 {
	return 2*a.rules.MaxTurnBytes + 64<<10 + t.MaxFileBytes()
}

// answerParts is what a participant's task answered: the parts of its
// artifacts, else those of its agent messages after the request (the
// status messages included), else none; empty text parts left out.
func answerParts(t a2a.Task, reqID string) []a2a.Part {
	var out []a2a.Part
	add := func(parts []a2a.Part) {
		for _, p := range parts {
			if tp, ok := p.Content.(a2a.Text); ok && string(tp) == "" {
				continue // an empty chunk (a stream's end) says nothing
			}
			out = append(out, p)
		}
	}
	for _, art := range t.Artifacts {
		add(art.Parts)
	}
	if len(out) > 0 {
		return out
	}
	after := false
	for _, m := range t.History {
		if m.MessageID == reqID {
			after = true
			continue
		}
		if after && m.Role == a2a.RoleAgent {
			add(m.Parts)
		}
	}
	return out
}

// transcriptFor builds what participant id sees of turns: the turns since
// it last spoke as one new user message (each part of another speaker
// prefixed "Name: " when it is text), the earlier turns as a task history
// (its own turns as agent messages, the others' as user messages), and
// the same earlier turns as the tasks of a context history (the others'
// turns as a task's user messages, its own following turn as that task's
// artifact), which agents that build a conversation from their contextId
// (bridge/openai) read. Skipped turns are left out.
func (a *Agent) transcriptFor(id string, turns []turn, ctxID string) (a2a.Message, []a2a.Message, []a2a.Task) {
	lastOwn := -1
	for i, tn := range turns {
		if tn.speaker == id && !tn.skipped {
			lastOwn = i
		}
	}
	var hist []a2a.Message
	var tasks []a2a.Task
	var pending []a2a.Message
	for i, tn := range turns[:lastOwn+1] {
		if tn.skipped {
			continue
		}
		if tn.speaker == id {
			own := a2a.Message{MessageID: tn.msg.MessageID, Role: a2a.RoleAgent, Parts: tn.msg.Parts, Metadata: speakerMeta(a.s, id)}
			hist = append(hist, own)
			tasks = append(tasks, a2a.Task{ID: fmt.Sprintf("%s-%d", ctxID, i), ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
				History: pending, Artifacts: []a2a.Artifact{{ArtifactID: fmt.Sprintf("turn-%d", i+1), Parts: tn.msg.Parts}}})
			pending = nil
			continue
		}
		um := a.asUser(tn)
		hist = append(hist, um)
		pending = append(pending, um)
	}
	// The new message: every turn since its last one.
	msg := a2a.NewMessage(a2a.RoleUser)
	speakers := []any{}
	for _, tn := range turns[lastOwn+1:] {
		if tn.skipped {
			continue
		}
		um := a.asUser(tn)
		msg.Parts = append(msg.Parts, um.Parts...)
		speakers = append(speakers, tn.speaker)
	}
	if len(msg.Parts) == 0 {
		msg.Parts = []a2a.Part{a2a.NewTextPart("(It is your turn.)")}
	}
	msg.Metadata = map[string]any{"speakers": speakers}
	if len(speakers) > 0 {
		last := speakers[len(speakers)-1].(string)
		msg.Metadata[MetaParticipantID] = last
		p, _ := a.s.participant(last)
		msg.Metadata[MetaDisplayName] = p.Name()
	}
	return msg, hist, tasks
}

// asUser is another participant's turn as a user message to the one
// whose turn it is: text prefixed with the speaker's name, the speaker in
// metadata.
func (a *Agent) asUser(tn turn) a2a.Message {
	p, _ := a.s.participant(tn.speaker)
	parts := make([]a2a.Part, 0, len(tn.msg.Parts))
	for _, pt := range tn.msg.Parts {
		if tp, ok := pt.Content.(a2a.Text); ok {
			pt.Content = a2a.Text(p.Name() + ": " + string(tp))
		}
		parts = append(parts, pt)
	}
	return a2a.Message{MessageID: tn.msg.MessageID, Role: a2a.RoleUser, Parts: parts, Metadata: speakerMeta(a.s, tn.speaker)}
}

func speakerMeta(s *Scenario, id string) map[string]any {
	p, _ := s.participant(id)
	return map[string]any{MetaParticipantID: id, MetaDisplayName: p.Name()}
}

// Cancel implements server.Canceler: a running turn's participant sees
// its context cancelled with the conversation's; there is nothing else to
// release.
func (a *Agent) Cancel(ctx context.Context, task a2a.Task) error { return nil }

// CancelMessage implements server.CancelMessenger: the canceled status
// carries a final system message (outcome canceled).
func (a *Agent) CancelMessage(task a2a.Task) *a2a.Message {
	n := len(a.turnsOf(task.History))
	m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart(fmt.Sprintf("The conversation was canceled after %s.", turnCount(n))))
	m.Metadata = map[string]any{MetaSystem: true, MetaOutcome: a2a.TaskStateCanceled.String()}
	return &m
}

// closes reports whether a turn closes the conversation: MetaClose true
// in its metadata or in a DataPart object, a first or last non-empty text
// line "/end" or "/close", or a moderator's "next: end" ("next: close").
func closes(m a2a.Message) bool {
	if c, _ := m.Metadata[MetaClose].(bool); c {
		return true
	}
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if c, _ := d.Object()[MetaClose].(bool); c {
				return true
			}
		}
	}
	for _, l := range edgeLines(textOf(m)) {
		switch strings.ToLower(l) {
		case "/end", "/close":
			return true
		}
	}
	if id, ok := nextDirective(m); ok && (strings.EqualFold(id, "end") || strings.EqualFold(id, "close")) {
		return true
	}
	return false
}

// nextDirective reads the next speaker a moderator's turn names: a
// DataPart object {"next": ID}, else a first or last non-empty text line
// "next: ID" (case-insensitive "next", spaces trimmed).
func nextDirective(m a2a.Message) (string, bool) {
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if id, ok := d.Object()[MetaNext].(string); ok && id != "" {
				return id, true
			}
		}
	}
	for _, l := range edgeLines(textOf(m)) {
		if len(l) > 5 && strings.EqualFold(l[:5], "next:") {
			if id := strings.TrimSpace(l[5:]); id != "" {
				return strings.Trim(id, "`*\"'. "), true
			}
		}
	}
	return "", false
}

// edgeLines returns the first and the last non-empty line of s, trimmed.
func edgeLines(s string) []string {
	var out []string
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
			break
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			out = append(out, l)
			break
		}
	}
	return out
}

func textOf(m a2a.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(string(tp))
		}
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
