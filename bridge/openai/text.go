package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/a2abridge/a2abridge/a2a"
)

// turn is one message of the conversation history.
type turn struct {
	assistant bool
	text      string
}

// messageText is the text sent for an A2A message: its parts, one per
// line (see partText).
func messageText(m a2a.Message) string {
	texts := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		texts[i] = partText(p)
	}
	return strings.Join(texts, "\n")
}

// partText is the text sent for one part: a text part as is, a data part
// as its JSON, a file part described by its name, media type and size or
// URI.
func partText(p a2a.Part) string {
	switch p := p.(type) {
	case a2a.TextPart:
		return p.Text
	case a2a.DataPart:
		b, err := json.Marshal(p.Data)
		if err != nil {
			return "[data that cannot be shown as JSON]"
		}
		return string(b)
	case a2a.FilePart:
		f := p.File
		name := f.Name
		if name == "" {
			name = "(unnamed)"
		}
		typ := f.MimeType
		if typ == "" {
			typ = "unknown type"
		}
		if f.HasBytes() {
			return fmt.Sprintf("[file %s (%s), %d bytes]", name, typ, len(f.Bytes))
		}
		return fmt.Sprintf("[file %s (%s) at %s]", name, typ, f.URI)
	}
	return ""
}

// artifactText is an artifact's text: its text parts joined (streamed
// chunks are pieces of one text), other parts on lines of their own.
func artifactText(a a2a.Artifact) string {
	var b strings.Builder
	for _, p := range a.Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			b.WriteString(tp.Text)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(partText(p))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// taskTurns returns the conversation an earlier task holds: its user
// messages paired with its answers (the texts of its artifacts, one per
// turn), oldest first. With current, the task's last user message is the
// one being answered and is left out. A user message without an answer is
// left out; a task whose messages and answers cannot be paired (another
// agent's) gives one user turn and one answer, each joined.
func taskTurns(t a2a.Task, current bool) []turn {
	var users, answers []string
	for _, m := range t.History {
		if m.Role == a2a.RoleUser {
			users = append(users, messageText(m))
		}
	}
	if current && len(users) > 0 {
		users = users[:len(users)-1]
	}
	for _, a := range t.Artifacts {
		answers = append(answers, artifactText(a))
	}
	if len(answers) == 0 || len(users) == 0 {
		return nil
	}
	if len(users) != len(answers) && len(users) != len(answers)+1 {
		return []turn{{text: strings.Join(users, "\n\n")}, {assistant: true, text: strings.Join(answers, "\n\n")}}
	}
	out := make([]turn, 0, 2*len(answers))
	for i, ans := range answers {
		out = append(out, turn{text: users[i]}, turn{assistant: true, text: ans})
	}
	return out
}

// trimTurns returns at most the last n turns of past, alternating user
// and assistant (adjacent turns of one role are joined) and starting with
// a user turn (chat templates of many models require both).
func trimTurns(past []turn, n int) []turn {
	if n <= 0 || len(past) == 0 {
		return nil
	}
	merged := make([]turn, 0, len(past))
	for _, t := range past {
		if k := len(merged); k > 0 && merged[k-1].assistant == t.assistant {
			merged[k-1].text += "\n\n" + t.text
			continue
		}
		merged = append(merged, t)
	}
	if len(merged) > n {
		merged = merged[len(merged)-n:]
	}
	for len(merged) > 0 && merged[0].assistant {
		merged = merged[1:]
	}
	// The new message is a user message: the history ends with an answer.
	if k := len(merged); k > 0 && !merged[k-1].assistant {
		merged = merged[:k-1]
	}
	return merged
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
