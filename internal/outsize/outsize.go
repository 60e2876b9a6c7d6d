// Package outsize measures what an agent's output holds: the bytes of the
// parts of messages and artifacts, and of their metadata, about as many
// as their JSON form carries (a text's bytes, a file's raw bytes or URL,
// a data value's JSON length, without quoting or escaping overhead and
// with raw bytes counted before base64). The bridges bound what a backend
// sends back with it, before they store or pass it on; it is an estimate
// meant for limits, cheap (no encoding), and never smaller than the
// content it counts.
package outsize

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/a2abridge/a2abridge/a2a"
)

// Parts returns the bytes of ps: each part's content, media type,
// filename and metadata.
func Parts(ps []a2a.Part) int64 {
	var n int64
	for i := range ps {
		n += Part(ps[i])
	}
	return n
}

// Part returns the bytes of one part (see Parts).
func Part(p a2a.Part) int64 {
	n := int64(len(p.MediaType)+len(p.Filename)) + Value(p.Metadata)
	switch c := p.Content.(type) {
	case a2a.Text:
		n += int64(len(c))
	case a2a.Raw:
		n += int64(len(c))
	case a2a.URL:
		n += int64(len(c))
	case a2a.Data:
		n += Value(c.Value)
	}
	return n
}

// Message returns the bytes of m's parts and metadata (0 for nil).
func Message(m *a2a.Message) int64 {
	if m == nil {
		return 0
	}
	return Parts(m.Parts) + Value(m.Metadata)
}

// Artifact returns the bytes of a's parts, name, description and metadata.
func Artifact(a *a2a.Artifact) int64 {
	return Parts(a.Parts) + int64(len(a.Name)+len(a.Description)) + Value(a.Metadata)
}

// Event returns the bytes of output an event adds to its task: a
// message's, a status update's message and metadata, an artifact
// update's artifact and metadata; a Task snapshot's artifacts, history
// and status message.
func Event(ev a2a.Event) int64 {
	switch e := ev.(type) {
	case *a2a.Message:
		return Message(e)
	case *a2a.TaskStatusUpdateEvent:
		return Message(e.Status.Message) + Value(e.Metadata)
	case *a2a.TaskArtifactUpdateEvent:
		return Artifact(&e.Artifact) + Value(e.Metadata)
	case *a2a.Task:
		return Task(e)
	}
	return 0
}

// Task returns the bytes of t's artifacts, history, status message and
// metadata.
func Task(t *a2a.Task) int64 {
	n := Message(t.Status.Message) + Value(t.Metadata)
	for i := range t.History {
		n += Message(&t.History[i])
	}
	for i := range t.Artifacts {
		n += Artifact(&t.Artifacts[i])
	}
	return n
}

// Value returns the bytes of a JSON value as decoding yields it (nil,
// bool, string, json.Number, float64, []any, map[string]any): strings and
// keys by their length, numbers by their text, 4 or 5 for literals, one
// byte per separator. Any other Go value is measured by its JSON
// encoding.
func Value(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(x))
	case bool:
		return 5
	case json.Number:
		return int64(len(x))
	case float64:
		return int64(len(strconv.FormatFloat(x, 'g', -1, 64)))
	case int:
		return int64(len(strconv.Itoa(x)))
	case int64:
		return int64(len(strconv.FormatInt(x, 10)))
	case []any:
		if x == nil {
			return 0
		}
		n := int64(2)
		for _, e := range x {
			n += Value(e) + 1
		}
		return n
	case map[string]any:
		if x == nil {
			return 0 // absent metadata
		}
		n := int64(2)
		for k, e := range x {
			n += int64(len(k)) + Value(e) + 2
		}
		return n
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map && rv.Len() == 0 {
		return 2
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // refused elsewhere (a2a.ValidateValues)
	}
	return int64(len(b))
}
