package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The functions here decode answers fully: they run once per target, not
// in the measured loop.

type wireResponse struct {
	ID     jsontext.Value `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type wireResult struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	TaskID string `json:"taskId"`
	Final  bool   `json:"final"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Artifact  *wireArtifact  `json:"artifact"`
	Artifacts []wireArtifact `json:"artifacts"`
}

type wireArtifact struct {
	Parts []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"parts"`
}

func (a wireArtifact) text() string {
	var b strings.Builder
	for _, p := range a.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func post(ctx context.Context, c *http.Client, o Options, body []byte, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = requestHeader(o, accept)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fail("http "+strconv.Itoa(resp.StatusCode), "HTTP %s", resp.Status)
	}
	return resp, nil
}

func decodeResponse(b []byte, id int64) (wireResult, error) {
	var r wireResponse
	if err := json.Unmarshal(b, &r, json.RejectUnknownMembers(false)); err != nil {
		return wireResult{}, fail("bad response", "bad JSON-RPC response: %v", err)
	}
	if r.Error != nil {
		return wireResult{}, fail("rpc "+strconv.Itoa(r.Error.Code), "JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	if string(r.ID) != strconv.FormatInt(id, 10) {
		return wireResult{}, fail("bad response", "response id %s, want %d", r.ID, id)
	}
	if len(r.Result) == 0 {
		return wireResult{}, fail("bad response", "response has no result")
	}
	var res wireResult
	if err := json.Unmarshal(r.Result, &res, json.RejectUnknownMembers(false)); err != nil {
		return wireResult{}, fail("bad response", "bad result: %v", err)
	}
	return res, nil
}

// createTask sends text with message/send and returns the task's id and
// whether the task is final (terminal or interrupted) in the answer.
func createTask(ctx context.Context, c *http.Client, o Options, runID string, id int64, text string, blocking bool) (string, bool, error) {
	resp, err := post(ctx, c, o, appendSend(nil, "message/send", runID, id, text, blocking), "application/json")
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", false, err
	}
	res, err := decodeResponse(b, id)
	if err != nil {
		return "", false, err
	}
	if res.Kind != "task" || res.ID == "" {
		return "", false, fail("bad response", "message/send answered %q, not a task", res.Kind)
	}
	switch res.Status.State {
	case "completed", "failed", "canceled", "rejected", "input-required", "auth-required":
		return res.ID, true, nil
	}
	return res.ID, false, nil
}

// Verify checks that the endpoint at o.URL behaves as an echo agent for
// the benchmark's purposes, decoding the answers fully: message/send
// returns a completed Task whose artifacts repeat the text, and
// message/stream returns a Task, artifact-update(s) repeating the text and
// a final completed status-update. It tells a fair comparison (every
// target does the same work) from a server that answers too little.
func Verify(ctx context.Context, o Options) error {
	if err := o.normalize(); err != nil {
		return err
	}
	tr := newTransport(o)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: o.Timeout}
	runID, text := newRunID(), payloadText(o.Payload)

	resp, err := post(ctx, c, o, appendSend(nil, "message/send", runID, 1, text, true), "application/json")
	if err != nil {
		return fmt.Errorf("message/send: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("message/send: %w", err)
	}
	res, err := decodeResponse(b, 1)
	if err != nil {
		return fmt.Errorf("message/send: %w", err)
	}
	var got strings.Builder
	for _, a := range res.Artifacts {
		got.WriteString(a.text())
	}
	if res.Kind != "task" || res.Status.State != "completed" || got.String() != text {
		return fmt.Errorf("message/send: got a %q in state %q with artifact text %q; want a completed task echoing %q", res.Kind, res.Status.State, got.String(), text)
	}

	resp, err = post(ctx, c, o, appendSend(nil, "message/stream", runID, 2, text, true), "text/event-stream")
	if err != nil {
		return fmt.Errorf("message/stream: %w", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("message/stream: Content-Type %q", ct)
	}
	var kinds []string
	got.Reset()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			continue
		}
		if len(line) != 0 || len(data) == 0 {
			continue
		}
		ev, err := decodeResponse(data, 2)
		data = data[:0]
		if err != nil {
			return fmt.Errorf("message/stream: %w", err)
		}
		kinds = append(kinds, ev.Kind)
		if ev.Artifact != nil {
			got.WriteString(ev.Artifact.text())
		}
		if ev.Kind == "status-update" && ev.Final {
			if ev.Status.State != "completed" || kinds[0] != "task" || got.String() != text {
				return fmt.Errorf("message/stream: events %v ending in %q with artifact text %q; want task … completed echoing %q", kinds, ev.Status.State, got.String(), text)
			}
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("message/stream: %w", err)
	}
	return fmt.Errorf("message/stream: stream ended after %v without a final status-update", kinds)
}
