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
	"github.com/a2abridge/a2abridge/internal/wire/v03"
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

// printResult prints a message/send, tasks/get or tasks/cancel result.
func (e *clientEnv) printResult(ev a2a.Event, took time.Duration) error {
	if e.jsonOut() {
		b, err := v03.MarshalEvent(ev)
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
		fmt.Fprintf(w, "Task %s  %s", v.ID, e.paint(v.Status.State, strings.ToUpper(string(v.Status.State))))
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
		b, err := v03.MarshalEvent(ev.Event)
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
		fmt.Fprintf(out, "%s  task %s %s (context %s)\n", prefix, v.ID, s.e.paint(v.Status.State, string(v.Status.State)), v.ContextID)
	case *a2a.TaskStatusUpdateEvent:
		line := fmt.Sprintf("%s  status %s", prefix, s.e.paint(v.Status.State, string(v.Status.State)))
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

func (e *clientEnv) printCard(c *a2a.AgentCard) error {
	if e.jsonOut() {
		b, err := v03.MarshalAgentCard(c)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	w := e.stdout
	fmt.Fprintf(w, "%s\n", printable(fmt.Sprintf("%s %s  (A2A %s)\n  %s", c.Name, c.Version, c.ProtocolVersion, c.Description)))
	fmt.Fprintf(w, "  url        %s (%s)\n", c.URL, orDefault(c.PreferredTransport, "JSONRPC"))
	for _, i := range c.AdditionalInterfaces {
		fmt.Fprintf(w, "  also       %s (%s)\n", i.URL, i.Transport)
	}
	fmt.Fprintf(w, "  streaming %v, push notifications %v, state history %v, extended card %v\n",
		c.Capabilities.Streaming, c.Capabilities.PushNotifications, c.Capabilities.StateTransitionHistory, c.SupportsAuthenticatedExtendedCard)
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

func (e *clientEnv) printPush(cs []a2a.TaskPushNotificationConfig) error {
	for i := range cs {
		if e.jsonOut() {
			b, err := v03.MarshalTaskPushNotificationConfig(&cs[i])
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

// partsText renders parts on one line: text as is (consecutive text parts,
// such as streamed chunks, run together), data as JSON, files by name.
func partsText(ps []a2a.Part) string {
	return printable(rawPartsText(ps))
}

func rawPartsText(ps []a2a.Part) string {
	var b strings.Builder
	prevText := false
	for _, p := range ps {
		_, isText := p.(a2a.TextPart)
		if b.Len() > 0 && !(isText && prevText) {
			b.WriteByte(' ')
		}
		prevText = isText
		b.WriteString(partText(p))
	}
	return b.String()
}

func partText(p a2a.Part) string {
	switch v := p.(type) {
	case a2a.TextPart:
		return v.Text
	case a2a.DataPart:
		b, _ := v03.MarshalValue(v.Data)
		return string(b)
	case a2a.FilePart:
		if v.File.HasBytes() {
			return fmt.Sprintf("<file %s, %s, %d bytes>", orDefault(v.File.Name, "unnamed"), orDefault(v.File.MimeType, "?"), len(v.File.Bytes))
		}
		return fmt.Sprintf("<file %s>", v.File.URI)
	}
	return ""
}
