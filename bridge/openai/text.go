package openai

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
)

// turn is one message of the conversation history.
type turn struct {
	assistant bool
	text      string
}

// boundedText builds a text of at most limit bytes: what is written
// beyond is dropped (at a rune boundary) and cut records that something
// was.
type boundedText struct {
	b     strings.Builder
	limit int
	cut   bool
}

// left is how many bytes may still be written.
func (w *boundedText) left() int { return max(w.limit-w.b.Len(), 0) }

func (w *boundedText) WriteString(s string) {
	if n := w.left(); len(s) > n {
		w.cut = true
		s = s[:runeCut(s, n)]
	}
	w.b.WriteString(s)
}

// runeCut returns the largest i <= n (n <= len(s)) at which s can be
// cut without splitting a UTF-8 sequence.
func runeCut(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// messageText is the text sent for an A2A message: its parts, one per
// line (see partText).
func messageText(m a2a.Message) string {
	s, _ := boundedMessageText(m, math.MaxInt)
	return s
}

// boundedMessageText is messageText cut to at most limit bytes while it
// is built; cut reports whether it was.
func boundedMessageText(m a2a.Message, limit int) (text string, cut bool) {
	w := boundedText{limit: limit}
	for i, p := range m.Parts {
		if i > 0 {
			w.WriteString("\n")
		}
		if w.left() == 0 {
			w.cut = true
			break
		}
		w.WriteString(partText(p))
	}
	return w.b.String(), w.cut
}

// partText is the text sent for one part: a text part as is, a data part
// as its JSON, a file part described by its name, media type and size or
// URI.
func partText(p a2a.Part) string {
	switch c := p.Content.(type) {
	case a2a.Text:
		return string(c)
	case a2a.Data:
		b, err := json.Marshal(c.Value)
		if err != nil {
			return "[data that cannot be shown as JSON]"
		}
		return string(b)
	case a2a.Raw, a2a.URL:
		name := p.Filename
		if name == "" {
			name = "(unnamed)"
		}
		typ := p.MediaType
		if typ == "" {
			typ = "unknown type"
		}
		if r, ok := c.(a2a.Raw); ok {
			return fmt.Sprintf("[file %s (%s), %d bytes]", name, typ, len(r))
		}
		return fmt.Sprintf("[file %s (%s) at %s]", name, typ, p.URL())
	}
	return ""
}

// boundedArtifactText is an artifact's text, cut to at most limit bytes
// while it is built: its text parts joined (streamed chunks are pieces
// of one text), other parts on lines of their own.
func boundedArtifactText(a a2a.Artifact, limit int) (text string, cut bool) {
	w := boundedText{limit: limit}
	for _, p := range a.Parts {
		if w.left() == 0 {
			w.cut = true
			break
		}
		if tp, ok := p.Content.(a2a.Text); ok {
			w.WriteString(string(tp))
			continue
		}
		if w.b.Len() > 0 {
			w.WriteString("\n")
		}
		w.WriteString(partText(p))
		w.WriteString("\n")
	}
	return strings.TrimRight(w.b.String(), "\n"), w.cut
}

// source is one turn of the conversation history before its text is
// built: user messages or answers (artifacts) of a task, joined with a
// blank line.
type source struct {
	assistant bool
	msgs      []a2a.Message
	arts      []a2a.Artifact
}

// text builds the source's text, cut to at most limit bytes while it is
// built; cut reports whether it was.
func (s source) text(limit int) (text string, cut bool) {
	w := boundedText{limit: limit}
	n := len(s.msgs) + len(s.arts)
	for i := range n {
		if i > 0 {
			w.WriteString("\n\n")
		}
		if w.left() == 0 {
			w.cut = true
			break
		}
		var piece string
		if i < len(s.msgs) {
			piece, cut = boundedMessageText(s.msgs[i], w.left())
		} else {
			piece, cut = boundedArtifactText(s.arts[i-len(s.msgs)], w.left())
		}
		w.WriteString(piece)
		if cut {
			w.cut = true
			break
		}
	}
	return w.b.String(), w.cut
}

// taskSources returns the conversation an earlier task holds: its user
// messages paired with its answers (its artifacts, one per turn), oldest
// first, without building their texts. With current, the task's last
// user message is the one being answered and is left out. A user message
// without an answer is left out; a task whose messages and answers
// cannot be paired (another agent's) gives one user turn and one answer,
// each joined.
func taskSources(t a2a.Task, current bool) []source {
	var users []a2a.Message
	for _, m := range t.History {
		if m.Role == a2a.RoleUser {
			users = append(users, m)
		}
	}
	if current && len(users) > 0 {
		users = users[:len(users)-1]
	}
	answers := t.Artifacts
	if len(answers) == 0 || len(users) == 0 {
		return nil
	}
	if len(users) != len(answers) && len(users) != len(answers)+1 {
		return []source{{msgs: users}, {assistant: true, arts: answers}}
	}
	out := make([]source, 0, 2*len(answers))
	for i := range answers {
		out = append(out, source{msgs: users[i : i+1]}, source{assistant: true, arts: answers[i : i+1]})
	}
	return out
}

// cutMark ends a history text that was cut.
const cutMark = " […]"

// buildHistory returns the history sent before a new (user) message: at
// most the last n turns of srcs (adjacent sources of one role are joined
// into one turn, with a blank line), alternating user and assistant,
// starting with a user turn and ending with an answer (chat templates of
// many models require both), their texts together at most maxBytes
// bytes. Texts are built newest first, each cut to what is left while it
// is built: the turn that crosses the bound keeps its beginning and ends
// with cutMark, older ones are left out. An answer that does not fit
// gets half of what is left, so that its question is sent with it.
func buildHistory(srcs []source, n, maxBytes int) []turn {
	if n <= 0 || maxBytes <= 0 {
		return nil
	}
	end := len(srcs)
	for end > 0 && !srcs[end-1].assistant {
		end-- // the new message is a user message: end with an answer
	}
	var rev []turn // newest first
	left := maxBytes
	last := false // an answer was cut: its question is the last source
	for i := end - 1; i >= 0 && left > 0; i-- {
		s := srcs[i]
		k := len(rev) - 1
		merge := k >= 0 && rev[k].assistant == s.assistant
		if !merge && len(rev) == n || last && s.assistant {
			break
		}
		limit := left
		if merge {
			limit -= len("\n\n")
		}
		if limit <= 0 {
			break
		}
		text, cut := s.text(limit)
		if cut {
			if s.assistant {
				limit /= 2
			}
			keep := limit - len(cutMark)
			if keep <= 0 {
				break
			}
			text = text[:runeCut(text, min(keep, len(text)))] + cutMark
		}
		if merge {
			rev[k].text = text + "\n\n" + rev[k].text
			left -= len(text) + len("\n\n")
		} else {
			rev = append(rev, turn{assistant: s.assistant, text: text})
			left -= len(text)
		}
		if cut && !s.assistant {
			break
		}
		last = last || cut
	}
	slices.Reverse(rev)
	for len(rev) > 0 && rev[0].assistant {
		rev = rev[1:]
	}
	return rev
}

// errorMessage extracts the human-readable message of an error answer:
// OpenAI's {"error": {"message": ...}}, {"error": "..."}, {"message":
// ...} or {"detail": "..."} (vLLM, FastAPI servers), or a short plain-text
// body. It returns "" when it finds none. The result is one line of at
// most 300 characters.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return clean(inner.Message, 300)
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return clean(s, 300)
		case json.Unmarshal(v.Message, &s) == nil && s != "":
			return clean(s, 300)
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return clean(s, 300)
		}
		return ""
	}
	text := strings.TrimSpace(string(body))
	if text == "" || text[0] == '<' || text[0] == '{' || text[0] == '[' { // HTML pages and broken JSON say nothing useful
		return ""
	}
	return clean(text, 300)
}

// clean returns s as one line of valid UTF-8 without control characters,
// cut to at most n characters (an ellipsis marks the cut).
func clean(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	count := 0
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		need := 1
		if space {
			need = 2
		}
		if count+need > n {
			b.WriteString("…")
			return b.String()
		}
		if space {
			b.WriteByte(' ')
			count++
			space = false
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

// tokenUsage is the token accounting of an answer.
type tokenUsage struct{ prompt, completion, total int64 }

func (u *tokenUsage) add(o tokenUsage) {
	u.prompt += o.prompt
	u.completion += o.completion
	u.total += o.total
}

func (u *tokenUsage) object() map[string]any {
	return map[string]any{"prompt_tokens": u.prompt, "completion_tokens": u.completion, "total_tokens": u.total}
}

// previousUsage reads the usage recorded in a task's metadata (zero when
// there is none or it is not an object of numbers).
func previousUsage(md map[string]any) tokenUsage {
	m, _ := md[MetadataUsage].(map[string]any)
	return tokenUsage{toInt(m["prompt_tokens"]), toInt(m["completion_tokens"]), toInt(m["total_tokens"])}
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return int64(f)
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}
