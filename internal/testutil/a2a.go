package testutil

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
)

// Card is the Agent Card of a test agent called name: version 0.0.1,
// streaming, text in and out, one skill with the agent's name as its id.
func Card(name string) a2a.AgentCard {
	return a2a.AgentCard{Name: name, Description: "test agent " + name, Version: "0.0.1",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: name, Name: name, Description: "test", Tags: []string{"test"}}}}
}

// UserMessage is a user message with one text part, in the task taskID
// when that is not empty.
func UserMessage(text, taskID string) a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text))
	m.TaskID = taskID
	return a2a.SendMessageRequest{Message: m}
}

// Text is the text of parts: their text parts joined, the others skipped.
func Text(parts []a2a.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(tp))
		}
	}
	return b.String()
}

// StatusText is the text of the status's message ("" without one).
func StatusText(s a2a.TaskStatus) string {
	if s.Message == nil {
		return ""
	}
	return Text(s.Message.Parts)
}

// ArtifactText is the text of the task's artifacts, in order.
func ArtifactText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		b.WriteString(Text(a.Parts))
	}
	return b.String()
}

// Sender sends a message and answers with an event, as a client does.
type Sender interface {
	SendMessage(ctx context.Context, p a2a.SendMessageRequest) (a2a.Event, error)
}

// SendTask sends p with s and returns the task that answers it; an error,
// or an answer that is not a task, fails t.
func SendTask(t testing.TB, ctx context.Context, s Sender, p a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := s.SendMessage(ctx, p)
	if err != nil {
		t.Fatalf("SendMessage(%q): %v", Text(p.Message.Parts), err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage(%q): answered %T, want a task", Text(p.Message.Parts), res)
	}
	return task
}

// SendParams03 is the JSON params of an A2A 0.3 message/send or
// message/stream (MessageSendParams, A2A 0.3 §7.1): a user message with
// messageID and one text part. extra, when not empty, is appended inside
// the object: `,"configuration":{"blocking":false}`.
func SendParams03(text, messageID, extra string) string {
	return fmt.Sprintf(`{"message":{"kind":"message","role":"user","messageId":%q,"parts":[{"kind":"text","text":%q}]}%s}`, messageID, text, extra)
}

// Interface is a protocol version (a2a.Version03, a2a.Version10) and a
// binding (a2a.TransportJSONRPC, a2a.TransportHTTPJSON) a client speaks.
type Interface struct {
	Protocol, Binding string
}

// Interfaces are the four interfaces a2abridge serves an agent on: A2A
// 0.3 and 1.0, each over JSON-RPC and over HTTP+JSON.
var Interfaces = []Interface{
	{a2a.Version03, a2a.TransportJSONRPC},
	{a2a.Version03, a2a.TransportHTTPJSON},
	{a2a.Version10, a2a.TransportJSONRPC},
	{a2a.Version10, a2a.TransportHTTPJSON},
}
