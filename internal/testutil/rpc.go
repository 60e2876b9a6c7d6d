package testutil

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// WireText is a part of an A2A 0.3 message or artifact as JSON, read for
// its text ("" for a part of another kind).
type WireText struct {
	Text string `json:"text"`
}

// WireParts is a message or an artifact as JSON, read for its parts.
type WireParts struct {
	Parts []WireText `json:"parts"`
}

// Text is the text of the parts, joined.
func (p WireParts) Text() string {
	var b strings.Builder
	for _, t := range p.Parts {
		b.WriteString(t.Text)
	}
	return b.String()
}

// WireTask is what tests read of an A2A 0.3 Task as JSON, or of an event
// of a stream (Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent),
// whose members it shares: kind, ids, final, status, history, artifacts.
type WireTask struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
	Final     bool   `json:"final"`
	Status    struct {
		State   string     `json:"state"`
		Message *WireParts `json:"message"`
	} `json:"status"`
	History   []jsontext.Value `json:"history"`
	Artifacts []WireParts      `json:"artifacts"`
}

// StatusText is the text of the status's message ("" without one).
func (w WireTask) StatusText() string {
	if w.Status.Message == nil {
		return ""
	}
	return w.Status.Message.Text()
}

// ArtifactText is the text of the artifacts, in order.
func (w WireTask) ArtifactText() string {
	var b strings.Builder
	for _, a := range w.Artifacts {
		b.WriteString(a.Text())
	}
	return b.String()
}

// RPCAnswer is what tests read of a JSON-RPC 2.0 response of A2A 0.3:
// its id, a result read as a WireTask, its error.
type RPCAnswer struct {
	ID     any      `json:"id"`
	Result WireTask `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// CallRPC calls method with params (a JSON value) at url as RPC does and
// decodes the answer; an answer that is not JSON fails t.
func CallRPC(t testing.TB, url, method, params string, hdr ...string) RPCAnswer {
	t.Helper()
	_, b := RPC(t, url, method, params, hdr...)
	var r RPCAnswer
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v: %s", method, err, b)
	}
	return r
}
