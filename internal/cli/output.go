package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// printable replaces control characters (ANSI escapes from a hostile
// server, say) in text shown to a person.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return '�'
	}, s)
}

func artifactLabel(a *a2a.Artifact) string {
	if a.Name != "" {
		return "[" + printable(a.Name) + "] "
	}
	return ""
}

// wireEvent encodes ev as the version spoken has it on the wire: over 0.3
// the event with its "kind"; over 1.0 the bare Task (GetTask, CancelTask)
// or, wrapped, the SendMessageResponse or StreamResponse ({"task": …},
// {"statusUpdate": …}, …).
func (e *clientEnv) wireEvent(ev a2a.Event, wrapped bool) ([]byte, error) {
	switch {
	case e.spoken != a2a.Version10:
		return v03.MarshalEvent(ev)
	case wrapped:
		return v10.AppendStreamResponse(nil, ev)
	}
	return v10.AppendEvent(nil, ev)
}

// printResult prints a SendMessage (wrapped), GetTask or CancelTask result.
func (e *clientEnv) printResult(ev a2a.Event, took time.Duration, wrapped bool) error {
	if e.jsonOut() {
		b, err := e.wireEvent(ev, wrapped)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	e.printHuman(ev, took)
	return nil
}

func (e *clientEnv) printHuman(ev a2a.Event, took time.Duration) {
	w := e.stdout
	switch v := ev.(type) {
	case *a2a.Task:
		fmt.Fprintf(w, "Task %s  %s", v.ID, e.paint(v.Status.State, strings.ToUpper(v.Status.State.String())))
		if took > 0 {
			fmt.Fprintf(w, "  (%s)", took.Round(time.Millisecond))
		}
		fmt.Fprintf(w, "\n  context  %s\n", v.ContextID)
		if v.Status.Message != nil {
			fmt.Fprintf(w, "  status   %s\n", partsText(v.Status.Message.Parts))
		}
		if !v.Status.Timestamp.IsZero() {
			fmt.Fprintf(w, "  updated  %s\n", v.Status.Timestamp.Format(time.RFC3339))
		}
		for _, a := range v.Artifacts {
			fmt.Fprintf(w, "  artifact %s%s\n", artifactLabel(&a), partsText(a.Parts))
		}
		if len(v.History) > 0 {
			fmt.Fprintf(w, "  history  %d message(s)\n", len(v.History))
			for _, m := range v.History {
				fmt.Fprintf(w, "    %-5s  %s\n", m.Role, partsText(m.Parts))
			}
		}
	case *a2a.Message:
		fmt.Fprintf(w, "Message %s from %s\n  %s\n", v.MessageID, v.Role, partsText(v.Parts))
	}
}

// streamPrinter prints a stream's events. Human output: one line per
// event, except that the chunks of an artifact (artifact-updates with
// append=true of the artifact the current line shows) continue that line
// as they arrive. JSON output: one line per event,
// {"eventId":ID,"result":EVENT} (eventId omitted when the server sent
// none; "resumed"/"gap" added on the first event after a resumption).
type streamPrinter struct {
	e     *clientEnv
	start time.Time
	json  bool
	// The artifact whose chunks continue the current line.
	open                   bool
	openTask, openArtifact string
}

func (s *streamPrinter) closeLine() {
	if s.open {
		fmt.Fprintln(s.e.stdout)
		s.open = false
	}
}

func (s *streamPrinter) print(ev client.StreamEvent) error {
	out := s.e.stdout
	if s.json {
		if ev.Resumed {
			fmt.Fprintf(s.e.stderr, "a2abridge: stream resumed (gap: %v)\n", ev.Gap)
		}
		b, err := s.e.wireEvent(ev.Event, true)
		if err != nil {
			return err
		}
		line := make([]byte, 0, len(b)+64)
		line = append(line, '{')
		if ev.ID != "" {
			id, err := jsontext.AppendQuote(nil, ev.ID)
			if err != nil {
				return err
			}
			line = append(line, `"eventId":`...)
			line = append(line, id...)
			line = append(line, ',')
		}
		if ev.Resumed {
			line = append(line, `"resumed":true,`...)
		}
		if ev.Gap {
			line = append(line, `"gap":true,`...)
		}
		line = append(line, `"result":`...)
		line = append(line, b...)
		line = append(line, "}\n"...)
		_, err = out.Write(line)
		return err
	}
	prefix := fmt.Sprintf("%7s", fmt.Sprintf("+%dms", time.Since(s.start).Milliseconds()))
	if ev.ID != "" {
		prefix += " #" + printable(ev.ID)
	}
	if ev.Gap {
		s.closeLine()
		fmt.Fprintf(out, "%s  (stream resumed; the server did not replay, so updates in between may be missing)\n", prefix)
	} else if ev.Resumed {
		s.closeLine()
		fmt.Fprintf(out, "%s  (stream resumed)\n", prefix)
	}
	switch v := ev.Event.(type) {
	case *a2a.TaskArtifactUpdateEvent:
		a := &v.Artifact
		if v.Append && s.open && s.openTask == v.TaskID && s.openArtifact == a.ArtifactID {
			fmt.Fprint(out, partsText(a.Parts))
		} else {
			s.closeLine()
			more := ""
			if v.Append {
				more = "+append "
			}
			fmt.Fprintf(out, "%s  artifact %s%s%s", prefix, artifactLabel(a), more, partsText(a.Parts))
			s.open, s.openTask, s.openArtifact = true, v.TaskID, a.ArtifactID
		}
		if v.LastChunk {
			fmt.Fprint(out, " +last")
			s.closeLine()
		}
		return nil
	}
	s.closeLine()
	switch v := ev.Event.(type) {
	case *a2a.Task:
		fmt.Fprintf(out, "%s  task %s %s (context %s)\n", prefix, v.ID, s.e.paint(v.Status.State, v.Status.State.String()), v.ContextID)
	case *a2a.TaskStatusUpdateEvent:
		line := fmt.Sprintf("%s  status %s", prefix, s.e.paint(v.Status.State, v.Status.State.String()))
		if v.Status.Message != nil {
			line += ": " + partsText(v.Status.Message.Parts)
		}
		if v.Final {
			line += "  [final]"
		}
		fmt.Fprintln(out, line)
	case *a2a.Message:
		fmt.Fprintf(out, "%s  message from %s: %s\n", prefix, v.Role, partsText(v.Parts))
	}
	return nil
}

// printCard prints a card and the interface the client calls (in; or
// selErr when none fits).
func (e *clientEnv) printCard(c *a2a.AgentCard, in *client.Interface, selErr error) error {
	if e.jsonOut() {
		var b []byte
		var err error
		if e.spoken == a2a.Version10 {
			b, err = v10.MarshalAgentCard(c, v10.CardOptions{})
		} else {
			b, err = v03.MarshalAgentCard(c)
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	w := e.stdout
	fmt.Fprintf(w, "%s\n", printable(fmt.Sprintf("%s %s  (A2A %s)\n  %s", c.Name, c.Version, strings.Join(cardVersions(c), ", "), c.Description)))
	for _, i := range c.SupportedInterfaces {
		line := fmt.Sprintf("  interface  %s (%s %s", i.URL, i.Transport, i.ProtocolVersion)
		if i.Tenant != "" {
			line += ", tenant " + i.Tenant
		}
		fmt.Fprintln(w, printable(line+")"))
	}
	if selErr != nil {
		fmt.Fprintf(w, "  calls      none: %s\n", printable(selErr.Error()))
	} else {
		fmt.Fprintf(w, "  calls      %s\n", printable(in.String()))
	}
	fmt.Fprintf(w, "  streaming %v, push notifications %v, state history %v, extended card %v\n",
		c.Capabilities.Streaming, c.Capabilities.PushNotifications, c.Capabilities.StateTransitionHistory, c.SupportsAuthenticatedExtendedCard || c.Capabilities.ExtendedAgentCard)
	fmt.Fprintf(w, "  input      %s\n  output     %s\n", strings.Join(c.DefaultInputModes, ", "), strings.Join(c.DefaultOutputModes, ", "))
	names := make([]string, 0, len(c.SecuritySchemes))
	for name := range c.SecuritySchemes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "  security   %s: %s\n", name, c.SecuritySchemes[name].SchemeType())
	}
	for _, s := range c.Skills {
		fmt.Fprintf(w, "  skill      %s\n", printable(s.ID+": "+s.Description))
	}
	return nil
}

// cardVersions lists the protocol versions of a card's interfaces, in
// their order, each once.
func cardVersions(c *a2a.AgentCard) []string {
	var out []string
	for _, i := range c.SupportedInterfaces {
		if !slices.Contains(out, i.ProtocolVersion) {
			out = append(out, i.ProtocolVersion)
		}
	}
	if len(out) == 0 {
		out = append(out, orDefault(c.ProtocolVersion, "?"))
	}
	return out
}

// printTasks prints a ListTasks result: with --json the ListTasksResponse
// as on the wire (A2A 1.0 §3.1.4), one line; else a table of the tasks and
// the next page's token.
func (e *clientEnv) printTasks(r *a2a.ListTasksResponse, includeArtifacts bool) error {
	if e.jsonOut() {
		b, err := v10.AppendListTasksResponse(nil, r, includeArtifacts)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	w := e.stdout
	if len(r.Tasks) == 0 {
		fmt.Fprintln(w, "no tasks")
	} else {
		fmt.Fprintf(w, "%-36s  %-14s  %-20s  %s\n", "TASK", "STATE", "UPDATED", "CONTEXT")
	}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		updated := ""
		if !t.Status.Timestamp.IsZero() {
			updated = t.Status.Timestamp.UTC().Format(time.RFC3339)
		}
		state := fmt.Sprintf("%-14s", t.Status.State)
		fmt.Fprintf(w, "%-36s  %s  %-20s  %s\n", printable(t.ID), e.paint(t.Status.State, state), updated, printable(t.ContextID))
	}
	fmt.Fprintf(w, "%d of %d task(s)", len(r.Tasks), r.TotalSize)
	if r.NextPageToken != "" {
		fmt.Fprintf(w, "; next page: --page-token %s", shellQuote(r.NextPageToken))
	}
	fmt.Fprintln(w)
	return nil
}

func (e *clientEnv) printPush(cs []a2a.TaskPushNotificationConfig) error {
	for i := range cs {
		if e.jsonOut() {
			var b []byte
			var err error
			if e.spoken == a2a.Version10 {
				b, err = v10.AppendTaskPushNotificationConfig(nil, &cs[i])
			} else {
				b, err = v03.MarshalTaskPushNotificationConfig(&cs[i])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s\n", b)
			continue
		}
		c := cs[i].PushNotificationConfig
		fmt.Fprintf(e.stdout, "task %s  config %s  → %s\n", cs[i].TaskID, orDefault(c.ID, "(no id)"), c.URL)
	}
	if len(cs) == 0 && !e.jsonOut() {
		fmt.Fprintln(e.stdout, "no push notification configs")
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// partsText renders parts: text as is, data as JSON, files by name; two
// consecutive text parts are separate lines (a newline between them: a
// message of several turns keeps them apart), other parts are separated
// by a space. (A stream's chunks are printed one after the other as they
// arrive, each with partsText.)
func partsText(ps []a2a.Part) string {
	return printable(rawPartsText(ps))
}

func rawPartsText(ps []a2a.Part) string {
	var b strings.Builder
	prevText := false
	for _, p := range ps {
		_, isText := p.Content.(a2a.Text)
		if b.Len() > 0 {
			if isText && prevText {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		prevText = isText
		b.WriteString(partText(p))
	}
	return b.String()
}

func partText(p a2a.Part) string {
	switch c := p.Content.(type) {
	case a2a.Text:
		return string(c)
	case a2a.Data:
		b, _ := v03.MarshalValue(c.Value)
		return string(b)
	case a2a.Raw:
		return fmt.Sprintf("<file %s, %s, %d bytes>", orDefault(p.Filename, "unnamed"), orDefault(p.MediaType, "?"), len(c))
	case a2a.URL:
		return fmt.Sprintf("<file %s>", string(c))
	}
	return ""
}
